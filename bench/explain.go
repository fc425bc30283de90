package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Reference is what a workload's headline ratio is judged against: the
// goal it serves, the seed's historical figure and PostgreSQL 15's ratio
// on this machine as last recorded in RESULTS.md (used when bench/pg's
// measurement cannot run). A workload that has one implements
//
//	Reference() *Reference
type Reference struct {
	Goal      string  `json:"goal"`      // the goal's id in RESULTS.md ("P1")
	Variant   string  `json:"variant"`   // the ratio is Variant's tps / Baseline's
	Baseline  string  `json:"baseline"`  //
	Meaning   string  `json:"meaning"`   // one line: what the ratio says
	Threshold float64 `json:"threshold"` // the goal is met at or above it

	Seed     float64 `json:"seed_ratio"` // the seed's ratio
	SeedText string  `json:"seed"`       // where it comes from

	PGRecorded     float64 `json:"postgresql_recorded_ratio"`
	PGRecordedWhen string  `json:"postgresql_recorded"` // date and source
}

// forShareReference: goal P1 of RESULTS.md, the 2012 seed
// (../shared/seeds/004_*.txt) and PostgreSQL 15's share/plain as issue 4
// recorded it (shared/reference/postgres-oracle.md: pgbench by hand,
// synchronous_commit on, 8.6k / 20.2k tps). bench/pg/run.sh forshare does
// not reproduce those tps on the 2-core machine the project runs on now:
// 1.0k / 1.7k (0.60) on 2026-12-04, which the main job's own PostgreSQL
// rounds agree with (bench/RESULTS.md).
var forShareReference = Reference{
	Goal:      "P1",
	Variant:   "share",
	Baseline:  "plain",
	Meaning:   "FOR SHARE transactions per second / plain-read transactions per second (3 rows each); 1.0 = locking is free",
	Threshold: 0.90,
	Seed:      8986.133496 / 25307.861193,
	SeedText:  "2012 seed: 8986 / 25307 tps, every FOR SHARE through a multixact (first foreign-key-locks patch; PostgreSQL 9.3 made FOR SHARE a flag again)",

	PGRecorded:     0.43,
	PGRecordedWhen: "issue 4's figure (8.6k / 20.2k tps, on another machine of the project); bench/pg/run.sh here: 0.60 (1.0k / 1.7k tps, 2026-12-04)",
}

// Spread is one ratio over the rounds of an alternated run: its median,
// quartiles (the middle half of the rounds) and range.
type Spread struct {
	Variant  string    `json:"variant"`
	Baseline string    `json:"baseline"`
	Rounds   []float64 `json:"rounds"` // in round order
	Median   float64   `json:"median"`
	Q1       float64   `json:"q1"`
	Q3       float64   `json:"q3"`
	Min      float64   `json:"min"`
	Max      float64   `json:"max"`
}

// quantile is the q-quantile of sorted xs, interpolating linearly between
// order statistics (R's type 7, numpy's default).
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := q * float64(len(sorted)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return quantile(s, 0.5)
}

// spreadOf summarises one ratio's values over the rounds.
func spreadOf(variant, baseline string, rounds []float64) Spread {
	s := slices.Clone(rounds)
	slices.Sort(s)
	return Spread{
		Variant: variant, Baseline: baseline, Rounds: rounds,
		Median: quantile(s, 0.5), Q1: quantile(s, 0.25), Q3: quantile(s, 0.75),
		Min: s[0], Max: s[len(s)-1],
	}
}

// String is "0.953 (IQR 0.91–0.99, range 0.87–1.01, 6 rounds)".
func (s Spread) String() string {
	if len(s.Rounds) == 1 {
		return fmt.Sprintf("%.3f (one round: no spread)", s.Median)
	}
	return fmt.Sprintf("%.3f (median of %d rounds; middle half %.3f–%.3f, range %.3f–%.3f)",
		s.Median, len(s.Rounds), s.Q1, s.Q3, s.Min, s.Max)
}

