package pgwire

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// PostgreSQL's own tools, at their standard Debian paths (CI machines have
// them: postgresql-15 and postgresql-server-dev-15 / pgxs).
const (
	pgBin           = "/usr/lib/postgresql/15/bin"
	isolationTester = "/usr/lib/postgresql/15/lib/pgxs/src/test/isolation/isolationtester"
)

func needTool(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s is missing: install PostgreSQL 15 (postgresql-15, postgresql-server-dev-15) to run this test", path)
	}
}

func (ts *testServer) hostPort() (string, string) {
	h, p, _ := net.SplitHostPort(ts.addr)
	return h, p
}

// TestIsolationSpecs runs every testdata/isolation spec through PostgreSQL's
// isolationtester against tupled serve and compares the output with what
// PostgreSQL 15 printed for it (expected/, made by oracle.sh).
func TestIsolationSpecs(t *testing.T) {
	needTool(t, isolationTester)
	specs, err := filepath.Glob("../testdata/isolation/*.spec")
	if err != nil || len(specs) == 0 {
		t.Fatalf("no specs: %v", err)
	}
	for _, spec := range specs {
		name := strings.TrimSuffix(filepath.Base(spec), ".spec")
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("../testdata/isolation/expected", name+".out"))
			if err != nil {
				t.Fatalf("no expected output (run testdata/isolation/oracle.sh): %v", err)
			}
			// deadlock_timeout 1s, as oracle.sh's PostgreSQL: long enough that
			// under load both still see the waits of a deadlock begin "close
			// together", so the first waiter is the victim, as in expected/.
			ts := startServerDT(t, time.Second, nil)
			h, p := ts.hostPort()
			in, err := os.Open(spec)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			cmd := osexec.Command(isolationTester, fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres", h, p))
			cmd.Stdin = in
			cmd.Env = append(os.Environ(), "PG_TEST_TIMEOUT_DEFAULT=10")
			got, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("isolationtester: %v\n%s", err, got)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("output differs from PostgreSQL's\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}

// TestPgbench runs the seed's FOR SHARE script (plus a no-key update) with
// pgbench in the three query modes; any failed transaction fails the test.
func TestPgbench(t *testing.T) {
	pgbench := filepath.Join(pgBin, "pgbench")
	needTool(t, pgbench)
	ts := startServer(t, nil)
	c := ts.connect(t)
	exec(t, c, "CREATE TABLE pgbench_accounts (aid int PRIMARY KEY, bid int, abalance int, filler text)")
	var vals []string
	for i := 1; i <= 1000; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 1, 0, '')", i))
	}
	exec(t, c, "INSERT INTO pgbench_accounts VALUES "+strings.Join(vals, ","))
	script := filepath.Join(t.TempDir(), "select-for-share.sql")
	if err := os.WriteFile(script, []byte(`BEGIN;
\set aid random(1, 1000)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid FOR SHARE;
\set aid random(1, 1000)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid FOR SHARE;
\set aid random(1, 1000)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid FOR SHARE;
\set aid random(1, 1000)
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;
COMMIT;
`), 0o644); err != nil {
		t.Fatal(err)
	}
	h, p := ts.hostPort()
	processed := regexp.MustCompile(`number of transactions actually processed: (\d+)/(\d+)`)
	for _, mode := range []string{"simple", "extended", "prepared"} {
		// --max-tries: the script can deadlock (two transactions share
		// rows the other then updates), on PostgreSQL as here; a deadlock
		// victim is retried, as an application would, and still counts as
		// failed if it fails every try.
		cmd := osexec.CommandContext(context.Background(), pgbench, "-n", "-c", "8", "-j", "2", "-t", "100", "--max-tries", "10", "-M", mode, "-f", script,
			fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres", h, p))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pgbench -M %s: %v\n%s", mode, err, out)
		}
		m := processed.FindSubmatch(out)
		if m == nil || string(m[1]) != string(m[2]) || string(m[1]) != "800" || !bytes.Contains(out, []byte("number of failed transactions: 0 ")) {
			t.Fatalf("pgbench -M %s: transactions failed\n%s", mode, out)
		}
	}
	var sum int64
	if err := c.QueryRow(context.Background(), "SELECT abalance FROM pgbench_accounts WHERE aid = 1").Scan(&sum); err != nil {
		t.Fatal(err)
	}
}
