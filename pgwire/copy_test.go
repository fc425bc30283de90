package pgwire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

func count(t *testing.T, c *pgx.Conn, table string) int64 {
	t.Helper()
	var n int64
	if err := c.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// pgx's CopyFrom: binary format, COPY sent by the simple protocol after a
// Describe of "select cols from t" for the types.
func TestCopyFromBinaryPgx(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE acc (aid int PRIMARY KEY, bid int, abalance bigint, filler char(84), note text, ok boolean)")
	const n = 10000
	rows := make([][]any, n)
	for i := range rows {
		var note any = fmt.Sprintf("n%d\t\\", i)
		if i%10 == 0 {
			note = nil
		}
		rows[i] = []any{int32(i + 1), int32(i % 7), int64(i) * 3, "", note, i%2 == 0}
	}
	got, err := c.CopyFrom(ctx, pgx.Identifier{"acc"}, []string{"aid", "bid", "abalance", "filler", "note", "ok"}, pgx.CopyFromRows(rows))
	if err != nil || got != n {
		t.Fatalf("CopyFrom: %d %v", got, err)
	}
	if k := count(t, c, "acc"); k != n {
		t.Fatalf("count %d", k)
	}
	var sum, nulls int64
	var filler, note string
	if err := c.QueryRow(ctx, "SELECT sum(abalance), count(*) FILTER (WHERE note IS NULL) FROM acc").Scan(&sum, &nulls); err != nil {
		t.Fatal(err)
	}
	if sum != 3*n*(n-1)/2 || nulls != n/10 {
		t.Fatalf("sum %d nulls %d", sum, nulls)
	}
	if err := c.QueryRow(ctx, "SELECT filler, note FROM acc WHERE aid = 6").Scan(&filler, &note); err != nil {
		t.Fatal(err)
	}
	if filler != strings.Repeat(" ", 84) || note != "n5\t\\" {
		t.Fatalf("filler %q note %q", filler, note)
	}
	// a duplicate key in the batch: nothing of it stays
	_, err = c.CopyFrom(ctx, pgx.Identifier{"acc"}, []string{"aid"}, pgx.CopyFromRows([][]any{{int32(n + 1)}, {int32(1)}}))
	pe := pgErr(t, err, "23505")
	if pe.Where != "COPY acc, line 2" {
		t.Fatalf("where %q", pe.Where)
	}
	if k := count(t, c, "acc"); k != n {
		t.Fatalf("count after the failed COPY %d", k)
	}
}

func copyIn(t *testing.T, c *pgx.Conn, sql, data string) (pgconn.CommandTag, error) {
	t.Helper()
	return c.PgConn().CopyFrom(context.Background(), strings.NewReader(data), sql)
}

func copyOut(t *testing.T, c *pgx.Conn, sql string) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := c.PgConn().CopyTo(context.Background(), &b, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return b.String()
}

func TestCopyTextAndCSV(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE t (a int PRIMARY KEY, b text, c varchar(8) DEFAULT 'dflt')")
	// text: NULLs, escapes (tab, newline, backslash, octal, hex), CRLF ends
	text := "1\tplain\tx\r\n2\t\\N\t\\N\r\n3\ttab\\there\\nnl \\\\ bs \\101\\x42\ty\r\n4\t\t\r\n"
	tag, err := copyIn(t, c, "COPY t FROM STDIN", text)
	if err != nil || tag.String() != "COPY 4" {
		t.Fatalf("%v %v", tag, err)
	}
	var b, cc *string
	if err := c.QueryRow(ctx, "SELECT b, c FROM t WHERE a = 3").Scan(&b, &cc); err != nil {
		t.Fatal(err)
	}
	if *b != "tab\there\nnl \\ bs AB" || *cc != "y" {
		t.Fatalf("%q %q", *b, *cc)
	}
	if err := c.QueryRow(ctx, "SELECT b, c FROM t WHERE a = 2").Scan(&b, &cc); err != nil || b != nil || cc != nil {
		t.Fatalf("NULLs: %v %v %v", b, cc, err)
	}
	want := "1\tplain\tx\n2\t\\N\t\\N\n3\ttab\\there\\nnl \\\\ bs AB\ty\n4\t\t\n"
	if got := copyOut(t, c, "COPY t TO STDOUT"); got != want {
		t.Fatalf("text out\n%q\nwant\n%q", got, want)
	}
	// a column list: the others get their defaults
	if _, err := copyIn(t, c, "COPY t (b, a) FROM STDIN", "five\t5\n"); err != nil {
		t.Fatal(err)
	}
	if got := copyOut(t, c, "COPY (SELECT a, c FROM t WHERE a = 5) TO STDOUT"); got != "5\tdflt\n" {
		t.Fatalf("default: %q", got)
	}
	exec(t, c, "DELETE FROM t")

	// csv: quotes, embedded delimiters and newlines, "" vs NULL, HEADER
	csv := "a,b,c\n1,\"x,y\",\"say \"\"hi\"\"\"\n2,\"two\nlines\",\n3,\"\",plain\n"
	if tag, err := copyIn(t, c, "COPY t FROM STDIN WITH (FORMAT csv, HEADER)", csv); err != nil || tag.String() != "COPY 3" {
		t.Fatalf("%v %v", tag, err)
	}
	if err := c.QueryRow(ctx, "SELECT b, c FROM t WHERE a = 2").Scan(&b, &cc); err != nil || *b != "two\nlines" || cc != nil {
		t.Fatalf("csv row 2: %v %v %v", b, cc, err)
	}
	if err := c.QueryRow(ctx, "SELECT b FROM t WHERE a = 3").Scan(&b); err != nil || b == nil || *b != "" {
		t.Fatalf("csv quoted empty: %v %v", b, err)
	}
	if got := copyOut(t, c, "COPY t TO STDOUT (FORMAT csv, HEADER true)"); got != csv {
		t.Fatalf("csv out\n%q\nwant\n%q", got, csv)
	}
	// other delimiter, NULL string, quote and escape
	if got := copyOut(t, c, "COPY t (a, b) TO STDOUT WITH (FORMAT csv, DELIMITER ';', NULL 'NUL', QUOTE '''', ESCAPE '\\')"); got != "1;x,y\n2;'two\nlines'\n3;\n" {
		t.Fatalf("csv options: %q", got)
	}
	exec(t, c, "DELETE FROM t")
	if _, err := copyIn(t, c, "COPY t FROM STDIN (FORMAT csv, DELIMITER '|', NULL 'NUL', QUOTE '''', ESCAPE '\\', FREEZE)", "1|'it\\'s'|NUL\n2|'NUL'|''\n"); err != nil {
		t.Fatal(err)
	}
	if got := copyOut(t, c, "COPY t TO STDOUT (FORMAT text, DELIMITER ',', NULL '-')"); got != "1,it's,-\n2,NUL,\n" {
		t.Fatalf("%q", got)
	}
	// the end marker: what follows it is ignored
	exec(t, c, "DELETE FROM t")
	if tag, err := copyIn(t, c, "COPY t (a) FROM STDIN", "7\n\\.\nnot data\n"); err != nil || tag.String() != "COPY 1" {
		t.Fatalf("%v %v", tag, err)
	}
	// an empty COPY
	if tag, err := copyIn(t, c, "COPY t FROM STDIN", ""); err != nil || tag.String() != "COPY 0" {
		t.Fatalf("empty: %v %v", tag, err)
	}
	if got := copyOut(t, c, "COPY (SELECT a FROM t WHERE a > 100) TO STDOUT"); got != "" {
		t.Fatalf("empty out %q", got)
	}
}

func TestCopyBinaryOut(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	exec(t, c, "CREATE TABLE t (a int PRIMARY KEY, b text, n bigint)")
	exec(t, c, "INSERT INTO t VALUES (1, 'one', NULL), (2, NULL, -5)")
	got := copyOut(t, c, "COPY t TO STDOUT (FORMAT binary)")
	want := "PGCOPY\n\xff\r\n\x00" + "\x00\x00\x00\x00" + "\x00\x00\x00\x00" +
		"\x00\x03" + "\x00\x00\x00\x04\x00\x00\x00\x01" + "\x00\x00\x00\x03one" + "\xff\xff\xff\xff" +
		"\x00\x03" + "\x00\x00\x00\x04\x00\x00\x00\x02" + "\xff\xff\xff\xff" + "\x00\x00\x00\x08\xff\xff\xff\xff\xff\xff\xff\xfb" +
		"\xff\xff"
	if got != want {
		t.Fatalf("binary out\n%q\nwant\n%q", got, want)
	}
	// and back in
	exec(t, c, "CREATE TABLE u (a int PRIMARY KEY, b text, n bigint)")
	if tag, err := copyIn(t, c, "COPY u FROM STDIN BINARY", got); err != nil || tag.String() != "COPY 2" {
		t.Fatalf("%v %v", tag, err)
	}
	if again := copyOut(t, c, "COPY u TO STDOUT (FORMAT binary)"); again != want {
		t.Fatalf("round trip\n%q", again)
	}
	// bad framing: 22P04
	exec(t, c, "DELETE FROM u")
	for _, bad := range []string{"PGCOPY\n", "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00", got + "x", "NOTCOPY...."} {
		_, err := copyIn(t, c, "COPY u FROM STDIN (FORMAT binary)", bad)
		pgErr(t, err, "22P04")
	}
}

func TestCopyErrors(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	exec(t, c, "CREATE TABLE t (a int PRIMARY KEY, b text NOT NULL)")
	// a bad value on line 3: 22P02 naming line and column; nothing stays
	_, err := copyIn(t, c, "COPY t FROM STDIN", "1\tx\n2\ty\nthree\tz\n4\tw\n")
	pe := pgErr(t, err, "22P02")
	if pe.Where != `COPY t, line 3, column a: "three"` || pe.Message != `invalid input syntax for type integer: "three"` {
		t.Fatalf("%q %q", pe.Message, pe.Where)
	}
	if n := count(t, c, "t"); n != 0 {
		t.Fatalf("%d rows after the failed COPY", n)
	}
	for _, tc := range []struct{ data, code, msg, where string }{
		{"1\tx\textra\n", "22P04", "extra data after last expected column", `COPY t, line 1: "1	x	extra"`},
		{"1\n", "22P04", `missing data for column "b"`, `COPY t, line 1: "1"`},
		{"1\t\\N\n", "23502", `null value in column "b" of relation "t" violates not-null constraint`, `COPY t, line 1: "1	\N"`},
		{"1\ta\n2\tb\r\n", "22P04", "literal carriage return found in data", "COPY t, line 2"},
		{"1\ta\r2\tb\n", "22P04", "literal newline found in data", "COPY t, line 2"},
		{"\\.x\n", "22P04", "end-of-copy marker corrupt", "COPY t, line 1"},
		{"1\t\\xff\n", "22021", "", `COPY t, line 1, column b: "` + "\xff" + `"`},
	} {
		_, err := copyIn(t, c, "COPY t FROM STDIN", tc.data)
		pe := pgErr(t, err, tc.code)
		if (tc.msg != "" && pe.Message != tc.msg) || (tc.where != "" && pe.Where != tc.where) {
			t.Errorf("%q: %q %q", tc.data, pe.Message, pe.Where)
		}
	}
	_, err = copyIn(t, c, "COPY t FROM STDIN CSV", "1,\"open\n")
	pgErr(t, err, "22P04")
	// statements refused at analysis
	for _, tc := range []struct{ sql, code string }{
		{"COPY t FROM '/etc/passwd'", "0A000"},
		{"COPY t TO '/tmp/x'", "0A000"},
		{"COPY t FROM PROGRAM 'cat'", "0A000"},
		{"COPY t FROM STDIN (FORMAT xml)", "22023"},
		{"COPY t FROM STDIN (DELIMITER 'ab')", "0A000"},
		{"COPY t FROM STDIN (FORMAT binary, HEADER)", "0A000"},
		{"COPY t FROM STDIN (QUOTE '\"')", "0A000"},
		{"COPY t FROM STDIN (FORMAT csv, FORMAT text)", "42601"},
		{"COPY t FROM STDIN (BOGUS 1)", "42601"},
		{"COPY t (nope) FROM STDIN", "42703"},
		{"COPY nope FROM STDIN", "42P01"},
		{"COPY t TO STDOUT (FORCE_QUOTE *)", "0A000"},
	} {
		_, err := c.Exec(context.Background(), tc.sql)
		pgErr(t, err, tc.code)
	}
	// inside a transaction block, a failed COPY fails the block
	exec(t, c, "BEGIN")
	exec(t, c, "INSERT INTO t VALUES (100, 'kept?')")
	_, err = copyIn(t, c, "COPY t FROM STDIN", "101\tx\nbad\ty\n")
	pgErr(t, err, "22P02")
	_, err = c.Exec(context.Background(), "SELECT 1")
	pgErr(t, err, "25P02")
	exec(t, c, "ROLLBACK")
	// and a good one commits with the block
	exec(t, c, "BEGIN")
	if _, err := copyIn(t, c, "COPY t FROM STDIN", "101\tx\n"); err != nil {
		t.Fatal(err)
	}
	exec(t, c, "COMMIT")
	if n := count(t, c, "t"); n != 1 {
		t.Fatalf("%d rows", n)
	}
}

// TestCopyBatchDuplicates: COPY FROM inserts its rows in batches
// (sqlfe/copy.go's copyBatch); a duplicate key is still reported with
// its own line and key, in the first batch, a later one or the last,
// partial one, and the failed COPY leaves nothing.
func TestCopyBatchDuplicates(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	exec(t, c, "CREATE TABLE u (a int PRIMARY KEY, b text UNIQUE)")
	rows := func(n, dupLine, dupOf int, col string) string {
		var sb strings.Builder
		for i := 1; i <= n; i++ {
			a, b := i, i
			if i == dupLine {
				if col == "a" {
					a = dupOf
				} else {
					b = dupOf
				}
			}
			fmt.Fprintf(&sb, "%d\tb%d\n", a, b)
		}
		return sb.String()
	}
	for _, tc := range []struct {
		n, dupLine, dupOf int
		col, detail       string
	}{
		{200, 10, 3, "a", "Key (a)=(3) already exists."},
		{200, 150, 3, "a", "Key (a)=(3) already exists."},
		{200, 199, 198, "a", "Key (a)=(198) already exists."},
		{130, 129, 1, "b", "Key (b)=(b1) already exists."},
	} {
		_, err := copyIn(t, c, "COPY u FROM STDIN", rows(tc.n, tc.dupLine, tc.dupOf, tc.col))
		pe := pgErr(t, err, "23505")
		if want := fmt.Sprintf("COPY u, line %d", tc.dupLine); pe.Where != want || pe.Detail != tc.detail {
			t.Errorf("duplicate on line %d: %q %q", tc.dupLine, pe.Where, pe.Detail)
		}
		if n := count(t, c, "u"); n != 0 {
			t.Fatalf("%d rows after the failed COPY", n)
		}
	}
	tag, err := copyIn(t, c, "COPY u FROM STDIN", rows(1000, 0, 0, "a"))
	if err != nil || tag.String() != "COPY 1000" {
		t.Fatalf("%q %v", tag, err)
	}
	if n := count(t, c, "u"); n != 1000 {
		t.Fatalf("%d rows", n)
	}
}

type failingReader struct {
	data string
	done bool
}

func (r *failingReader) Read(p []byte) (int, error) {
	if !r.done {
		r.done = true
		return copy(p, r.data), nil
	}
	return 0, errors.New("client gave up")
}

func TestCopyFailFromClient(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	exec(t, c, "CREATE TABLE t (a int PRIMARY KEY)")
	_, err := c.PgConn().CopyFrom(context.Background(), &failingReader{data: "1\n2\n"}, "COPY t FROM STDIN")
	pe := pgErr(t, err, "57014")
	if pe.Message != "COPY from stdin failed: client gave up" {
		t.Fatalf("%q", pe.Message)
	}
	if n := count(t, c, "t"); n != 0 {
		t.Fatalf("%d rows", n)
	}
}

// blockingReader hands out its data, then closes started and blocks until
// release closes.
type blockingReader struct {
	data             string
	sent             bool
	started, release chan struct{}
}

func (r *blockingReader) Read(p []byte) (int, error) {
	if !r.sent {
		r.sent = true
		return copy(p, r.data), nil
	}
	close(r.started)
	<-r.release
	return 0, io.EOF
}

// A client that goes away in the middle of a COPY: the server rolls the
// COPY back and ends the session (goleak, in TestMain, checks that nothing
// stays behind).
func TestCopyClientDisconnects(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	exec(t, c, "CREATE TABLE t (a int PRIMARY KEY)")
	c2, err := pgconn.Connect(context.Background(), ts.connString(""))
	if err != nil {
		t.Fatal(err)
	}
	var data strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&data, "%d\n", i)
	}
	r := &blockingReader{data: data.String(), started: make(chan struct{}), release: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := c2.CopyFrom(context.Background(), r, "COPY t FROM STDIN")
		done <- err
	}()
	<-r.started
	// the rows sent are in the COPY's transaction: wait until it holds t's lock
	waitFor(t, "the COPY's transaction", func() bool {
		for _, l := range ts.db.Locks() {
			if strings.Contains(l.Tag, "relation") && l.Granted {
				return true
			}
		}
		return false
	})
	_ = c2.Conn().Close()
	close(r.release)
	if err := <-done; err == nil {
		t.Fatal("CopyFrom on a closed connection succeeded")
	}
	waitFor(t, "the session's end", func() bool { return ts.srv.Sessions() == 1 })
	if n := count(t, c, "t"); n != 0 {
		t.Fatalf("%d rows after the client went away", n)
	}
	exec(t, c, "INSERT INTO t VALUES (1)") // no lock left behind
}

