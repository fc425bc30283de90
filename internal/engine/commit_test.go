package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled/internal/tuplemode"
	"github.com/tupled/tupled/internal/xact"
)

// A transaction that only read or locked commits without a CSN of its own
// (xact.CommitNoWrite); one that wrote anything commits with a fresh one.
// These tests pin both halves: the lock-only commit still ends its row
// locks for everyone (the waiters wake and get the row), and no writer —
// whatever it locked first, however its write was undone — can take the
// shortcut.

func memEngine(t *testing.T, rows ...string) *Engine {
	t.Helper()
	e := open(t, "", nil, false)
	t.Cleanup(func() { _ = e.Close() })
	require.NoError(t, e.CreateTable("t"))
	tx := begin(t, e, TxOptions{})
	for _, k := range rows {
		require.NoError(t, tx.Insert(ctx, "t", []byte(k), []byte("v0")))
	}
	require.NoError(t, tx.Commit())
	return e
}

// waiting reports whether tx waits for a lock, as Locks() shows it.
func waiting(e *Engine, tx *Tx) bool {
	for _, l := range e.Locks() {
		if !l.Granted && l.TxID == tx.ID() {
			return true
		}
	}
	return false
}

func lockAsync(tx *Tx, key string, mode tuplemode.Mode) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := tx.Lock(ctx, "t", []byte(key), mode, Block)
		done <- err
	}()
	return done
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, time.Millisecond, what)
}

func committedCSN(t *testing.T, e *Engine, xid uint64) uint64 {
	t.Helper()
	st, csn := e.xacts.Status(xid)
	require.Equal(t, xact.Committed, st)
	return csn
}

// TestLockOnlyCommitReleasesWaiters: a single FOR UPDATE locker, then two
// FOR KEY SHARE lockers in a multixact, each with a FOR UPDATE waiter
// queued behind it (seen in Locks()); the lockers commit without a CSN,
// and the waiter gets the row as soon as the last of them has committed.
func TestLockOnlyCommitReleasesWaiters(t *testing.T) {
	e := memEngine(t, "a", "b")
	csn0 := e.xacts.LastCSN()

	// A single locker's xid in xmax.
	t1 := begin(t, e, TxOptions{})
	_, err := t1.Lock(ctx, "t", []byte("a"), tuplemode.Exclusive, Block)
	require.NoError(t, err)
	w1 := begin(t, e, TxOptions{})
	done := lockAsync(w1, "a", tuplemode.Share)
	waitUntil(t, "w1 waits for t1", func() bool { return waiting(e, w1) })
	require.NoError(t, t1.Commit())
	require.NoError(t, <-done, "the waiter got the row")
	require.False(t, waiting(e, w1))
	require.Equal(t, csn0, e.xacts.LastCSN(), "a lock-only commit hands out no CSN")
	require.Equal(t, csn0, committedCSN(t, e, t1.ID()), "it commits with the last CSN")
	rl, err := e.RowLocks("t", func() error { return nil })
	require.NoError(t, err)
	require.Equal(t, []RowLock{{Key: []byte("a"), Lockers: []uint64{w1.ID()}, Modes: []tuplemode.Mode{tuplemode.Share}}}, rl)
	require.NoError(t, w1.Commit())

	// Lockers in a multixact: the waiter waits for each member.
	k1, k2 := begin(t, e, TxOptions{}), begin(t, e, TxOptions{})
	for _, k := range []*Tx{k1, k2} {
		_, err := k.Lock(ctx, "t", []byte("b"), tuplemode.KeyShare, Block)
		require.NoError(t, err)
	}
	w2 := begin(t, e, TxOptions{})
	done = lockAsync(w2, "b", tuplemode.Exclusive)
	waitUntil(t, "w2 waits for the key-share lockers", func() bool { return waiting(e, w2) })
	require.NoError(t, k1.Commit())
	select {
	case err := <-done:
		t.Fatalf("w2 got the row (%v) while k2 still holds FOR KEY SHARE", err)
	default:
	}
	waitUntil(t, "w2 waits for k2", func() bool { return waiting(e, w2) })
	require.NoError(t, k2.Commit())
	require.NoError(t, <-done)
	require.False(t, waiting(e, w2))
	rl, err = e.RowLocks("t", func() error { return nil })
	require.NoError(t, err)
	require.Len(t, rl, 1)
	require.Equal(t, []uint64{w2.ID()}, rl[0].Lockers)
	require.NoError(t, w2.Commit())

	// A read-only transaction too.
	r := begin(t, e, TxOptions{RepeatableRead: true})
	_, err = r.Get(ctx, "t", []byte("a"))
	require.NoError(t, err)
	require.NoError(t, r.Commit())
	require.Equal(t, csn0, e.xacts.LastCSN())
	require.Zero(t, e.xacts.NumLive(), "every transaction left the live set")
}

