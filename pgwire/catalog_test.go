package pgwire

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tupled/tupled/internal/pgoracle"
)

// catalogSchema has what psql's \d family describes: a serial and a
// bigserial key, a UNIQUE constraint, an index, a partial unique index, NOT NULL, defaults, types
// with modifiers, a composite key, foreign keys, a table without a key,
// CHECK constraints, array columns, a standalone sequence, an identity
// column, and columns whose type ALTER COLUMN TYPE changed under a key, an
// index, a default and a CHECK, and enum types and a table using them.
const catalogSchema = `
CREATE TABLE authors (id serial PRIMARY KEY, name text NOT NULL UNIQUE, born integer);
CREATE TABLE books (id bigserial PRIMARY KEY, author_id integer NOT NULL REFERENCES authors(id),
  title varchar(200) NOT NULL, isbn character(13), price numeric, published timestamp,
  in_print boolean DEFAULT true, pages smallint DEFAULT 0 CHECK (pages >= 0),
  CONSTRAINT price_positive CHECK (price > 0 AND price < 10000));
CREATE INDEX books_title_idx ON books (title);
CREATE UNIQUE INDEX books_isbn_live ON books (isbn) WHERE in_print AND price > 0;
CREATE TABLE tags (book_id bigint REFERENCES books(id) ON DELETE CASCADE, tag text, PRIMARY KEY (book_id, tag));
CREATE TABLE notes (body text, n int, labels text[], scores numeric[]);
CREATE SEQUENCE order_seq START 100 INCREMENT 5 MAXVALUE 100000 CYCLE OWNED BY notes.n;
CREATE TABLE events (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, kind text CHECK (kind <> ''));
CREATE TABLE prices (code varchar(5) PRIMARY KEY, amount integer NOT NULL DEFAULT 0 CHECK (amount >= 0));
CREATE INDEX prices_amount_idx ON prices (amount);
ALTER TABLE prices ALTER COLUMN code TYPE varchar(12);
ALTER TABLE prices ALTER COLUMN amount SET DATA TYPE numeric(12,2);
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE status AS ENUM ('new', 'done');
ALTER TYPE status ADD VALUE 'doing' BEFORE 'done';
COMMENT ON TYPE status IS 'where a task is';
CREATE TABLE moods (id int PRIMARY KEY, m mood NOT NULL DEFAULT 'ok', s status, hist mood[], CHECK (m <> 'sad' OR s IS NULL));
CREATE INDEX moods_s_idx ON moods (s);
`

// psqlCatalogCommands are the meta-commands whose output must be
// PostgreSQL's. Not here, because they differ by design: \l without a
// pattern (PostgreSQL also lists template0 and template1; tupled has one
// database), \dt+ (relation sizes are 0 here; PostgreSQL's empty tables
// show their TOAST index's 8192 bytes), \dx (PostgreSQL has plpgsql
// installed).
var psqlCatalogCommands = []string{
	`\d`, `\dt`, `\d books`, `\d authors`, `\d tags`, `\d notes`, `\di`, `\ds`, `\dn`, `\du`,
	`\l postgres`, `\df`, `\d books_pkey`, `\d authors_id_seq`, `\dv`, `\dp`, `\dT`,
	`\d events`, `\d order_seq`, `\d events_id_seq`, `\d books_isbn_live`, `\d+ books`, `\d+ tags`, `\d+ notes`, `\d prices`,
	`\dT+`, `\dT mood`, `\d moods`, `\d+ moods`,
}

// TestPsqlCatalog runs psql's \d family against tupled serve and against
// PostgreSQL 15 with the same schema, as the same user and database name,
// and requires the same output.
func TestPsqlCatalog(t *testing.T) {
	psql, err := osexec.LookPath("psql")
	if err != nil {
		psql = filepath.Join(pgBin, "psql")
		if _, err := os.Stat(psql); err != nil {
			if os.Getenv("CI") == "" {
				t.Skip("psql is not installed (and CI is unset): skipped")
			}
			t.Fatalf("psql is needed in CI: %v", err)
		}
	}
	pgConn := pgoracle.Start(t)
	ts := startServer(t, nil)
	h, p := ts.hostPort()
	tpConn := fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres sslmode=disable", h, p)

	run := func(conn string, args ...string) string {
		t.Helper()
		cmd := osexec.Command(psql, append([]string{"-X", "-v", "ON_ERROR_STOP=1", "-P", "pager=off", conn}, args...)...)
		cmd.Env = append(os.Environ(), "PGTZ=UTC", "LC_ALL=C.UTF-8", "PSQLRC=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("psql %v on %q: %v\n%s", args, conn, err, out)
		}
		return string(out)
	}
	// -f: one statement per transaction (one -c would make them one
	// implicit transaction)
	schema := filepath.Join(t.TempDir(), "schema.sql")
	if err := os.WriteFile(schema, []byte(catalogSchema), 0o644); err != nil {
		t.Fatal(err)
	}
	run(pgConn, "-q", "-f", schema)
	run(tpConn, "-q", "-f", schema)
	for _, c := range psqlCatalogCommands {
		want := run(pgConn, "-c", c)
		got := run(tpConn, "-c", c)
		if got != want {
			t.Errorf("psql %s differs from PostgreSQL's\n--- tupled\n%s\n--- PostgreSQL 15\n%s", c, got, want)
		}
		if strings.Contains(got, "ERROR") {
			t.Errorf("psql %s: %s", c, got)
		}
	}
}
