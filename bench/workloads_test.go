package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Smoke tests: every workload runs for a moment with small data and few
// clients, and the harness's outputs (summary, ratio table, JSON, plot)
// come out. They check that the workloads work, not how fast (that is
// `tupled bench`'s job, see RESULTS.md).

func smoke(t *testing.T, name string, cfg Config) (*Report, string) {
	t.Helper()
	w, ok := Lookup(name)
	if !ok {
		t.Fatalf("workload %s not registered", name)
	}
	var out bytes.Buffer
	cfg.Out = &out
	if cfg.Duration == 0 {
		cfg.Duration = 300 * time.Millisecond
	}
	cfg.Progress = 100 * time.Millisecond
	cfg.SyncCommit = true
	cfg.Seed = 1
	rep, err := Run(context.Background(), w, &cfg)
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out.String())
	}
	for _, r := range rep.Results {
		if r.Transactions == 0 {
			t.Errorf("%s/%s: no transaction committed\n%s", name, r.Variant, out.String())
		}
	}
	return rep, out.String()
}

func TestForShareSmoke(t *testing.T) {
	w, _ := Lookup("forshare")
	rep, out := smoke(t, "forshare", Config{Clients: 4, Rows: 1000, Variants: w.All()})
	if got, want := len(rep.Results), 9; got != want {
		t.Fatalf("%d variants ran, want %d", got, want)
	}
	for _, want := range []string{"progress: ", " tps, lat ", "number of transactions actually processed: ", "latency p50 = ", "/plain", "ratio share / share/fastpath-off = "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, r := range rep.Results {
		mx := r.Extra["locks through a multixact per transaction"]
		switch {
		case r.Variant == "plain" && mx != 0:
			t.Errorf("plain reads locked through %v multixacts per transaction", mx)
		case strings.HasSuffix(r.Variant, fastPathOffSuffix) && mx < 2.9:
			// Three locks per transaction, each through a multixact
			// (one member set {me}, interned: created once per transaction).
			t.Errorf("%s: %v locks through a multixact per transaction, want 3", r.Variant, mx)
		case r.Variant == "share" && mx > 0.5:
			t.Errorf("share with the fast path: %v locks through a multixact per transaction", mx)
		}
	}
	dir := t.TempDir()
	js, png := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.png")
	if err := WriteJSON(js, rep); err != nil {
		t.Fatal(err)
	}
	if err := WritePlot(png, rep); err != nil {
		t.Fatal(err)
	}
	var back Report
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Results) != 9 || len(back.Results[0].Series) == 0 || back.Results[0].TPS <= 0 {
		t.Fatalf("JSON lost results: %+v", back.Results)
	}
	if st, err := os.Stat(png); err != nil || st.Size() < 1000 {
		t.Fatalf("plot not written: %v %v", st, err)
	}
}

func TestHotRowSmoke(t *testing.T) {
	rep, _ := smoke(t, "hotrow", Config{Clients: 8})
	for _, r := range rep.Results {
		if r.Variant == "keyshare" && r.Extra["locks through a multixact per transaction"] == 0 {
			t.Errorf("keyshare on a hot row never went through a multixact: %+v", r.Extra)
		}
	}
}

func TestManyRowsSmoke(t *testing.T) {
	rep, _ := smoke(t, "manyrows", Config{Rows: 20000})
	r := rep.Results[0]
	if got := r.Extra["rows locked"]; got != 20000 {
		t.Fatalf("locked %v rows, want 20000", got)
	}
	// the transaction's own xid and its table lock (RowShareLock, held by
	// the fast path): none per row
	if got := r.Extra["lock-manager entries while holding the locks"]; got > 2 {
		t.Fatalf("%v lock-manager entries while holding 20000 row locks; row locks live in xmax", got)
	}
}

func TestTPCBSmoke(t *testing.T) {
	rep, _ := smoke(t, "tpcb-like", Config{Clients: 8, Rows: 2000, DataDir: t.TempDir()})
	r := rep.Results[0]
	if f := r.Extra["WAL fsyncs per commit"]; f <= 0 || f > 1 {
		t.Fatalf("WAL fsyncs per commit = %v on disk with sync commit", f)
	}
}

func TestUnknownVariant(t *testing.T) {
	w, _ := Lookup("forshare")
	_, err := Run(context.Background(), w, &Config{Variants: []string{"sideways"}, Out: &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), `no variant "sideways"`) {
		t.Fatalf("got %v", err)
	}
}

// TestRounds: --rounds alternates the variants and reports the median of
// the rounds' ratios.
func TestRounds(t *testing.T) {
	rep, out := smoke(t, "hotrow", Config{Clients: 4, Rounds: 3, Duration: 100 * time.Millisecond})
	if rep.Rounds != 3 || len(rep.RoundRatios) != 3 {
		t.Fatalf("rounds %d, %d round ratio sets", rep.Rounds, len(rep.RoundRatios))
	}
	if strings.Count(out, "/3  keyshare ") != 3 || !strings.Contains(out, "round 2/3  keyshare ") {
		t.Fatalf("variants not run three times:\n%s", out)
	}
	var each []float64
	for _, rr := range rep.RoundRatios {
		each = append(each, rr[1].TPS)
	}
	slices.Sort(each)
	if got := rep.Ratios[1]; got.Variant != "keyshare" || got.TPS != each[1] || rep.Spreads[1].Min != each[0] || rep.Spreads[1].Max != each[2] {
		t.Fatalf("ratio %+v, want the median of %v", got, each)
	}
	if !strings.Contains(out, "median over 3 rounds") {
		t.Fatalf("no median line:\n%s", out)
	}
}

func TestMedianRatios(t *testing.T) {
	r := func(v float64) []Ratio { return []Ratio{{"plain", "plain", 1}, {"keyshare", "plain", v}} }
	got := medianRatios([][]Ratio{r(0.9), r(0.5), r(0.7), r(0.8)})
	if got[0].TPS != 1 || math.Abs(got[1].TPS-0.75) > 1e-12 { // the mean of the middle two
		t.Fatalf("%+v", got)
	}
}

// TestFKSmoke: children inserted through the foreign key beside the parent
// updater, on disk; no orphan, and the hot parents' lockers went through
// multixacts appended in place (about one member written per lock).
func TestFKSmoke(t *testing.T) {
	var out bytes.Buffer
	cfg := Config{Out: &out, Clients: 8, Duration: 300 * time.Millisecond, DataDir: t.TempDir(), SyncCommit: true, Seed: 1, PG: "off", Rounds: 1}
	fr, err := RunFK(context.Background(), &cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if fr.Children == 0 {
		t.Fatalf("no child checked\n%s", out.String())
	}
	for _, r := range fr.Report.Results {
		if r.Transactions == 0 {
			t.Errorf("%s: no transaction committed", r.Variant)
		}
		if r.Variant == "fk" {
			if r.Extra["parent updates/s"] <= 0 {
				t.Errorf("the parent updater never committed: %+v", r.Extra)
			}
			if m := r.Extra["multixact member entries written per child insert"]; m > 3 {
				t.Errorf("%v member entries written per child insert: not O(1)", m)
			}
		}
	}
	if !strings.Contains(out.String(), "no orphan") {
		t.Errorf("no orphan check printed:\n%s", out.String())
	}
}
