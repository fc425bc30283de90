package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/bench"
)

func init() {
	register(&command{
		name:    "bench",
		summary: "replay the seed experiments (forshare, hotrow, storm, manyrows, tpcb-like, fk)",
		usage:   "WORKLOAD [-c CLIENTS] [-T SECONDS] [-P SECONDS] [-s ROWS] [--data DIR] [flags]",
		help: `
Bench runs a workload's variants one after another, each with the same
clients for the same time, printing pgbench-style progress lines and
summaries, then a table of tps per variant with each variant's ratio to the
workload's baseline. Latencies come from an HDR histogram.

Workloads (bench/README.md explains each and the seed it replays):

  forshare   the 2012 seed: 3 random rows of 1M locked per transaction.
             By default goal P1's case: plain vs share alternated over 5
             rounds of 2 s, on disk (a temp dir) with synchronous commit,
             PostgreSQL 15 measured beside it when installed (--pg), and
             the ratio printed beside the seed's and PostgreSQL's with the
             goal's verdict. Other strengths: --variants
             plain,keyshare,share,nokeyupdate,update; --share-fastpath
             off|both replays the pre-9.3 multixact-per-lock
  hotrow     every client locks one row FOR KEY SHARE (a multixact every
             time) vs plainly reading it
  storm      the 2018 seed: 1000 clients on 10 hot rows and contended
             inserts, waits beyond deadlock_timeout, one variant per deadlock
             strategy; real 2-way deadlocks injected at 5/s (--inject-deadlocks
             N/s, 0 for none) and their detection latency reported
  manyrows   one transaction locks every row (10M) FOR SHARE
  tpcb-like  pgbench's TPC-B-like write mix: commit throughput, fsyncs/commit
  fk         30 clients insert children of 4 hot parents through a declared
             foreign key (FOR KEY SHARE on the parent, a multixact) while
             one more client updates the parents' non-key column; by default
             3 rounds of 3 s on disk, PostgreSQL 15 beside it with the same
             schema (bench/pg/fk-*.sql), multixacts and member entries
             written per child insert, the ≥ 3× goal's verdict

Storage: with --data DIR on disk (pebble unless --backend bbolt), and the
loaded rows are reused by later runs; with --memory in memory (no WAL);
with neither, forshare runs on disk in a temp dir removed afterwards and
the other workloads in memory.`,
		run: runBench,
	})
}

// onOff is a boolean flag spelled on/off (or true/false).
type onOff bool

func (b *onOff) String() string {
	if *b {
		return "on"
	}
	return "off"
}

func (b *onOff) Set(s string) error {
	switch strings.ToLower(s) {
	case "on", "true", "1", "yes":
		*b = true
	case "off", "false", "0", "no":
		*b = false
	default:
		return fmt.Errorf("want on or off, got %q", s)
	}
	return nil
}

func (b *onOff) IsBoolFlag() bool { return true }

// rate is a flag like "20/s" (or "20").
type rate float64

func (r *rate) String() string { return strconv.FormatFloat(float64(*r), 'g', -1, 64) + "/s" }

func (r *rate) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "/s"), 64)
	if err != nil || v < 0 {
		return fmt.Errorf("want a rate like 20/s, got %q", s)
	}
	*r = rate(v)
	return nil
}

// seconds accepts pgbench's plain seconds ("5") or a Go duration ("500ms").
type seconds time.Duration

func (d *seconds) String() string { return time.Duration(*d).String() }

