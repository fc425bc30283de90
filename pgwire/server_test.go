package pgwire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/keys"
	"github.com/tupled/tupled/sqlfe"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type testServer struct {
	srv  *Server
	db   *tupled.DB
	addr string
	done chan error
	reg  *prometheus.Registry
}

func startServer(t testing.TB, mod func(*Config)) *testServer {
	return startServerDT(t, 100*time.Millisecond, mod)
}

// startServerDT starts a server whose database has deadlock timeout dt.
func startServerDT(t testing.TB, dt time.Duration, mod func(*Config)) *testServer {
	t.Helper()
	return startServerLn(t, dt, nil, mod)
}

// startServerLn is startServerDT serving on wrap(ln) (wrap may be nil).
func startServerLn(t testing.TB, dt time.Duration, wrap func(net.Listener) net.Listener, mod func(*Config)) *testServer {
	t.Helper()
	db, err := tupled.Open("", &tupled.Options{DeadlockTimeout: dt, VacuumInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := sqlfe.NewExecutor(context.Background(), db, &sqlfe.ExecutorOptions{DeadlockTimeout: dt})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	cfg := Config{Executor: eng, ClientCheckInterval: 50 * time.Millisecond, Metrics: NewMetrics(reg, db)}
	if mod != nil {
		mod(&cfg)
	}
	ts := &testServer{srv: New(cfg), db: db, done: make(chan error, 1), reg: reg}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.addr = ln.Addr().String()
	if wrap != nil {
		ln = wrap(ln)
	}
	go func() { ts.done <- ts.srv.Serve(ln) }()
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

func (ts *testServer) stop(t testing.TB) {
	if ts.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.srv.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if err := <-ts.done; !errors.Is(err, ErrServerClosed) {
		t.Errorf("serve: %v", err)
	}
	ts.srv = nil
	ts.db.Close()
}

func (ts *testServer) connString(extra string) string {
	host, port, _ := net.SplitHostPort(ts.addr)
	return fmt.Sprintf("host=%s port=%s user=tester dbname=tupled sslmode=disable %s", host, port, extra)
}

func (ts *testServer) connect(t testing.TB) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), ts.connString(""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func exec(t testing.TB, c *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := c.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func pgErr(t testing.TB, err error, code string) *pgconn.PgError {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("want SQLSTATE %s, got %v", code, err)
	}
	if pe.Code != code {
		t.Fatalf("want SQLSTATE %s, got %s: %s", code, pe.Code, pe.Message)
	}
	return pe
}

// waitFor polls cond (state, not time: a bounded loop over db.Locks() etc.).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func waiters(db *tupled.DB) int {
	n := 0
	for _, l := range db.Locks() {
		if !l.Granted {
			n++
		}
	}
	return n
}

// lockRow creates t (k int PRIMARY KEY, v int) with rows k = v = 1..n and
// leaves c in a transaction holding k = 1 FOR UPDATE.
func lockRow(t testing.TB, c *pgx.Conn, n int) {
	t.Helper()
	exec(t, c, "CREATE TABLE t (k int PRIMARY KEY, v int)")
	for k := 1; k <= n; k++ {
		exec(t, c, "INSERT INTO t VALUES ($1, $1)", k)
	}
	exec(t, c, "BEGIN")
	exec(t, c, "SELECT * FROM t WHERE k = 1 FOR UPDATE")
}

// execBlocked runs sql on c in a goroutine, waits until it waits for a
// lock, and returns where its error will arrive.
func (ts *testServer) execBlocked(t testing.TB, c *pgx.Conn, sql string) <-chan error {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Exec(context.Background(), sql)
		errc <- err
	}()
	waitFor(t, "a lock wait of "+sql, func() bool { return waiters(ts.db) > 0 })
	return errc
}

func TestSimpleAndExtendedProtocol(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE t (k int PRIMARY KEY, v bigint NOT NULL, s text, b boolean)")
	exec(t, c, "INSERT INTO t VALUES ($1, $2, $3, $4), (2, 20, 'two', false)", 1, int64(10), "one", true)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe, pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol} {
		var k int32
		var v int64
		var s *string
		var b bool
		err := c.QueryRow(ctx, "SELECT k, v * 2, s, b FROM t WHERE k = $1", mode, 1).Scan(&k, &v, &s, &b)
		if err != nil || k != 1 || v != 20 || s == nil || *s != "one" || !b {
			t.Fatalf("mode %v: %v %d %d %v %v", mode, err, k, v, s, b)
		}
		rows, err := c.Query(ctx, "SELECT k FROM t WHERE k IN ($1, $2) ORDER BY k DESC", mode, 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		ks, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil || len(ks) != 2 || ks[0] != 2 || ks[1] != 1 {
			t.Fatalf("mode %v: %v %v", mode, ks, err)
		}
	}
	// prepared statements by name
	if _, err := c.Prepare(ctx, "upd", "UPDATE t SET v = v + $1 WHERE k = $2 RETURNING v"); err != nil {
		t.Fatal(err)
	}
	var v int64
	if err := c.QueryRow(ctx, "upd", 5, 1).Scan(&v); err != nil || v != 15 {
		t.Fatalf("prepared update: %v %d", err, v)
	}
	var one int
	var pid uint32
	if err := c.QueryRow(ctx, "SELECT 1, pg_backend_pid()").Scan(&one, &pid); err != nil || one != 1 || pid != c.PgConn().PID() {
		t.Fatalf("SELECT 1, pg_backend_pid(): %v %d %d", err, one, pid)
	}
	// the ParameterStatus set
	for k, want := range map[string]string{"server_version": "15.18", "server_encoding": "UTF8", "client_encoding": "UTF8", "DateStyle": "ISO, MDY", "integer_datetimes": "on", "standard_conforming_strings": "on"} {
		if got := c.PgConn().ParameterStatus(k); got != want {
			t.Errorf("ParameterStatus %s = %q, want %q", k, got, want)
		}
	}
	exec(t, c, "SET application_name = 'probe'")
	if got := c.PgConn().ParameterStatus("application_name"); got != "probe" {
		t.Errorf("application_name after SET: %q", got)
	}
	// an empty query and a multi-statement simple query
	if _, err := c.Exec(ctx, ""); err != nil {
		t.Fatal(err)
	}
	mrr := c.PgConn().Exec(ctx, "SELECT 1; SELECT 2")
	res, err := mrr.ReadAll()
	if err != nil || len(res) != 2 || string(res[1].Rows[0][0]) != "2" {
		t.Fatalf("multi-statement: %v %v", res, err)
	}
}

func TestTransactionStatusAndErrors(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE t (k int PRIMARY KEY, v int)")
	if s := c.PgConn().TxStatus(); s != 'I' {
		t.Fatalf("status %c", s)
	}
	exec(t, c, "BEGIN")
	if s := c.PgConn().TxStatus(); s != 'T' {
		t.Fatalf("status %c", s)
	}
	exec(t, c, "INSERT INTO t VALUES (1, 1)")
	_, err := c.Exec(ctx, "INSERT INTO t VALUES (1, 1)")
	pe := pgErr(t, err, "23505")
	if pe.Message != `duplicate key value violates unique constraint "t_pkey"` || pe.Detail != "Key (k)=(1) already exists." {
		t.Fatalf("23505: %q %q", pe.Message, pe.Detail)
	}
	if s := c.PgConn().TxStatus(); s != 'E' {
		t.Fatalf("status %c", s)
	}
	_, err = c.Exec(ctx, "SELECT 1")
	pe = pgErr(t, err, "25P02")
	if pe.Message != "current transaction is aborted, commands ignored until end of transaction block" {
		t.Fatal(pe.Message)
	}
	exec(t, c, "ROLLBACK")
	if s := c.PgConn().TxStatus(); s != 'I' {
		t.Fatalf("status %c", s)
	}
	for sql, code := range map[string]string{
		"SELECT * FROM nope":                              "42P01",
		"SELECT * FROM t, t":                              "42712", // table name "t" specified more than once
		"CREATE INDEX i ON t USING hash (v)":              "0A000",
		"SELECT k FROM t GROUP BY v":                      "42803", // k must appear in the GROUP BY clause
		"SAVEPOINT a":                                     "25P01", // outside a transaction block
		"SELEC 1":                                         "42601",
		"SELECT nope FROM t":                              "42703",
		"INSERT INTO t VALUES (NULL, 1)":                  "23502",
		"SELECT 1/0":                                      "22012",
		"BEGIN ISOLATION LEVEL SERIALIZABLE":              "0A000",
		"CREATE TABLE x (a int CHECK (a > 0) NO INHERIT)": "0A000",
		"CREATE TABLE x (a int PRIMARY KEY, b xml)":       "0A000",
	} {
		_, err := c.Exec(ctx, sql)
		pe := pgErr(t, err, code)
		if code == "42601" && pe.Position == 0 {
			t.Errorf("%s: syntax error without a position", sql)
		}
	}
	_, err = c.Exec(ctx, "SELECT * FROM nope")
	if pe := pgErr(t, err, "42P01"); pe.Message != `relation "nope" does not exist` {
		t.Fatal(pe.Message)
	}
}

func TestBatchErrorMidway(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE t (k int PRIMARY KEY, v int)")
	// A pipeline (one Sync): the error discards the rest and rolls back the
	// whole implicit transaction, as in PostgreSQL.
	b := &pgx.Batch{}
	b.Queue("INSERT INTO t VALUES ($1, $2)", 1, 1)
	b.Queue("INSERT INTO t VALUES ($1, $2)", 1, 2)
	b.Queue("INSERT INTO t VALUES ($1, $2)", 3, 3)
	br := c.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		t.Fatal(err)
	}
	_, err := br.Exec()
	pgErr(t, err, "23505")
	if _, err := br.Exec(); err == nil {
		t.Fatal("third statement ran after the error")
	}
	br.Close()
	var n int
	rows, _ := c.Query(ctx, "SELECT k FROM t")
	ks, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil || len(ks) != 0 {
		t.Fatalf("rows after failed batch: %v %v %d", ks, err, n)
	}
	// a successful batch inside BEGIN
	b = &pgx.Batch{}
	b.Queue("BEGIN")
	for i := 1; i <= 10; i++ {
		b.Queue("INSERT INTO t VALUES ($1, $2)", i, i*i)
	}
	b.Queue("SELECT v FROM t WHERE k = $1", 3)
	b.Queue("COMMIT")
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	// raw pipeline with pgconn: Sync between groups
	p := c.PgConn().StartPipeline(ctx)
	p.SendQueryParams("SELECT v FROM t WHERE k = $1", [][]byte{[]byte("4")}, nil, nil, nil)
	p.SendQueryParams("SELECT nope FROM t", nil, nil, nil, nil)
	p.SendPipelineSync()
	p.SendQueryParams("SELECT v FROM t WHERE k = $1", [][]byte{[]byte("5")}, nil, nil, nil)
	p.SendPipelineSync()
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		r, err := p.GetResults()
		if err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) {
				got = append(got, "error "+pe.Code)
				continue
			}
			t.Fatal(err)
		}
		if r == nil {
			break
		}
		switch r := r.(type) {
		case *pgconn.ResultReader:
			res := r.Read()
			if res.Err != nil {
				var pe *pgconn.PgError
				errors.As(res.Err, &pe)
				got = append(got, "error "+pe.Code)
			} else {
				got = append(got, string(res.Rows[0][0]))
			}
		case *pgconn.PipelineSync:
			got = append(got, "sync")
		}
		if len(got) == 5 {
			break
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "16,error 42703,sync,25,sync" {
		t.Fatalf("pipeline: %v", got)
	}
}

