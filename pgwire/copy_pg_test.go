package pgwire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/tupled/tupled/internal/pgoracle"
)

// TestCopyLikePostgres runs COPY statements with their data against
// PostgreSQL 15 (internal/pgoracle; skipped without it, and in -short) and
// against tupled, and compares what each says: the command tag and the
// data COPY TO sends, or the error's SQLSTATE, message, DETAIL and CONTEXT.
func TestCopyLikePostgres(t *testing.T) {
	conns := pgAndTupled(t)
	ctx := context.Background()
	setup := []string{
		"CREATE TABLE t (a int PRIMARY KEY, b text, c varchar(4), d smallint, e boolean DEFAULT true)",
		"CREATE TABLE p (id int PRIMARY KEY)",
		"INSERT INTO p VALUES (1)",
		"CREATE TABLE ch (id int PRIMARY KEY, pid int REFERENCES p)",
		"CREATE TABLE s (id serial PRIMARY KEY, v text NOT NULL)",
		"CREATE TABLE m (a int PRIMARY KEY, x numeric(4,1), f char(5), g char(2) DEFAULT 'g')",
	}
	type tc = struct{ sql, data string }
	cases := []tc{
		{"COPY t FROM STDIN", "1\tx\tabc\t1\tt\n2\t\\N\t\\N\t\\N\t\\N\n"},
		{"COPY t TO STDOUT", ""},
		{"COPY t (a, b) FROM STDIN", "3\tq\n"},
		{"COPY t TO STDOUT (FORMAT csv, HEADER)", ""},
		{"COPY t (a, c) FROM STDIN", "4\ttoolong\n"},
		{"COPY t (a, d) FROM STDIN", "4\t70000\n"},
		{"COPY t (a, e) FROM STDIN", "4\tmaybe\n"},
		{"COPY t (a) FROM STDIN", "1\n"},
		{"COPY t (a) FROM STDIN", "5\n6\n7x\n"},
		{"COPY t (a, b) FROM STDIN", "5\n"},
		{"COPY t (a, b) FROM STDIN", "5\tb\tc\n"},
		{"COPY t (a, b) FROM STDIN (FORMAT csv)", "5,\"unterminated\n"},
		{"COPY t (a, b) FROM STDIN (FORMAT csv, HEADER match)", "a,b\n8,h\n"},
		{"COPY t (a, b) FROM STDIN (FORMAT csv, HEADER match)", "a,x\n9,h\n"},
		{"COPY t (a, b) FROM STDIN (HEADER)", "anything\there\n10\tt\n"},
		{"COPY t (a, b) FROM STDIN (FORMAT csv, NULL 'N', QUOTE '*', ESCAPE '!')", "11,*a!*b*\n12,N\n13,*N*\n"},
		{"COPY t (a, b) TO STDOUT (FORMAT csv, NULL 'N', QUOTE '*', ESCAPE '!')", ""},
		{"COPY (SELECT a, b FROM t WHERE a > 10 ORDER BY a) TO STDOUT (DELIMITER '|')", ""},
		{"COPY ch FROM STDIN", "1\t1\n2\t2\n"},
		{"COPY s (v) FROM STDIN", "one\ntwo\n"},
		{"COPY s (v) FROM STDIN", "three\n\\N\n"},
		{"COPY s TO STDOUT", ""},
		{"COPY t FROM STDIN (FORMAT binary)", "PGCOPY\nxx"},
		{"COPY t FROM STDIN (DELIMITER 'x')", ""},
		{"COPY t FROM STDIN (FORMAT csv, DELIMITER ',', QUOTE ',')", ""},
		{"COPY t FROM STDIN (NULL 'a\tb')", ""},
		{"COPY t FROM STDIN (FORMAT binary, NULL 'x')", ""},
		{"COPY t TO STDOUT (HEADER match)", ""},
		{"COPY t FROM STDIN (ESCAPE 'x')", ""},
		{"COPY t (a, b) FROM STDIN", "20\t\\x41\\102\\z\n\\.\n21\tignored\n"},
		{"COPY (SELECT b FROM t WHERE a = 20) TO STDOUT", ""},
		{"COPY t (a, b) FROM STDIN (FORMAT csv)", "22,\\.\n"},
		{"COPY (SELECT b FROM t WHERE a = 22) TO STDOUT (FORMAT csv)", ""},
		{"COPY t (a, b) FROM STDIN", "30\tcr\rin\n31\tx\n"},
		{"COPY t (a, b) FROM STDIN", "32\ttrailing\\\n"},
		{"COPY t (a, b) FROM STDIN", "33\tcrlf\r\n34\tnext\r\n"},
		{"COPY t (a, b) FROM STDIN", "35\tlast line without newline"},
		{"COPY t (a, b) FROM STDIN", "36\t\\x\\.y\\N\n"},
		{"COPY t (a, b) FROM STDIN", "43\tbefore marker\\.\n44\tafter\n"},
		{"COPY t (a, b) FROM STDIN", "45\tx\r\n\\.\n"},
		{"COPY t (a, b) FROM STDIN", "46\tx\r47\ty\r\\.\r"},
		{"COPY t (a, b) FROM STDIN", "48\tx\n\\."},
		{"COPY t (a, b) FROM STDIN (FORMAT csv)", "49,x\r\n50,y\n"},
		{"COPY t (a, b) FROM STDIN (FORMAT csv)", "51,\\.x\n\\.\n52,z\n"},
		{"COPY t (a, b) FROM STDIN (FORMAT csv)", "37,\"a\"\"b\"\"\",\n38,\"\",\n39,\"x\ny\",\n"},
		{"COPY t (a, b) FROM STDIN (FORMAT csv)", "40,\"x\"y\n"},
		{"INSERT INTO t (a, b) VALUES (41, E'tab\\there\\nnl\\\\bs\\r\\b\\f'), (42, '')", ""},
		{"COPY (SELECT a, b FROM t WHERE a >= 30 ORDER BY a) TO STDOUT", ""},
		{"COPY (SELECT a, b FROM t WHERE a >= 30 ORDER BY a) TO STDOUT (FORMAT csv)", ""},
		{"COPY (SELECT a, b FROM t WHERE a >= 30 ORDER BY a) TO STDOUT (FORMAT binary)", ""},
		{"COPY t (a, b, c, d, e) FROM STDIN (FORMAT binary)", "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x04\x00\x00\x00\x32"},
		{"COPY t (a, b) FROM STDIN (FORMAT binary)", "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03"},
		{"COPY t (a) FROM STDIN (FORMAT binary)", "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x02\x00\x01"},
		{"COPY t (a) FROM STDIN (FORMAT binary)", "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x04\x00\x00\x00\x35\xff\xffjunk"},
		{"COPY t (a) FROM STDIN (FORMAT binary)", "PGCOPY\n\xff\r\n\x00\x00\x01\x00\x00\x00\x00\x00"},
		{"COPY m (a, x, f) FROM STDIN", "1\t12.34\t\n2\t-1.25\tab\n"},
		{"COPY m (a, x, f) FROM STDIN", "3\t12345.6\tx\n"},
		{"COPY m (a, x, f) FROM STDIN", "4\t1\tabcdefg\n"},
		{"COPY m FROM STDIN (FORMAT csv)", "5,1,abc  ,h\n"},
		{"COPY m TO STDOUT (FORMAT csv)", ""},
		{"COPY p FROM STDIN", func() string { // a duplicate past COPY's first batch of rows
			var sb strings.Builder
			for i := 2; i < 100; i++ {
				fmt.Fprintf(&sb, "%d\n", i)
			}
			return sb.String() + "1\n100\n"
		}()},
		{"COPY t (a, a) FROM STDIN", ""},
		{"COPY t (zz) FROM STDIN", ""},
	}
	for _, q := range setup {
		for name, c := range conns {
			if _, err := c.Exec(ctx, q).ReadAll(); err != nil {
				t.Fatalf("%s: %s: %v", name, q, err)
			}
		}
	}
	runCopyCases(t, conns, cases)
}

