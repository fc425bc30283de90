package pgwire

import (
	"bytes"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"
	"time"
)

// pgIsolationDir is where PostgreSQL 15's own isolation specs and expected
// outputs live (specs/, expected/): ../shared/pg-isolation relative to the
// repository root, present in CI. TUPLED_PG_ISOLATION overrides it (a git
// worktree elsewhere).
func pgIsolationDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TUPLED_PG_ISOLATION")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "pg-isolation")
	}
	if _, err := os.Stat(filepath.Join(dir, "specs")); err != nil {
		t.Fatalf("PostgreSQL's isolation specs are missing: %v (expected ../shared/pg-isolation next to the repository, with specs/ and expected/; set TUPLED_PG_ISOLATION to its path)", err)
	}
	return dir
}

// pgSpecsTableLocks are PostgreSQL's own specs (unmodified, read from
// pgIsolationDir) that tupled passes with table locks and per-session
// deadlock_timeout: each must print exactly PostgreSQL 15's expected output.
// deadlock-hard lasts its victim's deadlock_timeout (10s), so it runs only
// in the full tier.
var pgSpecsTableLocks = []string{"deadlock-simple", "deadlock-soft", "deadlock-soft-2", "lock-nowait"}

// TestPGIsolationSpecsTableLocks runs pgSpecsTableLocks with PostgreSQL's
// isolationtester against a tupled server (deadlock_timeout 1s, as
// PostgreSQL's test configuration; the specs set their own per session).
func TestPGIsolationSpecsTableLocks(t *testing.T) {
	needTool(t, isolationTester)
	dir := pgIsolationDir(t)
	specs := pgSpecsTableLocks
	if !testing.Short() {
		specs = append(specs[:len(specs):len(specs)], "deadlock-hard")
	}
	for _, name := range specs {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(dir, "expected", name+".out"))
			if err != nil {
				t.Fatal(err)
			}
			in, err := os.Open(filepath.Join(dir, "specs", name+".spec"))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			ts := startServerDT(t, time.Second, nil)
			h, p := ts.hostPort()
			cmd := osexec.Command(isolationTester, fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres", h, p))
			cmd.Stdin = in
			cmd.Env = append(os.Environ(), "PG_TEST_TIMEOUT_DEFAULT=60")
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
