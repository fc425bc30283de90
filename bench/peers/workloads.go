package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// config is what a child is told: the sizes of every workload.
type config struct {
	Rows      int           // kv rows (read and scan workloads)
	ValueSize int           // bytes per kv value
	Accounts  int           // bank accounts
	Hot       int           // the accounts bankhot's transfers move money between (the first Hot)
	Balance   int64         // each account's starting balance
	Jobs      int           // jobs the queue drains
	Bucket    int           // jobs per bucket of the queue's jobs/s curve
	Clients   int           // concurrent clients (reads, bank) and queue workers
	Duration  time.Duration // how long the read and bank workloads run
	Writes    int           // durable single-row writes (write workload)
	QueueMax  time.Duration // the queue's time limit: past it the drain is reported unfinished
}

// result is what a child reports on stdout, as JSON.
type result struct {
	System   string  `json:"system"`
	Workload string  `json:"workload"`
	Round    int     `json:"round"`
	Ops      int     `json:"ops"`     // transactions (jobs for the queue, rows for the scan and the load)
	Seconds  float64 `json:"seconds"` // the measured interval
	TPS      float64 `json:"tps"`     // Ops / Seconds
	P50us    float64 `json:"p50_us,omitempty"`
	P99us    float64 `json:"p99_us,omitempty"`
	// Finished is false for a queue that did not drain within QueueMax.
	Finished bool `json:"finished"`
	// Buckets is the queue's jobs/s over each successive Bucket jobs.
	Buckets []float64          `json:"buckets,omitempty"`
	Extra   map[string]float64 `json:"extra,omitempty"`
	// Check says what the correctness check verified ("" when the
	// workload has none); a failed check is an error instead.
	Check  string `json:"check,omitempty"`
	HWMKiB int64  `json:"vmhwm_kib"` // the child's peak RSS (VmHWM)
	// Filled in by the parent:
	MaxRSSKiB int64  `json:"maxrss_kib"` // from the child's rusage
	Error     string `json:"error,omitempty"`
}

var workloads = []string{"cold", "warm", "queue", "bank", "scan", "write"}

// optionalWorkloads run only when named: plain is cold's transaction
// without the locks, through plainReader where a system has one (tupled:
// a read-only transaction of GetNoCopy) and readShare elsewhere (bbolt's
// and badger's readShare already read without locking).
//
// bankhot is bank over only the first -hot-accounts accounts (issue 28's
// "100 hot accounts"); fk inserts children under a hot parent that an
// updater keeps updating (fk.go; tupled and pebble only).
var optionalWorkloads = []string{"plain", "bankhot", "fk"}

// runChild opens system in dir and runs workload; fresh says dir starts
// empty (queue and write load their own data there).
// inMemory reports whether a system keeps nothing between its children.
func inMemory(sys string) bool { return sys == "tupled-mem" || sys == "tupled-arena" }

func runChild(ctx context.Context, sysName, workload, dir string, cfg config) (*result, error) {
	opened := time.Now()
	s, err := openSystem(sysName, dir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", sysName, err)
	}
	res := &result{System: sysName, Workload: workload, Finished: true, Extra: map[string]float64{}}
	res.Extra["open_s"] = time.Since(opened).Seconds()
	if inMemory(sysName) && workload != "load" && !freshWorkload(workload) {
		// Nothing survives between its children: load what the workload
		// reads, untimed.
		if err := runLoad(ctx, s, cfg, &result{Extra: map[string]float64{}}); err != nil {
			s.close()
			return nil, fmt.Errorf("%s: load: %w", sysName, err)
		}
	}
	if stop, err := startProfile(sysName, workload); err != nil {
		return nil, err
	} else {
		defer stop()
	}
	var runErr error
	switch workload {
	case "load":
		runErr = runLoad(ctx, s, cfg, res)
	case "cold":
		runErr = runReads(ctx, s, cfg, res)
	case "plain":
		read := s.readShare
		if p, ok := s.(plainReader); ok {
			read = p.readPlain
		}
		runErr = runReadsWith(ctx, read, cfg, res)
	case "warm":
		t := time.Now()
		rows, _, err := s.scan(ctx)
		if err == nil && rows != cfg.Rows {
			err = fmt.Errorf("warm-up scan saw %d rows, want %d", rows, cfg.Rows)
		}
		if err != nil {
			runErr = err
			break
		}
		res.Extra["warmup_s"] = time.Since(t).Seconds()
		runErr = runReads(ctx, s, cfg, res)
	case "queue":
		runErr = runQueue(ctx, s, cfg, res)
	case "bank":
		runErr = runBank(ctx, s, cfg, cfg.Accounts, res)
	case "bankhot":
		runErr = runBank(ctx, s, cfg, min(cfg.Hot, cfg.Accounts), res)
	case "fk":
		runErr = runFK(ctx, s, cfg, res)
	case "scan":
		runErr = runScan(ctx, s, cfg, res)
	case "write":
		runErr = runWrite(ctx, s, cfg, res)
	default:
		runErr = fmt.Errorf("unknown workload %q (want one of %v)", workload, workloads)
	}
	t := time.Now()
	if err := s.close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("close %s: %w", sysName, err)
	}
	res.Extra["close_s"] = time.Since(t).Seconds()
	if runErr != nil {
		return nil, runErr
	}
	if res.Seconds > 0 {
		res.TPS = float64(res.Ops) / res.Seconds
	}
	res.HWMKiB = vmHWM()
	return res, nil
}

