package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// run is one invocation of the harness: its settings and every child's
// result.
type run struct {
	Started   time.Time `json:"started"`
	Command   string    `json:"command"`
	Uptime    string    `json:"uptime"` // load average before the run
	UptimeEnd string    `json:"uptime_end"`
	GoVersion string    `json:"go_version"`
	CPUs      int       `json:"cpus"`
	Rounds    int       `json:"rounds"`
	Config    config    `json:"config"`
	Systems   []string  `json:"systems"`
	Workloads []string  `json:"workloads"`
	Loads     []*result `json:"loads"`
	Results   []*result `json:"results"`
	Failures  []string  `json:"failures,omitempty"`
	Seconds   float64   `json:"seconds"`
}

func parentMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("peers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, `usage: go run . [flags]

Runs tupled (on disk, pebble backend, SyncCommit on; and tupled-bbolt) and
its peers bbolt, badger, pebble with an app-level lock table and SQLite
(WAL, synchronous=FULL) through the workloads cold, warm, queue, bank,
scan and write, each system in a child process of its own, rounds
alternated between systems; prints the ratio table (tupled/peer, above 1 =
tupled faster), each system's tps, p50/p99 and peak RSS, and fails (exit 1)
if a correctness check fails or a child dies. See README.md.

`)
		fs.PrintDefaults()
	}
	var cfg config
	sizeFlags(fs, &cfg)
	rounds := fs.Int("rounds", 5, "alternated rounds per system and workload (median and min–max over them)")
	sysList := fs.String("systems", "all", "systems to run, comma-separated: "+strings.Join(systems, ",")+" (all of them), and "+strings.Join(optionalSystems, ","))
	wlList := fs.String("workloads", "all", "workloads to run, comma-separated: "+strings.Join(workloads, ",")+" (all of them), and "+strings.Join(optionalWorkloads, ","))
	dir := fs.String("dir", "", "where the systems keep their data (default: a temporary directory, removed at the end)")
	out := fs.String("json", "", "write every result as JSON to this file")
	md := fs.String("md", "", "write the tables as markdown to this file")
	short := fs.Bool("short", false, "tiny sizes, 1 round: a smoke test of every system and workload in seconds")
	childMax := fs.Duration("child-timeout", 10*time.Minute, "kill a child that runs longer (an error)")
	faultFlag := fs.String("fault", "", "inject a bug into every child (bank, queue or crash; to test the checks)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *short {
		cfg = config{Rows: 300, ValueSize: 100, Accounts: 50, Hot: 10, Balance: 1000, Jobs: 60, Bucket: 20,
			Clients: 4, Duration: 150 * time.Millisecond, Writes: 10, QueueMax: 30 * time.Second}
		*rounds = 1
	}
	if err := cfg.validate(); err != nil || *rounds < 1 {
		fmt.Fprintln(stderr, "peers:", err, "(and -rounds ≥ 1)")
		return 2
	}
	syss, err := splitList(*sysList, systems, optionalSystems...)
	if err == nil {
		var wls []string
		wls, err = splitList(*wlList, workloads, optionalWorkloads...)
		*wlList = strings.Join(wls, ",")
	}
	if err != nil {
		fmt.Fprintln(stderr, "peers:", err)
		return 2
	}
	base := *dir
	if base == "" {
		base, err = os.MkdirTemp("", "tupled-peers-")
		if err != nil {
			fmt.Fprintln(stderr, "peers:", err)
			return 1
		}
		defer os.RemoveAll(base)
	}
	r := &run{
		Started: time.Now().UTC(), Command: "go run . " + strings.Join(args, " "),
		Uptime: uptime(), GoVersion: runtime.Version(), CPUs: runtime.NumCPU(),
		Rounds: *rounds, Config: cfg, Systems: syss, Workloads: strings.Split(*wlList, ","),
	}
	h := &harness{cfg: cfg, base: base, timeout: *childMax, fault: *faultFlag, log: stderr}
	h.do(r)
	r.UptimeEnd = uptime()
	r.Seconds = time.Since(r.Started).Seconds()

	text := report(r)
	fmt.Fprint(stdout, text)
	if *out != "" {
		b, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(stderr, "peers:", err)
			return 1
		}
	}
	if *md != "" {
		if err := os.WriteFile(*md, []byte(text), 0o644); err != nil {
			fmt.Fprintln(stderr, "peers:", err)
			return 1
		}
	}
	if len(r.Failures) > 0 {
		fmt.Fprintf(stderr, "peers: %d failure(s):\n  %s\n", len(r.Failures), strings.Join(r.Failures, "\n  "))
		return 1
	}
	return 0
}

type harness struct {
	cfg     config
	base    string
	timeout time.Duration
	fault   string
	log     io.Writer
}

// do loads every system's data, then runs rounds × workloads × systems,
// each round starting at the next system so that none always goes first.
func (h *harness) do(r *run) {
	for _, s := range r.Systems {
		needLoad := false
		for _, w := range r.Workloads {
			needLoad = needLoad || !freshWorkload(w)
		}
		if !needLoad {
			break
		}
		dir := filepath.Join(h.base, s, "data")
		os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			r.Failures = append(r.Failures, err.Error())
			continue
		}
		res, err := h.child(s, "load", dir, 0)
		if err != nil {
			r.Failures = append(r.Failures, err.Error())
			continue
		}
		res.Extra["disk_mib"] = float64(dirSize(dir)) / (1 << 20)
		r.Loads = append(r.Loads, res)
		fmt.Fprintf(h.log, "load   %-12s %8.1f s  %6.1f MiB on disk\n", s, res.Seconds, res.Extra["disk_mib"])
	}
	for round := range r.Rounds {
		for _, w := range r.Workloads {
			for i := range r.Systems {
				s := r.Systems[(i+round)%len(r.Systems)]
				if !freshWorkload(w) && !loaded(r, s) {
					continue
				}
				dir := filepath.Join(h.base, s, "data")
				if freshWorkload(w) {
					dir = filepath.Join(h.base, s, fmt.Sprintf("%s-%d", w, round))
					os.RemoveAll(dir)
					if err := os.MkdirAll(dir, 0o755); err != nil {
						r.Failures = append(r.Failures, err.Error())
						continue
					}
				}
				res, err := h.child(s, w, dir, round)
				if freshWorkload(w) {
					os.RemoveAll(dir)
				}
				if err != nil {
					r.Failures = append(r.Failures, err.Error())
					r.Results = append(r.Results, &result{System: s, Workload: w, Round: round, Error: err.Error()})
					fmt.Fprintf(h.log, "round %d %-6s %-12s ERROR %v\n", round, w, s, err)
					continue
				}
				r.Results = append(r.Results, res)
				fmt.Fprintf(h.log, "round %d %-6s %-12s %10.1f/s p50 %8.0f µs p99 %8.0f µs  %.2f s\n",
					round, w, s, res.TPS, res.P50us, res.P99us, res.Seconds)
			}
		}
	}
}

func loaded(r *run, s string) bool {
	for _, l := range r.Loads {
		if l.System == s {
			return true
		}
	}
	return false
}

// child runs one workload of one system in a child process and returns
// its result; a child that fails, dies, runs past the timeout or prints
// no result is an error.
func (h *harness) child(sys, workload, dir string, round int) (*result, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	args := append(h.cfg.args(), "-system="+sys, "-workload="+workload, "-dir="+dir)
	if h.fault != "" {
		args = append(args, "-fault="+h.fault)
	}
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	runErr := cmd.Run()
	wall := time.Since(start).Seconds()
	what := fmt.Sprintf("%s %s round %d", sys, workload, round)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s: child killed after %v", what, h.timeout)
	}
	if runErr != nil {
		return nil, fmt.Errorf("%s: child failed (%v): %s", what, runErr, strings.TrimSpace(lastLines(stderr.String(), 5)))
	}
	var res result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("%s: child printed no result (%v): %q", what, err, lastLines(stdout.String(), 3))
	}
	if res.System != sys || res.Workload != workload {
		return nil, fmt.Errorf("%s: child reported %s %s", what, res.System, res.Workload)
	}
	res.Round = round
	if res.Extra == nil {
		res.Extra = map[string]float64{}
	}
	res.Extra["wall_s"] = wall // the child's life: start, open, load, run, close
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.MaxRSSKiB = ru.Maxrss // KiB on Linux
	}
	return &res, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// uptime is the load average line of uptime(1), or "" without it.
func uptime() string {
	b, err := exec.Command("uptime").Output()
	if err != nil {
		if b, err = os.ReadFile("/proc/loadavg"); err != nil {
			return ""
		}
	}
	return strings.TrimSpace(string(b))
}
