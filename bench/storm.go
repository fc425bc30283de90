package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tupled/tupled"
)

// storm is the 2018 seed ("Postgres stucks in deadlock detection"): 1000
// clients on a contended write workload whose lock waits routinely last longer
// than DeadlockTimeout, so that (in PostgreSQL ≤ 10) hundreds of deadlock
// checks come due together and each stops the whole lock manager, although
// no deadlock exists. Each transaction does one contended thing and commits:
//
//	half of them:  UPDATE storm_hot SET v = ... WHERE id = <one of HotRows (10) rows>
//	the others:    INSERT INTO storm_ins VALUES (<one of 10 keys>, ...);
//	               DELETE FROM storm_ins WHERE k = <that key>
//
// (bench/pg/storm-update.sql and storm-insert.sql are the same on PostgreSQL;
// the client yields at each statement boundary, Client.RoundTrip.)
//
// The insert is a contended unique insert (the seed's case: a concurrent
// inserter of the same key is waited for, like a unique index does); the
// delete in the same transaction frees the key again at commit, so the table
// does not grow. A transaction touches one contended object only, so the
// workload itself never deadlocks: every deadlock check it causes is pure
// overhead.
//
// Variants are deadlock strategies (package deadlock): default, off, classic,
// shared-first, single-checker, single-memo, each at Config.DeadlockTimeout
// (default 10 ms, the seed's worst case); "<strategy>@<duration>" runs one at
// another timeout (All lists @10ms and @1s). The baseline is off.
//
// With Config.InjectDeadlocks > 0, an injector creates that many real 2-way
// deadlocks per second beside the storm, on rows of their own (table
// storm_inj), and measures each one's detection latency (see injectPair).
type storm struct{ dbs dbCache }

const (
	stormTable    = "storm_hot"
	stormInsTable = "storm_ins"
	stormInjTable = "storm_inj"
	// stormInjSlots pairs of rows are reserved for injected deadlocks; an
	// injection finding every slot busy is skipped (and counted).
	stormInjSlots = 256
	// stormDefaultTimeout is the seed's worst case.
	stormDefaultTimeout = 10 * time.Millisecond
	// stormOffLockTimeout ends injected deadlocks under "off" (nothing
	// detects them there): the injector's transactions run with this lock
	// timeout in that variant only.
	stormOffLockTimeout = time.Second
)

var stormTimeouts = []string{"10ms", "1s"}

// StormInjectRate is the rate of injected deadlocks (per second) that
// "tupled bench storm" uses unless told otherwise: goal P6's (issue 12).
const StormInjectRate float64 = 5

func (*storm) Name() string        { return "storm" }
func (*storm) DefaultClients() int { return 1000 }
func (*storm) Baseline(*Config) string {
	return tupled.DeadlockOff
}
func (w *storm) Close() error { return w.dbs.close() }

// Variants: tupled's default and the no-detection baseline first, then the
// strategies of the thread. -T applies to each: 6 variants at -T 5 take about
// 35 s.
func (*storm) Variants(*Config) []string {
	return []string{
		tupled.DeadlockDefault, tupled.DeadlockOff, tupled.DeadlockClassic,
		tupled.DeadlockSharedFirst, tupled.DeadlockSingleChecker, tupled.DeadlockSingleMemo,
	}
}

func (*storm) All() []string {
	var out []string
	for _, s := range tupled.DeadlockStrategies() {
		out = append(out, s)
		for _, t := range stormTimeouts {
			out = append(out, s+"@"+t)
		}
	}
	return out
}

// stormVariant splits "classic@1s" into the strategy and its timeout (the
// configured one when there is no "@").
func stormVariant(cfg *Config, variant string) (string, time.Duration, error) {
	timeout := cfg.DeadlockTimeout
	if timeout <= 0 {
		timeout = stormDefaultTimeout
	}
	strategy, at, ok := strings.Cut(variant, "@")
	if ok {
		d, err := time.ParseDuration(at)
		if err != nil || d <= 0 {
			return "", 0, fmt.Errorf("bad deadlock timeout in variant %q", variant)
		}
		timeout = d
	}
	return strategy, timeout, nil
}

