package main

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// metric is the figure a workload's ratio compares, and whether higher is
// better: throughput for the transaction workloads, the time of the cold
// full scan, the median latency of one durable write.
func metric(w string, r *result) (v float64, higherBetter bool) {
	switch w {
	case "scan":
		return r.Seconds, false
	case "write":
		return r.P50us, false
	}
	return r.TPS, true
}

var workloadTitle = map[string]string{
	"cold":    "3 random rows FOR SHARE per txn, cold cache",
	"warm":    "same, after a full scan warmed the cache",
	"plain":   "3 random rows, plain reads (no lock) per txn, cold cache",
	"queue":   "job queue: claim SKIP LOCKED + Where, move to done",
	"bank":    "bank transfers",
	"bankhot": "bank transfers among the hot accounts (-hot-accounts)",
	"fk":      "FK children inserted under a hot parent being updated (children/s)",
	"scan":    "full scan (time, first scan in a fresh process)",
	"write":   "one durable single-row write (p50 latency)",
}

var peerTitle = map[string]string{
	"bbolt": "bbolt", "badger": "badger", "pebble": "pebble + app lock table", "sqlite": "SQLite (WAL)",
	"tupled-bbolt": "tupled (bbolt backend)",
	"tupled-mem":   "tupled in memory",
	"tupled-arena": "tupled in memory, rows in arenas",
}

