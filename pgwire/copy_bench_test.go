package pgwire

import (
	"context"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/internal/pgoracle"
	"github.com/tupled/tupled/sqlfe"
)

// TestCopyBenchmark measures COPY pgbench_accounts FROM STDIN (text
// format, pgbench's own row shape) of TUPLED_COPY_BENCH rows (1000000 if
// it is "1") into tupled in memory, tupled on disk and PostgreSQL 15
// (internal/pgoracle: fsync off, over its unix socket), in alternating
// rounds (TUPLED_COPY_ROUNDS, default 3; TUPLED_COPY_ONLY=memory, disk,
// tupled or pg runs one side), and prints rows/s per round and the median.
// Not run unless TUPLED_COPY_BENCH is set:
//
//	TUPLED_COPY_BENCH=1 go test ./pgwire -run TestCopyBenchmark -v -timeout 30m
func TestCopyBenchmark(t *testing.T) {
	env := os.Getenv("TUPLED_COPY_BENCH")
	if env == "" {
		t.Skip("set TUPLED_COPY_BENCH=1 (or a row count) to run")
	}
	rows := 1_000_000
	if n, err := strconv.Atoi(env); err == nil && n > 1 {
		rows = n
	}
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("TUPLED_COPY_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	// Each tupled round gets a database of its own, closed after it (a
	// dropped table's rows, or the other database's, would otherwise stay
	// in the heap the next round's GC scans); every round starts from a
	// collected heap. PostgreSQL keeps its server and drops the table.
	type target struct {
		name  string
		start func() (conn string, stop func())
	}
	var targets []target
	only := os.Getenv("TUPLED_COPY_ONLY") // memory, disk, tupled (both) or pg
	if only == "" || only == "tupled" || only == "memory" {
		targets = append(targets, target{"tupled in memory", func() (string, func()) { return startBenchServer(t, "") }})
	}
	if only == "" || only == "tupled" || only == "disk" {
		targets = append(targets, target{"tupled on disk", func() (string, func()) { return startBenchServer(t, t.TempDir()) }})
	}
	if only == "" || only == "pg" {
		pgConn := pgoracle.Start(t)
		targets = append(targets, target{"PostgreSQL 15", func() (string, func()) { return pgConn, func() {} }})
	}
	ctx := context.Background()
	res := map[string][]float64{}
	for r := 0; r < rounds; r++ {
		for _, tg := range targets {
			conn, stop := tg.start()
			c, err := pgconn.Connect(ctx, conn)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{"DROP TABLE IF EXISTS pgbench_accounts",
				"CREATE TABLE pgbench_accounts (aid int PRIMARY KEY, bid int, abalance int, filler char(84))"} {
				if _, err := c.Exec(ctx, q).ReadAll(); err != nil {
					t.Fatalf("%s: %s: %v", tg.name, q, err)
				}
			}
			runtime.GC()
			start := time.Now()
			tag, err := c.CopyFrom(ctx, &accountsReader{n: rows}, "COPY pgbench_accounts FROM STDIN")
			d := time.Since(start)
			if err != nil || tag.RowsAffected() != int64(rows) {
				t.Fatalf("%s: %v %v", tg.name, tag, err)
			}
			rate := float64(rows) / d.Seconds()
			res[tg.name] = append(res[tg.name], rate)
			t.Logf("round %d %-17s %8.0f rows/s (%v)", r+1, tg.name, rate, d.Round(time.Millisecond))
			_ = c.Close(ctx)
			stop()
		}
	}
	for _, tg := range targets {
		rs := slices.Clone(res[tg.name])
		slices.Sort(rs)
		t.Logf("%-17s median %8.0f rows/s, rounds %.0f–%.0f", tg.name, rs[len(rs)/2], rs[0], rs[len(rs)-1])
	}
}

// startBenchServer serves a database (in memory for dir "") on loopback
// and returns its connection string and what stops it.
func startBenchServer(t *testing.T, dir string) (string, func()) {
	t.Helper()
	db, err := tupled.Open(dir, &tupled.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := sqlfe.NewExecutor(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{srv: New(Config{Executor: eng, Metrics: NewMetrics(prometheus.NewRegistry(), db)}), db: db, done: make(chan error, 1)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.addr = ln.Addr().String()
	go func() { ts.done <- ts.srv.Serve(ln) }()
	return ts.connString(""), func() { ts.stop(t) }
}

// accountsReader generates pgbench_accounts rows in COPY text format, as
// pgbench -i sends them: aid, bid, abalance 0, an empty filler.
type accountsReader struct {
	n, i int
	buf  []byte
}

func (r *accountsReader) Read(p []byte) (int, error) {
	for len(r.buf) < len(p) && r.i < r.n {
		r.i++
		r.buf = strconv.AppendInt(r.buf, int64(r.i), 10)
		r.buf = append(r.buf, '\t')
		r.buf = strconv.AppendInt(r.buf, int64((r.i-1)/100000+1), 10)
		r.buf = append(r.buf, "\t0\t\n"...)
	}
	if len(r.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.buf)
	r.buf = r.buf[:copy(r.buf, r.buf[n:])]
	return n, nil
}
