//go:build invariants

package lockmgr

import (
	"context"
	"testing"
	"time"

	"github.com/tupled/tupled/internal/invariants"
)

// TestInvariantObjectsInUse: a lock object left in its partition's table
// with neither holder nor waiter is found by the next request or release.
func TestInvariantObjectsInUse(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	p := m.NewProc(1)
	tag := tup("k")
	h := m.hash(tag)
	pt := m.partOf(h)
	pt.mu.Lock()
	pt.get(tag, h) // created for a request that then forgot to release it
	pt.mu.Unlock()
	invariants.ExpectViolation(t, invInUse, func() { m.Unlock(p, tag, ExclusiveLock) })
	pt.mu.Unlock() // the panic left it locked
	invariants.ExpectViolation(t, invInUse, func() {
		_ = m.Lock(context.Background(), p, tag, ExclusiveLock, Wait{})
	})
	pt.mu.Unlock()

	// Every path that empties an object removes it.
	pt.mu.Lock()
	pt.release(pt.lookup(tag, h))
	pt.mu.Unlock()
	q := m.NewProc(2)
	if err := m.Lock(context.Background(), p, tag, ExclusiveLock, Wait{}); err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(context.Background(), q, tag, ExclusiveLock, Wait{NoWait: true}); err != ErrWouldBlock {
		t.Fatalf("NoWait: %v", err)
	}
	m.Unlock(p, tag, ExclusiveLock)
	m.Unlock(p, tag, ExclusiveLock) // not held: a no-op
	empty(t, m)
}

// TestInvariantGrantedCounts: the lock's granted counts and masks must
// follow its holders'.
func TestInvariantGrantedCounts(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	p, q := m.NewProc(1), m.NewProc(2)
	tag := tup("k")
	h := m.hash(tag)
	pt := m.partOf(h)
	for name, corrupt := range map[string]func(l *lock){
		"granted count":      func(l *lock) { l.granted[RowShareLock]++ },
		"grant mask":         func(l *lock) { l.grantMask |= bit(ExclusiveLock) },
		"holder mask":        func(l *lock) { l.holders[0].mask |= bit(ExclusiveLock) },
		"duplicate holder":   func(l *lock) { l.holders = append(l.holders, l.holders[0]); l.granted[RowShareLock]++ },
		"empty holder entry": func(l *lock) { l.holders = append(l.holders, holder{proc: q}) },
	} {
		t.Run(name, func(t *testing.T) {
			if err := m.Lock(context.Background(), p, tag, RowShareLock, Wait{}); err != nil {
				t.Fatal(err)
			}
			pt.mu.Lock()
			l := pt.lookup(tag, h)
			defer func() {
				// Start the next case afresh, even if this one failed.
				*l = lock{part: pt, tag: l.tag, hash: l.hash, next: l.next}
				pt.release(l)
				pt.mu.Unlock()
				empty(t, m)
			}()
			corrupt(l)
			invariants.ExpectViolation(t, invGranted, func() { l.grant(p, l.holderIndex(p), RowShareLock) })
		})
	}
}
