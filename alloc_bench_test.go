package tupled_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/internal/invariants"
)

// The lock path at the speed of memory (issue 28): what one transaction
// costs in allocations and time on an in-memory database with a resident
// row. BenchmarkTxGet is the plain read, BenchmarkTxLockShare and
// BenchmarkTxLockKeyShare a lock-only transaction on a row nobody else
// locks (the single-xid fast path), BenchmarkTxLockKeyShareHot the hot
// row of `tupled bench hotrow`: concurrent transactions lock one row FOR
// KEY SHARE, so its xmax is a multixact most of the time. Run with
// -benchmem or read the allocs/op column; TestTxAllocs pins the counts.

// allocDB is an in-memory database with table "t" holding the resident
// row "k".
func allocDB(tb testing.TB) *tupled.DB {
	tb.Helper()
	return openDB(tb, &tupled.Options{VacuumInterval: -1}, map[string]string{"k": "v"})
}

var allocKey = []byte("k")

// getTx is one read-only transaction: Begin, Get, Commit.
func getTx(tb testing.TB, db *tupled.DB) {
	tx, err := db.Begin(bg, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := tx.Get(bg, "t", allocKey); err != nil {
		tb.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// beginner begins transactions: a *tupled.DB, or a *tupled.Session (whose
// transactions reuse one Tx).
type beginner interface {
	Begin(ctx context.Context, opts *tupled.TxOptions) (*tupled.Tx, error)
}

// getNoCopyTx is getTx reading with GetNoCopy (no copy of the value).
func getNoCopyTx(tb testing.TB, db beginner) {
	tx, err := db.Begin(bg, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := tx.GetNoCopy(bg, "t", allocKey); err != nil {
		tb.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// lockNoCopyTx is lockTx locking with LockNoCopy, without yield.
func lockNoCopyTx(tb testing.TB, db beginner, strength tupled.LockStrength) {
	tx, err := db.Begin(bg, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := tx.LockNoCopy(bg, "t", allocKey, strength, tupled.Wait); err != nil {
		tb.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// lockTx is one lock-only transaction: Begin, Lock (strength), Commit;
// with yield it lets other goroutines run between Lock and Commit (the
// client's round trip of `tupled bench hotrow`).
func lockTx(tb testing.TB, db *tupled.DB, strength tupled.LockStrength, yield bool) {
	tx, err := db.Begin(bg, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := tx.Lock(bg, "t", allocKey, strength, tupled.Wait); err != nil {
		tb.Fatal(err)
	}
	if yield {
		runtime.Gosched()
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

func BenchmarkSessionTxGetNoCopy(b *testing.B) {
	db := allocDB(b)
	s := db.NewSession()
	defer s.Close()
	b.ReportAllocs()
	for b.Loop() {
		getNoCopyTx(b, s)
	}
}

func BenchmarkSessionTxLockShareNoCopy(b *testing.B) {
	db := allocDB(b)
	s := db.NewSession()
	defer s.Close()
	b.ReportAllocs()
	for b.Loop() {
		lockNoCopyTx(b, s, tupled.ForShare)
	}
}

func BenchmarkSessionTxLockKeyShareNoCopy(b *testing.B) {
	db := allocDB(b)
	s := db.NewSession()
	defer s.Close()
	b.ReportAllocs()
	for b.Loop() {
		lockNoCopyTx(b, s, tupled.ForKeyShare)
	}
}

func BenchmarkTxGet(b *testing.B) {
	db := allocDB(b)
	b.ReportAllocs()
	for b.Loop() {
		getTx(b, db)
	}
}

func BenchmarkTxGetNoCopy(b *testing.B) {
	db := allocDB(b)
	b.ReportAllocs()
	for b.Loop() {
		getNoCopyTx(b, db)
	}
}

func BenchmarkTxLockShareNoCopy(b *testing.B) {
	db := allocDB(b)
	b.ReportAllocs()
	for b.Loop() {
		lockNoCopyTx(b, db, tupled.ForShare)
	}
}

func BenchmarkTxLockShare(b *testing.B) {
	db := allocDB(b)
	b.ReportAllocs()
	for b.Loop() {
		lockTx(b, db, tupled.ForShare, false)
	}
}

func BenchmarkTxLockKeyShare(b *testing.B) {
	db := allocDB(b)
	b.ReportAllocs()
	for b.Loop() {
		lockTx(b, db, tupled.ForKeyShare, false)
	}
}

// BenchmarkTxLockKeyShareHot locks the one row FOR KEY SHARE from
// GOMAXPROCS×8 goroutines at once (b.SetParallelism), each yielding
// between its Lock and its Commit: while one transaction holds its lock
// others add theirs, and the row's xmax becomes a multixact
// (multilocks/op: the locks recorded through one).
func BenchmarkTxLockKeyShareHot(b *testing.B) {
	db := allocDB(b)
	before := db.Stats()
	b.SetParallelism(8)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			lockTx(b, db, tupled.ForKeyShare, true)
		}
	})
	b.StopTimer()
	s := db.Stats()
	b.ReportMetric(float64(s.LocksMultiXact-before.LocksMultiXact)/float64(b.N), "multilocks/op")
}

// BenchmarkTxGetHot is BenchmarkTxLockKeyShareHot's plain counterpart:
// the same goroutines read the one row instead of locking it (the plain
// variant of `tupled bench hotrow`), so the two ns/op give P4's ratio
// in one process.
func BenchmarkTxGetHot(b *testing.B) {
	db := allocDB(b)
	b.SetParallelism(8)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			getTxYield(b, db)
		}
	})
}

// getTxYield is getTx yielding between its Get and its Commit, as lockTx
// does with yield.
func getTxYield(tb testing.TB, db *tupled.DB) {
	tx, err := db.Begin(bg, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := tx.Get(bg, "t", allocKey); err != nil {
		tb.Fatal(err)
	}
	runtime.Gosched()
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// TestTxAllocs pins the allocations of one transaction of each benchmark
// above as upper bounds, so that a change that adds one fails here rather
// than going unnoticed in a benchmark's column (issue 28 asks for none on
// these paths). Allocation counts are deterministic, unlike times.
func TestTxAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own account")
	}
	if invariants.Enabled {
		t.Skip("the invariants build lends NoCopy values as scratch copies (Tx.GetNoCopy)")
	}
	db := allocDB(t)
	// hot: a database whose row is held FOR KEY SHARE by an open
	// transaction, so each lock makes or extends a multixact.
	hot := allocDB(t)
	holder := begin(t, hot, nil)
	if _, err := holder.Lock(bg, "t", allocKey, tupled.ForKeyShare, tupled.Wait); err != nil {
		t.Fatal(err)
	}
	// sess: the same through a Session (a SQL connection's transactions).
	sess := db.NewSession()
	defer sess.Close()
	sessTx := func() {
		tx, err := sess.Begin(bg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Lock(bg, "t", allocKey, tupled.ForKeyShare, tupled.Wait); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	hotSess := hot.NewSession()
	defer hotSess.Close()
	for _, c := range []struct {
		name string
		max  float64
		txn  func()
	}{
		{"Get", 2, func() { getTx(t, db) }},
		{"ForShare", 2, func() { lockTx(t, db, tupled.ForShare, false) }},
		{"ForKeyShare", 2, func() { lockTx(t, db, tupled.ForKeyShare, false) }},
		{"ForKeyShareMulti", 2, func() { lockTx(t, hot, tupled.ForKeyShare, false) }},
		// A Session reuses its Tx: only the value's copy is allocated.
		{"SessionForKeyShare", 1, sessTx},
		// Without the value's copy only the Tx itself is allocated.
		{"GetNoCopy", 1, func() { getNoCopyTx(t, db) }},
		{"ForShareNoCopy", 1, func() { lockNoCopyTx(t, db, tupled.ForShare) }},
		{"ForKeyShareNoCopy", 1, func() { lockNoCopyTx(t, db, tupled.ForKeyShare) }},
		// Through a Session, without the copy: nothing at all (issue 28).
		{"SessionGetNoCopy", 0, func() { getNoCopyTx(t, sess) }},
		{"SessionForShareNoCopy", 0, func() { lockNoCopyTx(t, sess, tupled.ForShare) }},
		{"SessionForKeyShareNoCopy", 0, func() { lockNoCopyTx(t, sess, tupled.ForKeyShare) }},
		{"SessionForKeyShareMultiNoCopy", 0, func() { lockNoCopyTx(t, hotSess, tupled.ForKeyShare) }},
	} {
		if n := testing.AllocsPerRun(1000, c.txn); n > c.max {
			t.Errorf("%s: %v allocations per transaction, want at most %v", c.name, n, c.max)
		} else {
			t.Logf("%s: %v allocations per transaction", c.name, n)
		}
	}
}

// TestReadAllocs: a plain read of a resident row, inside a transaction
// that is already open, allocates nothing — GetNoCopy takes heap's
// latch-free path (heap.Table.ReadResident), the Get beside it copies the
// value and nothing else. The transaction's own record is Begin's
// (TestTxAllocs).
func TestReadAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own account")
	}
	if invariants.Enabled {
		t.Skip("the invariants build lends NoCopy values as scratch copies (Tx.GetNoCopy)")
	}
	db := allocDB(t)
	for _, c := range []struct {
		name string
		max  float64
		opts *tupled.TxOptions
		read func(*tupled.Tx) ([]byte, error)
	}{
		{"GetNoCopy", 0, nil, func(tx *tupled.Tx) ([]byte, error) { return tx.GetNoCopy(bg, "t", allocKey) }},
		{"GetNoCopyRepeatableRead", 0, &tupled.TxOptions{Isolation: tupled.RepeatableRead}, func(tx *tupled.Tx) ([]byte, error) { return tx.GetNoCopy(bg, "t", allocKey) }},
		{"Get", 1, nil, func(tx *tupled.Tx) ([]byte, error) { return tx.Get(bg, "t", allocKey) }},
	} {
		tx := begin(t, db, c.opts)
		n := testing.AllocsPerRun(1000, func() {
			if v, err := c.read(tx); err != nil || string(v) != "v" {
				t.Fatalf("%s: %q, %v", c.name, v, err)
			}
		})
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if n > c.max {
			t.Errorf("%s: %v allocations per read, want at most %v", c.name, n, c.max)
		} else {
			t.Logf("%s: %v allocations per read", c.name, n)
		}
	}
}

// TestDBBeginBytes: a DB.Begin transaction allocates only its handle, not
// the ~600-byte record (BenchmarkTxGetNoCopy reports the same with
// -benchmem).
func TestDBBeginBytes(t *testing.T) {
	if raceEnabled || invariants.Enabled {
		t.Skip("the race detector and the invariants build allocate on their own account")
	}
	db := allocDB(t)
	txn := func() { getNoCopyTx(t, db) }
	txn()
	const n = 10000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		txn()
	}
	runtime.ReadMemStats(&after)
	perTx := float64(after.TotalAlloc-before.TotalAlloc) / n
	t.Logf("%.1f bytes allocated per DB.Begin transaction", perTx)
	if perTx >= 160 {
		t.Fatalf("%.1f bytes per DB.Begin transaction: it allocates more than its handle", perTx)
	}
}
