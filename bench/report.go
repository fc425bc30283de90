package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tupled/tupled"
)

// Workloads lists every workload by name, in the order `tupled bench` shows
// them.
func Workloads() []Workload {
	return []Workload{&forShare{}, &hotRow{}, &storm{}, &manyRows{}, &tpcb{}, &fk{}}
}

// Lookup returns the workload called name.
func Lookup(name string) (Workload, bool) {
	for _, w := range Workloads() {
		if w.Name() == name {
			return w, true
		}
	}
	return nil, false
}

// Report is everything one invocation measured: the JSON document of --json.
type Report struct {
	Workload string    `json:"workload"`
	Started  time.Time `json:"started"`
	Config   struct {
		Clients int     `json:"clients"`
		Seconds float64 `json:"seconds"`
		Rows    int     `json:"rows"`
		// Backend is where the data lived: "memory", "pebble" or "bbolt".
		Backend string `json:"backend"`
		// Dir is the on-disk database's directory ("" in memory);
		// DirRemoved says it was a temp dir, removed after the run.
		Dir        string `json:"dir,omitempty"`
		DirRemoved bool   `json:"dir_removed,omitempty"`
		// SyncCommit: a writing commit waited for its WAL fsync. Always
		// false in memory, where there is no WAL to wait for.
		SyncCommit  bool    `json:"sync_commit"`
		LoadSeconds float64 `json:"load_seconds,omitempty"`
		Args        string  `json:"args,omitempty"`
	} `json:"config"`
	Baseline string    `json:"baseline,omitempty"`
	Results  []*Result `json:"results"` // of the last round
	// Ratios are the ratio table; with Rounds > 1, each is the median of
	// its rounds' values (RoundRatios), whose spread is in Spreads.
	Ratios       []Ratio     `json:"ratios,omitempty"`
	Rounds       int         `json:"rounds,omitempty"`
	RoundRatios  [][]Ratio   `json:"round_ratios,omitempty"`
	RoundResults [][]*Result `json:"round_results,omitempty"` // every round's results (Rounds > 1)
	Spreads      []Spread    `json:"ratio_spread,omitempty"`
	// Reference, Verdict and PostgreSQL: the headline ratio's references
	// (the seed, PostgreSQL 15 here), whether it met its goal, and
	// PostgreSQL's ratio measured in this run (or why not).
	Reference  *Reference `json:"reference,omitempty"`
	Verdict    *Verdict   `json:"verdict,omitempty"`
	PostgreSQL *PGResult  `json:"postgresql,omitempty"`
}

// allRounds is every round's results (the last one alone for one round).
func (rep *Report) allRounds() [][]*Result {
	if len(rep.RoundResults) > 0 {
		return rep.RoundResults
	}
	return [][]*Result{rep.Results}
}

// Ratio is one line of the ratio table.
type Ratio struct {
	Variant  string  `json:"variant"`
	Baseline string  `json:"baseline"`
	TPS      float64 `json:"tps_ratio"`
}

// Optional interfaces of a workload.
type (
	// referencer: a workload whose headline ratio has a goal and
	// reference figures (forshare: P1).
	referencer interface{ Reference() *Reference }
	// describer: one line saying what a transaction does.
	describer interface{ Describe(cfg *Config) string }
	// defaultRows: the table size when Config.Rows is 0.
	defaultRows interface{ DefaultRows() int }
)

