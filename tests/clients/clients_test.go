package clients

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/internal/pgoracle"
	"github.com/tupled/tupled/pgwire"
	"github.com/tupled/tupled/sqlfe"
)

var updateResults = flag.Bool("update-results", false, "write the client × step table to RESULTS.md")

const (
	debianPython = "/usr/bin/python3"
	jdbcJar      = "/usr/share/java/postgresql.jar"
	expectedFile = "expected-tupled.txt"
	resultsFile  = "RESULTS.md"
	// clientTimeout bounds one client's run against one server.
	clientTimeout = 2 * time.Minute
)

// client is one program or script: need says what is missing to run it
// ("" when it can run), argv its command line for a server URL.
type client struct {
	name string
	need func() string
	argv func(url string) []string
	dir  string
}

func clientsList(goBin func() (string, error)) []client {
	var cs []client
	for _, s := range []string{"stdlib-pgx", "stdlib-pq", "pgx", "gorm", "sqlc"} {
		s := s
		cs = append(cs, client{
			name: "go/" + s,
			need: func() string {
				if _, err := goBin(); err != nil {
					return fmt.Sprintf("building tests/clients/go failed: %v", err)
				}
				return ""
			},
			argv: func(url string) []string { b, _ := goBin(); return []string{b, "-suite", s, url} },
		})
	}
	for _, p := range []struct{ name, script, module, pkg string }{
		{"python/psycopg2", "psycopg2_client.py", "psycopg2", "python3-psycopg2"},
		{"python/psycopg", "psycopg_client.py", "psycopg", "python3-psycopg"},
		{"python/sqlalchemy", "sqlalchemy_client.py", "sqlalchemy, psycopg2", "python3-sqlalchemy python3-psycopg2"},
	} {
		p := p
		cs = append(cs, client{
			name: p.name,
			dir:  "python",
			need: func() string {
				if _, err := os.Stat(debianPython); err != nil {
					return "Debian's " + debianPython + " is missing"
				}
				if out, err := exec.Command(debianPython, "-c", "import "+p.module).CombinedOutput(); err != nil {
					return fmt.Sprintf("%s cannot import %s (apt-get install %s): %s", debianPython, p.module, p.pkg, lastLine(out))
				}
				return ""
			},
			argv: func(url string) []string { return []string{debianPython, p.script, url} },
		})
	}
	cs = append(cs, client{
		name: "node/pg",
		dir:  "node",
		need: func() string {
			if _, err := exec.LookPath("node"); err != nil {
				return "node is not on PATH"
			}
			if _, err := os.Stat("node/node_modules/pg"); err != nil {
				return "node/node_modules/pg is missing (cd tests/clients/node && npm ci)"
			}
			return ""
		},
		argv: func(url string) []string { return []string{"node", "pg_client.js", url} },
	})
	cs = append(cs, client{
		name: "java/jdbc",
		dir:  "java",
		need: func() string {
			if _, err := exec.LookPath("java"); err != nil {
				return "java is not on PATH"
			}
			if _, err := os.Stat(jdbcJar); err != nil {
				return jdbcJar + " is missing (apt-get install libpostgresql-jdbc-java)"
			}
			return ""
		},
		argv: func(url string) []string { return []string{"java", "-cp", jdbcJar, "JdbcClient.java", url} },
	})
	return cs
}

// stepResult is one step's outcome on one server.
type stepResult struct {
	ok  bool
	err string
}

// run is one client's run against one server.
type run struct {
	order   []string
	steps   map[string]stepResult
	exitErr error
	stderr  string
}