func (w *storm) Prepare(ctx context.Context, cfg *Config, variant string) (*Prepared, error) {
	strategy, timeout, err := stormVariant(cfg, variant)
	if err != nil {
		return nil, err
	}
	hot := cfg.HotRows
	if hot <= 0 {
		hot = 10
	}
	cfg.Rows = hot
	insKeys := 10 // contended insert keys, as bench/pg's ins_keys
	// A fresh database per variant: the strategy and the timeout are Open
	// options, and no variant should inherit another's dead versions.
	w.dbs.close()
	db, _, err := w.dbs.open(cfg, variant, tupled.Options{DeadlockTimeout: timeout, DeadlockStrategy: strategy})
	if err != nil {
		return nil, err
	}
	if _, err := ensureTable(ctx, db, stormTable, hot, func(int) []byte { return accountValue(0) }); err != nil {
		return nil, err
	}
	if err := db.CreateTable(ctx, stormInsTable); err != nil && !errors.Is(err, tupled.ErrTableExists) {
		return nil, err
	}
	if cfg.InjectDeadlocks > 0 {
		if _, err := ensureTable(ctx, db, stormInjTable, 2*stormInjSlots, func(int) []byte { return accountValue(0) }); err != nil {
			return nil, err
		}
	}

	val := accountValue(1)
	before := db.Stats()
	schedBefore := schedLatencies()
	p := &Prepared{DB: db}
	var inserts, updates atomic.Uint64 // committed transactions of each kind
	p.Txn = func(ctx context.Context, c *Client) error {
		tx, err := db.Begin(ctx, nil)
		if err != nil {
			return err
		}
		// pgbench's storm-update.sql / storm-insert.sql (bench/pg): one
		// round trip per statement.
		c.RoundTrip()
		isUpdate := c.Rand.IntN(2) == 0
		if isUpdate {
			err = tx.Update(ctx, stormTable, key4(1+c.Rand.IntN(hot)), val)
		} else {
			k := key4(1 + c.Rand.IntN(insKeys))
			err = tx.Insert(ctx, stormInsTable, k, val)
			if err == nil {
				c.RoundTrip()
				err = tx.Delete(ctx, stormInsTable, k)
			}
		}
		if err != nil {
			_ = tx.Rollback()
			return err
		}
		c.RoundTrip()
		if err := tx.Commit(); err != nil {
			return err
		}
		if isUpdate {
			updates.Add(1)
		} else {
			inserts.Add(1)
		}
		return nil
	}

	var inj *injector
	if cfg.InjectDeadlocks > 0 {
		inj = newInjector(db, cfg.InjectDeadlocks, strategy == tupled.DeadlockOff)
		inj.out, inj.timeout = cfg.Out, timeout
		p.During = inj.run
	}
	p.After = func(r *Result) {
		s := db.Stats()
		r.AddExtra("deadlock_timeout_ms", float64(timeout)/float64(time.Millisecond))
		if n := float64(r.Transactions); n > 0 {
			r.AddExtra("lock waits per transaction", float64(s.LockWaits-before.LockWaits)/n)
		}
		// Half the clients' transactions are inserts; a share far from
		// 0.5 means one kind starved the other.
		if i, u := inserts.Load(), updates.Load(); i+u > 0 {
			r.AddExtra("insert share of committed transactions", float64(i)/float64(i+u))
		}
		if r.Seconds > 0 {
			r.AddExtra("deadlock checks per second", float64(s.DeadlockChecks-before.DeadlockChecks)/r.Seconds)
		}
		if c := s.DeadlockChecks - before.DeadlockChecks; c > 0 {
			r.AddExtra("deadlock check average µs", float64(s.DeadlockCheckTime-before.DeadlockCheckTime)/float64(c)/1e3)
		}
		if strategy == tupled.DeadlockDefault {
			r.AddExtra("detector's max lateness ms", float64(s.DeadlockCheckMaxLateness)/1e6)
		}
		r.AddExtra("deadlocks found", float64(s.DeadlocksFound-before.DeadlocksFound))
		// How long runnable goroutines waited for a P during the run, all
		// of them (the storm's clients yield at every round trip): the
		// floor under any wake-up, the detector's and its victims' included.
		if p99, top, ok := schedQuantiles(schedBefore, schedLatencies(), 0.99); ok {
			r.AddExtra("Go scheduler latency p99 ms", p99*1e3)
			r.AddExtra("Go scheduler latency max ms (bucket floor)", top*1e3)
		}
		if inj != nil {
			inj.report(r)
		}
	}
	return p, nil
}

// injector creates real 2-way deadlocks during the storm and measures how
// long each takes to be detected.
type injector struct {
	db   *tupled.DB
	rate float64
	off  bool // strategy off: nothing detects; a lock timeout ends the pair
	// timeout is the DB's DeadlockTimeout: a pair still deadlocked at the
	// end of the run counts as undetected only if it is older than that
	// plus 100 ms.
	timeout time.Duration

	mu        sync.Mutex
	hist      *hdrhistogram.Histogram // detection latency, µs
	injected  int                     // pairs whose cycle closed
	detected  int                     // ... ended by a deadlock error
	timedOut  int                     // ... ended by the lock timeout (off)
	open      int                     // ... still deadlocked when the run ended (older than timeout + 100 ms)
	skipped   int                     // no free slot, or the pair could not be set up
	otherErrs int                     // a pair ended with an unexpected error
	firstErr  error
	out       io.Writer

	slots chan int
}