func runLoad(ctx context.Context, s system, cfg config, res *result) error {
	t := time.Now()
	if err := s.loadKV(ctx, cfg.Rows, cfg.ValueSize); err != nil {
		return fmt.Errorf("load kv: %w", err)
	}
	if err := s.loadAccounts(ctx, cfg.Accounts, cfg.Balance); err != nil {
		return fmt.Errorf("load accounts: %w", err)
	}
	res.Ops = cfg.Rows + cfg.Accounts
	res.Seconds = time.Since(t).Seconds()
	return nil
}

// clients runs n clients, each calling op in a loop until d has passed,
// and records each call's latency; the first error stops them all.
func clients(ctx context.Context, n int, d time.Duration, op func(ctx context.Context, rng *rand.Rand) error, res *result) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lats := make([][]time.Duration, n)
	var wg sync.WaitGroup
	var firstErr error
	var once sync.Once
	start := time.Now()
	deadline := start.Add(d)
	for c := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), uint64(start.UnixNano())))
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t := time.Now()
				if err := op(ctx, rng); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
				lats[c] = append(lats[c], time.Since(t))
			}
		}()
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	if firstErr != nil {
		return firstErr
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	res.Ops = len(all)
	res.P50us, res.P99us = percentiles(all)
	return nil
}

// percentiles returns the median and the 99th percentile of d, in µs.
func percentiles(d []time.Duration) (p50, p99 float64) {
	if len(d) == 0 {
		return 0, 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	at := func(q float64) float64 {
		return float64(d[min(len(d)-1, int(q*float64(len(d))))]) / 1e3
	}
	return at(0.50), at(0.99)
}

// runReads: each transaction reads 3 distinct random kv rows FOR SHARE.
func runReads(ctx context.Context, s system, cfg config, res *result) error {
	return runReadsWith(ctx, s.readShare, cfg, res)
}

// runReadsWith: each transaction is read with 3 distinct random kv rows.
func runReadsWith(ctx context.Context, read func(context.Context, []uint64) error, cfg config, res *result) error {
	return clients(ctx, cfg.Clients, cfg.Duration, func(ctx context.Context, rng *rand.Rand) error {
		var keys [3]uint64
		for i := range keys {
		again:
			keys[i] = rng.Uint64N(uint64(cfg.Rows))
			for j := range i {
				if keys[j] == keys[i] && cfg.Rows >= 3 {
					goto again
				}
			}
		}
		return read(ctx, keys[:])
	}, res)
}

// runBank: each transaction moves 1..100 between two distinct random
// accounts of the first among (all of them for bank, the hot ones for
// bankhot); afterwards the total over every account must be what the
// load put there.
func runBank(ctx context.Context, s system, cfg config, among int, res *result) error {
	if among < 2 {
		return fmt.Errorf("bank needs 2 accounts or more, have %d", among)
	}
	err := clients(ctx, cfg.Clients, cfg.Duration, func(ctx context.Context, rng *rand.Rand) error {
		from := rng.Uint64N(uint64(among))
		to := rng.Uint64N(uint64(among - 1))
		if to >= from {
			to++
		}
		return s.transfer(ctx, from, to, 1+rng.Int64N(100))
	}, res)
	if err != nil {
		return err
	}
	total, n, err := s.bankTotal(ctx)
	if err != nil {
		return fmt.Errorf("bank total: %w", err)
	}
	want := int64(cfg.Accounts) * cfg.Balance
	if total != want || n != cfg.Accounts {
		return fmt.Errorf("bank check failed: %d accounts hold %d, want %d accounts holding %d", n, total, cfg.Accounts, want)
	}
	res.Check = fmt.Sprintf("bank total %d over %d accounts conserved", total, n)
	return nil
}

// runQueue loads cfg.Jobs jobs, then cfg.Clients workers claim them until
// every job is claimed or cfg.QueueMax has passed. A worker that finds no
// job it may take while jobs remain (all held by others) tries again.
// Afterwards each claimed job must be in done exactly once and the queue
// must hold the rest.
func runQueue(ctx context.Context, s system, cfg config, res *result) error {
	if err := s.loadJobs(ctx, cfg.Jobs); err != nil {
		return fmt.Errorf("load jobs: %w", err)
	}
	// The time limit is checked between claims only: a claim runs to its
	// end, so that every claim that committed is counted.
	limit, cancel := context.WithTimeout(ctx, cfg.QueueMax)
	defer cancel()
	var claimed atomic.Int64
	stamps := make([][]time.Duration, cfg.Clients)
	lats := make([][]time.Duration, cfg.Clients)
	claims := make([][]uint64, cfg.Clients)
	var wg sync.WaitGroup
	var firstErr error
	var once sync.Once
	start := time.Now()
	for w := range cfg.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for claimed.Load() < int64(cfg.Jobs) && limit.Err() == nil {
				t := time.Now()
				job, ok, err := s.claim(ctx, w)
				if err != nil {
					once.Do(func() { firstErr = fmt.Errorf("worker %d: %w", w, err); cancel() })
					return
				}
				if !ok {
					time.Sleep(100 * time.Microsecond)
					continue
				}
				claimed.Add(1)
				now := time.Now()
				lats[w] = append(lats[w], now.Sub(t))
				stamps[w] = append(stamps[w], now.Sub(start))
				claims[w] = append(claims[w], job)
			}
		}()
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	if firstErr != nil {
		return firstErr
	}
	var all, at []time.Duration
	count := map[uint64]int{}
	for w := range cfg.Clients {
		all = append(all, lats[w]...)
		at = append(at, stamps[w]...)
		for _, j := range claims[w] {
			count[j]++
		}
	}
	res.Ops = len(at)
	res.P50us, res.P99us = percentiles(all)
	res.Finished = res.Ops >= cfg.Jobs
	sort.Slice(at, func(i, j int) bool { return at[i] < at[j] })
	var prev time.Duration
	for i := cfg.Bucket; i <= len(at); i += cfg.Bucket {
		end := at[i-1]
		res.Buckets = append(res.Buckets, float64(cfg.Bucket)/(end-prev).Seconds())
		prev = end
	}
	// The check: every claim committed once and only once, and the queue
	// holds exactly the jobs no one claimed.
	left, done, err := s.queueState(context.Background())
	if err != nil {
		return fmt.Errorf("queue state: %w", err)
	}
	var bad []string
	inDone := map[uint64]int{}
	for _, j := range done {
		inDone[j]++
	}
	for j, n := range count {
		if n != 1 {
			bad = append(bad, fmt.Sprintf("job %d claimed %d times", j, n))
		}
		if inDone[j] != n {
			bad = append(bad, fmt.Sprintf("job %d claimed %d times, in done %d times", j, n, inDone[j]))
		}
	}
	for j, n := range inDone {
		if count[j] == 0 {
			bad = append(bad, fmt.Sprintf("job %d in done %d times, never claimed", j, n))
		}
	}
	if want := cfg.Jobs - len(count); left != want {
		bad = append(bad, fmt.Sprintf("%d jobs left in the queue, want %d", left, want))
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		if len(bad) > 5 {
			bad = append(bad[:5], fmt.Sprintf("and %d more", len(bad)-5))
		}
		return fmt.Errorf("queue check failed: %s", strings.Join(bad, "; "))
	}
	res.Check = fmt.Sprintf("%d jobs each done exactly once, %d left", len(count), left)
	return nil
}