// TestCopyBulkLikePostgres: COPY into a table created or truncated in the
// same transaction (tupled loads it in bulk, sqlfe/bulk.go) and ALTER
// TABLE … ADD PRIMARY KEY after it, pgbench -i's sequence, answer as in
// PostgreSQL 15: the rows, a duplicate past the first chunk with its line,
// a rollback that leaves the table as it was, a savepoint (no bulk load),
// a write between two COPYs.
func TestCopyBulkLikePostgres(t *testing.T) {
	conns := pgAndTupled(t)
	lines := func(from, to int, dupAt, dupOf int) string { // rows a, 'v'||a, from..to (to < from: descending)
		var sb strings.Builder
		step := 1
		if to < from {
			step = -1
		}
		for i, n := from, 1; ; i, n = i+step, n+1 {
			a := i
			if n == dupAt {
				a = dupOf
			}
			fmt.Fprintf(&sb, "%d\tv%d\n", a, a)
			if i == to {
				break
			}
		}
		return sb.String()
	}
	accounts := func(n, dupAt int) string { // pgbench -i's rows
		var sb strings.Builder
		for i := 1; i <= n; i++ {
			a := i
			if i == dupAt {
				a = 7
			}
			fmt.Fprintf(&sb, "%d\t%d\t0\t\n", a, (i-1)/100+1)
		}
		return sb.String()
	}
	type tc = struct{ sql, data string }
	sum := "COPY (SELECT count(*), sum(a), min(v), max(v) FROM b) TO STDOUT"
	cases := []tc{
		{"BEGIN", ""},
		{"CREATE TABLE b (a int PRIMARY KEY, v text NOT NULL)", ""},
		{"COPY b FROM STDIN", lines(1, 5000, 0, 0)},
		{sum, ""},
		{"COPY b FROM STDIN", lines(9000, 5001, 0, 0)}, // a second COPY, descending
		{"COMMIT", ""},
		{sum, ""},
		{"BEGIN", ""},
		{"TRUNCATE b", ""},
		{"COPY b FROM STDIN", lines(1, 20000, 17000, 10)}, // a duplicate in the second chunk
		{"ROLLBACK", ""},
		{sum, ""},
		{"BEGIN", ""},
		{"TRUNCATE b", ""},
		{"COPY b FROM STDIN", lines(3000, 1, 0, 0)},
		{"COPY b FROM STDIN", lines(2000, 2001, 0, 0)}, // a duplicate of the first COPY's
		{"ROLLBACK", ""},
		{sum, ""},
		{"BEGIN", ""},
		{"TRUNCATE b", ""},
		{"SAVEPOINT s", ""},
		{"COPY b FROM STDIN", lines(1, 100, 0, 0)},
		{"ROLLBACK TO s", ""},
		{"COPY b FROM STDIN", lines(1, 50, 0, 0)},
		{"RELEASE s", ""},
		{"COMMIT", ""},
		{sum, ""},
		{"BEGIN", ""},
		{"TRUNCATE b", ""},
		{"COPY b FROM STDIN", lines(1, 10, 0, 0)},
		{"UPDATE b SET v = 'changed' WHERE a = 3", ""},
		{"DELETE FROM b WHERE a = 4", ""},
		{"COPY b FROM STDIN", lines(11, 20, 0, 0)},
		{"COPY b FROM STDIN", lines(4, 4, 0, 0)},
		{"COPY b FROM STDIN", lines(3, 3, 0, 0)},
		{"COMMIT", ""},
		{sum, ""},
		{"COPY (SELECT a, v FROM b WHERE a BETWEEN 2 AND 5 ORDER BY a) TO STDOUT", ""},
		{"CREATE TABLE acc (aid int NOT NULL, bid int, abalance int, filler char(84))", ""},
		{"BEGIN", ""},
		{"TRUNCATE acc", ""},
		{"COPY acc FROM STDIN", accounts(20000, 0)},
		{"COMMIT", ""},
		{"ALTER TABLE acc ADD PRIMARY KEY (aid)", ""},
		{"COPY (SELECT count(*), sum(aid), sum(bid), count(DISTINCT filler) FROM acc) TO STDOUT", ""},
		{"INSERT INTO acc VALUES (5, 1, 0, '')", ""},
		{"BEGIN", ""},
		{"TRUNCATE acc", ""},
		{"COPY acc FROM STDIN", accounts(10000, 9000)},
		{"ALTER TABLE acc DROP CONSTRAINT acc_pkey", ""},
		{"COMMIT", ""},
		{"BEGIN", ""},
		{"CREATE TABLE acc2 (aid int NOT NULL, bid int)", ""},
		{"COPY acc2 FROM STDIN", "1\t1\n2\t1\n2\t2\n"},
		{"ALTER TABLE acc2 ADD PRIMARY KEY (aid)", ""},
		{"ROLLBACK", ""},
		{"COPY (SELECT count(*) FROM acc) TO STDOUT", ""},
	}
	runCopyCases(t, conns, cases)
}