// Run runs every requested variant of w, one after another (alternated
// over cfg.Rounds rounds), printing progress and summaries to cfg.Out,
// then the ratio table, each ratio's spread over the rounds, the headline
// ratio beside its references with the goal's verdict, and what every
// counter means.
func Run(ctx context.Context, w Workload, cfg *Config) (*Report, error) {
	variants := cfg.Variants
	if len(variants) == 0 {
		variants = w.Variants(cfg)
	}
	for _, v := range variants {
		if !slices.Contains(w.All(), v) {
			return nil, fmt.Errorf("workload %s has no variant %q (have: %s)", w.Name(), v, strings.Join(w.All(), ", "))
		}
	}
	if cfg.Clients <= 0 {
		cfg.Clients = 30
		if d, ok := w.(interface{ DefaultClients() int }); ok {
			cfg.Clients = d.DefaultClients()
		}
	}
	if cfg.Rows <= 0 {
		if d, ok := w.(defaultRows); ok {
			cfg.Rows = d.DefaultRows()
		}
	}
	switch cfg.PG {
	case "", "off", "auto", "on":
	default:
		return nil, fmt.Errorf("PG must be auto, on or off, not %q", cfg.PG)
	}
	rep := &Report{Workload: w.Name(), Started: time.Now().UTC()}
	if cfg.TempData && cfg.DataDir == "" {
		dir, err := os.MkdirTemp("", "tupled-bench-"+w.Name()+".")
		if err != nil {
			return nil, err
		}
		cfg.DataDir = dir
		rep.Config.DirRemoved = true
		defer func() {
			cfg.DataDir = ""
			os.RemoveAll(dir)
		}()
	}
	defer w.Close() // before the temp dir goes (defers run last-in first-out)
	rep.Config.Clients, rep.Config.Seconds, rep.Config.Rows = cfg.Clients, cfg.Duration.Seconds(), cfg.Rows
	rep.Config.Backend, rep.Config.Dir = "memory", cfg.DataDir
	if cfg.DataDir != "" {
		rep.Config.Backend = backendName(cfg.Backend)
		rep.Config.SyncCommit = cfg.SyncCommit
	}
	rounds := max(cfg.Rounds, 1)
	printPreamble(cfg.Out, w, cfg, rep, variants, rounds)

	var pg *pgSide
	if r, ok := w.(referencer); ok {
		rep.Reference = r.Reference()
		// PostgreSQL runs only for the headline ratio's two variants.
		headline := slices.Contains(variants, rep.Reference.Variant) && slices.Contains(variants, rep.Reference.Baseline)
		if (cfg.PG == "auto" || cfg.PG == "on") && headline {
			var err error
			if pg, err = startPG(ctx, cfg.PG, cfg.Rows); err != nil {
				return nil, err
			}
			defer pg.close()
			rep.PostgreSQL = pg.res
		}
	}

	var start time.Time // when the first variant started measuring (the time line's 0)
	for round := 1; round <= rounds; round++ {
		var results []*Result
		for _, v := range variants {
			if rounds == 1 {
				fmt.Fprintf(cfg.Out, "== %s: %s (%d clients, %s)\n", w.Name(), v, cfg.Clients, cfg.Duration)
			}
			p, err := w.Prepare(ctx, cfg, v)
			if err != nil {
				return nil, fmt.Errorf("%s/%s: %w", w.Name(), v, err)
			}
			rep.Config.LoadSeconds += p.LoadSeconds
			if pg != nil {
				// PostgreSQL set itself up while tupled loaded; nothing
				// of it may run while a variant is measured.
				if err := pg.waitReady(cfg.PG); err != nil {
					return nil, err
				}
			}
			res, err := RunVariant(ctx, cfg, w.Name(), v, p)
			if err != nil {
				return nil, fmt.Errorf("%s/%s: %w", w.Name(), v, err)
			}
			if start.IsZero() {
				start = res.began
			}
			res.Start = res.began.Sub(start).Seconds()
			if rounds > 1 {
				res.Round = round
				printRoundLine(cfg.Out, res, rounds)
			} else {
				PrintSummary(cfg.Out, res)
			}
			if res.Rows > 0 {
				rep.Config.Rows = res.Rows
			}
			results = append(results, res)
		}
		rep.Results = results
		rep.RoundRatios = append(rep.RoundRatios, ratios(w, cfg, rep))
		if rounds > 1 {
			rep.RoundResults = append(rep.RoundResults, results)
		}
		if cfg.afterRound != nil {
			cfg.afterRound(round)
		}
	}
	rep.Spreads, rep.Ratios = spreads(rep.RoundRatios)
	if rounds > 1 {
		rep.Rounds = rounds
	} else {
		rep.RoundRatios = nil
	}
	if ref := rep.Reference; ref != nil {
		for _, s := range rep.Spreads {
			if s.Variant == ref.Variant && s.Baseline == ref.Baseline {
				v := judge(ref.Goal, s, ref.Threshold)
				rep.Verdict = &v
			}
		}
	}
	if pg != nil {
		// tupled's databases close first: nothing of theirs (pebble's
		// compactions, the vacuum loop, a gigabyte of heap for the
		// collector) may run beside PostgreSQL's rounds.
		if err := w.Close(); err != nil {
			return nil, err
		}
		pgRounds := cfg.PGRounds
		if pgRounds <= 0 {
			pgRounds = min(rounds, 3)
		}
		// pgbench's -T is whole seconds, and its last progress second
		// is often missing: 2 measured seconds leave at least one.
		secs := max(2, int(math.Round(cfg.Duration.Seconds())))
		if err := pg.measure(ctx, cfg.Out, variants, w.Baseline(cfg), cfg.Clients, secs, pgRounds); err != nil {
			if cfg.PG == "on" {
				return nil, err
			}
			pg.res.Note = err.Error()
		}
	}
	PrintTable(cfg.Out, rep)
	return rep, nil
}