func TestCancelWaitingLock(t *testing.T) {
	ts := startServer(t, nil)
	c1, c2 := ts.connect(t), ts.connect(t)
	ctx := context.Background()
	lockRow(t, c1, 1)
	errc := ts.execBlocked(t, c2, "UPDATE t SET v = 2 WHERE k = 1")
	// pg_isolation_test_session_is_blocked sees it, from a third session
	c3 := ts.connect(t)
	var blocked bool
	q := fmt.Sprintf("SELECT pg_catalog.pg_isolation_test_session_is_blocked($1, '{%d,%d}')", c1.PgConn().PID(), c2.PgConn().PID())
	if err := c3.QueryRow(ctx, q, int32(c2.PgConn().PID())).Scan(&blocked); err != nil || !blocked {
		t.Fatalf("is_blocked(c2) = %v, %v", blocked, err)
	}
	if err := c3.QueryRow(ctx, q, int32(c1.PgConn().PID())).Scan(&blocked); err != nil || blocked {
		t.Fatalf("is_blocked(c1) = %v, %v", blocked, err)
	}
	var n int
	if err := c3.QueryRow(ctx, "SELECT pid FROM pg_locks WHERE NOT granted").Scan(&n); err != nil || uint32(n) != c2.PgConn().PID() {
		t.Fatalf("pg_locks waiter pid %d, %v", n, err)
	}
	if err := c2.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	pe := pgErr(t, <-errc, "57014")
	if pe.Message != "canceling statement due to user request" {
		t.Fatal(pe.Message)
	}
	waitFor(t, "the wait to end", func() bool { return waiters(ts.db) == 0 })
	exec(t, c1, "COMMIT")
	exec(t, c2, "SELECT 1") // the session goes on
}

