package main

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/lib/pq"
)

// runStdlib is database/sql as most Go services use it, through the
// driver registered as driver ("pgx" or lib/pq's "postgres").
func runStdlib(driver, url string) {
	db, err := sql.Open(driver, url)
	if err != nil {
		report("open", err)
		return
	}
	defer db.Close()
	t := table("go_sql_items")
	if !step("ping", func() error { return db.PingContext(ctx()) }) {
		return
	}
	step("create_table", func() error {
		_, err := db.ExecContext(ctx(), `CREATE TABLE `+t+` (
			id bigserial PRIMARY KEY,
			name text NOT NULL,
			qty integer,
			price numeric)`)
		return err
	})
	var id int64
	step("insert_returning", func() error {
		return db.QueryRowContext(ctx(), `INSERT INTO `+t+` (name, qty, price) VALUES ($1, $2, $3) RETURNING id`,
			"apple", 3, "1.50").Scan(&id)
	})
	step("select_row", func() error {
		var name, price string
		var qty int
		if err := db.QueryRowContext(ctx(), `SELECT name, qty, price FROM `+t+` WHERE id = $1`, id).Scan(&name, &qty, &price); err != nil {
			return err
		}
		if name != "apple" || qty != 3 || price != "1.50" {
			return fmt.Errorf("got %q %d %q", name, qty, price)
		}
		return nil
	})
	step("prepared_insert", func() error {
		st, err := db.PrepareContext(ctx(), `INSERT INTO `+t+` (name, qty) VALUES ($1, $2)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for i, n := range []string{"pear", "plum", "fig"} {
			if _, err := st.ExecContext(ctx(), n, i+10); err != nil {
				return err
			}
		}
		return nil
	})
	step("select_rows", func() error {
		rows, err := db.QueryContext(ctx(), `SELECT name FROM `+t+` WHERE qty >= $1 ORDER BY name`, 10)
		if err != nil {
			return err
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				return err
			}
			got = append(got, n)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return want("names", fmt.Sprint(got), "[fig pear plum]")
	})
	step("null_scan", func() error {
		var qty sql.NullInt64
		var price sql.NullString
		if err := db.QueryRowContext(ctx(), `SELECT qty, price FROM `+t+` WHERE name = $1`, "fig").Scan(&qty, &price); err != nil {
			return err
		}
		if !qty.Valid || price.Valid {
			return fmt.Errorf("got qty %v price %v", qty, price)
		}
		return nil
	})
	step("tx_commit", func() error {
		tx, err := db.BeginTx(ctx(), nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx(), `UPDATE `+t+` SET qty = qty + 1 WHERE id = $1`, id); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		var qty int
		if err := db.QueryRowContext(ctx(), `SELECT qty FROM `+t+` WHERE id = $1`, id).Scan(&qty); err != nil {
			return err
		}
		return want("qty", qty, 4)
	})
	step("tx_rollback", func() error {
		tx, err := db.BeginTx(ctx(), nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx(), `DELETE FROM `+t); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Rollback(); err != nil {
			return err
		}
		var n int
		if err := db.QueryRowContext(ctx(), `SELECT count(*) FROM `+t).Scan(&n); err != nil {
			return err
		}
		return want("count", n, 4)
	})
	step("select_for_update", func() error {
		tx, err := db.BeginTx(ctx(), nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		var name string
		if err := tx.QueryRowContext(ctx(), `SELECT name FROM `+t+` WHERE id = $1 FOR UPDATE`, id).Scan(&name); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx(), `UPDATE `+t+` SET name = $1 WHERE id = $2`, "green apple", id); err != nil {
			return err
		}
		return tx.Commit()
	})
	step("no_rows", func() error {
		var n string
		err := db.QueryRowContext(ctx(), `SELECT name FROM `+t+` WHERE id = $1`, -1).Scan(&n)
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("want sql.ErrNoRows, got %v", err)
		}
		return nil
	})
	step("typmod_timestamptz_columns", func() error {
		t2 := table("go_sql_orders")
		if _, err := db.ExecContext(ctx(), `CREATE TABLE `+t2+` (
			id bigserial PRIMARY KEY,
			code varchar(20) NOT NULL,
			total numeric(10,2) NOT NULL,
			created timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		defer db.ExecContext(ctx(), `DROP TABLE `+t2)
		at := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
		if _, err := db.ExecContext(ctx(), `INSERT INTO `+t2+` (code, total, created) VALUES ($1, $2, $3)`, "A-1", "9.5", at); err != nil {
			return err
		}
		var total string
		var created time.Time
		if err := db.QueryRowContext(ctx(), `SELECT total, created FROM `+t2+` WHERE code = $1`, "A-1").Scan(&total, &created); err != nil {
			return err
		}
		if total != "9.50" || !created.Equal(at) {
			return fmt.Errorf("got %s %v", total, created)
		}
		return nil
	})
	step("drop_table", func() error {
		_, err := db.ExecContext(ctx(), `DROP TABLE `+t)
		return err
	})
}
