package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary serve as the harness's child: the parent
// re-executes os.Executable(), which under go test is this binary.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// harnessRun runs the harness with args (plus -short and -json) and
// returns its exit status, its JSON results and what it printed.
func harnessRun(t *testing.T, args ...string) (int, *run, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.json")
	var stdout, stderr bytes.Buffer
	code := parentMain(append([]string{"-short", "-dir", t.TempDir(), "-json", out}, args...), &stdout, &stderr)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no JSON written (exit %d): %v\n%s", code, err, stderr.String())
	}
	var r run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return code, &r, stdout.String() + stderr.String()
}

// TestEverySystemEveryWorkload runs each system through each workload at a
// tiny size: every child reports, every check passes, the report has a
// ratio for every peer.
func TestEverySystemEveryWorkload(t *testing.T) {
	code, r, text := harnessRun(t)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	if len(r.Loads) != len(systems) {
		t.Errorf("%d loads, want %d", len(r.Loads), len(systems))
	}
	got := map[string]*result{}
	for _, res := range r.Results {
		if res.Error != "" {
			t.Errorf("%s %s: %s", res.System, res.Workload, res.Error)
		}
		got[res.System+" "+res.Workload] = res
	}
	for _, s := range systems {
		for _, w := range workloads {
			res := got[s+" "+w]
			if res == nil {
				t.Errorf("%s %s: no result", s, w)
				continue
			}
			if res.Ops <= 0 || res.Seconds <= 0 || res.MaxRSSKiB <= 0 || res.HWMKiB <= 0 {
				t.Errorf("%s %s: ops %d in %v s, rss %d/%d KiB", s, w, res.Ops, res.Seconds, res.MaxRSSKiB, res.HWMKiB)
			}
			switch w {
			case "bank", "queue", "scan":
				if res.Check == "" {
					t.Errorf("%s %s: no check reported", s, w)
				}
			}
			if w == "queue" && (!res.Finished || res.Ops != r.Config.Jobs || len(res.Buckets) != r.Config.Jobs/r.Config.Bucket) {
				t.Errorf("%s queue: finished %v, %d jobs, %d buckets", s, res.Finished, res.Ops, len(res.Buckets))
			}
			if w == "scan" && res.Ops != r.Config.Rows {
				t.Errorf("%s scan: %d rows, want %d", s, res.Ops, r.Config.Rows)
			}
		}
	}
	for _, want := range []string{"vs pebble + app lock table", "vs SQLite (WAL)", "Ratio tupled-bbolt / peer", "job queue"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "FAILED") {
		t.Errorf("report shows a failure:\n%s", text)
	}
}

// failures runs the harness with fault on workload w for every system and
// checks that each system's child failed with a message containing want.
func failures(t *testing.T, fault, w, want string) {
	t.Helper()
	code, r, text := harnessRun(t, "-workloads", w, "-fault", fault)
	if code != 1 {
		t.Fatalf("exit %d with -fault %s, want 1:\n%s", code, fault, text)
	}
	for _, s := range systems {
		found := false
		for _, f := range r.Failures {
			found = found || (strings.HasPrefix(f, s+" "+w+" ") && strings.Contains(f, want))
		}
		if !found {
			t.Errorf("%s: no failure %q among %q", s, want, r.Failures)
		}
	}
	if !strings.Contains(text, "FAILED") {
		t.Errorf("report does not show the failure:\n%s", text)
	}
}

// TestBrokenTransferIsCaught: a transfer that credits less than it debits
// fails the bank check on every system.
// TestInMemoryCeiling: tupled-mem runs only when named, loads its rows in
// each child (a scan sees them all), and gets a ratio table of its own.
func TestInMemoryCeiling(t *testing.T) {
	code, r, text := harnessRun(t, "-systems", "tupled,tupled-mem,bbolt", "-workloads", "cold,scan")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	n := 0
	for _, res := range r.Results {
		if res.Error != "" {
			t.Errorf("%s %s: %s", res.System, res.Workload, res.Error)
		}
		if res.System == "tupled-mem" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d tupled-mem results, want 2 (cold, scan)", n)
	}
	for _, want := range []string{"### Ratio tupled-mem / peer", "vs tupled in memory"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	var out bytes.Buffer
	if code := parentMain([]string{"-short", "-systems", "tupled-mem,nosuch"}, &out, &out); code != 2 || !strings.Contains(out.String(), "tupled-mem") {
		t.Errorf("an unknown system: exit %d, want 2 and the names to choose from:\n%s", code, out.String())
	}
}

func TestBrokenTransferIsCaught(t *testing.T) {
	failures(t, "bank", "bank", "bank check failed")
}

// TestJobDoneTwiceIsCaught: a claim that leaves its job in the queue makes
// the job done twice, which the queue check catches on every system.
func TestJobDoneTwiceIsCaught(t *testing.T) {
	failures(t, "queue", "queue", "job 7 claimed 2 times")
}

// TestDeadChildIsAnError: a child that exits without a result is a failure
// of the run, not a missing row.
func TestDeadChildIsAnError(t *testing.T) {
	failures(t, "crash", "write", "child failed (exit status 3)")
}

func TestBadFlags(t *testing.T) {
	var out bytes.Buffer
	for _, args := range [][]string{{"-systems", "mysql"}, {"-workloads", "tpcc"}, {"-rows", "2"}, {"-rounds", "0"}} {
		if code := parentMain(args, &out, &out); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// TestLockTable pins the pebble peer's lock table: shared locks coexist,
// an exclusive one excludes every other (tryLock fails), and an entry is
// dropped once no one uses it.
func TestLockTable(t *testing.T) {
	lt := newLockTable()
	k := []byte("k1")
	lt.lock(k, false)
	lt.lock(k, false)
	if lt.tryLock(k) {
		t.Fatal("tryLock succeeded while shared locks are held")
	}
	lt.unlock(k, false)
	lt.unlock(k, false)
	if !lt.tryLock(k) {
		t.Fatal("tryLock failed on a free key")
	}
	if lt.tryLock(k) {
		t.Fatal("second exclusive lock granted")
	}
	if !lt.tryLock([]byte("k2")) {
		t.Fatal("another key's lock refused")
	}
	lt.unlock(k, true)
	lt.unlock([]byte("k2"), true)
	n := 0
	for i := range lt.shards {
		n += len(lt.shards[i].m)
	}
	if n != 0 {
		t.Fatalf("%d entries left after every lock was released", n)
	}
}

// TestRatioOrientation: above 1 means tupled is faster, whether the
// workload's figure is a throughput or a time.
func TestRatioOrientation(t *testing.T) {
	fast, slow := stat{n: 1, med: 200}, stat{n: 1, med: 100}
	if got := ratio("bank", fast, slow); got != 2 {
		t.Errorf("bank: tupled 200 tx/s vs 100: ratio %v, want 2", got)
	}
	if got := ratio("scan", slow, fast); got != 2 {
		t.Errorf("scan: tupled 100 s vs 200 s: ratio %v, want 2", got)
	}
	if got := ratio("write", slow, fast); got != 2 {
		t.Errorf("write: tupled p50 100 µs vs 200: ratio %v, want 2", got)
	}
	if got := fmtRatio(ratio("bank", stat{}, slow)); got != "–" {
		t.Errorf("no tupled rounds: %q, want –", got)
	}
	if p50, p99 := percentiles([]time.Duration{4, 1, 3, 2}); p50 != 0.003 || p99 != 0.004 {
		t.Errorf("percentiles: %v %v µs", p50, p99)
	}
}
