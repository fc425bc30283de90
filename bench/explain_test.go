package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tupled/tupled"
)

// TestForShareMainJobOnDisk is the main job's default in short: on disk in
// a temp dir with synchronous commit, P1's two variants alternated over
// rounds, the ratio beside the seed's and PostgreSQL's recorded figures,
// a verdict line, every counter explained, and a JSON that says where it
// ran. The temp dir is gone afterwards.
func TestForShareMainJobOnDisk(t *testing.T) {
	var out bytes.Buffer
	w, _ := Lookup("forshare")
	cfg := &Config{Clients: 4, Rows: 2000, Duration: 300 * time.Millisecond, Progress: 100 * time.Millisecond,
		Rounds: 3, TempData: true, SyncCommit: true, PG: "off", Seed: 1, Out: &out}
	rep, err := Run(context.Background(), w, cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	ref := forShareReference
	for _, want := range []string{
		"data: on disk (pebble, ",
		"synchronous commit on",
		"3 rounds of 300ms per variant, alternating plain, share",
		"round 3/3  share ",
		"median over 3 rounds:",
		"share / plain: " + ref.Meaning,
		"  tupled, this run:          ",
		"  PostgreSQL 15, recorded:   0.43, issue 4's figure (8.6k / 20.2k tps, on another machine of the project); bench/pg/run.sh here: 0.60",
		"  the seed:                  0.355, 2012 seed: 8986 / 25307 tps",
		"  goal P1 (≥ 0.90): ",
		"columns: tps = committed transactions per second",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	v := rep.Verdict
	if v == nil || v.Goal != "P1" || v.Threshold != 0.90 {
		t.Fatalf("verdict %+v", v)
	}
	if !strings.Contains(text, "  goal P1 (≥ 0.90): "+strings.ToUpper(v.State)+" — ") {
		t.Errorf("no verdict line for state %q:\n%s", v.State, text)
	}
	// Every counter printed has its explanation under it.
	for _, k := range rep.Results[1].ExtraOrder {
		i := strings.Index(text, "  "+k+": plain ")
		if i < 0 {
			t.Fatalf("counter %q not printed:\n%s", k, text)
		}
		next := text[i:]
		lines := strings.SplitN(next, "\n", 3)
		if len(lines) < 2 || !strings.HasPrefix(lines[1], "      ") || len(strings.TrimSpace(lines[1])) < 40 {
			t.Errorf("counter %q has no explanation line: %q", k, lines)
		}
	}
	// The JSON tells what ran.
	js := filepath.Join(t.TempDir(), "r.json")
	if err := WriteJSON(js, rep); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Config struct {
			Backend    string `json:"backend"`
			Dir        string `json:"dir"`
			DirRemoved bool   `json:"dir_removed"`
			SyncCommit bool   `json:"sync_commit"`
		} `json:"config"`
		Rounds       int         `json:"rounds"`
		RoundResults [][]*Result `json:"round_results"`
		Spreads      []Spread    `json:"ratio_spread"`
		Reference    *Reference  `json:"reference"`
	}
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	c := back.Config
	if c.Backend != "pebble" || c.Dir == "" || !c.DirRemoved || !c.SyncCommit {
		t.Fatalf("JSON config %+v, want pebble in a removed temp dir with sync commit", c)
	}
	if !strings.Contains(text, c.Dir) {
		t.Errorf("the output does not name the data directory %s", c.Dir)
	}
	if _, err := os.Stat(c.Dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temp dir %s still there after the run: %v", c.Dir, err)
	}
	if back.Rounds != 3 || len(back.RoundResults) != 3 || len(back.Spreads) != 2 || len(back.Spreads[1].Rounds) != 3 {
		t.Fatalf("rounds %d, round results %d, spreads %+v", back.Rounds, len(back.RoundResults), back.Spreads)
	}
	if back.Reference == nil || back.Reference.Seed != ref.Seed || back.Reference.PGRecorded != 0.43 {
		t.Fatalf("reference %+v", back.Reference)
	}
	// Rounds alternate: round r's variants start after round r-1's.
	last := -1.0
	for _, round := range back.RoundResults {
		for _, r := range round {
			if r.Start <= last {
				t.Fatalf("variant %s of round %d starts at %v, before the previous one (%v)", r.Variant, r.Round, r.Start, last)
			}
			last = r.Start
		}
	}
	png := filepath.Join(t.TempDir(), "r.png")
	if err := WritePlot(png, rep); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(png); err != nil || st.Size() < 1000 {
		t.Fatalf("plot not written: %v %v", st, err)
	}
}

// TestReportStorageTruth: the JSON's backend, dir and sync_commit say what
// ran — in memory there is no WAL, so no synchronous commit whatever was
// asked; with --data the directory is kept.
func TestReportStorageTruth(t *testing.T) {
	w, _ := Lookup("forshare")
	run := func(cfg Config) *Report {
		t.Helper()
		var out bytes.Buffer
		cfg.Clients, cfg.Rows, cfg.Duration, cfg.Out, cfg.PG = 2, 500, 150*time.Millisecond, &out, "off"
		cfg.SyncCommit = true
		rep, err := Run(context.Background(), w, &cfg)
		if err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		return rep
	}
	mem := run(Config{})
	if c := mem.Config; c.Backend != "memory" || c.Dir != "" || c.SyncCommit || c.DirRemoved {
		t.Fatalf("in memory: %+v", c)
	}
	dir := filepath.Join(t.TempDir(), "db")
	bb := run(Config{DataDir: dir, Backend: tupled.Bbolt})
	if c := bb.Config; c.Backend != "bbolt" || c.Dir != dir || !c.SyncCommit || c.DirRemoved {
		t.Fatalf("--data with bbolt: %+v", c)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("--data directory removed: %v", err)
	}
}

// TestSeriesWholeIntervals: the per-interval series holds whole intervals
// only; the partial one cut by the end of the run is not a point (it
// would plot as a fall, which is how a stall looks).
func TestSeriesWholeIntervals(t *testing.T) {
	tick := 100 * time.Millisecond
	if wholeInterval(0.02, tick) || !wholeInterval(0.1, tick) || !wholeInterval(0.095, tick) {
		t.Fatal("wholeInterval misjudges")
	}
	cfg := &Config{Clients: 2, Duration: 350 * time.Millisecond, Progress: tick, Out: &bytes.Buffer{}}
	p := &Prepared{Txn: func(ctx context.Context, c *Client) error { c.RoundTrip(); return nil }}
	res, err := RunVariant(context.Background(), cfg, "test", "noop", p)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Series) == 0 {
		t.Fatal("no series")
	}
	prev := 0.0
	for _, iv := range res.Series {
		if d := iv.At - prev; d < 0.9*tick.Seconds() {
			t.Fatalf("a point after %.3f s, a partial interval: %+v", d, res.Series)
		}
		if iv.TPS == 0 {
			t.Fatalf("a point with no transaction: %+v", res.Series)
		}
		prev = iv.At
	}
	// The last tick and the run's end may be the same instant read from
	// the clock twice (a tick that fires as the run stops): allow 1 ms.
	if prev > res.Seconds+1e-3 {
		t.Fatalf("series ends at %v after the run's %v s", prev, res.Seconds)
	}
}