// COPY FROM STDIN through the extended protocol: Parse/Bind/Execute; the
// Sync sent before the data is ignored during the COPY (as libpq sends
// it), the one after CopyDone ends the group.
func TestCopyExtendedProtocol(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	exec(t, c, "CREATE TABLE t (a int PRIMARY KEY, b text)")
	pc := c.PgConn()
	fe := pc.Frontend()
	fe.Send(&pgproto3.Parse{Query: "COPY t FROM STDIN"})
	fe.Send(&pgproto3.Bind{})
	fe.Send(&pgproto3.Describe{ObjectType: 'P'})
	fe.Send(&pgproto3.Execute{})
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	expect := func(want ...string) {
		t.Helper()
		for _, w := range want {
			msg, err := fe.Receive()
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%T", msg)
			if cc, ok := msg.(*pgproto3.CommandComplete); ok {
				got += " " + string(cc.CommandTag)
			}
			if e, ok := msg.(*pgproto3.ErrorResponse); ok {
				got += " " + e.Code + " " + e.Message
			}
			if got != w {
				t.Fatalf("got %s, want %s", got, w)
			}
		}
	}
	expect("*pgproto3.ParseComplete", "*pgproto3.BindComplete", "*pgproto3.NoData", "*pgproto3.CopyInResponse")
	fe.Send(&pgproto3.CopyData{Data: []byte("1\tone\n2\t")})
	fe.Send(&pgproto3.CopyData{Data: []byte("two\n")})
	fe.Send(&pgproto3.CopyDone{})
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	expect("*pgproto3.CommandComplete COPY 2", "*pgproto3.ReadyForQuery")
	// another message in the middle of the data: 08P01, and the group's
	// remaining messages up to Sync are skipped
	fe.Send(&pgproto3.Parse{Query: "COPY t FROM STDIN"})
	fe.Send(&pgproto3.Bind{})
	fe.Send(&pgproto3.Execute{})
	fe.Send(&pgproto3.CopyData{Data: []byte("3\tthree\n")})
	fe.Send(&pgproto3.Query{String: "SELECT 1"})
	fe.Send(&pgproto3.CopyData{Data: []byte("4\tfour\n")})
	fe.Send(&pgproto3.CopyDone{})
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	expect("*pgproto3.ParseComplete", "*pgproto3.BindComplete", "*pgproto3.CopyInResponse",
		"*pgproto3.ErrorResponse 08P01 unexpected message type 0x51 during COPY from stdin", "*pgproto3.ReadyForQuery")
	if n := count(t, c, "t"); n != 2 {
		t.Fatalf("%d rows", n)
	}
	// COPY TO STDOUT in the extended protocol
	fe.Send(&pgproto3.Parse{Query: "COPY t TO STDOUT"})
	fe.Send(&pgproto3.Bind{})
	fe.Send(&pgproto3.Execute{})
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	expect("*pgproto3.ParseComplete", "*pgproto3.BindComplete", "*pgproto3.CopyOutResponse", "*pgproto3.CopyData", "*pgproto3.CopyData",
		"*pgproto3.CopyDone", "*pgproto3.CommandComplete COPY 2", "*pgproto3.ReadyForQuery")
}

