package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// runPgx is pgx's own interface: CopyFrom, Batch, CollectRows, Tx.
func runPgx(url string) {
	conn, err := pgx.Connect(ctx(), url)
	if err != nil {
		report("connect", err)
		return
	}
	defer conn.Close(context.Background())
	report("connect", nil)
	t := table("go_pgx_events")
	step("create_table", func() error {
		_, err := conn.Exec(ctx(), `CREATE TABLE `+t+` (
			id bigint PRIMARY KEY,
			kind text NOT NULL,
			amount numeric)`)
		return err
	})
	step("copy_from", func() error {
		var rows [][]any
		for i := int64(1); i <= 100; i++ {
			rows = append(rows, []any{i, fmt.Sprintf("k%d", i%3), pgtype.Numeric{}})
		}
		n, err := conn.CopyFrom(ctx(), pgx.Identifier{t}, []string{"id", "kind", "amount"}, pgx.CopyFromRows(rows))
		if err != nil {
			return err
		}
		if err := want("copied", n, 100); err != nil {
			return err
		}
		var sum int64
		if err := conn.QueryRow(ctx(), `SELECT sum(id) FROM `+t).Scan(&sum); err != nil {
			return err
		}
		return want("sum(id)", sum, 5050)
	})
	step("batch", func() error {
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO `+t+` (id, kind) VALUES ($1, $2)`, 101, "batch")
		b.Queue(`INSERT INTO `+t+` (id, kind) VALUES ($1, $2)`, 102, "batch")
		b.Queue(`UPDATE `+t+` SET kind = $1 WHERE id = $2`, "batch2", 102)
		var n int64
		b.Queue(`SELECT count(*) FROM `+t+` WHERE kind LIKE $1`, "batch%").QueryRow(func(r pgx.Row) error { return r.Scan(&n) })
		if err := conn.SendBatch(ctx(), b).Close(); err != nil {
			return err
		}
		return want("count", n, 2)
	})
	step("collect_rows", func() error {
		rows, _ := conn.Query(ctx(), `SELECT id FROM `+t+` WHERE kind LIKE $1 ORDER BY id LIMIT 3`, "batch%")
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		return want("ids", fmt.Sprint(ids), "[101 102]")
	})
	step("struct_rows", func() error {
		type ev struct {
			ID   int64
			Kind string
		}
		rows, _ := conn.Query(ctx(), `SELECT id, kind FROM `+t+` WHERE id = $1`, 101)
		e, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[ev])
		if err != nil {
			return err
		}
		return want("kind", e.Kind, "batch")
	})
	step("tx", func() error {
		return pgx.BeginFunc(ctx(), conn, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx(), `UPDATE `+t+` SET amount = $1 WHERE id = $2`, "12.34", 101)
			return err
		})
	})
	step("timestamptz", func() error {
		t2 := table("go_pgx_ticks")
		if _, err := conn.Exec(ctx(), `CREATE TABLE `+t2+` (id int PRIMARY KEY, at timestamptz NOT NULL)`); err != nil {
			return err
		}
		defer conn.Exec(ctx(), `DROP TABLE `+t2)
		at := time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)
		if _, err := conn.Exec(ctx(), `INSERT INTO `+t2+` VALUES ($1, $2)`, 1, at); err != nil {
			return err
		}
		var got time.Time
		if err := conn.QueryRow(ctx(), `SELECT at FROM `+t2+` WHERE id = $1`, 1).Scan(&got); err != nil {
			return err
		}
		if !got.Equal(at) {
			return fmt.Errorf("got %v, want %v", got, at)
		}
		return nil
	})
	step("drop_table", func() error {
		_, err := conn.Exec(ctx(), `DROP TABLE `+t)
		return err
	})
}