// printPreamble says what is about to run, where the data lives and how
// the variants alternate.
func printPreamble(out io.Writer, w Workload, cfg *Config, rep *Report, variants []string, rounds int) {
	if d, ok := w.(describer); ok {
		fmt.Fprintf(out, "%s: %s\n", w.Name(), d.Describe(cfg))
	}
	where := "in memory (no WAL: sync commit does not apply)"
	if cfg.DataDir != "" {
		sync := "synchronous commit off"
		if cfg.SyncCommit {
			sync = "synchronous commit on"
		}
		kept := "kept"
		if rep.Config.DirRemoved {
			kept = "a temp dir, removed after the run"
		}
		where = fmt.Sprintf("on disk (%s, %s: %s), %s", rep.Config.Backend, cfg.DataDir, kept, sync)
	}
	fmt.Fprintf(out, "data: %s\n", where)
	if rounds > 1 {
		fmt.Fprintf(out, "%d rounds of %s per variant, alternating %s (machine drift then hits every variant alike)\n",
			rounds, cfg.Duration, strings.Join(variants, ", "))
	}
}

// printRoundLine is one variant's result in one round of an alternated
// run: its tps, each whole second's tps and its latency.
func printRoundLine(out io.Writer, r *Result, rounds int) {
	var each []string
	for _, iv := range r.Series {
		each = append(each, fmt.Sprintf("%.0f", iv.TPS))
	}
	fmt.Fprintf(out, "round %d/%d  %-24s %10.1f tps  (per second: %s)  lat avg %.3f ms, p99 %.3f ms, %d failed\n",
		r.Round, rounds, r.Variant, r.TPS, strings.Join(each, " "), r.LatAvgMs, r.LatP99Ms, r.Failed())
}

// ratios computes the ratio table of rep's results: each variant against
// the workload's baseline, then the workload's own ratios.
func ratios(w Workload, cfg *Config, rep *Report) []Ratio {
	var out []Ratio
	if b := w.Baseline(cfg); b != "" {
		rep.Baseline = b
		var base *Result
		for _, r := range rep.Results {
			if r.Variant == b {
				base = r
			}
		}
		if base != nil && base.TPS > 0 {
			for _, r := range rep.Results {
				out = append(out, Ratio{Variant: r.Variant, Baseline: b, TPS: r.TPS / base.TPS})
			}
		}
	}
	if x, ok := w.(interface{ Ratios(*Report) []Ratio }); ok {
		out = append(out, x.Ratios(rep)...)
	}
	return out
}

// spreads returns, for each ratio of the first round, its spread over the
// rounds, and the ratios with their medians.
func spreads(rounds [][]Ratio) ([]Spread, []Ratio) {
	if len(rounds) == 0 {
		return nil, nil
	}
	var sp []Spread
	out := slices.Clone(rounds[0])
	for i := range out {
		var vs []float64
		for _, rr := range rounds {
			if i < len(rr) && rr[i].Variant == out[i].Variant && rr[i].Baseline == out[i].Baseline {
				vs = append(vs, rr[i].TPS)
			}
		}
		s := spreadOf(out[i].Variant, out[i].Baseline, vs)
		out[i].TPS = s.Median
		sp = append(sp, s)
	}
	return sp, out
}

// medianRatios returns, for each ratio of the first round, the median of
// that ratio over the rounds.
func medianRatios(rounds [][]Ratio) []Ratio {
	_, out := spreads(rounds)
	return out
}

