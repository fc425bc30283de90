package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/tupled/tupled/internal/testcert"
	"go.uber.org/goleak"
)

// startServe runs "tupled serve" in-process and returns its address and a
// stop function (the signal's stand-in: cancelling run's context) that
// returns the exit status.
func startServe(t *testing.T, args ...string) (string, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, append([]string{"serve", "--listen", "127.0.0.1:0", "--log-level", "warn"}, args...), pw, &stderr)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("serve did not start: %v (exit %d)", err, <-code)
	}
	go io.Copy(io.Discard, pr)
	addr := strings.TrimSpace(strings.TrimPrefix(line, "tupled serve: listening on "))
	return addr, func() int {
		cancel()
		select {
		case c := <-code:
			return c
		case <-time.After(30 * time.Second):
			t.Fatal("serve did not stop")
			return -1
		}
	}
}

// syncBuffer is a log sink safe to read while the server writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestServeRestartKeepsTables(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	ctx := context.Background()
	addr, stop := startServe(t, "--data", dir, "--metrics", "127.0.0.1:0")
	c, err := pgx.Connect(ctx, "postgres://me@"+addr+"/tupled?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE a (k bigint PRIMARY KEY, v text)",
		"INSERT INTO a VALUES (1, 'one'), (2, 'two')",
		"CREATE TABLE gone (k int PRIMARY KEY)",
		"INSERT INTO gone VALUES (7)",
		"DROP TABLE gone",
		"CREATE TABLE gone (k int PRIMARY KEY, w boolean)",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO a VALUES (3, 'uncommitted')"); err != nil {
		t.Fatal(err)
	}
	if code := stop(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	c.Close(ctx)

	addr, stop = startServe(t, "--data", dir)
	defer stop()
	c, err = pgx.Connect(ctx, "postgres://me@"+addr+"/tupled?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rows, _ := c.Query(ctx, "SELECT k, v FROM a ORDER BY k")
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var k int64
		var v string
		err := r.Scan(&k, &v)
		return fmt.Sprintf("%d:%s", k, v), err
	})
	if err != nil || strings.Join(got, " ") != "1:one 2:two" {
		t.Fatalf("after restart: %v %v", got, err)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT k FROM gone").Scan(&n); err != pgx.ErrNoRows {
		t.Fatalf("recreated table is not empty: %v %d", err, n)
	}
}

func TestServeRefusesTrustBeyondLoopback(t *testing.T) {
	var out, errb strings.Builder
	if code := run(context.Background(), []string{"serve", "--listen", "0.0.0.0:0"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "requires --password") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}

func TestServeMetrics(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	code := make(chan int, 1)
	var errb syncBuffer
	go func() {
		code <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--log-level", "info"}, pw, &errb)
		pw.Close()
	}()
	br := bufio.NewReader(pr)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, br)
	addr := strings.TrimSpace(strings.TrimPrefix(line, "tupled serve: listening on "))
	c, err := pgx.Connect(ctx, "postgres://me@"+addr+"/tupled?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	c.Exec(ctx, "SELECT nope")
	// the metrics address is logged before "serving"
	logs := errb.String()
	i := strings.Index(logs, "msg=metrics addr=")
	if i < 0 {
		t.Fatalf("no metrics address in logs: %s", logs)
	}
	maddr := strings.Fields(logs[i+len("msg=metrics addr="):])[0]
	resp, err := http.Get("http://" + maddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"tupled_connections 1", "tupled_commits_total", `tupled_statement_errors_total{sqlstate="42703"} 1`, "tupled_lock_waits_total", "tupled_deadlocks_total", "tupled_multixacts_created_total", "tupled_wal_fsyncs_total"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	c.Close(ctx)
	cancel()
	if c := <-code; c != 0 {
		t.Fatalf("exit %d", c)
	}
}

// TestServeTLS: --tls-cert/--tls-key offer TLS, --tls-required refuses
// plain clients with 28000, and the flags are checked before serving.
func TestServeTLS(t *testing.T) {
	cert := testcert.New(t, "127.0.0.1")
	ca, crt, key := cert.WriteFiles(t, t.TempDir())
	for _, bad := range [][]string{
		{"--tls-cert", crt},
		{"--tls-key", key},
		{"--tls-required"},
		{"--tls-cert", key, "--tls-key", crt},
	} {
		var out, errb strings.Builder
		if code := run(context.Background(), append([]string{"serve", "--listen", "127.0.0.1:0"}, bad...), &out, &errb); code == 0 || !strings.Contains(errb.String(), "tls") {
			t.Fatalf("%v: exit %d: %s", bad, code, errb.String())
		}
	}

	addr, stop := startServe(t, "--tls-cert", crt, "--tls-key", key, "--tls-required")
	host, port, _ := strings.Cut(addr, ":")
	ctx := context.Background()
	conn := func(sslmode string) (*pgx.Conn, error) {
		return pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=me dbname=tupled sslmode=%s sslrootcert=%s", host, port, sslmode, ca))
	}
	c, err := conn("verify-full")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.PgConn().Conn().(*tls.Conn); !ok {
		t.Fatalf("connection is %T, not TLS", c.PgConn().Conn())
	}
	var one int
	if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1: %d %v", one, err)
	}
	c.Close(ctx)
	var pe *pgconn.PgError
	if _, err := conn("disable"); !errors.As(err, &pe) || pe.Code != "28000" {
		t.Fatalf("plain client: %v", err)
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