func TestJudge(t *testing.T) {
	s := func(vs ...float64) Spread { return spreadOf("share", "plain", vs) }
	for _, c := range []struct {
		s     Spread
		state string
	}{
		{s(0.95, 0.92, 0.97, 0.99, 0.93), "met"},
		{s(0.5, 0.6, 0.55, 0.58, 0.62), "not met"},
		{s(0.8, 0.95, 0.85, 1.0, 0.88, 0.93), "inconclusive"},
		{s(1.27, 1.23, 1.5, 0.59, 2.17), "inconclusive"}, // "faster" than plain: noise
		{s(0.93, 1.08, 0.90, 1.09, 0.70), "met"},         // a little above 1.0, less than the margin

		{s(0.95), "met"},
		{s(0.5, 0.6), "not met"},
	} {
		v := judge("P1", c.s, 0.90)
		if v.State != c.state || v.Why == "" {
			t.Errorf("%v: %+v, want %s", c.s.Rounds, v, c.state)
		}
	}
	if v := judge("P1", s(0.95), 0.9); !strings.Contains(v.Why, "no spread") {
		t.Errorf("one round judged without a word on noise: %+v", v)
	}
	if n := noiseNote(s(1.1, 1.2, 1.05, 1.3)); !strings.Contains(n, "faster than plain") || !strings.Contains(n, "noise") {
		t.Errorf("a lock faster than plain reads not called noise: %q", n)
	}
	if n := noiseNote(s(0.97, 1.02, 0.99, 1.01)); !strings.Contains(n, "within this run's noise") {
		t.Errorf("1.0 inside the middle half not flagged: %q", n)
	}
	if n := noiseNote(s(0.5, 1.0, 0.9, 0.95)); !strings.Contains(n, "range over") {
		t.Errorf("a wide range not flagged: %q", n)
	}
	if n := noiseNote(s(0.93, 0.94, 0.95, 0.94)); n != "" {
		t.Errorf("a tight result flagged: %q", n)
	}
	sp := s(4, 1, 3, 2)
	if sp.Median != 2.5 || sp.Q1 != 1.75 || sp.Q3 != 3.25 || sp.Min != 1 || sp.Max != 4 {
		t.Errorf("spread %+v", sp)
	}
}

