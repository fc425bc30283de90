package soak_test

// The soak (issue 10): a mixed locking workload with vacuum and
// checkpoints on an on-disk database, long enough for a leak or a
// slowdown to show, bounded by a commit count (with a wall-clock cap for a
// machine much slower than expected). It compares the first third with
// the last: goroutines, heap after GC, live multixacts and tuple versions
// must stay flat, and the CPU time per commit must not grow beyond a
// generous factor.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/tests/utils"
)

// soakSample is the state at a boundary between thirds.
type soakSample struct {
	commits    uint64 // Stats().Commits
	cpu        time.Duration
	goroutines int
	heap       uint64 // HeapAlloc after a GC
	multis     uint64 // Stats().MultiXactsLive
	created    uint64 // Stats().MultiXactsCreated
	tuples     uint64 // Stats().TuplesLive
	queueDone  uint64 // queue rows consumed
	at         time.Time
}

func processCPU(t testing.TB) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestSoak runs four phases (a warm-up and three measured thirds) of the
// same fixed amount of work each: every locker, kv and queue worker does a
// fixed number of transactions per phase, so what is compared between the
// thirds is the cost of the same work, not of whatever the scheduler mixed.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak: runs in the normal tier (about a minute)")
	}
	const (
		accounts  = 64
		lockTxs   = 3000        // per locker per phase
		kvTxs     = 4500        // per phase
		jobs      = 6000        // queue rows produced and consumed per phase
		maxPhase  = time.Minute // a hang guard, not a speed target
		consumers = 2
	)
	off := false
	db, err := tupled.Open(t.TempDir(), &tupled.Options{
		SyncCommit: &off, VacuumInterval: 50 * time.Millisecond, CheckpointInterval: time.Second,
		CacheRows: 256, DeadlockTimeout: 20 * time.Millisecond,
	})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	for _, name := range []string{"acct", "kv", "queue"} {
		require.NoError(t, db.CreateTable(bg, name))
	}
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
		for i := range accounts {
			if err := tx.Insert(bg, "acct", utils.Key(i), []byte("0")); err != nil {
				return err
			}
		}
		return nil
	}))
	ok := func(err error) bool {
		return err == nil || errors.Is(err, tupled.ErrNotFound) || errors.Is(err, tupled.ErrDuplicateKey) ||
			errors.Is(err, tupled.ErrLockNotAvailable) || tupled.IsRetryable(err)
	}
	var produced, consumed atomic.Uint64
	var nextJob uint64

	// phase runs one phase's work and returns the first unexpected error.
	phase := func(p int) error {
		ctx, cancel := context.WithTimeout(bg, maxPhase)
		defer cancel()
		var wg sync.WaitGroup
		var firstErr atomic.Pointer[error]
		fail := func(err error) {
			firstErr.CompareAndSwap(nil, &err)
			cancel()
		}
		worker := func(seed uint64, n int, f func(rng *rand.Rand) error) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(seed, uint64(p)))
				for i := 0; i < n && ctx.Err() == nil; i++ {
					if err := f(rng); !ok(err) {
						fail(err)
						return
					}
				}
			}()
		}
		run := func(fn func(tx *tupled.Tx) error) error { return db.RunTx(ctx, nil, fn) }
		// Lockers: FOR SHARE and FOR KEY SHARE on overlapping accounts
		// (so rows collect multixacts), sometimes FOR UPDATE and an update.
		for w := range 3 {
			worker(uint64(w), lockTxs, func(rng *rand.Rand) error {
				return run(func(tx *tupled.Tx) error {
					for range 3 {
						k := utils.Key(rng.IntN(8)) // a hot set: sharers meet
						s := []tupled.LockStrength{tupled.ForShare, tupled.ForKeyShare, tupled.ForKeyShare}[rng.IntN(3)]
						if _, err := tx.Lock(ctx, "acct", k, s, tupled.Wait); err != nil {
							return err
						}
					}
					if rng.IntN(4) == 0 {
						k := utils.Key(rng.IntN(accounts))
						if _, err := tx.Lock(ctx, "acct", k, tupled.ForUpdate, tupled.NoWait); err != nil {
							return err
						}
						return tx.Update(ctx, "acct", k, []byte(fmt.Sprint(rng.IntN(1000))))
					}
					return nil
				})
			})
		}
		// Pairs: two transactions share a row (FOR SHARE and FOR KEY
		// SHARE), so every iteration makes a multixact whatever the
		// scheduler does; vacuum must reclaim them.
		worker(5, lockTxs, func(rng *rand.Rand) error {
			a, err := db.Begin(ctx, nil)
			if err != nil {
				return err
			}
			defer a.Rollback()
			b, err := db.Begin(ctx, nil)
			if err != nil {
				return err
			}
			defer b.Rollback()
			k := utils.Key(8 + rng.IntN(accounts-8))
			if _, err := a.Lock(ctx, "acct", k, tupled.ForShare, tupled.Wait); err != nil {
				return err
			}
			if _, err := b.Lock(ctx, "acct", k, tupled.ForKeyShare, tupled.Wait); err != nil {
				return err
			}
			if err := a.Commit(); err != nil {
				return err
			}
			return b.Commit()
		})
		// kv: inserts, updates and deletes on a small key space.
		worker(10, kvTxs, func(rng *rand.Rand) error {
			return run(func(tx *tupled.Tx) error {
				k := utils.Key(rng.IntN(200))
				switch rng.IntN(3) {
				case 0:
					return tx.Insert(ctx, "kv", k, []byte("v"))
				case 1:
					return tx.Update(ctx, "kv", k, []byte(fmt.Sprint(rng.Uint32())))
				}
				return tx.Delete(ctx, "kv", k)
			})
		})
		// The queue: a producer and SKIP LOCKED consumers that delete what
		// they take, handed one token per job so they never spin on an
		// empty queue; at most 64 jobs are pending.
		tokens := make(chan struct{}, 64)
		worker(20, jobs, func(rng *rand.Rand) error {
			err := run(func(tx *tupled.Tx) error {
				return tx.Insert(ctx, "queue", binary.BigEndian.AppendUint64(nil, nextJob), []byte("job"))
			})
			if err != nil {
				return err
			}
			nextJob++
			produced.Add(1)
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
			}
			return nil
		})
		var taken atomic.Int64
		allTaken := make(chan struct{})
		for w := range consumers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-tokens:
					case <-allTaken:
						return
					case <-ctx.Done():
						return
					}
					took := 0
					err := run(func(tx *tupled.Tx) error {
						took = 0
						return tx.Scan(ctx, "queue", tupled.ScanOptions{Lock: tupled.ForUpdate, Wait: tupled.SkipLocked, Limit: 1}, func(k, v []byte) error {
							took++
							return tx.Delete(ctx, "queue", k)
						})
					})
					if !ok(err) {
						fail(fmt.Errorf("consumer %d: %w", w, err))
						return
					}
					if err != nil || took == 0 { // the other consumer holds it: later
						runtime.Gosched()
						select {
						case tokens <- struct{}{}:
						case <-allTaken:
							return
						case <-ctx.Done():
							return
						}
						continue
					}
					consumed.Add(1)
					if taken.Add(1) == jobs {
						close(allTaken)
						return
					}
				}
			}()
		}
		wg.Wait()
		if p := firstErr.Load(); p != nil {
			return *p
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("phase %d did not finish in %v (%d jobs produced, %d consumed, %d taken this phase): %w", p, maxPhase, produced.Load(), consumed.Load(), taken.Load(), err)
		}
		return nil
	}

	start := time.Now()
	sample := func() soakSample {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		st := db.Stats()
		return soakSample{commits: st.Commits, cpu: processCPU(t), goroutines: runtime.NumGoroutine(), heap: ms.HeapAlloc,
			multis: st.MultiXactsLive, created: st.MultiXactsCreated, tuples: st.TuplesLive, queueDone: consumed.Load(), at: time.Now()}
	}
	var s [4]soakSample
	for p := range 4 { // phase 0 warms up: caches, pools, the first checkpoints
		require.NoError(t, phase(p))
		s[p] = sample()
	}

	perCommit := func(a, b soakSample) time.Duration {
		return (b.cpu - a.cpu) / time.Duration(b.commits-a.commits)
	}
	cpu1, cpu3 := perCommit(s[0], s[1]), perCommit(s[2], s[3])
	for i, x := range s {
		per := ""
		if i > 0 {
			per = fmt.Sprintf(", CPU per commit %v", perCommit(s[i-1], x))
		}
		t.Logf("after phase %d at %v: commits %d, goroutines %d, heap %.1f MiB, multixacts live %d (created %d), tuple versions %d, queue rows consumed %d%s",
			i, x.at.Sub(start).Round(time.Millisecond), x.commits, x.goroutines, float64(x.heap)/(1<<20), x.multis, x.created, x.tuples, x.queueDone, per)
	}
	t.Logf("CPU per commit: first third %v, last third %v (x%.2f)", cpu1, cpu3, float64(cpu3)/float64(cpu1))

	first, last := s[1], s[3]
	require.Equal(t, produced.Load(), consumed.Load(), "every job was consumed")
	require.LessOrEqual(t, last.goroutines, first.goroutines+4, "goroutines grow")
	require.LessOrEqual(t, last.heap, 2*first.heap+16<<20, "heap (after GC) grows")
	require.LessOrEqual(t, last.multis, 2*first.multis+200, "live multixacts grow")
	require.LessOrEqual(t, last.tuples, 2*first.tuples+2000, "tuple versions grow")
	require.GreaterOrEqual(t, last.created-s[2].created, uint64(lockTxs), "every pair made a multixact")
	// CPU per commit stays flat. It used to grow x1.7-x2.2 (120-150 µs
	// per commit in the first third, 250-270 µs in the last, on 2 busy
	// cores): the SKIP LOCKED consumers scan the queue from its head, and
	// every job consumed left a deleted key that each scan stepped over
	// until it was gone from the backend too. Since issue 12 a scan starts
	// at its table's floor, past the head of rows dead to every snapshot
	// (heap/backed.go): 5-13 µs per commit, x0.75-x1.4 in four runs of
	// five and x1.86 in one (GC and the other core's load weigh on a
	// figure this small). The bound stays loose; what the floor does is
	// pinned by heap's TestPersistentScanSkipsDeadHead, and the queue's
	// flat rate is bench/peers' queue workload (first vs last thousand).
	require.LessOrEqual(t, float64(cpu3), 2.5*float64(cpu1), "CPU per commit grows")
}
