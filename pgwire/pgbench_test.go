package pgwire

import (
	"context"
	"fmt"
	osexec "os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestPgbenchInitAndBuiltins: PostgreSQL's pgbench, unmodified, against tupled serve:
// `pgbench -i` (its schema, the client-side COPY load, VACUUM, the primary
// keys added by ALTER TABLE), then each built-in script in each query mode
// for a few hundred transactions, with no failed transaction. (Its speed
// beside PostgreSQL's is a benchmark: bench/RESULTS.md.)
func TestPgbenchInitAndBuiltins(t *testing.T) {
	pgbench := pgBin + "/pgbench"
	needTool(t, pgbench)
	ts := startServer(t, nil)
	h, p := ts.hostPort()
	run := func(args ...string) string {
		t.Helper()
		cmd := osexec.Command(pgbench, append([]string{"-h", h, "-p", p, "-U", "tester"}, append(args, "tupled")...)...)
		cmd.Env = append(cmd.Environ(), "PGSSLMODE=disable")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pgbench %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	out := run("-i", "-s", "1")
	if !strings.Contains(out, "100000 of 100000 tuples (100%) done") || !strings.Contains(out, "creating primary keys...") {
		t.Fatalf("pgbench -i:\n%s", out)
	}
	c := ts.connect(t)
	var n int
	if err := c.QueryRow(context.Background(), "SELECT count(*) FROM pgbench_accounts").Scan(&n); err != nil || n != 100000 {
		t.Fatalf("pgbench_accounts has %d rows (%v), want 100000", n, err)
	}
	processed := regexp.MustCompile(`number of transactions actually processed: (\d+)`)
	failed := regexp.MustCompile(`number of failed transactions: (\d+)`)
	for _, script := range []string{"tpcb-like", "simple-update", "select-only"} {
		for _, mode := range []string{"simple", "extended", "prepared"} {
			t.Run(fmt.Sprintf("%s/%s", script, mode), func(t *testing.T) {
				out := run("-n", "-b", script, "-M", mode, "-c", "4", "-j", "2", "-t", "100")
				if m := processed.FindStringSubmatch(out); m == nil || m[1] != "400" {
					t.Fatalf("processed: %v\n%s", m, out)
				}
				if m := failed.FindStringSubmatch(out); m == nil || m[1] != "0" {
					t.Fatalf("failed: %v\n%s", m, out)
				}
			})
		}
	}
	var sum int64
	if err := c.QueryRow(context.Background(), "SELECT sum(abalance) - (SELECT sum(delta) FROM pgbench_history) FROM pgbench_accounts").Scan(&sum); err != nil || sum != 0 {
		t.Fatalf("accounts' balances minus the history's deltas: %d (%v), want 0", sum, err)
	}
}
