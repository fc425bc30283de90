package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Workloads lists every workload by name, in the order `tupled bench` shows
// them.
func Workloads() []Workload {
	return []Workload{&forShare{}, &hotRow{}, &storm{}, &manyRows{}, &tpcb{}}
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
		Clients    int     `json:"clients"`
		Seconds    float64 `json:"seconds"`
		Rows       int     `json:"rows"`
		Data       string  `json:"data,omitempty"`
		SyncCommit bool    `json:"sync_commit"`
		Args       string  `json:"args,omitempty"`
	} `json:"config"`
	Baseline string    `json:"baseline,omitempty"`
	Results  []*Result `json:"results"` // of the last round
	Ratios   []Ratio   `json:"ratios,omitempty"`
	// With --rounds N > 1: every round's ratios; Ratios are their medians.
	Rounds      int       `json:"rounds,omitempty"`
	RoundRatios [][]Ratio `json:"round_ratios,omitempty"`
}

// Ratio is one line of the ratio table.
type Ratio struct {
	Variant  string  `json:"variant"`
	Baseline string  `json:"baseline"`
	TPS      float64 `json:"tps_ratio"`
}

// Run runs every requested variant of w, one after another, printing progress
// and summaries to cfg.Out, then the ratio table.
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
	defer w.Close()
	rep := &Report{Workload: w.Name(), Started: time.Now().UTC()}
	rep.Config.Clients, rep.Config.Seconds, rep.Config.Data, rep.Config.SyncCommit =
		cfg.Clients, cfg.Duration.Seconds(), cfg.DataDir, cfg.SyncCommit
	rounds := max(cfg.Rounds, 1)
	for round := 1; round <= rounds; round++ {
		rep.Results = rep.Results[:0]
		for _, v := range variants {
			what := fmt.Sprintf("%d clients, %s", cfg.Clients, cfg.Duration)
			if rounds > 1 {
				what += fmt.Sprintf(", round %d of %d", round, rounds)
			}
			fmt.Fprintf(cfg.Out, "== %s: %s (%s)\n", w.Name(), v, what)
			p, err := w.Prepare(ctx, cfg, v)
			if err != nil {
				return nil, fmt.Errorf("%s/%s: %w", w.Name(), v, err)
			}
			res, err := RunVariant(ctx, cfg, w.Name(), v, p)
			if err != nil {
				return nil, fmt.Errorf("%s/%s: %w", w.Name(), v, err)
			}
			rep.Config.Rows = res.Rows
			rep.Results = append(rep.Results, res)
			PrintSummary(cfg.Out, res)
		}
		rep.Ratios = ratios(w, cfg, rep)
		if rounds > 1 {
			rep.RoundRatios = append(rep.RoundRatios, rep.Ratios)
		}
	}
	if rounds > 1 {
		rep.Rounds = rounds
		rep.Ratios = medianRatios(rep.RoundRatios)
	}
	PrintTable(cfg.Out, rep)
	return rep, nil
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

// medianRatios returns, for each ratio of the first round, the median of
// that ratio over the rounds (the lower middle one of an even count).
func medianRatios(rounds [][]Ratio) []Ratio {
	if len(rounds) == 0 {
		return nil
	}
	out := slices.Clone(rounds[0])
	for i := range out {
		var vs []float64
		for _, rr := range rounds {
			if i < len(rr) && rr[i].Variant == out[i].Variant && rr[i].Baseline == out[i].Baseline {
				vs = append(vs, rr[i].TPS)
			}
		}
		slices.Sort(vs)
		out[i].TPS = vs[(len(vs)-1)/2]
	}
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

// PrintTable prints one line per variant and, when the workload has a
// baseline, each variant's tps as a ratio of it.
func PrintTable(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "%-24s %12s %10s %10s %10s %6s", "variant", "tps", "lat avg", "p99", "failed", "0-tps")
	if rep.Baseline != "" {
		fmt.Fprintf(w, " %10s", "/"+rep.Baseline)
	}
	fmt.Fprintln(w)
	for i, r := range rep.Results {
		fmt.Fprintf(w, "%-24s %12.1f %8.3fms %8.3fms %10d %6d", r.Variant, r.TPS, r.LatAvgMs, r.LatP99Ms, r.Failed(), r.ZeroSeconds)
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
	if len(rep.RoundRatios) > 1 {
		fmt.Fprintf(w, "median over %d rounds (tps and latencies above are the last round's; the /%s column is the median):\n", len(rep.RoundRatios), rep.Baseline)
		for i, x := range rep.Ratios {
			if x.Variant == x.Baseline {
				continue
			}
			var each []string
			for _, rr := range rep.RoundRatios {
				if i < len(rr) {
					each = append(each, fmt.Sprintf("%.3f", rr[i].TPS))
				}
			}
			fmt.Fprintf(w, "ratio %s / %s = %.3f (rounds: %s)\n", x.Variant, x.Baseline, x.TPS, strings.Join(each, " "))
		}
	}
}

// WriteJSON writes rep to path.
func WriteJSON(path string, rep *Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// WritePlot draws tps per second for every variant of rep into a PNG (or SVG,
// by path's extension), so that a stall shows at a glance.
func WritePlot(path string, rep *Report) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("tupled bench %s: %d clients", rep.Workload, rep.Config.Clients)
	p.X.Label.Text = "seconds"
	p.Y.Label.Text = "tps"
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	for i, r := range rep.Results {
		pts := make(plotter.XYs, 0, len(r.Series)+1)
		pts = append(pts, plotter.XY{X: 0, Y: 0})
		for _, iv := range r.Series {
			pts = append(pts, plotter.XY{X: iv.At, Y: iv.TPS})
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / 7)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(r.Variant, l)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.TextStyle.Color = color.Black
	return p.Save(10*vg.Inch, 5*vg.Inch, path)
}