// psql's \copy (COPY FROM STDIN / TO STDOUT under the hood) round-trips a
// file with the awkward characters, in text and csv, and \copy (select …)
// writes a query's rows.
func TestPsqlCopy(t *testing.T) {
	psql := filepath.Join(pgBin, "psql")
	needTool(t, psql)
	ts := startServer(t, nil)
	h, p := ts.hostPort()
	dir := t.TempDir()
	run := func(cmds ...string) string {
		t.Helper()
		args := []string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", h, "-p", p, "-U", "postgres", "-d", "postgres"}
		for _, c := range cmds {
			args = append(args, "-c", c)
		}
		out, err := osexec.Command(psql, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("psql %v: %v\n%s", cmds, err, out)
		}
		return string(out)
	}
	text := "1\tplain\t\\N\n2\ttab\\tnl\\nbs\\\\\tx\n3\t\tünïcode\n"
	csv := "a,b,c\n1,plain,\n2,\"tab\tnl\nbs\\\",x\n3,\"\",ünïcode\n"
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	run("CREATE TABLE t (a int PRIMARY KEY, b text, c text)", `\copy t from '`+in+`'`)
	out := filepath.Join(dir, "out.txt")
	run(`\copy t to '` + out + `'`)
	if got, _ := os.ReadFile(out); string(got) != text {
		t.Fatalf("text round trip\n%q\nwant\n%q", got, text)
	}
	outCSV := filepath.Join(dir, "out.csv")
	run(`\copy t to '` + outCSV + `' with (format csv, header)`)
	if got, _ := os.ReadFile(outCSV); string(got) != csv {
		t.Fatalf("csv out\n%q\nwant\n%q", got, csv)
	}
	run("TRUNCATE t", `\copy t from '`+outCSV+`' csv header`)
	run(`\copy t to '` + out + `'`)
	if got, _ := os.ReadFile(out); string(got) != text {
		t.Fatalf("csv round trip\n%q\nwant\n%q", got, text)
	}
	outQ := filepath.Join(dir, "q.txt")
	run(`\copy (select a, upper(b) from t where a > 1 order by a desc) to '` + outQ + `'`)
	if got, _ := os.ReadFile(outQ); string(got) != "3\t\n2\tTAB\\tNL\\nBS\\\\\n" {
		t.Fatalf("query out %q", got)
	}
	if got := run("SELECT count(*) FROM t"); !strings.Contains(got, " 3\n") {
		t.Fatalf("count: %s", got)
	}
}