func TestStatementTimeoutAndClientGone(t *testing.T) {
	ts := startServer(t, nil)
	c1, c2 := ts.connect(t), ts.connect(t)
	ctx := context.Background()
	lockRow(t, c1, 1)
	exec(t, c2, "SET statement_timeout = '50ms'")
	_, err := c2.Exec(ctx, "SELECT * FROM t WHERE k = 1 FOR SHARE")
	if pe := pgErr(t, err, "57014"); pe.Message != "canceling statement due to statement timeout" {
		t.Fatal(pe.Message)
	}
	exec(t, c2, "SET statement_timeout = 0")
	exec(t, c2, "SET lock_timeout = '50ms'")
	_, err = c2.Exec(ctx, "SELECT * FROM t WHERE k = 1 FOR SHARE")
	if pe := pgErr(t, err, "55P03"); pe.Message != "canceling statement due to lock timeout" {
		t.Fatal(pe.Message)
	}
	// a client that goes away while waiting: its wait ends
	c3, err := pgconn.Connect(ctx, ts.connString(""))
	if err != nil {
		t.Fatal(err)
	}
	go c3.Exec(ctx, "SELECT * FROM t WHERE k = 1 FOR UPDATE").ReadAll()
	waitFor(t, "c3 to wait", func() bool { return waiters(ts.db) > 0 })
	c3.Conn().Close()
	waitFor(t, "c3's wait to end", func() bool { return waiters(ts.db) == 0 })
	exec(t, c1, "COMMIT")
}