func (d *seconds) Set(s string) error {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if v < 0 {
			return fmt.Errorf("negative duration %q", s)
		}
		*d = seconds(v * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("want seconds (5) or a duration (500ms), got %q", s)
	}
	*d = seconds(v)
	return nil
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := commands["bench"]
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		return parseFlags(c, benchFlags(&bench.Config{}, new(benchOut)), args[:1], stdout)
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return usagef("no workload given (one of %s)", workloadNames())
	}
	w, ok := bench.Lookup(args[0])
	if !ok {
		return usagef("unknown workload %q (one of %s)", args[0], workloadNames())
	}
	cfg := &bench.Config{Out: stdout}
	var out benchOut
	fs := benchFlags(cfg, &out)
	if err := parseFlags(c, fs, args[1:], stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (flags go after the workload)", fs.Arg(0))
	}
	if cfg.Clients < 0 {
		return usagef("-c must be positive")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	def := bench.DefaultsOf(w)
	if !set["rounds"] {
		cfg.Rounds = def.Rounds
	}
	if cfg.Rounds < 1 {
		return usagef("--rounds must be at least 1")
	}
	if !set["T"] {
		out.duration = seconds(def.Duration)
	}
	if !set["P"] && cfg.Rounds > 1 {
		out.progress = 0 // one line per variant and round instead
	}
	if out.memory && cfg.DataDir != "" {
		return usagef("--memory and --data exclude each other")
	}
	cfg.TempData = def.OnDisk && !out.memory && cfg.DataDir == ""
	switch out.pg {
	case "auto", "on", "off":
		cfg.PG = out.pg
	default:
		return usagef("--pg must be auto, on or off")
	}
	switch cfg.ShareFastPath {
	case "on", "off", "both":
	default:
		return usagef("--share-fastpath must be on, off or both")
	}
	switch out.backend {
	case "pebble":
		cfg.Backend = tupled.Pebble
	case "bbolt":
		cfg.Backend = tupled.Bbolt
	default:
		return usagef("--backend must be pebble or bbolt")
	}
	if out.variants != "" {
		cfg.Variants = strings.Split(out.variants, ",")
	}
	cfg.Duration = time.Duration(out.duration)
	if cfg.Duration <= 0 {
		return usagef("-T must be positive")
	}
	cfg.Progress = time.Duration(out.progress)
	cfg.SyncCommit = bool(out.sync)
	cfg.InjectDeadlocks = float64(out.inject)
	if !set["inject-deadlocks"] && w.Name() == "storm" {
		cfg.InjectDeadlocks = bench.StormInjectRate
	}
	if cfg.Seed == 0 {
		cfg.Seed = uint64(time.Now().UnixNano())
	}
	if cfg.DataDir != "" {
		if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
			return err
		}
	}
	if out.cpuprofile != "" {
		f, err := os.Create(out.cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if out.blockprofile != "" {
		runtime.SetBlockProfileRate(int(time.Microsecond))
		runtime.SetMutexProfileFraction(10)
		defer func() {
			if err := writeProfile("block", out.blockprofile); err != nil {
				fmt.Fprintln(stderr, err)
			}
			if err := writeProfile("mutex", out.blockprofile+".mutex"); err != nil {
				fmt.Fprintln(stderr, err)
			}
		}()
	}
	var rep *bench.Report
	var doc any
	if w.Name() == "fk" {
		fr, err := bench.RunFK(ctx, cfg)
		if err != nil {
			return err
		}
		rep, doc = fr.Report, fr
	} else {
		r, err := bench.Run(ctx, w, cfg)
		if err != nil {
			return err
		}
		rep, doc = r, r
	}
	rep.Config.Args = strings.Join(append([]string{"tupled", "bench"}, args...), " ")
	if out.json != "" {
		if err := bench.WriteJSON(out.json, doc); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", out.json)
	}
	if out.plot != "" {
		if err := bench.WritePlot(out.plot, rep); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", out.plot)
	}
	if out.plot == "" && out.json == "" {
		fmt.Fprintln(stdout, "\n(--plot FILE.png draws tps per second and the ratio per round; --json FILE keeps every figure)")
	}
	return nil
}

// benchOut holds the flags that need converting before they reach Config.
type benchOut struct {
	backend, variants, json, plot string
	cpuprofile, blockprofile      string
	duration, progress            seconds
	sync                          onOff
	inject                        rate
	memory                        bool
	pg                            string
}

func benchFlags(cfg *bench.Config, o *benchOut) *flag.FlagSet {
	fs := newFlagSet(commands["bench"])
	fs.IntVar(&cfg.Clients, "c", 0, "number of concurrent clients (0: the workload's default, 30; storm 1000)")
	o.duration = seconds(5 * time.Second)
	fs.Var(&o.duration, "T", "duration of each variant in each round, in seconds or a Go duration (default: forshare 2, others 5)")
	o.progress = seconds(time.Second)
	fs.Var(&o.progress, "P", "progress line every so many seconds (0: none; default 1, or none with several rounds)")
	fs.IntVar(&cfg.Rows, "s", 0, "rows in the table (0: the workload's default)")
	fs.StringVar(&cfg.DataDir, "data", "", "directory of an on-disk database, kept (default: forshare a temp dir, others in memory)")
	fs.BoolVar(&o.memory, "memory", false, "run in memory (no WAL, no disk), forshare's old default")
	fs.StringVar(&o.pg, "pg", "auto", "forshare and fk: measure PostgreSQL 15 beside tupled as bench/pg does: auto (when installed), on, off (show the recorded figure)")
	fs.IntVar(&cfg.PGRounds, "pg-rounds", 0, "forshare: PostgreSQL's alternated rounds (0: min(--rounds, 3))")
	fs.StringVar(&o.backend, "backend", "pebble", "backend of an on-disk database: pebble or bbolt")
	o.sync = true
	fs.Var(&o.sync, "sync-commit", "on: a writing commit waits for its WAL fsync (off: bounded loss window)")
	fs.StringVar(&o.variants, "variants", "", "comma-separated variants to run (default: the workload's)")
	fs.IntVar(&cfg.Rounds, "rounds", 0, "run the variants this many times, alternating; ratios are the median of the rounds' ratios (default: forshare 5, others 1)")
	fs.StringVar(&o.json, "json", "", "write the summary and per-interval series to this JSON file")
	fs.StringVar(&o.plot, "plot", "", "draw tps per second of every variant, and the ratios per round, into this PNG (or .svg)")
	fs.StringVar(&cfg.ShareFastPath, "share-fastpath", "on", "forshare: on, off (a multixact for every lock) or both")
	fs.DurationVar(&cfg.DeadlockTimeout, "deadlock-timeout", 0, "storm: the database's deadlock_timeout (0: the workload's default, 10ms)")
	fs.Var(&o.inject, "inject-deadlocks", fmt.Sprintf("storm: real 2-way deadlocks to create per second, and their detection latency reported (default %g/s; 0 for none)", bench.StormInjectRate))
	fs.IntVar(&cfg.HotRows, "hot-rows", 0, "storm, hotrow and fk: number of hot rows (fk: parents) (0: the workload's default)")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "random seed (0: from the clock)")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile (go tool pprof) of the whole run to this file")
	fs.StringVar(&o.blockprofile, "blockprofile", "", "write a blocking profile to this file (and a mutex profile to FILE.mutex)")
	return fs
}

func workloadNames() string {
	var names []string
	for _, w := range bench.Workloads() {
		names = append(names, w.Name())
	}
	return strings.Join(names, ", ")
}

func writeProfile(name, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