// pgx's CopyFrom with the other column types (binary numeric, timestamp,
// smallint, varchar(n)), and their checks at the COPY.
func TestCopyFromBinaryTypes(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE ty (id serial PRIMARY KEY, n numeric, ts timestamp, s smallint, v varchar(3), big bigint)")
	when := time.Date(2024, 1, 15, 10, 30, 0, 123000, time.UTC)
	cols := []string{"n", "ts", "s", "v", "big"}
	got, err := c.CopyFrom(ctx, pgx.Identifier{"ty"}, cols, pgx.CopyFromRows([][]any{
		{1.5, when, int16(-7), "abc", int64(1) << 40},
		{nil, nil, nil, nil, nil},
	}))
	if err != nil || got != 2 {
		t.Fatalf("%d %v", got, err)
	}
	if out := copyOut(t, c, "COPY ty TO STDOUT"); out != "1\t1.5\t2024-01-15 10:30:00.000123\t-7\tabc\t1099511627776\n2\t\\N\t\\N\t\\N\t\\N\t\\N\n" {
		t.Fatalf("%q", out)
	}
	_, err = c.CopyFrom(ctx, pgx.Identifier{"ty"}, []string{"v"}, pgx.CopyFromRows([][]any{{"abcd"}}))
	pe := pgErr(t, err, "22001")
	if pe.Where != "COPY ty, line 1, column v" {
		t.Fatalf("%q", pe.Where)
	}
	// the column is described as int2, so pgx refuses 70000 itself (as
	// against PostgreSQL); the server's own check, in a text COPY
	_, err = c.CopyFrom(ctx, pgx.Identifier{"ty"}, []string{"s"}, pgx.CopyFromRows([][]any{{int32(70000)}}))
	if err == nil || !strings.Contains(err.Error(), "greater than maximum value for int2") {
		t.Fatalf("pgx encoding 70000 as the int2 column: %v", err)
	}
	_, err = c.PgConn().CopyFrom(ctx, strings.NewReader("70000\n"), "COPY ty (s) FROM STDIN")
	pgErr(t, err, "22003")
}

// TestCopyIntervalTypmod: COPY FROM reads an interval column's text with
// the column's typmod, as interval_in does (a bare 5 in an interval hour
// to minute is 5 minutes), and rounds interval(0)'s seconds; the rows are
// PostgreSQL 15's for the same input.
func TestCopyIntervalTypmod(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	exec(t, c, "CREATE TABLE itc (id int PRIMARY KEY, a interval hour to minute, b interval(0))")
	if _, err := copyIn(t, c, "COPY itc FROM STDIN", "1\t5\t1.5\n2\t1 day 02:03:04\t2.5 s\n"); err != nil {
		t.Fatal(err)
	}
	want := "1\t00:05:00\t00:00:02\n2\t1 day 02:03:00\t00:00:03\n"
	if got := copyOut(t, c, "COPY itc TO STDOUT"); got != want {
		t.Fatalf("COPY out %q, want %q", got, want)
	}
}