func TestNowaitSkipLockedDeadlock(t *testing.T) {
	ts := startServer(t, nil)
	c1, c2 := ts.connect(t), ts.connect(t)
	ctx := context.Background()
	lockRow(t, c1, 3)
	_, err := c2.Exec(ctx, "SELECT * FROM t WHERE k = 1 FOR SHARE NOWAIT")
	if pe := pgErr(t, err, "55P03"); pe.Message != `could not obtain lock on row in relation "t"` {
		t.Fatal(pe.Message)
	}
	var k int32
	if err := c2.QueryRow(ctx, "SELECT k FROM t ORDER BY k LIMIT 1 FOR UPDATE SKIP LOCKED").Scan(&k); err != nil || k != 2 {
		t.Fatalf("SKIP LOCKED: %d %v", k, err)
	}
	// FOR KEY SHARE does not conflict with a no-key update
	exec(t, c2, "BEGIN")
	exec(t, c2, "SELECT * FROM t WHERE k = 2 FOR KEY SHARE")
	exec(t, c1, "UPDATE t SET v = 20 WHERE k = 2")
	// ... but a key update waits: observe the wait, then end it
	errc := ts.execBlocked(t, c1, "UPDATE t SET k = 22 WHERE k = 2")
	// deadlock: c2 now waits for c1's row 1
	_, err = c2.Exec(ctx, "SELECT * FROM t WHERE k = 1 FOR SHARE")
	var err1 error = <-errc
	// exactly one of the two is the victim
	var victim error
	switch {
	case err != nil && err1 == nil:
		victim = err
		exec(t, c1, "COMMIT")
		exec(t, c2, "ROLLBACK")
	case err == nil && err1 != nil:
		victim = err1
		exec(t, c1, "ROLLBACK")
		exec(t, c2, "COMMIT")
	default:
		t.Fatalf("deadlock outcome: c2 %v, c1 %v", err, err1)
	}
	if pe := pgErr(t, victim, "40P01"); pe.Message != "deadlock detected" {
		t.Fatal(pe.Message)
	}
	if got := testutil.ToFloat64(ts.srv.cfg.Metrics.errors.WithLabelValues("40P01")); got != 1 {
		t.Fatalf("40P01 metric %v", got)
	}
}