func TestClients(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every client against two servers; skipped with -short")
	}
	expected := readExpected(t)
	pgURL := startPostgres(t)
	tupledURL := startTupled(t)

	tmp := t.TempDir()
	var goOnce sync.Once
	var goPath string
	var goErr error
	goBin := func() (string, error) {
		goOnce.Do(func() {
			goPath = filepath.Join(tmp, "goclient")
			cmd := exec.Command("go", "build", "-o", goPath, ".")
			cmd.Dir = "go"
			if out, err := cmd.CombinedOutput(); err != nil {
				goErr = fmt.Errorf("%v: %s", err, bytes.TrimSpace(out))
			}
		})
		return goPath, goErr
	}

	cs := clientsList(goBin)
	results := map[string]map[string]*run{} // client → server → run
	skipped := map[string]string{}
	var mu sync.Mutex
	sem := make(chan struct{}, 3) // the machine is small and shared
	t.Run("client", func(t *testing.T) {
		for _, c := range cs {
			c := c
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				if msg := c.need(); msg != "" {
					mu.Lock()
					skipped[c.name] = msg
					mu.Unlock()
					if os.Getenv("CI") != "" {
						t.Fatalf("%s: %s (CI is set, so this is not skipped)", c.name, msg)
					}
					t.Skipf("%s skipped: %s", c.name, msg)
				}
				byServer := map[string]*run{}
				for _, srv := range []struct{ name, url string }{{"postgres", pgURL}, {"tupled", tupledURL}} {
					sem <- struct{}{}
					byServer[srv.name] = runClient(c, srv.url)
					<-sem
				}
				mu.Lock()
				results[c.name] = byServer
				mu.Unlock()
				check(t, c.name, byServer, expected)
			})
		}
	})

	// Listings that name no step of a client that ran are stale.
	for key := range expected {
		cl, st, _ := strings.Cut(key, " ")
		byServer, ran := results[cl]
		if _, skip := skipped[cl]; skip {
			continue
		}
		if !ran {
			t.Errorf("%s lists %q, but there is no client %s", expectedFile, key, cl)
			continue
		}
		if _, ok := byServer["postgres"].steps[st]; !ok {
			t.Errorf("%s lists %q, but client %s has no step %s", expectedFile, key, cl, st)
		}
	}

	table := renderTable(cs, results, skipped)
	t.Logf("client × step results:\n%s", table)
	if *updateResults {
		doc := "# Client libraries against tupled and PostgreSQL 15\n\n" +
			"Written by `go test ./tests/clients -run TestClients -update-results` " +
			"(see doc.go); the steps expected to fail on tupled, with their reasons, " +
			"are in expected-tupled.txt.\n\n" + table
		if err := os.WriteFile(resultsFile, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// check applies the invariants of doc.go to one client's two runs.
func check(t *testing.T, name string, byServer map[string]*run, expected map[string]string) {
	pg, tu := byServer["postgres"], byServer["tupled"]
	if len(pg.order) == 0 {
		t.Errorf("%s printed no step against PostgreSQL (%v): %s", name, pg.exitErr, pg.stderr)
	}
	allOK := true
	for _, st := range pg.order {
		if r := pg.steps[st]; !r.ok {
			allOK = false
			t.Errorf("%s step %s fails against PostgreSQL, so the script is wrong: %s", name, st, r.err)
		}
	}
	if allOK && pg.exitErr != nil {
		t.Errorf("%s exited with %v against PostgreSQL though every step passed: %s", name, pg.exitErr, pg.stderr)
	}
	for _, st := range tu.order {
		if _, ok := pg.steps[st]; !ok {
			t.Errorf("%s step %s ran on tupled but not on PostgreSQL", name, st)
		}
	}
	for _, st := range pg.order {
		r := tu.steps[st]
		reason, listed := expected[name+" "+st]
		switch {
		case listed && r.ok:
			t.Errorf("%s step %s now passes on tupled: remove from %s (it said: %s)", name, st, expectedFile, reason)
		case !listed && !r.ok:
			t.Errorf("%s step %s fails on tupled: %s", name, st, r.err)
		}
	}
}

// runClient runs c against url and parses its STEP lines.
func runClient(c client, url string) *run {
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	argv := c.argv(url)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = c.dir
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = clientEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("killed after %v: %w", clientTimeout, err)
	}
	r := &run{steps: map[string]stepResult{}, exitErr: err, stderr: lastLines(stderr.Bytes(), 10)}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 4)
		if len(f) < 3 || f[0] != "STEP" {
			continue
		}
		var res stepResult
		switch f[2] {
		case "ok":
			res.ok = true
		case "FAIL":
			if len(f) == 4 {
				res.err = f[3]
			}
		default:
			continue
		}
		if _, dup := r.steps[f[1]]; !dup {
			r.order = append(r.order, f[1])
		}
		r.steps[f[1]] = res
	}
	return r
}

