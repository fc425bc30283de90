package metamorphic_test

import (
	"flag"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

var (
	seedFlag  = flag.Uint64("seed", 0, "the generator's seed (0: derived from the time; printed at the start and in every failure)")
	opsFlag   = flag.Int("ops", 0, "how many operations to generate (0: the default, fewer with -short)")
	checkFlag = flag.Int("check-every", 100, "compare every table's committed contents every this many operations (and after every reopen)")
	statsFlag = flag.Bool("stats", false, "log how often each operation had each outcome")
)

// Default operation counts; see doc.go for how they were chosen.
const (
	defaultOps = 20000
	shortOps   = 5000
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func runConfig(t *testing.T) config {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	ops := *opsFlag
	if ops <= 0 {
		ops = defaultOps
		if testing.Short() {
			ops = shortOps
		}
	}
	return newConfig(seed, ops, *checkFlag)
}

// TestMetamorphic applies one generated operation sequence to an in-memory,
// a pebble and a bbolt database and fails at the first result that differs.
func TestMetamorphic(t *testing.T) {
	cfg := runConfig(t)
	t.Logf("%s; reproduce: %s", cfg, cfg.repro())
	start := time.Now()
	h, err := newHarness(cfg, [2]string{t.TempDir(), t.TempDir()})
	if err != nil {
		t.Fatalf("seed %d: %v; reproduce: %s", cfg.seed, err, cfg.repro())
	}
	defer h.close()
	err = h.run()
	if *statsFlag {
		t.Logf("outcomes (count, operation and result):\n%s", h.statsTable())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seed %d: %d operations agreed on all three databases in %v", cfg.seed, cfg.ops, time.Since(start).Round(time.Millisecond))
}

// TestHarnessDetectsMismatch proves that the harness can fail: a result
// perturbed on one backend only (through the test-only hook) must be
// reported as a mismatch that names the seed, the step, the backend and the
// command that reproduces it.
func TestHarnessDetectsMismatch(t *testing.T) {
	const seed = 424242
	cases := []struct {
		name    string
		perturb func(inst string, step int, what, canon string) string
		want    string
	}{
		{
			name: "a read",
			perturb: func(inst string, step int, what, canon string) string {
				if inst == "bbolt" && strings.Contains(what, ".Get(") && strings.HasPrefix(canon, "value ") {
					return `value "fake"`
				}
				return canon
			},
			want: `results differ`,
		},
		{
			name: "committed contents",
			perturb: func(inst string, step int, what, canon string) string {
				if inst == "pebble" && what == "contents t0" && strings.Contains(canon, "=") {
					return canon + ` "zz"="fake"`
				}
				return canon
			},
			want: `committed contents differ`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := newHarness(newConfig(seed, 400, 50), [2]string{t.TempDir(), t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer h.close()
			h.perturb = c.perturb
			err = h.run()
			if err == nil {
				t.Fatal("the perturbed run passed: the harness cannot fail")
			}
			msg := err.Error()
			for _, w := range []string{c.want, "metamorphic mismatch: seed 424242, step ", "-seed 424242 -ops ", `"fake"`, "last "} {
				if !strings.Contains(msg, w) {
					t.Errorf("mismatch report lacks %q:\n%s", w, msg)
				}
			}
			t.Logf("reported as expected:\n%s", msg)
		})
	}
}