func newInjector(db *tupled.DB, rate float64, off bool) *injector {
	inj := &injector{db: db, rate: rate, off: off,
		hist:  hdrhistogram.New(histMinUs, histMaxUs, histSigFigs),
		slots: make(chan int, stormInjSlots)}
	for i := range stormInjSlots {
		inj.slots <- i
	}
	return inj
}

// run injects deadlocks at the configured rate until ctx is done, then waits
// for the pairs in flight (which ctx ends too).
func (inj *injector) run(ctx context.Context) error {
	every := time.Duration(float64(time.Second) / inj.rate)
	t := time.NewTicker(every)
	defer t.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		select {
		case slot := <-inj.slots:
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { inj.slots <- slot }()
				inj.injectPair(ctx, slot)
			}()
		default:
			inj.mu.Lock()
			inj.skipped++
			inj.mu.Unlock()
		}
	}
}

// injectPair creates one deadlock between transactions A and B on the rows
// a and b of its slot:
//
//	A: UPDATE a            B: UPDATE b
//	A: UPDATE b  (waits for B)
//	   ... until A's wait shows in db.Locks() (ungranted, TxID = A) ...
//	                       B: UPDATE a  (waits for A: the cycle closes)
//
// The latency measured is from the instant just before B's UPDATE a is
// issued (A is then known to be waiting, so B's wait closes the cycle a few
// microseconds later, as soon as it is published) to the instant the
// victim's call returns ErrDeadlock (the victim has then released its locks).
// Under PostgreSQL's rule the victim is A if B began waiting less than
// DeadlockTimeout after A (A's check, due first, sees the cycle), else B; in
// both cases the latency is at most about DeadlockTimeout plus the
// detector's delay. Under "off" both transactions run with a lock timeout of
// stormOffLockTimeout, which ends the deadlock instead (not a detection).
func (inj *injector) injectPair(ctx context.Context, slot int) {
	var opts *tupled.TxOptions
	if inj.off {
		opts = &tupled.TxOptions{LockTimeout: stormOffLockTimeout}
	}
	ka, kb := key4(1+2*slot), key4(2+2*slot)
	val := accountValue(2)
	skip := func(err error) {
		inj.mu.Lock()
		if ctx.Err() == nil {
			inj.skipped++
			if err != nil && inj.firstErr == nil {
				inj.firstErr = err
			}
		}
		inj.mu.Unlock()
	}
	txA, err := inj.db.Begin(ctx, opts)
	if err != nil {
		skip(err)
		return
	}
	defer txA.Rollback()
	txB, err := inj.db.Begin(ctx, opts)
	if err != nil {
		skip(err)
		return
	}
	defer txB.Rollback()
	if err := txA.Update(ctx, stormInjTable, ka, val); err != nil {
		skip(err)
		return
	}
	if err := txB.Update(ctx, stormInjTable, kb, val); err != nil {
		skip(err)
		return
	}
	type outcome struct {
		err error
		at  time.Time
	}
	aDone := make(chan outcome, 1)
	go func() {
		err := txA.Update(ctx, stormInjTable, kb, val)
		aDone <- outcome{err, time.Now()}
	}()
	// Wait until A's wait is visible.
	var resA outcome
	aEnded := false
	idA := txA.ID()
	for poll := 50 * time.Microsecond; !aEnded; {
		if waitingIn(inj.db.Locks(), idA) {
			break
		}
		select {
		case resA = <-aDone:
			aEnded = true
		case <-time.After(poll):
			poll = min(2*poll, time.Millisecond)
		}
	}
	if aEnded { // A never waited: B cannot have committed yet, so this is an error
		skip(resA.err)
		return
	}
	closed := time.Now()
	errB := txB.Update(ctx, stormInjTable, ka, val)
	resB := outcome{errB, time.Now()}
	resA = <-aDone

	inj.mu.Lock()
	defer inj.mu.Unlock()
	inj.injected++
	isDL := func(e error) bool { return errors.Is(e, tupled.ErrDeadlock) }
	isLT := func(e error) bool { return errors.Is(e, tupled.ErrLockTimeout) }
	switch {
	case isDL(resA.err) || isDL(resB.err):
		at := resA.at
		if !isDL(resA.err) || (isDL(resB.err) && resB.at.Before(at)) {
			at = resB.at
		}
		inj.detected++
		inj.record(at.Sub(closed))
		// The survivor's UPDATE went through once the victim released its
		// locks; commit it so the rows keep turning over.
		if resA.err == nil {
			_ = txA.Commit()
		} else if resB.err == nil {
			_ = txB.Commit()
		}
	case isLT(resA.err) || isLT(resB.err):
		inj.timedOut++
	case ctx.Err() != nil:
		// The run ended first. A pair whose cycle closed less than
		// DeadlockTimeout + 100 ms (goal P6's bound) before that cannot be
		// judged: not counted. An older one stayed undetected for at least
		// its age: counted, and recorded as that lower bound (never under
		// "off", which detects nothing).
		age := resA.at.Sub(closed)
		if b := resB.at.Sub(closed); b < age {
			age = b
		}
		switch {
		case inj.off:
			inj.open++
		case age > inj.timeout+100*time.Millisecond:
			inj.open++
			inj.record(age)
		default:
			inj.injected--
		}
	default:
		inj.otherErrs++
		if inj.firstErr == nil {
			inj.firstErr = fmt.Errorf("injected deadlock ended with A: %v, B: %v", resA.err, resB.err)
		}
	}
}

