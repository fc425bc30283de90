package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
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
	addr, stop, _ := startServeLog(t, args...)
	return addr, stop
}

// startServeLog is startServe that also returns the server's log (at
// level warn unless args say otherwise).
func startServeLog(t *testing.T, args ...string) (string, func() int, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	stderr := &syncBuffer{}
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, append([]string{"serve", "--listen", "127.0.0.1:0", "--log-level", "warn"}, args...), pw, stderr)
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
	}, stderr
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

// TestServeSaysInMemory: without --data serve warns on stderr, before it
// says it listens, that everything is lost when it stops (a banner in
// text logs, a warning record in JSON ones); with --data it does not.
func TestServeSaysInMemory(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, c := range []struct {
		args   []string
		banner bool
		record string
	}{
		{nil, true, "level=WARN msg=\"running in memory"},
		{[]string{"--data", ""}, true, "level=WARN msg=\"running in memory"},
		{[]string{"--log-format", "json"}, false, `"msg":"running in memory`},
		{[]string{"--data", t.TempDir()}, false, ""},
	} {
		_, stop, logs := startServeLog(t, c.args...)
		got := logs.String()
		if code := stop(); code != 0 {
			t.Errorf("serve %v: exit %d\n%s", c.args, code, logs)
		}
		if hasBanner := strings.Contains(got, "WARNING: running IN MEMORY: no --data given, everything is lost when\nthe server stops."); hasBanner != c.banner {
			t.Errorf("serve %v: banner %v, want %v; stderr:\n%s", c.args, hasBanner, c.banner, got)
		}
		if c.record == "" && strings.Contains(strings.ToLower(got), "in memory") || c.record != "" && !strings.Contains(got, c.record) {
			t.Errorf("serve %v: stderr %q, want the warning %q", c.args, got, c.record)
		}
	}
}