// PrintSummary prints pgbench's end-of-run summary for one variant.
func PrintSummary(w io.Writer, r *Result) {
	fmt.Fprintf(w, "workload: %s\nvariant: %s\n", r.Workload, r.Variant)
	if r.Rows > 0 {
		fmt.Fprintf(w, "rows: %d\n", r.Rows)
	}
	fmt.Fprintf(w, "number of clients: %d\n", r.Clients)
	fmt.Fprintf(w, "duration: %.1f s\n", r.Seconds)
	fmt.Fprintf(w, "number of transactions actually processed: %d\n", r.Transactions)
	failed := r.Failed()
	pct := 0.0
	if all := r.Transactions + failed; all > 0 {
		pct = 100 * float64(failed) / float64(all)
	}
	fmt.Fprintf(w, "number of failed transactions: %d (%.3f%%)", failed, pct)
	if failed > 0 {
		var parts []string
		for _, k := range sortedKeys(r.Failures) {
			parts = append(parts, fmt.Sprintf("%s: %d", k, r.Failures[k]))
		}
		fmt.Fprintf(w, " [%s]", strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "latency average = %.3f ms\nlatency stddev = %.3f ms\n", r.LatAvgMs, r.LatStddevMs)
	fmt.Fprintf(w, "latency p50 = %.3f ms, p99 = %.3f ms, max = %.3f ms\n", r.LatP50Ms, r.LatP99Ms, r.LatMaxMs)
	fmt.Fprintf(w, "seconds with zero tps: %d\n", r.ZeroSeconds)
	for _, k := range r.ExtraOrder {
		fmt.Fprintf(w, "%s = %s\n", k, fmtFloat(r.Extra[k]))
	}
	fmt.Fprintf(w, "tps = %.1f\n\n", r.TPS)
}

func fmtFloat(v float64) string {
	switch {
	case v == float64(int64(v)) && v < 1e15 && v > -1e15:
		return fmt.Sprintf("%d", int64(v))
	case v >= 100 || v <= -100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.4g", v)
	}
}

// PrintTable prints one line per variant (with several rounds, the median
// of its rounds' figures) and, when the workload has a baseline, each
// variant's tps as a ratio of it; then what the columns mean, every ratio
// with its spread (the headline one beside its references and its goal's
// verdict), and the counters with what they count.
func PrintTable(w io.Writer, rep *Report) {
	rounds := rep.allRounds()
	if len(rounds) > 1 {
		fmt.Fprintf(w, "\nmedian over %d rounds:\n", len(rounds))
	} else {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%-24s %12s %10s %10s %10s %6s", "variant", "tps", "lat avg", "p99", "failed", "0-tps")
	if rep.Baseline != "" {
		fmt.Fprintf(w, " %10s", "/"+rep.Baseline)
	}
	fmt.Fprintln(w)
	for i, r := range rep.Results {
		var tps, lat, p99 []float64
		var failed uint64
		zero := 0
		for _, round := range rounds {
			for _, x := range round {
				if x.Variant == r.Variant {
					tps, lat, p99 = append(tps, x.TPS), append(lat, x.LatAvgMs), append(p99, x.LatP99Ms)
					failed += x.Failed()
					zero += x.ZeroSeconds
				}
			}
		}
		fmt.Fprintf(w, "%-24s %12.1f %8.3fms %8.3fms %10d %6d", r.Variant, median(tps), median(lat), median(p99), failed, zero)
		if rep.Baseline != "" && i < len(rep.Ratios) && rep.Ratios[i].Baseline == rep.Baseline {
			fmt.Fprintf(w, " %10.3f", rep.Ratios[i].TPS)
		}
		fmt.Fprintln(w)
	}
	for _, x := range rep.Ratios {
		if x.Baseline != rep.Baseline {
			fmt.Fprintf(w, "ratio %s / %s = %.3f\n", x.Variant, x.Baseline, x.TPS)
		}
	}
	base := rep.Baseline
	if base == "" {
		base = "the baseline"
	}
	fmt.Fprintf(w, tableLegend+"\n", base, base)
	printExplained(w, rep)
	printCounters(w, rep)
}

// WriteJSON writes rep to path.
func WriteJSON(path string, rep any) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// backendName is the on-disk backend's name as --backend spells it.
func backendName(b tupled.Backend) string {
	if b == tupled.Bbolt {
		return "bbolt"
	}
	return "pebble"
}

// Defaults are what `tupled bench` runs a workload with when its flags do
// not say otherwise.
type Defaults struct {
	Rounds   int           // alternated rounds
	Duration time.Duration // of each variant in each round
	OnDisk   bool          // in a temp dir with synchronous commit, not in memory
}

// DefaultsOf returns w's defaults: forshare runs goal P1's case (on disk,
// synchronous commit, 5 alternated rounds of 2 s); every other workload one
// round of 5 s in memory.
func DefaultsOf(w Workload) Defaults {
	if d, ok := w.(interface{ Defaults() Defaults }); ok {
		return d.Defaults()
	}
	return Defaults{Rounds: 1, Duration: 5 * time.Second}
}
