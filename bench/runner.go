package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tupled/tupled"
)

// Config is what `tupled bench` was asked for; pgbench's flags where there is
// one (-c, -T, -P, -s).
type Config struct {
	Clients  int           // -c: concurrent clients (goroutines, one transaction at a time each); 0: the workload's default
	Duration time.Duration // -T: how long each variant runs
	Progress time.Duration // -P: progress line interval (0: no progress lines; the per-second series is kept anyway)
	Rows     int           // -s: rows in the table (workloads define their own default when 0)
	DataDir  string        // --data: on-disk database (empty: in-memory, unless TempData)
	// TempData: with DataDir empty, run on disk in a temp dir that Run
	// removes afterwards (`tupled bench forshare`'s default).
	TempData   bool
	Backend    tupled.Backend
	SyncCommit bool     // --sync-commit (default on, as PostgreSQL's synchronous_commit)
	Variants   []string // --variants: subset of the workload's variants (nil: its defaults)
	// Rounds (--rounds) runs the variants that many times, alternating
	// (a b a b ...): machine drift then hits every variant alike, and each
	// ratio is the median of the rounds' ratios. 0 or 1: one round.
	Rounds int
	Seed   uint64
	// PG: measure PostgreSQL 15's side of a workload that has a Reference
	// (forshare) in the same run, on a throw-away cluster as bench/pg does:
	// "on" (fail if it cannot), "auto" (if PostgreSQL is installed; else
	// the recorded figure), "off" or "" (the recorded figure). PGRounds:
	// its alternated rounds (0: min(Rounds, 3)).
	PG       string
	PGRounds int

	// Workload-specific knobs (flags of `tupled bench`).
	ShareFastPath   string        // forshare: "on" (default), "off" or "both"
	DeadlockTimeout time.Duration // storm: the DB's DeadlockTimeout (0: the workload's default)
	InjectDeadlocks float64       // storm: real 2-way deadlocks created per second
	HotRows         int           // storm/hotrow: number of hot rows

	Out io.Writer // progress and summaries

	// afterRound, if set, runs after each round of Run (fk: PostgreSQL's
	// round, alternating with tupled's).
	afterRound func(round int)
}

// Workload is one of the seed experiments. A run of a workload runs each of
// its variants for Config.Duration, one after another, and compares them.
type Workload interface {
	Name() string
	// Variants are the variants run when Config.Variants is empty, in order;
	// All adds the ones that are only run on request.
	Variants(cfg *Config) []string
	All() []string
	// Baseline names the variant every other is compared with in the ratio
	// table ("" for none).
	Baseline(cfg *Config) string
	// Prepare opens (or reuses) the database the variant runs on and loads
	// its data. It returns the transaction of one client.
	Prepare(ctx context.Context, cfg *Config, variant string) (*Prepared, error)
	// Close releases everything Prepare opened.
	Close() error
}

// Prepared is a variant ready to run.
type Prepared struct {
	DB *tupled.DB
	// Txn runs one transaction of client c. An error is a failed
	// transaction, counted by SQLSTATE; the client goes on.
	Txn func(ctx context.Context, c *Client) error
	// Setup, if set, runs in each client's goroutine before its first
	// transaction (per-client state).
	Setup func(c *Client) error
	// During, if set, runs beside the clients for the whole measured period
	// (fault or deadlock injection); it must return when ctx is done.
	During func(ctx context.Context) error
	// After, if set, adds figures to the result once the clients stopped.
	After func(r *Result)
	// LoadSeconds: how long Prepare took to load the data (0 when it was
	// already there).
	LoadSeconds float64
	// Once: the variant runs a single transaction per client and ends when
	// all have finished (manyrows), not after Config.Duration.
	Once bool
}

// Client is one simulated connection.
type Client struct {
	ID    int
	Rand  *rand.Rand
	State any // owned by the workload (Prepared.Setup)
}

// RoundTrip marks a statement boundary: where a pgbench client would send
// the next statement and its backend would wait on the socket. Workloads
// call it between the statements of a transaction (BEGIN, each SELECT or
// UPDATE, COMMIT), so that transactions overlap as they do when clients
// talk to a server — the hot-row workload needs many lockers alive at once,
// which goroutines that never block would not give it on two cores. It is
// the same for every variant, so ratios compare the engine's work only.
func (c *Client) RoundTrip() { runtime.Gosched() }