// Verdict is the judgement of a ratio against a goal's threshold.
type Verdict struct {
	Goal      string  `json:"goal"`
	Threshold float64 `json:"threshold"`
	// State is "met", "not met" or "inconclusive".
	State string `json:"state"`
	Why   string `json:"why"`
}

// judge decides whether s meets threshold. The middle half of the rounds
// decides, not the median alone: a goal is met when even the lower
// quartile reaches the threshold, missed when even the upper quartile does
// not, and inconclusive when the middle half straddles it — or when it
// reaches further above 1.0 than the goal's margin below 1.0 (a lock
// cannot make reads faster, so that much noise could hide a miss). One
// round has no spread: judged by its value, and said so.
func judge(goal string, s Spread, threshold float64) Verdict {
	v := Verdict{Goal: goal, Threshold: threshold}
	switch {
	case len(s.Rounds) < 3:
		v.State = "not met"
		if s.Median >= threshold {
			v.State = "met"
		}
		v.Why = fmt.Sprintf("%d round(s) only: no spread to tell the result from noise (run --rounds 5 or more)", len(s.Rounds))
	case s.Q3-1 > 1-threshold:
		// A lock cannot make reads faster: whatever of the middle half
		// lies above 1.0 is noise, and here it is wider than the goal's
		// margin, so the noise may as well hide a miss.
		v.State = "inconclusive"
		v.Why = fmt.Sprintf("the middle half of the rounds (%.3f–%.3f) reaches %.0f%% above 1.0, which only noise can do, more than the goal's margin of %.0f%%; rerun on a quieter machine or with more rounds", s.Q1, s.Q3, 100*(s.Q3-1), 100*(1-threshold))
	case s.Q1 >= threshold:
		v.State = "met"
		v.Why = fmt.Sprintf("the middle half of the rounds (%.3f–%.3f) is at or above %.2f", s.Q1, s.Q3, threshold)
	case s.Q3 < threshold:
		v.State = "not met"
		v.Why = fmt.Sprintf("the middle half of the rounds (%.3f–%.3f) is below %.2f", s.Q1, s.Q3, threshold)
	default:
		v.State = "inconclusive"
		v.Why = fmt.Sprintf("the middle half of the rounds (%.3f–%.3f) straddles %.2f: the noise is larger than the distance to the goal; run more or longer rounds (--rounds, -T) on a quieter machine", s.Q1, s.Q3, threshold)
	}
	return v
}

// noiseNote says what the spread of a lock-strength-over-plain ratio
// allows one to conclude, or "" when nothing needs saying. A lock cannot
// make reads faster, so a ratio above 1.0 is noise by definition.
func noiseNote(s Spread) string {
	if len(s.Rounds) < 3 {
		if s.Median > 1.0 {
			return fmt.Sprintf("%s came out faster than %s: a lock cannot speed up a read, so this is noise; %d round(s) cannot tell the lock's cost from it (run --rounds 5 or more)", s.Variant, s.Baseline, len(s.Rounds))
		}
		return ""
	}
	var notes []string
	switch {
	case s.Q1 > 1.0:
		notes = append(notes, fmt.Sprintf("%s came out faster than %s in most rounds: a lock cannot speed up a read, so this is noise (the machine's speed drifted between the variants' turns); the lock's cost is below what this run can resolve", s.Variant, s.Baseline))
	case s.Q1 <= 1.0 && s.Q3 >= 1.0:
		notes = append(notes, fmt.Sprintf("1.0 lies within the middle half of the rounds: %s's cost is within this run's noise", s.Variant))
	}
	if s.Median > 0 && (s.Max-s.Min)/s.Median > 0.25 {
		notes = append(notes, fmt.Sprintf("single rounds range over %.0f%% of the median: the cores are shared (other processes change the speed from second to second), so trust the median and the middle half, not a single round", 100*(s.Max-s.Min)/s.Median))
	}
	return strings.Join(notes, "; ")
}

