package lockmgr

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkLocks1000Waiters: Locks() with 1000 waiters present (500 queued on
// one tuple lock, 500 waiting for a transaction).
func BenchmarkLocks1000Waiters(b *testing.B) {
	m := newManager(b, "default", time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	hot := tup("hot")
	holder := newXact(m, 1)
	mustLock(b, m, holder.p, hot, AccessExclusiveLock)
	var wg sync.WaitGroup
	for i := 0; i < 1000; i++ {
		p := m.NewProc(uint64(10 + i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				_ = m.Lock(ctx, p, hot, ExclusiveLock, Wait{})
			} else {
				_ = m.WaitXacts(ctx, p, []AwaitedXact{holder.X()}, Wait{})
			}
		}()
	}
	eventually(b, "1000 waiters", func() bool { return countWaiters(m) == 1000 })
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if n := len(m.Locks()); n != 1001 {
			b.Fatalf("%d entries", n)
		}
	}
	b.StopTimer()
	cancel()
	wg.Wait()
}

func BenchmarkLockUnlockUncontended(b *testing.B) {
	m := newManager(b, "default", time.Second)
	p := m.NewProc(1)
	ctx := context.Background()
	tags := make([]Tag, 1024)
	for i := range tags {
		tags[i] = tup(fmt.Sprintf("key-%d", i))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tag := tags[i&1023]
		i++
		if err := m.Lock(ctx, p, tag, ExclusiveLock, Wait{}); err != nil {
			b.Fatal(err)
		}
		m.Unlock(p, tag, ExclusiveLock)
	}
}

func BenchmarkLockUnlockUncontendedParallel(b *testing.B) {
	m := newManager(b, "default", time.Second)
	ctx := context.Background()
	var next atomic.Uint64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		id := next.Add(1)
		p := m.NewProc(id)
		tags := make([]Tag, 256)
		for i := range tags {
			tags[i] = tup(fmt.Sprintf("key-%d-%d", id, i))
		}
		i := 0
		for pb.Next() {
			tag := tags[i&255]
			i++
			if err := m.Lock(ctx, p, tag, ExclusiveLock, Wait{}); err != nil {
				b.Error(err)
				return
			}
			m.Unlock(p, tag, ExclusiveLock)
		}
	})
}

func BenchmarkWaitXactsFinished(b *testing.B) {
	m := newManager(b, "default", time.Second)
	p := m.NewProc(2)
	x := newXact(m, 1)
	close(x.done)
	xs := []AwaitedXact{x.X()}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := m.WaitXacts(ctx, p, xs, Wait{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDeadlockAmong1000: a 2-way cycle (a waits for b, b for a) behind
// 998 waiters queued on a tuple lock a holds (setupCrowd). Reports how long
// after a's wait began the first ErrDeadlock came, beyond DeadlockTimeout
// ("ms-over-timeout"), and how often the victim was b, the waiter that closed
// the cycle less than DeadlockTimeout after a's wait began, instead of a as
// PostgreSQL's rule says ("wrong-victim-%": single-checker and single-memo
// defer checks, which can change the victim).
func BenchmarkDeadlockAmong1000(b *testing.B) {
	for _, strategy := range []string{"default", "classic", "shared-first", "single-checker", "single-memo"} {
		b.Run(strategy, func(b *testing.B) {
			const d = 100 * time.Millisecond
			var over time.Duration
			n, wrong := 0, 0
			for b.Loop() {
				m, err := New(Options{Strategy: strategy, DeadlockTimeout: d})
				if err != nil {
					b.Fatal(err)
				}
				ra, rb, start, cleanup := setupCrowd(b, m)
				var ea, eb error
				select {
				case ea = <-ra:
					over += time.Since(start) - d
					eb = result(b, rb, "b")
				case eb = <-rb:
					over += time.Since(start) - d
					ea = result(b, ra, "a")
					wrong++
				}
				n++
				if isDeadlock(ea) == isDeadlock(eb) || (ea != nil && !isDeadlock(ea)) || (eb != nil && !isDeadlock(eb)) {
					b.Fatalf("a: %v, b: %v; want exactly one ErrDeadlock", ea, eb)
				}
				cleanup()
				m.Close()
			}
			b.ReportMetric(float64(over.Microseconds())/1000/float64(n), "ms-over-timeout")
			b.ReportMetric(100*float64(wrong)/float64(n), "wrong-victim-%")
		})
	}
}

// BenchmarkLockUnlockDuringCheckStorm replays the seed's situation at the
// lock-manager level: 1000 goroutines queue on 4 hot rows, each holding its
// tuple lock for a short sleep, with DeadlockTimeout = 1 ms so that nearly
// every wait is checked, while the benchmark goroutine does uncontended
// Lock/Unlock on rows nobody else touches. Reports the foreground's ns/op, its
// 99th-percentile and worst single operation, and the storm's checks per
// second. The stop-the-world strategies make the foreground wait for every
// check; the default one never does.
func BenchmarkLockUnlockDuringCheckStorm(b *testing.B) {
	for _, strategy := range []string{"off", "default", "classic", "shared-first", "single-checker", "single-memo"} {
		b.Run(strategy, func(b *testing.B) {
			m := newManager(b, strategy, time.Millisecond)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for i := 0; i < 1000; i++ {
				p := m.NewProc(uint64(1000 + i))
				tag := tup(fmt.Sprintf("hot-%d", i%4))
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ctx.Err() == nil {
						if err := m.Lock(ctx, p, tag, ExclusiveLock, Wait{}); err != nil {
							continue
						}
						time.Sleep(20 * time.Microsecond)
						m.Unlock(p, tag, ExclusiveLock)
					}
				}()
			}
			eventually(b, "storm running", func() bool { return countWaiters(m) > 500 })
			p := m.NewProc(1)
			tags := make([]Tag, 256)
			for i := range tags {
				tags[i] = tup(fmt.Sprintf("quiet-%d", i))
			}
			checks0 := m.Stats().DeadlockChecks
			start := time.Now()
			lat := make([]time.Duration, 0, 1<<22)
			i := 0
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				tag := tags[i&255]
				i++
				if err := m.Lock(ctx, p, tag, ExclusiveLock, Wait{}); err != nil {
					b.Fatal(err)
				}
				m.Unlock(p, tag, ExclusiveLock)
				if len(lat) < cap(lat) {
					lat = append(lat, time.Since(t0))
				}
			}
			b.StopTimer()
			el := time.Since(start)
			checks := m.Stats().DeadlockChecks - checks0
			cancel()
			wg.Wait()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
			b.ReportMetric(float64(checks)/el.Seconds(), "checks/s")
		})
	}
}