// stat is the median and range of one system's rounds of one workload.
type stat struct {
	n             int
	med, lo, hi   float64
	tps, p50, p99 float64 // medians
	rss           float64 // max over rounds, MiB
	finished      int     // queue rounds that drained
	first, last   float64 // queue: median jobs/s of the first and the last bucket
	errs          int
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func stats(r *run, sys, w string) stat {
	var st stat
	var ms, tps, p50, p99, first, last []float64
	st.lo, st.hi = math.Inf(1), math.Inf(-1)
	for _, res := range r.Results {
		if res.System != sys || res.Workload != w {
			continue
		}
		if res.Error != "" {
			st.errs++
			continue
		}
		st.n++
		m, _ := metric(w, res)
		ms = append(ms, m)
		st.lo, st.hi = math.Min(st.lo, m), math.Max(st.hi, m)
		tps, p50, p99 = append(tps, res.TPS), append(p50, res.P50us), append(p99, res.P99us)
		st.rss = math.Max(st.rss, float64(max(res.MaxRSSKiB, res.HWMKiB))/1024)
		if res.Finished {
			st.finished++
		}
		if len(res.Buckets) > 0 {
			first, last = append(first, res.Buckets[0]), append(last, res.Buckets[len(res.Buckets)-1])
		}
	}
	st.med, st.tps, st.p50, st.p99 = median(ms), median(tps), median(p50), median(p99)
	st.first, st.last = median(first), median(last)
	return st
}

// ratio is tupled's median over the peer's, oriented so that above 1
// means tupled is faster.
func ratio(w string, t, p stat) float64 {
	if t.n == 0 || p.n == 0 || t.med == 0 || p.med == 0 {
		return math.NaN()
	}
	if _, higher := metric(w, &result{}); higher {
		return t.med / p.med
	}
	return p.med / t.med
}

func fmtRatio(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.2f", x)
}

func fmtNum(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "–"
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

func unit(w string) string {
	switch w {
	case "scan":
		return "s"
	case "write":
		return "µs"
	case "queue":
		return "jobs/s"
	}
	return "tx/s"
}

// report renders the run as markdown: the ratio tables, every system's
// figures, the queue's curve, the checks and any failures.
func report(r *run) string {
	var b strings.Builder
	c := r.Config
	fmt.Fprintf(&b, "## tupled vs embedded peers, on disk, fsync on\n\n")
	fmt.Fprintf(&b, "`%s` — %d rounds alternated between systems, each system in its own process; "+
		"%d clients, %d kv rows of %d-byte values, %d accounts, %d jobs, %v per read/bank round, %d sequential durable writes. "+
		"%d CPUs, %s, %.0f s in all.\n\n", r.Command, r.Rounds, c.Clients, c.Rows, c.ValueSize, c.Accounts, c.Jobs,
		c.Duration, c.Writes, r.CPUs, r.GoVersion, r.Seconds)
	fmt.Fprintf(&b, "Load before: `%s`; after: `%s`.\n\n", r.Uptime, r.UptimeEnd)

	for _, t := range []string{"tupled", "tupled-bbolt", "tupled-mem", "tupled-arena"} {
		if !has(r.Systems, t) {
			continue
		}
		var peers []string
		for _, p := range []string{"bbolt", "badger", "pebble", "sqlite"} {
			if has(r.Systems, p) {
				peers = append(peers, p)
			}
		}
		if t == "tupled" && has(r.Systems, "tupled-bbolt") {
			peers = append(peers, "tupled-bbolt")
		}
		if t != "tupled-mem" && has(r.Systems, "tupled-mem") {
			peers = append(peers, "tupled-mem")
		}
		if len(peers) == 0 {
			continue
		}
		fmt.Fprintf(&b, "### Ratio %s / peer (median of rounds; above 1 = %s faster)\n\n| workload |", t, t)
		for _, p := range peers {
			fmt.Fprintf(&b, " vs %s |", peerTitle[p])
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(peers)) + "\n")
		for _, w := range r.Workloads {
			ts := stats(r, t, w)
			fmt.Fprintf(&b, "| %s |", workloadTitle[w])
			for _, p := range peers {
				x := fmtRatio(ratio(w, ts, stats(r, p, w)))
				if w == "queue" && ts.n > 0 && ts.finished < ts.n {
					x += " (tupled DNF)"
				}
				fmt.Fprintf(&b, " %s |", x)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}

	b.WriteString("### Every system (median, min–max over rounds)\n\n")
	b.WriteString("| workload | system | metric | median | min–max | tps | p50 µs | p99 µs | peak RSS MiB |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, w := range r.Workloads {
		for _, s := range r.Systems {
			st := stats(r, s, w)
			if st.n == 0 && st.errs == 0 {
				continue
			}
			name := unit(w)
			if w == "write" {
				name = "p50 µs"
			}
			med := fmtNum(st.med)
			if st.errs > 0 {
				med += fmt.Sprintf(" (%d ERR)", st.errs)
			}
			if w == "queue" && st.finished < st.n {
				med += fmt.Sprintf(" (DNF %d/%d)", st.n-st.finished, st.n)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s–%s | %s | %s | %s | %.0f |\n", w, s, name, med,
				fmtNum(st.lo), fmtNum(st.hi), fmtNum(st.tps), fmtNum(st.p50), fmtNum(st.p99), st.rss)
		}
	}
	b.WriteString("\n")

	if has(r.Workloads, "queue") {
		fmt.Fprintf(&b, "### Job queue: jobs/s per %d jobs (medians over rounds)\n\n", c.Bucket)
		b.WriteString("| system | rounds drained | jobs/s overall | first bucket | last bucket | last/first |\n|---|---|---|---|---|---|\n")
		for _, s := range r.Systems {
			st := stats(r, s, "queue")
			if st.n == 0 {
				continue
			}
			fmt.Fprintf(&b, "| %s | %d/%d | %s | %s | %s | %s |\n", s, st.finished, st.n, fmtNum(st.med),
				fmtNum(st.first), fmtNum(st.last), fmtRatio(st.last/st.first))
		}
		b.WriteString("\n")
	}

	if len(r.Loads) > 0 {
		b.WriteString("### Load (once per system, before the rounds; not part of any workload)\n\n" +
			"| system | rows | insert s | rows/s | close s | child's whole life s | on disk MiB | peak RSS MiB |\n|---|---|---|---|---|---|---|---|\n")
		for _, l := range r.Loads {
			fmt.Fprintf(&b, "| %s | %d | %.1f | %.0f | %.1f | %.1f | %.0f | %.0f |\n", l.System, l.Ops, l.Seconds, l.TPS,
				l.Extra["close_s"], l.Extra["wall_s"], l.Extra["disk_mib"], float64(max(l.MaxRSSKiB, l.HWMKiB))/1024)
		}
		b.WriteString("\n")
	}

	checks := map[string]int{}
	for _, res := range r.Results {
		if res.Check != "" {
			checks[res.Workload]++
		}
	}
	fmt.Fprintf(&b, "Checks passed: bank total conserved in %d runs, every job done exactly once in %d runs, full scans complete in %d runs; %d children failed.\n",
		checks["bank"], checks["queue"], checks["scan"], len(r.Failures))
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "- FAILED: %s\n", f)
	}
	return b.String()
}

func has(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
