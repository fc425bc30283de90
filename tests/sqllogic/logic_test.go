package sqllogic

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/internal/pgoracle"
	"github.com/tupled/tupled/pgwire"
	"github.com/tupled/tupled/sqlfe"
)

var (
	pgFlag      = flag.Bool("pg", false, "run the corpus against a throw-away PostgreSQL 15 instead of tupled (every file must pass)")
	rewriteFlag = flag.Bool("rewrite", false, "with -pg: rewrite the expectations of testdata/sql/*.test from PostgreSQL's answers")
)

const corpusDir = "../../testdata/sql"

// noColumns is a row of no columns (SELECT;) as a file writes it.
const noColumns = "(no columns)"

// stmtTimeout bounds one statement: a hang is a failure, not a stuck test.
const stmtTimeout = 30 * time.Second

func TestLogic(t *testing.T) {
	if *rewriteFlag && !*pgFlag {
		t.Fatal("-rewrite takes the expectations from PostgreSQL: use it with -pg")
	}
	paths, err := filepath.Glob(filepath.Join(corpusDir, "*.test"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no %s/*.test", corpusDir)
	}
	pending, err := readPending(filepath.Join(corpusDir, "pending.txt"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, p := range paths {
		names[filepath.Base(p)] = true
	}
	for name := range pending {
		if !names[name] {
			t.Errorf("pending.txt lists %s, which is not in %s", name, corpusDir)
		}
	}
	var pgConn string
	if *pgFlag {
		pgConn = pgoracle.Start(t)
	}
	total := 0
	for _, path := range paths {
		f, err := parseFile(path)
		if err != nil {
			t.Error(err)
			continue
		}
		total += len(f.records())
		name := strings.TrimSuffix(filepath.Base(path), ".test")
		t.Run(name, func(t *testing.T) {
			if *pgFlag {
				runPG(t, f, pgConn, name)
				return
			}
			reason, isPending := pending[filepath.Base(path)]
			runTupled(t, f, isPending, reason)
		})
	}
	t.Logf("%d files, %d records", len(paths), total)
}

// runTupled runs f on a fresh in-process tupled server.
func runTupled(t *testing.T, f *testFile, isPending bool, reason string) {
	conn := connect(t, startTupled(t))
	var fails []string
	run(t, f, conn, func(r *record, o outcome) {
		if msg := r.check(o); msg != "" {
			fails = append(fails, fmt.Sprintf("%s:%d:\n%s\n%s", f.path, r.line, r.sql, msg))
		}
	})
	switch {
	case isPending && len(fails) == 0:
		t.Errorf("%s now passes on tupled: remove it from pending.txt (it was pending for: %s)", f.path, reason)
	case isPending:
		t.Logf("pending (%s): %d of %d records differ from PostgreSQL; the first:\n%s", reason, len(fails), len(f.records()), fails[0])
		for _, m := range fails[1:] {
			t.Logf("also:\n%s", m)
		}
	default:
		for _, m := range fails {
			t.Error(m)
		}
	}
}

// runPG runs f in a database of its own on the PostgreSQL at connString,
// checking the expectations or, with -rewrite, rewriting them.
func runPG(t *testing.T, f *testFile, connString, name string) {
	admin := connect(t, connString)
	db := "sqllogic_" + name
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	for _, sql := range []string{fmt.Sprintf(`DROP DATABASE IF EXISTS %q WITH (FORCE)`, db), fmt.Sprintf(`CREATE DATABASE %q`, db)} {
		if _, err := admin.Exec(ctx, sql).ReadAll(); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
		defer cancel()
		if _, err := admin.Exec(ctx, fmt.Sprintf(`DROP DATABASE %q WITH (FORCE)`, db)).ReadAll(); err != nil {
			t.Errorf("drop database %s: %v", db, err)
		}
	})
	cfg, err := pgconn.ParseConfig(connString)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = db
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect to %s: %v", db, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	var outs []outcome
	run(t, f, conn, func(r *record, o outcome) {
		outs = append(outs, o)
		if *rewriteFlag {
			return
		}
		if msg := r.check(o); msg != "" {
			t.Errorf("%s:%d: PostgreSQL does not give the expected answer (run with -pg -rewrite to take its answers):\n%s\n%s", f.path, r.line, r.sql, msg)
		}
	})
	if *rewriteFlag {
		if err := f.write(outs); err != nil {
			t.Fatal(err)
		}
	}
}

// run sends each record's SQL on conn, in order, and hands each answer to
// fn. A failure other than an error the server reported (a lost
// connection, a timeout) ends the file.
func run(t *testing.T, f *testFile, conn *pgconn.PgConn, fn func(*record, outcome)) {
	t.Helper()
	for _, r := range f.records() {
		ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
		results, err := conn.Exec(ctx, r.sql).ReadAll()
		cancel()
		var o outcome
		var pe *pgconn.PgError
		switch {
		case errors.As(err, &pe):
			o.code, o.msg = pe.Code, pe.Message
		case err != nil:
			t.Fatalf("%s:%d: %s: %v (the connection cannot go on)", f.path, r.line, r.sql, err)
		case len(results) > 0:
			for _, row := range results[len(results)-1].Rows {
				vals := make([]string, len(row))
				for i, v := range row {
					vals[i] = formatValue(v)
				}
				line := strings.Join(vals, "\t")
				if len(row) == 0 {
					line = noColumns // a blank line would end the record
				}
				o.rows = append(o.rows, line)
			}
		}
		fn(r, o)
	}
}

func connect(t *testing.T, connString string) *pgconn.PgConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	c, err := pgconn.Connect(ctx, connString)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// startTupled starts an in-process tupled server over an in-memory
// database, as pgwire's tests do, and returns its connection string; it
// is shut down when t ends.
func startTupled(t *testing.T) string {
	t.Helper()
	db, err := tupled.Open("", &tupled.Options{VacuumInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := sqlfe.NewExecutor(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := pgwire.New(pgwire.Config{Executor: eng})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; !errors.Is(err, pgwire.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	return fmt.Sprintf("host=%s port=%s user=tester dbname=tupled sslmode=disable", host, port)
}