// Result is what one variant measured.
type Result struct {
	Workload string  `json:"workload"`
	Variant  string  `json:"variant"`
	Clients  int     `json:"clients"`
	Rows     int     `json:"rows"`
	Seconds  float64 `json:"seconds"`
	// Round is the round (1..Rounds) of an alternated run; Start is when
	// the variant started, in seconds since the run's first variant did
	// (where its series sits on the run's time line).
	Round int     `json:"round,omitempty"`
	Start float64 `json:"start_s"`

	Transactions uint64             `json:"transactions"`
	Failures     map[string]uint64  `json:"failures_by_sqlstate,omitempty"`
	TPS          float64            `json:"tps"`
	LatAvgMs     float64            `json:"latency_avg_ms"`
	LatStddevMs  float64            `json:"latency_stddev_ms"`
	LatP50Ms     float64            `json:"latency_p50_ms"`
	LatP99Ms     float64            `json:"latency_p99_ms"`
	LatMaxMs     float64            `json:"latency_max_ms"`
	ZeroSeconds  int                `json:"seconds_with_zero_tps"`
	Series       []Interval         `json:"series"`
	Extra        map[string]float64 `json:"extra,omitempty"`
	ExtraOrder   []string           `json:"-"`
	// ExtraHelp says, per extra figure, what it counts and what value to
	// expect (printed under the ratio table).
	ExtraHelp map[string]string `json:"-"`

	began time.Time // when the clients were let go (after the collection)
}

// Failed is the number of failed transactions.
func (r *Result) Failed() uint64 {
	var n uint64
	for _, v := range r.Failures {
		n += v
	}
	return n
}

// AddExtra records a workload-specific figure (printed in the summary, kept in
// the JSON).
func (r *Result) AddExtra(name string, v float64) {
	if r.Extra == nil {
		r.Extra = map[string]float64{}
	}
	if _, ok := r.Extra[name]; !ok {
		r.ExtraOrder = append(r.ExtraOrder, name)
	}
	r.Extra[name] = v
}

// Explain records what an extra figure counts and why it has the value it
// has; PrintTable prints it beside the figure.
func (r *Result) Explain(name, help string) {
	if r.ExtraHelp == nil {
		r.ExtraHelp = map[string]string{}
	}
	r.ExtraHelp[name] = help
}

// Interval is one point of the per-second series (or of the -P interval).
// The series holds whole intervals only: the partial one cut by the end of
// the run counts toward the totals but is not a point (a tenth of a second
// would plot as a fall or a spike that did not happen).
type Interval struct {
	At          float64 `json:"t"` // seconds since the start of the variant, end of the interval
	TPS         float64 `json:"tps"`
	LatAvgMs    float64 `json:"latency_avg_ms"`
	LatStddevMs float64 `json:"latency_stddev_ms"`
	Failed      uint64  `json:"failed"`
}

// Latencies are recorded in microseconds from 1 µs to 10 minutes with three
// significant digits. Clients share a bounded number of recorders (each with
// its own mutex, uncontended in practice) so that 1000 clients do not cost
// 1000 histograms.
const (
	histMinUs   = 1
	histMaxUs   = 10 * 60 * 1e6
	histSigFigs = 3
	maxShards   = 64
)

type shard struct {
	mu       sync.Mutex
	hist     *hdrhistogram.Histogram
	failures map[string]uint64
	// the current interval
	n, failed  uint64
	sum, sumsq float64 // of latencies in ms
}

func (s *shard) record(lat time.Duration, err error) {
	ms := float64(lat) / float64(time.Millisecond)
	s.mu.Lock()
	if err != nil {
		state := tupled.SQLState(err)
		if state == "" {
			state = "XX000"
		}
		s.failures[state]++
		s.failed++
	} else {
		us := lat.Microseconds()
		if us < histMinUs {
			us = histMinUs
		}
		_ = s.hist.RecordValue(min(us, histMaxUs))
		s.n++
		s.sum += ms
		s.sumsq += ms * ms
	}
	s.mu.Unlock()
}