func TestServeRefusesTrustBeyondLoopback(t *testing.T) {
	var out, errb strings.Builder
	if code := run(context.Background(), []string{"serve", "--listen", "0.0.0.0:0"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "requires a password") {
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

// TestServeSecrets: --help never shows $TUPLED_PASSWORD; the password comes
// from --password-file, $TUPLED_PASSWORD or (deprecated, with a warning)
// --password; the log never shows it.
func TestServeSecrets(t *testing.T) {
	defer goleak.VerifyNone(t)
	const secret = "env-s3cret-value"
	t.Setenv("TUPLED_PASSWORD", secret)
	code, out, errs := runCLI("serve", "--help")
	if code != 0 || strings.Contains(out+errs, secret) {
		t.Fatalf("serve --help (exit %d) shows the password:\n%s%s", code, out, errs)
	}
	for _, want := range []string{"--password-file", "-metrics-insecure", "-authentication-timeout", "-max-startup-connections"} {
		if !strings.Contains(out, strings.TrimPrefix(want, "-")) {
			t.Errorf("help lacks %s", want)
		}
	}
	ctx := context.Background()
	connect := func(addr, pw string) error {
		c, err := pgx.Connect(ctx, "postgres://me:"+pw+"@"+addr+"/tupled?sslmode=disable")
		if err == nil {
			c.Close(ctx)
		}
		return err
	}
	wantAuth := func(addr, good string) {
		t.Helper()
		if err := connect(addr, good); err != nil {
			t.Fatalf("right password: %v", err)
		}
		var pe *pgconn.PgError
		if err := connect(addr, "wrong"); !errors.As(err, &pe) || pe.Code != "28P01" {
			t.Fatalf("wrong password: %v", err)
		}
	}
	// from the environment
	addr, stop, logs := startServeLog(t, "--log-level", "info")
	wantAuth(addr, secret)
	if code := stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if l := logs.String(); strings.Contains(l, secret) || !strings.Contains(l, "password=TUPLED_PASSWORD") {
		t.Fatalf("log: %s", l)
	}
	// from a file (its first line; it wins over the environment)
	file := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte("file-pw\r\nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, stop, logs = startServeLog(t, "--password-file", file, "--log-level", "info")
	wantAuth(addr, "file-pw")
	if code := stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if l := logs.String(); strings.Contains(l, "file-pw") || strings.Contains(l, "--password on the command line") {
		t.Fatalf("log: %s", l)
	}
	// on the command line: works, with a warning
	addr, stop, logs = startServeLog(t, "--password", "cli-pw")
	wantAuth(addr, "cli-pw")
	if code := stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if l := logs.String(); !strings.Contains(l, "--password on the command line is visible") || strings.Contains(l, "cli-pw") {
		t.Fatalf("log: %s", l)
	}
	for _, bad := range [][]string{
		{"--password", "x", "--password-file", file},
		{"--password-file", filepath.Join(t.TempDir(), "missing")},
		{"--password", ""},
	} {
		if code, _, errs := runCLI(append([]string{"serve", "--listen", "127.0.0.1:0"}, bad...)...); code == 0 || !strings.Contains(errs, "password") {
			t.Errorf("%v: exit %d: %s", bad, code, errs)
		}
	}
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, []byte("\nx\n"), 0o600)
	if code, _, errs := runCLI("serve", "--listen", "127.0.0.1:0", "--password-file", empty); code != 2 || !strings.Contains(errs, "empty") {
		t.Errorf("empty first line: exit %d: %s", code, errs)
	}
}

// TestServeMetricsBeyondLoopback: --metrics on a non-loopback address needs
// a password (then /metrics wants HTTP basic auth with it) or
// --metrics-insecure.
func TestServeMetricsBeyondLoopback(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Setenv("TUPLED_PASSWORD", "")
	code, _, errs := runCLI("serve", "--listen", "127.0.0.1:0", "--metrics", "0.0.0.0:0")
	if code != 2 || !strings.Contains(errs, "--metrics-insecure") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	metricsAddr := func(logs *syncBuffer) string {
		l := logs.String()
		i := strings.Index(l, "msg=metrics addr=")
		if i < 0 {
			t.Fatalf("no metrics address in logs: %s", l)
		}
		_, port, _ := strings.Cut(strings.Fields(l[i+len("msg=metrics addr="):])[0], "]:")
		return "127.0.0.1:" + port
	}
	get := func(addr, user, pw string) int {
		req, _ := http.NewRequest("GET", "http://"+addr+"/metrics", nil)
		if pw != "" {
			req.SetBasicAuth(user, pw)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	_, stop, logs := startServeLog(t, "--metrics", "0.0.0.0:0", "--metrics-insecure", "--log-level", "info")
	if got := get(metricsAddr(logs), "", ""); got != 200 {
		t.Fatalf("insecure metrics: %d", got)
	}
	stop()
	_, stop, logs = startServeLog(t, "--metrics", "0.0.0.0:0", "--password", "m-pw", "--log-level", "info")
	ma := metricsAddr(logs)
	for _, tc := range []struct {
		user, pw string
		want     int
	}{{"", "", 401}, {"prom", "wrong", 401}, {"prom", "m-pw", 200}} {
		if got := get(ma, tc.user, tc.pw); got != tc.want {
			t.Errorf("metrics with %q/%q: %d, want %d", tc.user, tc.pw, got, tc.want)
		}
	}
	http.DefaultClient.CloseIdleConnections()
	stop()
}

// TestServeHelperProcess is not a test: it is "tupled serve" in a child
// process (TestServeFileLimit), with the open files limit that
// TUPLED_TEST_NOFILE ("soft:hard") sets before serve starts.
func TestServeHelperProcess(t *testing.T) {
	lim := os.Getenv("TUPLED_TEST_NOFILE")
	if lim == "" {
		return
	}
	var rl syscall.Rlimit
	if _, err := fmt.Sscanf(lim, "%d:%d", &rl.Cur, &rl.Max); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	os.Exit(run(context.Background(), []string{"serve", "--listen", "127.0.0.1:0", "--log-level", "info", "--max-connections", "1000"}, os.Stdout, os.Stderr))
}

// serveChild starts "tupled serve" in a child process under the open
// files limit nofile ("soft:hard"); stop sends SIGTERM and returns the
// exit status.
func serveChild(t *testing.T, nofile string) (addr string, logs *syncBuffer, stop func() int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TUPLED_TEST_NOFILE="+nofile, "TUPLED_PASSWORD=")
	logs = &syncBuffer{}
	cmd.Stderr = logs
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan int, 1)
	br := bufio.NewReader(out)
	line, err := br.ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child did not start: %v\n%s", err, logs.String())
	}
	go func() {
		io.Copy(io.Discard, br)
		cmd.Wait()
		exited <- cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	return strings.TrimSpace(strings.TrimPrefix(line, "tupled serve: listening on ")), logs, func() int {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case c := <-exited:
			return c
		case <-time.After(30 * time.Second):
			t.Fatal("the child did not stop")
			return -1
		}
	}
}

// TestServeFileLimit runs "tupled serve" in a child process with a small
// open files limit. With soft < hard, serve raises the soft limit and
// serves more clients than the soft limit allows. With soft = hard, the
// clients that exhaust the descriptors make accept fail with EMFILE: serve
// backs off and retries instead of exiting, and serves again once they
// are gone.
func TestServeFileLimit(t *testing.T) {
	ctx := context.Background()
	connect := func(addr string) (*pgconn.PgConn, error) {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second) // a guard
		defer cancel()
		return pgconn.Connect(cctx, "postgres://me@"+addr+"/tupled?sslmode=disable")
	}
	t.Run("raise", func(t *testing.T) {
		addr, logs, stop := serveChild(t, "40:1024")
		var conns []*pgconn.PgConn
		for i := range 60 {
			c, err := connect(addr)
			if err != nil {
				t.Fatalf("connection %d: %v\n%s", i, err, logs.String())
			}
			conns = append(conns, c)
		}
		for _, c := range conns {
			if _, err := c.Exec(ctx, "SELECT 1").ReadAll(); err != nil {
				t.Fatal(err)
			}
			c.Close(ctx)
		}
		if strings.Contains(logs.String(), "accept failed") {
			t.Fatalf("accept failed though the limit could be raised:\n%s", logs.String())
		}
		if code := stop(); code != 0 {
			t.Fatalf("exit %d\n%s", code, logs.String())
		}
	})
	t.Run("EMFILE", func(t *testing.T) {
		addr, logs, stop := serveChild(t, "40:40")
		// idle clients (never authenticating) until accept runs out of
		// descriptors: each holds one in the child
		var idle []net.Conn
		defer func() {
			for _, c := range idle {
				c.Close()
			}
		}()
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(logs.String(), "accept failed; retrying") {
			if time.Now().After(deadline) || len(idle) > 200 {
				t.Fatalf("no EMFILE after %d connections:\n%s", len(idle), logs.String())
			}
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			idle = append(idle, c)
			time.Sleep(5 * time.Millisecond)
		}
		if !strings.Contains(logs.String(), "too many open files") {
			t.Fatalf("accept failed otherwise:\n%s", logs.String())
		}
		for _, c := range idle {
			c.Close()
		}
		idle = nil
		c, err := connect(addr)
		if err != nil {
			t.Fatalf("after EMFILE: %v\n%s", err, logs.String())
		}
		if _, err := c.Exec(ctx, "SELECT 1").ReadAll(); err != nil {
			t.Fatal(err)
		}
		c.Close(ctx)
		if code := stop(); code != 0 {
			t.Fatalf("exit %d\n%s", code, logs.String())
		}
	})
}