// clientEnv is the test's environment without what would point the
// clients at another server or Python.
func clientEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PG") || k == "PYTHONPATH" || k == "PYTHONHOME" || k == "DATABASE_URL" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PYTHONDONTWRITEBYTECODE=1")
}

// readExpected reads expected-tupled.txt: "client step reason" per line,
// # comments and blank lines ignored.
func readExpected(t *testing.T) map[string]string {
	data, err := os.ReadFile(expectedFile)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			t.Errorf("%s:%d: want \"client step reason\", got %q", expectedFile, i+1, line)
			continue
		}
		key := f[0] + " " + f[1]
		if _, dup := m[key]; dup {
			t.Errorf("%s:%d: %s listed twice", expectedFile, i+1, key)
		}
		m[key] = strings.Join(f[2:], " ")
	}
	return m
}

// startTupled serves an in-memory tupled database on a loopback port, as
// pgwire's tests do, and returns its URL.
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
			t.Errorf("tupled shutdown: %v", err)
		}
		<-done
		if err := db.Close(); err != nil {
			t.Errorf("tupled close: %v", err)
		}
	})
	return "postgres://postgres@" + ln.Addr().String() + "/postgres?sslmode=disable"
}

// startPostgres starts PostgreSQL 15 through pgoracle, which listens on a
// unix socket only, and forwards a loopback TCP port to that socket so
// every client (JDBC has no unix sockets) reaches it the same way.
func startPostgres(t *testing.T) string {
	t.Helper()
	kv := map[string]string{}
	for _, f := range strings.Fields(pgoracle.Start(t)) {
		k, v, _ := strings.Cut(f, "=")
		kv[k] = v
	}
	sock := filepath.Join(kv["host"], ".s.PGSQL."+kv["port"])
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	track := func(c net.Conn, add bool) {
		mu.Lock()
		defer mu.Unlock()
		if add {
			conns[c] = true
		} else {
			delete(conns, c)
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				u, err := net.Dial("unix", sock)
				if err != nil {
					return
				}
				defer u.Close()
				track(c, true)
				track(u, true)
				defer track(c, false)
				defer track(u, false)
				go func() { io.Copy(u, c); u.(*net.UnixConn).CloseWrite() }()
				io.Copy(c, u)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", kv["user"], ln.Addr(), kv["dbname"])
}

var pidSuffix = regexp.MustCompile(`([a-z])_[0-9]{3,}`)

// renderTable draws the client × step table in Markdown, with tupled's
// error for each failing step (table names' process ids replaced by N so
// the file changes only when a result does).
func renderTable(cs []client, results map[string]map[string]*run, skipped map[string]string) string {
	var b strings.Builder
	b.WriteString("| client | step | tupled | PostgreSQL 15 | tupled's error |\n|---|---|---|---|---|\n")
	cell := func(r *run, st string) string {
		if r == nil {
			return "—"
		}
		res, ok := r.steps[st]
		switch {
		case !ok:
			return "FAIL (not run)"
		case res.ok:
			return "ok"
		}
		return "FAIL"
	}
	passed, total := 0, 0
	for _, c := range cs {
		if msg, ok := skipped[c.name]; ok {
			fmt.Fprintf(&b, "| %s | — | skipped | skipped | %s |\n", c.name, escape(msg))
			continue
		}
		byServer := results[c.name]
		if byServer == nil {
			continue
		}
		pg, tu := byServer["postgres"], byServer["tupled"]
		order := append([]string(nil), pg.order...)
		for _, st := range tu.order {
			if _, ok := pg.steps[st]; !ok {
				order = append(order, st)
			}
		}
		for _, st := range order {
			total++
			errText := ""
			if r, ok := tu.steps[st]; ok && !r.ok {
				errText = r.err
			} else if !ok {
				errText = fmt.Sprintf("the client stopped before this step (%v)", tu.exitErr)
			} else {
				passed++
			}
			errText = pidSuffix.ReplaceAllString(errText, "${1}_N")
			if len(errText) > 200 {
				errText = errText[:200] + "…"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", c.name, st, cell(tu, st), cell(pg, st), escape(errText))
		}
	}
	fmt.Fprintf(&b, "\n%d of %d steps pass on tupled.\n", passed, total)
	return b.String()
}

func escape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