func (s *shard) takeInterval() (n, failed uint64, sum, sumsq float64) {
	s.mu.Lock()
	n, failed, sum, sumsq = s.n, s.failed, s.sum, s.sumsq
	s.n, s.failed, s.sum, s.sumsq = 0, 0, 0, 0
	s.mu.Unlock()
	return
}

// errFirst remembers the first unexpected error (one that has no SQLSTATE),
// which aborts the run.
type errFirst struct {
	once sync.Once
	err  error
}

func (e *errFirst) set(err error) { e.once.Do(func() { e.err = err }) }

// RunVariant runs one prepared variant with cfg.Clients clients for
// cfg.Duration (or once per client), printing progress lines, and returns
// what it measured.
func RunVariant(ctx context.Context, cfg *Config, workload, variant string, p *Prepared) (*Result, error) {
	nShards := min(cfg.Clients, maxShards)
	shards := make([]*shard, nShards)
	for i := range shards {
		shards[i] = &shard{hist: hdrhistogram.New(histMinUs, histMaxUs, histSigFigs), failures: map[string]uint64{}}
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		fatal errFirst
		ready sync.WaitGroup
	)
	startGate := make(chan struct{})
	ready.Add(cfg.Clients)
	for i := 0; i < cfg.Clients; i++ {
		wg.Add(1)
		c := &Client{ID: i, Rand: rand.New(rand.NewPCG(cfg.Seed, uint64(i)+1))}
		sh := shards[i%nShards]
		go func() {
			defer wg.Done()
			if p.Setup != nil {
				if err := p.Setup(c); err != nil {
					fatal.set(fmt.Errorf("client %d setup: %w", c.ID, err))
					ready.Done()
					cancel()
					return
				}
			}
			ready.Done()
			<-startGate
			for runCtx.Err() == nil {
				t0 := time.Now()
				err := p.Txn(runCtx, c)
				lat := time.Since(t0)
				if err != nil && runCtx.Err() != nil {
					return // interrupted by the end of the run, not a failure
				}
				if err != nil && tupled.SQLState(err) == "" {
					fatal.set(fmt.Errorf("client %d: %w", c.ID, err))
					cancel()
					return
				}
				sh.record(lat, err)
				if p.Once {
					return
				}
				// A real client waits for the network between transactions.
				// Yielding here keeps the scheduler fair among clients that
				// never block, so a latency tail measures the engine, not
				// a goroutine parked in the global run queue.
				c.RoundTrip()
			}
		}()
	}
	ready.Wait()
	// Start from a collected heap, as testing.B does before each
	// benchmark: otherwise the garbage the previous variant (or the load)
	// left is collected during this one's window and charged to it.
	runtime.GC()
	duringDone := make(chan error, 1)
	if p.During != nil {
		go func() { duringDone <- p.During(runCtx) }()
	} else {
		duringDone <- nil
	}
	clientsDone := make(chan struct{})
	go func() { wg.Wait(); close(clientsDone) }()

	res := &Result{Workload: workload, Variant: variant, Clients: cfg.Clients, Rows: cfg.Rows}
	start := time.Now()
	res.began = start
	close(startGate)
	tick := time.Second
	if cfg.Progress > 0 && cfg.Progress < tick {
		tick = cfg.Progress
	}
	ticker := time.NewTicker(tick)
	var end <-chan time.Time
	if !p.Once {
		timer := time.NewTimer(cfg.Duration)
		defer timer.Stop()
		end = timer.C
	}
	var prog progressAcc
	lastTick := start
	// The interval since lastTick, summed over the shards' samples until
	// it is whole: a tick that comes late (a stalled sampler) makes the
	// next one come early, and the series must hold whole intervals only.
	var pend struct {
		n, failed  uint64
		sum, sumsq float64
	}
	// sample closes the interval since the previous sample if it is whole
	// (else the next sample carries it on); last marks the one at the end
	// of the run, a point of the series only if it is whole.
	sample := func(now time.Time, last bool) {
		for _, s := range shards {
			a, b, c, d := s.takeInterval()
			pend.n, pend.failed, pend.sum, pend.sumsq = pend.n+a, pend.failed+b, pend.sum+c, pend.sumsq+d
		}
		secs := now.Sub(lastTick).Seconds()
		if secs <= 0 || (!last && !wholeInterval(secs, tick)) {
			return
		}
		lastTick = now
		n, failed, sum, sumsq := pend.n, pend.failed, pend.sum, pend.sumsq
		pend.n, pend.failed, pend.sum, pend.sumsq = 0, 0, 0, 0
		if wholeInterval(secs, tick) {
			iv := Interval{At: now.Sub(start).Seconds(), TPS: float64(n) / secs, Failed: failed}
			iv.LatAvgMs, iv.LatStddevMs = meanStddev(n, sum, sumsq)
			res.Series = append(res.Series, iv)
		}
		prog.add(n, failed, sum, sumsq, secs)
		if cfg.Progress > 0 && now.Sub(prog.since) >= cfg.Progress-tick/10 {
			prog.print(cfg.Out, now.Sub(start))
			prog = progressAcc{since: now}
		}
	}
	prog.since = start
loop:
	for {
		select {
		case now := <-ticker.C:
			sample(now, false)
		case <-end:
			break loop
		case <-clientsDone:
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	ticker.Stop()
	cancel()
	<-clientsDone
	elapsed := time.Since(start)
	sample(time.Now(), true)
	if err := <-duringDone; err != nil && !errors.Is(err, context.Canceled) {
		fatal.set(err)
	}
	if fatal.err != nil {
		return nil, fatal.err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	total := hdrhistogram.New(histMinUs, histMaxUs, histSigFigs)
	res.Failures = map[string]uint64{}
	for _, s := range shards {
		total.Merge(s.hist)
		for k, v := range s.failures {
			res.Failures[k] += v
		}
	}
	if len(res.Failures) == 0 {
		res.Failures = nil
	}
	res.Seconds = elapsed.Seconds()
	res.Transactions = uint64(total.TotalCount())
	res.TPS = float64(res.Transactions) / res.Seconds
	res.LatAvgMs = total.Mean() / 1000
	res.LatStddevMs = total.StdDev() / 1000
	res.LatP50Ms = float64(total.ValueAtQuantile(50)) / 1000
	res.LatP99Ms = float64(total.ValueAtQuantile(99)) / 1000
	res.LatMaxMs = float64(total.Max()) / 1000
	for _, iv := range res.Series {
		if p.Once {
			break // one long transaction per client: seconds without a commit are expected
		}
		// A stall shows as a whole second without a single commit (the
		// series holds whole intervals only).
		if iv.TPS == 0 {
			res.ZeroSeconds++
		}
	}
	if p.After != nil {
		p.After(res)
	}
	return res, nil
}

// wholeInterval says whether an interval of secs seconds, sampled every
// tick, is a whole one (a ticker fires a little late or early; an interval
// shorter than nine tenths of a tick follows a late tick, and RunVariant
// carries it on into the next).
func wholeInterval(secs float64, tick time.Duration) bool {
	return secs >= 0.9*tick.Seconds()
}

func meanStddev(n uint64, sum, sumsq float64) (mean, stddev float64) {
	if n == 0 {
		return 0, 0
	}
	mean = sum / float64(n)
	v := sumsq/float64(n) - mean*mean
	if v < 0 {
		v = 0
	}
	return mean, math.Sqrt(v)
}

// progressAcc accumulates the samples of one -P interval.
type progressAcc struct {
	since      time.Time
	n, failed  uint64
	sum, sumsq float64
	secs       float64
}

func (p *progressAcc) add(n, failed uint64, sum, sumsq, secs float64) {
	p.n += n
	p.failed += failed
	p.sum += sum
	p.sumsq += sumsq
	p.secs += secs
}

// print writes pgbench's progress line.
func (p *progressAcc) print(w io.Writer, at time.Duration) {
	mean, sd := meanStddev(p.n, p.sum, p.sumsq)
	tps := 0.0
	if p.secs > 0 {
		tps = float64(p.n) / p.secs
	}
	fmt.Fprintf(w, "progress: %.1f s, %.1f tps, lat %.3f ms stddev %.3f", at.Seconds(), tps, mean, sd)
	if p.failed > 0 {
		fmt.Fprintf(w, ", %d failed", p.failed)
	}
	fmt.Fprintln(w)
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