// schedLatencies reads the Go runtime's histogram of how long goroutines
// were runnable before they ran (nil if the runtime does not have it).
func schedLatencies() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	return s[0].Value.Float64Histogram()
}

// schedQuantiles returns quantile q (the upper bound of its bucket, or the
// lower one for the open last bucket) and the lower bound of the highest
// non-empty bucket of the histogram's growth from before to after, in
// seconds; ok is false when there is nothing to report.
func schedQuantiles(before, after *metrics.Float64Histogram, q float64) (quant, top float64, ok bool) {
	if before == nil || after == nil || len(before.Counts) != len(after.Counts) {
		return 0, 0, false
	}
	d := make([]uint64, len(after.Counts))
	var total uint64
	for i := range d {
		d[i] = after.Counts[i] - before.Counts[i]
		total += d[i]
	}
	if total == 0 {
		return 0, 0, false
	}
	bound := func(i int, upper bool) float64 {
		if upper && !math.IsInf(after.Buckets[i+1], 1) {
			return after.Buckets[i+1]
		}
		return max(after.Buckets[i], 0)
	}
	want := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	quant = -1
	for i, n := range d {
		seen += n
		if quant < 0 && seen >= want {
			quant = bound(i, true)
		}
		if n > 0 {
			top = bound(i, false)
		}
	}
	return quant, top, true
}

func (inj *injector) record(d time.Duration) {
	us := max(d.Microseconds(), histMinUs)
	_ = inj.hist.RecordValue(min(us, histMaxUs))
}

// waitingIn reports whether locks show transaction id waiting.
func waitingIn(locks []tupled.LockInfo, id uint64) bool {
	for _, l := range locks {
		if !l.Granted && l.TxID == id {
			return true
		}
	}
	return false
}

func (inj *injector) report(r *Result) {
	inj.mu.Lock()
	defer inj.mu.Unlock()
	r.AddExtra("injected deadlocks", float64(inj.injected))
	r.AddExtra("injected deadlocks detected", float64(inj.detected))
	if inj.off {
		r.AddExtra(fmt.Sprintf("injected deadlocks ended by lock timeout (%v, off)", stormOffLockTimeout), float64(inj.timedOut))
	}
	if inj.open > 0 {
		r.AddExtra("injected deadlocks still undetected at the end", float64(inj.open))
	}
	if inj.skipped > 0 {
		r.AddExtra("injections skipped", float64(inj.skipped))
	}
	if inj.otherErrs > 0 {
		r.AddExtra("injected deadlocks ended otherwise", float64(inj.otherErrs))
	}
	if inj.hist.TotalCount() > 0 {
		ms := func(us int64) float64 { return float64(us) / 1000 }
		r.AddExtra("deadlock detection latency p50 ms", ms(inj.hist.ValueAtQuantile(50)))
		r.AddExtra("deadlock detection latency p99 ms", ms(inj.hist.ValueAtQuantile(99)))
		r.AddExtra("deadlock detection latency max ms", ms(inj.hist.Max()))
		r.AddExtra("deadlock detection latencies measured", float64(inj.hist.TotalCount()))
	}
	if inj.firstErr != nil && inj.out != nil {
		// Not fatal (the storm's figures stand), but visible.
		fmt.Fprintf(inj.out, "injector: first unexpected error: %v\n", inj.firstErr)
	}
}