// pgAndTupled starts PostgreSQL 15 and tupled (skipped in -short) and
// connects to each: conns["pg"], conns["tupled"], closed at the test's end.
func pgAndTupled(t *testing.T) map[string]*pgconn.PgConn {
	t.Helper()
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	pgc := pgoracle.Start(t)
	ts := startServer(t, nil)
	ctx := context.Background()
	conns := map[string]*pgconn.PgConn{}
	for name, cs := range map[string]string{"pg": pgc, "tupled": ts.connString("")} {
		c, err := pgconn.Connect(ctx, cs)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(ctx) })
		conns[name] = c
	}
	return conns
}

// runCopyCases runs each case on both servers and compares what they
// answer.
func runCopyCases(t *testing.T, conns map[string]*pgconn.PgConn, cases []struct{ sql, data string }) {
	t.Helper()
	ctx := context.Background()
	type tc = struct{ sql, data string }
	run := func(c *pgconn.PgConn, x tc) string {
		var out bytes.Buffer
		var tag pgconn.CommandTag
		var err error
		if strings.Contains(x.sql, "TO STDOUT") {
			tag, err = c.CopyTo(ctx, &out, x.sql)
		} else if strings.Contains(x.sql, "FROM STDIN") {
			tag, err = c.CopyFrom(ctx, strings.NewReader(x.data), x.sql)
		} else {
			_, err = c.Exec(ctx, x.sql).ReadAll()
		}
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return fmt.Sprintf("ERROR %s: %s\nDETAIL: %s\nCONTEXT: %s", pe.Code, pe.Message, pe.Detail, pe.Where)
		}
		if err != nil {
			return "failed: " + err.Error()
		}
		return tag.String() + "\n" + out.String()
	}
	for _, x := range cases {
		want, got := run(conns["pg"], x), run(conns["tupled"], x)
		if got != want {
			t.Errorf("%s\n%q\n--- tupled\n%s\n--- PostgreSQL\n%s", x.sql, x.data, got, want)
		}
	}
}