// printExplained prints the headline ratio beside its references, what it
// means and the verdict, then every other ratio with its spread and what
// its noise allows one to conclude.
func printExplained(w io.Writer, rep *Report) {
	ref := rep.Reference
	for _, s := range rep.Spreads {
		if s.Variant == s.Baseline {
			continue
		}
		if ref != nil && s.Variant == ref.Variant && s.Baseline == ref.Baseline {
			fmt.Fprintf(w, "\n%s / %s: %s\n", s.Variant, s.Baseline, ref.Meaning)
			fmt.Fprintf(w, "  tupled, this run:          %s\n", s)
			if pg := rep.PostgreSQL; pg != nil && pg.Measured {
				if ps, ok := pg.spread(s.Variant, s.Baseline); ok {
					fmt.Fprintf(w, "  PostgreSQL 15, this run:   %s, %s\n", ps, pg.How)
				}
				fmt.Fprintf(w, "  PostgreSQL 15, recorded:   %.2f, %s\n", ref.PGRecorded, ref.PGRecordedWhen)
			} else {
				why := ""
				if pg != nil && pg.Note != "" {
					why = " (not measured now: " + pg.Note + ")"
				}
				fmt.Fprintf(w, "  PostgreSQL 15, recorded:   %.2f, %s%s\n", ref.PGRecorded, ref.PGRecordedWhen, why)
			}
			fmt.Fprintf(w, "  %-26s %.3f, %s\n", "the seed:", ref.Seed, ref.SeedText)
			if v := rep.Verdict; v != nil {
				fmt.Fprintf(w, "  goal %s (≥ %.2f): %s — %s\n", v.Goal, v.Threshold, strings.ToUpper(v.State), v.Why)
			}
		} else {
			fmt.Fprintf(w, "\n%s / %s: %s\n", s.Variant, s.Baseline, s)
			if pg := rep.PostgreSQL; pg != nil && pg.Measured {
				if ps, ok := pg.spread(s.Variant, s.Baseline); ok {
					fmt.Fprintf(w, "  PostgreSQL 15, this run:   %s\n", ps)
				}
			}
		}
		if n := noiseNote(s); n != "" {
			fmt.Fprintf(w, "  noise: %s\n", n)
		}
	}
}

// printCounters prints every extra figure of the variants (the median over
// the rounds) with what it counts and what value to expect.
func printCounters(w io.Writer, rep *Report) {
	var names []string
	help := map[string]string{}
	for _, r := range rep.Results {
		for _, k := range r.ExtraOrder {
			if !slices.Contains(names, k) {
				names = append(names, k)
			}
			if h := r.ExtraHelp[k]; h != "" {
				help[k] = h
			}
		}
	}
	if len(names) == 0 {
		return
	}
	fmt.Fprintf(w, "\ncounters")
	if len(rep.RoundResults) > 1 {
		fmt.Fprintf(w, " (median over the rounds)")
	}
	fmt.Fprintln(w, ":")
	for _, k := range names {
		var parts []string
		for _, r := range rep.Results {
			if _, ok := r.Extra[k]; ok {
				parts = append(parts, fmt.Sprintf("%s %s", r.Variant, fmtFloat(rep.medianExtra(r.Variant, k))))
			}
		}
		fmt.Fprintf(w, "  %s: %s\n", k, strings.Join(parts, ", "))
		if h := help[k]; h != "" {
			fmt.Fprintf(w, "      %s\n", h)
		}
	}
}

// medianExtra is the median of extra figure k of variant over the rounds.
func (rep *Report) medianExtra(variant, k string) float64 {
	var vs []float64
	for _, round := range rep.allRounds() {
		for _, r := range round {
			if v, ok := r.Extra[k]; ok && r.Variant == variant {
				vs = append(vs, v)
			}
		}
	}
	if len(vs) == 0 {
		return 0
	}
	return median(vs)
}

// tableLegend explains the ratio table's columns.
const tableLegend = `columns: tps = committed transactions per second; lat avg, p99 = a transaction's latency (ms), mean and 99th percentile;
failed = transactions that ended in an error (by SQLSTATE in the JSON); 0-tps = whole seconds without a single commit (a stall);
/%s = the variant's tps over %s's tps, from the same round`