// TestWriterCommitTakesCSN: every way of writing — after a lock of the
// same row, an insert, a delete, a write undone by ROLLBACK TO, an index
// build on an empty table — commits with a fresh CSN, and a snapshot
// taken before the commit does not see it.
func TestWriterCommitTakesCSN(t *testing.T) {
	e := memEngine(t, "a", "b", "c")
	e2 := memEngine(t)
	require.NoError(t, e2.CreateTable("empty"))
	for _, c := range []struct {
		name string
		e    *Engine
		do   func(tx *Tx)
	}{
		{"lock, then update", e, func(tx *Tx) {
			_, err := tx.Lock(ctx, "t", []byte("a"), tuplemode.Exclusive, Block)
			require.NoError(t, err)
			require.NoError(t, tx.Write(ctx, "t", []byte("a"), []byte("v1"), false, Block))
		}},
		{"key-share lock, then update of another row", e, func(tx *Tx) {
			_, err := tx.Lock(ctx, "t", []byte("a"), tuplemode.KeyShare, Block)
			require.NoError(t, err)
			require.NoError(t, tx.Write(ctx, "t", []byte("b"), []byte("v1"), false, Block))
		}},
		{"insert", e, func(tx *Tx) { require.NoError(t, tx.Insert(ctx, "t", []byte("d"), []byte("v"))) }},
		{"delete", e, func(tx *Tx) { require.NoError(t, tx.Write(ctx, "t", []byte("c"), nil, true, Block)) }},
		{"write rolled back to a savepoint, then a lock", e, func(tx *Tx) {
			require.NoError(t, tx.Savepoint("s"))
			require.NoError(t, tx.Write(ctx, "t", []byte("b"), []byte("v2"), false, Block))
			require.NoError(t, tx.RollbackTo("s"))
			_, err := tx.Lock(ctx, "t", []byte("b"), tuplemode.Share, Block)
			require.NoError(t, err)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := begin(t, c.e, TxOptions{RepeatableRead: true})
			_, _ = before.Get(ctx, "t", []byte("a")) // takes its snapshot
			csn0 := c.e.xacts.LastCSN()
			tx := begin(t, c.e, TxOptions{})
			c.do(tx)
			require.True(t, tx.txn.Top().Wrote(), "the write was noted")
			require.NoError(t, tx.Commit())
			require.Equal(t, csn0+1, c.e.xacts.LastCSN(), "a writer's commit hands out a CSN")
			require.Equal(t, csn0+1, committedCSN(t, c.e, tx.ID()))
			require.False(t, c.e.xacts.Visible(tx.ID(), before.snap), "an older snapshot does not see the writer")
			before.Rollback()
		})
	}
	t.Run("index build on an empty table", func(t *testing.T) {
		csn0 := e2.xacts.LastCSN()
		require.NoError(t, e2.CreateIndex(ctx, "empty", "empty_i", IndexOptions{Key: func(k, _ []byte) ([]byte, bool) { return k, true }}))
		require.Equal(t, csn0+1, e2.xacts.LastCSN(), "the build's xid is a visibility token (Index.built): it needs a CSN")
	})
}
