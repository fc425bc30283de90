package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// runSqlc runs queries shaped as sqlc (pgx/v5 mode) generates them:
// sqlc.slice as = ANY($1::bigint[]), sqlc.narg with COALESCE, :one,
// :many, :exec and :execrows.
func runSqlc(url string) {
	conn, err := pgx.Connect(ctx(), url)
	if err != nil {
		report("connect", err)
		return
	}
	defer conn.Close(context.Background())
	report("connect", nil)
	t := table("go_sqlc_authors")
	step("create_table", func() error {
		_, err := conn.Exec(ctx(), `CREATE TABLE `+t+` (
  id   BIGSERIAL PRIMARY KEY,
  name text      NOT NULL,
  bio  text
)`)
		return err
	})
	// -- name: CreateAuthor :one
	createAuthor := `-- name: CreateAuthor :one
INSERT INTO ` + t + ` (
  name, bio
) VALUES (
  $1, $2
)
RETURNING id, name, bio
`
	var ids []int64
	step("create_author_one", func() error {
		for _, a := range []struct {
			name string
			bio  pgtype.Text
		}{{"Brian Kernighan", pgtype.Text{String: "Co-author of The C Programming Language", Valid: true}}, {"Rob Pike", pgtype.Text{}}, {"Ken Thompson", pgtype.Text{String: "Unix", Valid: true}}} {
			var id int64
			var name string
			var bio pgtype.Text
			if err := conn.QueryRow(ctx(), createAuthor, a.name, a.bio).Scan(&id, &name, &bio); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	step("get_author_one", func() error {
		var id int64
		var name string
		var bio pgtype.Text
		err := conn.QueryRow(ctx(), `-- name: GetAuthor :one
SELECT id, name, bio FROM `+t+`
WHERE id = $1 LIMIT 1
`, ids[0]).Scan(&id, &name, &bio)
		if err != nil {
			return err
		}
		return want("name", name, "Brian Kernighan")
	})
	step("list_any_bigint_array", func() error {
		rows, err := conn.Query(ctx(), `-- name: ListAuthorsByIDs :many
SELECT id, name, bio FROM `+t+`
WHERE id = ANY($1::bigint[])
ORDER BY name
`, []int64{ids[0], ids[2]})
		if err != nil {
			return err
		}
		defer rows.Close()
		var names []string
		for rows.Next() {
			var id int64
			var name string
			var bio pgtype.Text
			if err := rows.Scan(&id, &name, &bio); err != nil {
				return err
			}
			names = append(names, name)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return want("names", fmt.Sprint(names), "[Brian Kernighan Ken Thompson]")
	})
	step("update_coalesce_narg", func() error {
		// -- name: UpdateAuthor :one ... SET bio = coalesce(sqlc.narg('bio'), bio)
		q := `-- name: UpdateAuthor :one
UPDATE ` + t + `
SET
  name = coalesce($1, name),
  bio = coalesce($2, bio)
WHERE id = $3
RETURNING id, name, bio
`
		var id int64
		var name string
		var bio pgtype.Text
		if err := conn.QueryRow(ctx(), q, pgtype.Text{}, pgtype.Text{String: "Go", Valid: true}, ids[1]).Scan(&id, &name, &bio); err != nil {
			return err
		}
		if name != "Rob Pike" || bio.String != "Go" {
			return fmt.Errorf("got %q %v", name, bio)
		}
		return nil
	})
	step("select_coalesce", func() error {
		var bio string
		err := conn.QueryRow(ctx(), `-- name: GetBio :one
SELECT COALESCE(bio, '')::text AS bio FROM `+t+` WHERE name = $1
`, "Rob Pike").Scan(&bio)
		if err != nil {
			return err
		}
		return want("bio", bio, "Go")
	})
	step("count_one", func() error {
		var n int64
		if err := conn.QueryRow(ctx(), `-- name: CountAuthors :one
SELECT count(*) FROM `+t+`
`).Scan(&n); err != nil {
			return err
		}
		return want("count", n, 3)
	})
	step("delete_execrows", func() error {
		tag, err := conn.Exec(ctx(), `-- name: DeleteAuthor :execrows
DELETE FROM `+t+`
WHERE id = $1
`, ids[2])
		if err != nil {
			return err
		}
		return want("rows", tag.RowsAffected(), 1)
	})
	step("drop_table", func() error {
		_, err := conn.Exec(ctx(), `DROP TABLE `+t)
		return err
	})
}