func TestManyConnections(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 200
	}
	ts := startServer(t, nil)
	ctx := context.Background()
	conns := make([]*pgconn.PgConn, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 64)
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			c, err := pgconn.Connect(ctx, ts.connString(""))
			if err != nil {
				errs <- err
				return
			}
			conns[i] = c
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := ts.srv.Sessions(); got != n {
		t.Fatalf("%d sessions, want %d", got, n)
	}
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.Exec(ctx, fmt.Sprintf("SELECT %d", i)).ReadAll()
			if err != nil || string(res[0].Rows[0][0]) != fmt.Sprint(i) {
				t.Errorf("conn %d: %v", i, err)
			}
			c.Close(ctx)
		}()
	}
	wg.Wait()
	waitFor(t, "sessions to end", func() bool { return ts.srv.Sessions() == 0 })
}

func TestMaxConnections(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxConns = 2 })
	ts.connect(t)
	ts.connect(t)
	_, err := pgx.Connect(context.Background(), ts.connString(""))
	if pe := pgErr(t, err, "53300"); pe.Message != "sorry, too many clients already" {
		t.Fatal(pe.Message)
	}
}

func TestSCRAM(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.Password = "s3cret" })
	ctx := context.Background()
	c, err := pgx.Connect(ctx, ts.connString("password=s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	exec(t, c, "SELECT 1")
	c.Close(ctx)
	_, err = pgx.Connect(ctx, ts.connString("password=wrong"))
	pgErr(t, err, "28P01")
}

func TestGracefulShutdown(t *testing.T) {
	ts := startServer(t, nil)
	c1, c2 := ts.connect(t), ts.connect(t)
	ctx := context.Background()
	exec(t, c1, "CREATE TABLE t (k int PRIMARY KEY, v int)")
	exec(t, c1, "INSERT INTO t VALUES (1, 1)")
	exec(t, c1, "BEGIN")
	exec(t, c1, "UPDATE t SET v = 2 WHERE k = 1")
	errc := ts.execBlocked(t, c2, "SELECT * FROM t WHERE k = 1 FOR UPDATE")
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := ts.srv.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	pgErr(t, <-errc, "57P01")
	if _, err := c1.Exec(ctx, "SELECT 1"); err == nil {
		t.Fatal("session survived shutdown")
	}
	if n := ts.srv.Sessions(); n != 0 {
		t.Fatalf("%d sessions after shutdown", n)
	}
	// the open transaction was rolled back: its row lock is gone and v is 1
	tx, err := ts.db.Begin(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Lock(ctx, "t", keys.MustPack(1), tupled.ForUpdate, tupled.NoWait); err != nil {
		t.Fatalf("row still locked after shutdown: %v", err)
	}
	tx.Rollback()
	if _, err := pgx.Connect(ctx, ts.connString("connect_timeout=2")); err == nil {
		t.Fatal("connected after shutdown")
	}
}

// TestShutdownAfterStatementFinished forces the ordering TestGracefulShutdown
// meets only by chance: a statement finishes executing, then shutdown
// interrupts it before its result is sent. The shutdown wins, as
// PostgreSQL's pending die interrupt: the client gets 57P01 and the
// statement's work (an autocommit INSERT, which would commit at the end
// of its group) is rolled back.
func TestShutdownAfterStatementFinished(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []any // none: pgx uses the simple protocol
	}{
		{"simple", nil},
		{"extended", []any{2, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var srv *Server         // read by the hook after target's store
			var target atomic.Int32 // the pid whose next statement is held
			executed := make(chan struct{})
			interrupted := make(chan bool, 1) // whether shutdown had begun
			release := make(chan struct{})    // a guard for a failing test
			testHookExecuted = func(ctx context.Context, pid int32) {
				if pid == 0 || !target.CompareAndSwap(pid, 0) {
					return
				}
				close(executed)
				select {
				case <-ctx.Done():
				case <-release:
				}
				interrupted <- srv.shutting.Load()
			}
			t.Cleanup(func() { testHookExecuted = nil }) // after the server stops
			ts := startServer(t, nil)
			srv = ts.srv
			c := ts.connect(t)
			t.Cleanup(func() { close(release) }) // before the server stops
			ctx := context.Background()
			exec(t, c, "CREATE TABLE t (k int PRIMARY KEY, v int)")
			exec(t, c, "INSERT INTO t VALUES (1, 1)")

			target.Store(int32(c.PgConn().PID()))
			errc := make(chan error, 1)
			sql := "INSERT INTO t VALUES (2, 2)"
			if tc.args != nil {
				sql = "INSERT INTO t VALUES ($1, $2)"
			}
			go func() {
				_, err := c.Exec(ctx, sql, tc.args...)
				errc <- err
			}()
			select {
			case <-executed:
			case <-time.After(20 * time.Second): // a guard, not a wait
				t.Fatal("the INSERT never finished executing")
			}
			// the INSERT has finished and its result is not sent yet
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := ts.srv.Shutdown(sctx); err != nil {
				t.Fatal(err)
			}
			if !<-interrupted {
				t.Fatal("the statement was released before shutdown began")
			}
			pgErr(t, <-errc, "57P01")
			if n := ts.srv.Sessions(); n != 0 {
				t.Fatalf("%d sessions after shutdown", n)
			}
			// the INSERT was rolled back: no lock left, no row 2
			if locks := ts.db.Locks(); len(locks) != 0 {
				t.Fatalf("locks after shutdown: %+v", locks)
			}
			tx, err := ts.db.Begin(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if v, err := tx.Get(ctx, "t", keys.MustPack(2)); !errors.Is(err, tupled.ErrNotFound) {
				t.Fatalf("row 2 after shutdown: %x %v", v, err)
			}
			if _, err := tx.Get(ctx, "t", keys.MustPack(1)); err != nil {
				t.Fatalf("row 1: %v", err)
			}
		})
	}
}

// TestPgSleepHonoursCancel: pg_sleep ends at statement_timeout (57014
// with PostgreSQL's wording: the statement's context ends the wait), and
// the session goes on.
func TestPgSleepHonoursCancel(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	exec(t, c, "SET statement_timeout = '50ms'")
	_, err := c.Exec(context.Background(), "SELECT pg_sleep(600)")
	if pe := pgErr(t, err, "57014"); pe.Message != "canceling statement due to statement timeout" {
		t.Fatal(pe.Message)
	}
	exec(t, c, "SET statement_timeout = 0")
	exec(t, c, "SELECT pg_sleep(0.001)")
}