// runScan times a full scan of kv in a fresh process (then a second one,
// reported as warm_s).
func runScan(ctx context.Context, s system, cfg config, res *result) error {
	for i, name := range []string{"", "warm_s"} {
		t := time.Now()
		rows, n, err := s.scan(ctx)
		if err != nil {
			return err
		}
		if rows != cfg.Rows || n != int64(cfg.Rows)*int64(cfg.ValueSize) {
			return fmt.Errorf("scan saw %d rows of %d bytes, want %d of %d", rows, n, cfg.Rows, int64(cfg.Rows)*int64(cfg.ValueSize))
		}
		if i == 0 {
			res.Seconds, res.Ops = time.Since(t).Seconds(), rows
		} else {
			res.Extra[name] = time.Since(t).Seconds()
		}
	}
	res.Check = fmt.Sprintf("scan saw all %d rows", cfg.Rows)
	return nil
}

// runWrite commits cfg.Writes single-row inserts one after the other, each
// durable when it returns.
func runWrite(ctx context.Context, s system, cfg config, res *result) error {
	lat := make([]time.Duration, 0, cfg.Writes)
	start := time.Now()
	for i := range cfg.Writes {
		t := time.Now()
		if err := s.write(ctx, uint64(i), kvValue(uint64(i), cfg.ValueSize)); err != nil {
			return err
		}
		lat = append(lat, time.Since(t))
	}
	res.Seconds = time.Since(start).Seconds()
	res.Ops = len(lat)
	res.P50us, res.P99us = percentiles(lat)
	return nil
}

// vmHWM is this process's peak resident set (VmHWM), in KiB.
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kib int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kib)
			return kib
		}
	}
	return 0
}

func errorsJoin(errs ...error) error { return errors.Join(errs...) }

// dirSize is the bytes under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// freshWorkload is a workload that loads its own data into a fresh
// directory each round instead of reading the loaded kv rows and accounts.
func freshWorkload(w string) bool { return w == "queue" || w == "write" || w == "fk" }