// TestParsePgbenchSteady pins how PostgreSQL's tps is taken in the main
// job: the mean of pgbench's progress seconds after the warm-up, not its
// overall tps (which counts fresh backends' slow first seconds).
func TestParsePgbenchSteady(t *testing.T) {
	out := `pgbench (15.18 (Debian 15.18-1.pgdg120+1))
progress: 1.0 s, 149.9 tps, lat 84.110 ms stddev 98.233, 0 failed
progress: 2.0 s, 982.9 tps, lat 30.412 ms stddev 7.335, 0 failed
progress: 3.0 s, 1048.5 tps, lat 28.610 ms stddev 6.044, 0 failed
progress: 4.0 s, 1051.5 tps, lat 28.420 ms stddev 6.225, 0 failed
progress: 5.0 s, 1301.0 tps, lat 23.001 ms stddev 6.356, 0 failed
transaction type: /tmp/x/forshare-plain.sql
scaling factor: 10
query mode: prepared
number of clients: 30
number of threads: 30
maximum number of tries: 1
duration: 4 s
number of transactions actually processed: 3410
number of failed transactions: 0 (0.000%)
latency average = 29.461 ms
initial connection time = 744.965 ms
tps = 853.862208 (without initial connection time)
`
	got, err := parsePgbenchSteady(out, 2, 2)
	if err != nil || got != 1050 {
		t.Fatalf("steady tps %v %v, want 1050 (seconds 3 and 4)", got, err)
	}
	if got, err := parsePgbenchSteady(out, 1, 1); err != nil || got != 982.9 {
		t.Fatalf("warm 1, 1 s: %v %v", got, err)
	}
	// A line pgbench skipped (it prints late under load) leaves the mean of
	// the others.
	if got, err := parsePgbenchSteady(strings.Replace(out, "progress: 3.0 s", "progress: 2.0 s", 1), 2, 2); err != nil || got != 1051.5 {
		t.Fatalf("with a line missing: %v %v", got, err)
	}
	// pgbench often ends before printing its last second: the rest counts.
	if got, err := parsePgbenchSteady(strings.Replace(out, "progress: 4.0 s", "progress: 6.0 s", 1), 2, 2); err != nil || got != 1048.5 {
		t.Fatalf("without the last line: %v %v", got, err)
	}
	if _, err := parsePgbenchSteady("pgbench: error: connection refused", 2, 2); err == nil {
		t.Fatal("no error without progress lines")
	}
	if _, err := parsePgbenchSteady("progress: 1.0 s, 10.0 tps, lat 1 ms stddev 1, 0 failed\nprogress: 2.0 s, 10.0 tps, lat 1 ms stddev 1, 0 failed\n", 2, 2); err == nil {
		t.Fatal("no error with only warm-up lines")
	}
}

