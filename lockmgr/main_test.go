package lockmgr

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newManager(t testing.TB, strategy string, d time.Duration) *Manager {
	t.Helper()
	m, err := New(Options{Strategy: strategy, DeadlockTimeout: d})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func tup(key string) Tag { return Tag{Kind: TagTuple, Rel: "t", Key: key} }

// eventually polls cond (observable state, never a guess about timing) until
// it holds or 20s pass.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// waiting reports whether xid shows as an ungranted entry on tag in Locks().
func waiting(m *Manager, xid uint64, tag Tag) bool {
	for _, li := range m.Locks() {
		if li.Xid == xid && !li.Granted && li.Tag == tag {
			return true
		}
	}
	return false
}

func waitingAny(m *Manager, xid uint64) (LockInfo, bool) {
	for _, li := range m.Locks() {
		if li.Xid == xid && !li.Granted {
			return li, true
		}
	}
	return LockInfo{}, false
}

func countWaiters(m *Manager) int {
	n := 0
	for _, li := range m.Locks() {
		if !li.Granted {
			n++
		}
	}
	return n
}

// async runs f in a goroutine and returns a channel with its result.
func async(f func() error) <-chan error {
	c := make(chan error, 1)
	go func() { c <- f() }()
	return c
}

func noResult(t testing.TB, c <-chan error, what string) {
	t.Helper()
	select {
	case err := <-c:
		t.Fatalf("%s returned early: %v", what, err)
	default:
	}
}

func result(t testing.TB, c <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-c:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return", what)
		return nil
	}
}

func mustLock(t testing.TB, m *Manager, p *Proc, tag Tag, mode LockMode) {
	t.Helper()
	if err := m.Lock(context.Background(), p, tag, mode, Wait{}); err != nil {
		t.Fatalf("lock %s %s by %d: %v", mode, tag, p.Xid(), err)
	}
}

// empty asserts that the manager holds no state: no lock objects, nobody in
// the waiting registry.
func empty(t testing.TB, m *Manager) {
	t.Helper()
	for i := range m.parts {
		pt := &m.parts[i]
		pt.mu.RLock()
		n := len(pt.locks)
		pt.mu.RUnlock()
		if n != 0 {
			t.Fatalf("partition %d still has %d lock objects", i, n)
		}
		s := &m.reg[i]
		s.mu.RLock()
		n = len(s.procs)
		s.mu.RUnlock()
		if n != 0 {
			t.Fatalf("registry shard %d still has %d procs", i, n)
		}
	}
}

func isDeadlock(err error) bool { return errors.Is(err, ErrDeadlock) }

func TestNewOptions(t *testing.T) {
	if _, err := New(Options{Strategy: "nope"}); err == nil {
		t.Fatal("unknown strategy accepted")
	}
	if _, err := New(Options{Partitions: 12}); err == nil {
		t.Fatal("partitions not a power of two accepted")
	}
	for _, s := range []string{"", "default", "classic", "shared-first", "single-checker", "single-memo", "off"} {
		m, err := New(Options{Strategy: s, Partitions: 4})
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		m.Close()
		m.Close() // idempotent
	}
}

func TestStrings(t *testing.T) {
	names := []string{"NoLock", "AccessShareLock", "RowShareLock", "RowExclusiveLock", "ShareUpdateExclusiveLock",
		"ShareLock", "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"}
	for i, n := range names {
		if got := LockMode(i).String(); got != n {
			t.Errorf("LockMode(%d) = %q, want %q", i, got, n)
		}
	}
	if got := (Tag{Kind: TagTuple, Rel: "accounts", Key: "\x01\xff"}).String(); got != "tuple accounts/01ff" {
		t.Errorf("tuple tag: %q", got)
	}
	if got := (Tag{Kind: TagTransaction, Xid: 1234}).String(); got != "transaction 1234" {
		t.Errorf("xact tag: %q", got)
	}
	_ = fmt.Sprint(LockMode(42), Tag{})
}