// TestPgbenchRunArgs pins the pgbench command line of a measured run:
// run.sh's options, the warm-up added to -T, a progress line a second.
func TestPgbenchRunArgs(t *testing.T) {
	c := &pgCluster{dir: "/tmp/pgdir", scale: 10}
	got := strings.Join(c.pgbenchRunArgs("share", 30, pgWarmSeconds, 2), " ")
	want := "-n -M prepared -c 30 -j 30 -T 4 -P 1 -s 10 -f /tmp/pgdir/forshare-share.sql"
	if pgWarmSeconds != 2 || got != want {
		t.Fatalf("pgbench %s\nwant    %s (warm-up %d s)", got, want, pgWarmSeconds)
	}
	if h := pgHow(30, 2, 3); !strings.Contains(h, "-T 4 -P 1, tps of seconds 3–4") || !strings.Contains(h, "3 alternated rounds") {
		t.Errorf("How: %q", h)
	}
	if !strings.Contains(pgPrewarmSQL, "pg_prewarm('pgbench_accounts')") || !strings.Contains(pgPrewarmSQL, "pg_prewarm('pgbench_accounts_pkey')") {
		t.Errorf("prewarm script %q", pgPrewarmSQL)
	}
}

func TestPgScripts(t *testing.T) {
	for _, v := range []string{"plain", "share", "keyshare", "nokeyupdate", "update"} {
		if !hasScript(v) {
			t.Errorf("no embedded bench/pg script for %s", v)
		}
	}
	if hasScript("share/fastpath-off") {
		t.Error("a PostgreSQL script for a tupled-only variant")
	}
}

func TestSecondsTicks(t *testing.T) {
	var labels []string
	for _, tk := range (secondsTicks{}).Ticks(0, 28) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "0 5 10 15 20 25" {
		t.Fatalf("labels %q", got)
	}
	if n := len((secondsTicks{}).Ticks(0, 3.5)); n != 4 {
		t.Fatalf("%d ticks on 0..3.5 s, want one a second", n)
	}
}

// TestPGSideMeasures runs PostgreSQL's side of the main job for real on a
// small table (2 clients, one round, -T 4): the cluster is
// set up and prewarmed, each variant's tps comes from the progress seconds
// after the warm-up, and the ratio is computed. Not in -short (~20 s); it
// skips only when PostgreSQL 15 is not installed.
func TestPGSideMeasures(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster (~20 s)")
	}
	if _, err := findPG(); err != nil {
		t.Skipf("PostgreSQL 15 is not installed here: %v", err)
	}
	ctx := context.Background()
	s, err := startPG(ctx, "on", 100000)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if err := s.waitReady("on"); err != nil {
		t.Fatal(err)
	}
	if s.c.prewarmErr != nil {
		t.Errorf("pg_prewarm failed: %v", s.c.prewarmErr)
	}
	var out strings.Builder
	if err := s.measure(ctx, &out, []string{"plain", "share", "share/fastpath-off"}, "plain", 2, 2, 1); err != nil {
		t.Fatal(err)
	}
	if !s.res.Measured || len(s.res.TPS) != 2 || len(s.res.TPS["plain"]) != 1 || len(s.res.TPS["share"]) != 1 {
		t.Fatalf("result %+v", s.res)
	}
	for v, tps := range s.res.TPS {
		if tps[0] <= 0 {
			t.Errorf("%s: %v tps", v, tps[0])
		}
	}
	if _, ok := s.res.spread("share", "plain"); !ok {
		t.Errorf("no share/plain ratio: %+v", s.res.Spreads)
	}
	if !strings.Contains(s.res.How, "-T 4 -P 1, tps of seconds 3–4") {
		t.Errorf("How %q", s.res.How)
	}
}

// TestFKPGSide: PostgreSQL's side of `bench fk` measures a round: child
// inserts through its foreign key, parent updates beside them, and the
// multixacts and member entries its hot parents cost.
func TestFKPGSide(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster (~15 s)")
	}
	c, err := findPG()
	if err != nil {
		t.Skipf("PostgreSQL 15 is not installed here: %v", err)
	}
	ctx := context.Background()
	p := &pgFK{c: c, parents: FKHotParents}
	if err := p.start(ctx); err != nil {
		t.Fatal(err)
	}
	defer p.c.stop()
	defer p.conn.Close(ctx)
	r, err := p.round(ctx, 8, 2)
	if err != nil {
		t.Fatal(err)
	}
	if r.tps <= 0 || r.updates <= 0 || r.multi <= 0 || r.members < r.multi {
		t.Fatalf("round %+v: want children and parent updates per second, and multixacts with their members", r)
	}
}
