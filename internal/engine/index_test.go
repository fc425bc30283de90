package engine

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/internal/tuplemode"
)

// valueKey indexes a row by its value; an empty value is NULL (not indexed).
func valueKey(_, v []byte) ([]byte, bool) { return v, len(v) > 0 }

func begin(t *testing.T, e *Engine, o TxOptions) *Tx {
	t.Helper()
	tx, err := e.Begin(o)
	require.NoError(t, err)
	return tx
}

// lookup returns the keys IndexScan finds for ikey, joined by ",".
func lookup(t *testing.T, tx *Tx, index, ikey string, s ScanSpec) string {
	t.Helper()
	var out []string
	require.NoError(t, tx.IndexScan(ctx, index, []byte(ikey), s, func(k, _ []byte) error {
		out = append(out, string(k))
		return nil
	}))
	return strings.Join(out, ",")
}

func TestUniqueIndex(t *testing.T) {
	e := open(t, "", nil, false)
	defer e.Close()
	require.NoError(t, e.CreateTable("t"))
	require.NoError(t, e.CreateIndex(ctx, "t", "t_v_key", IndexOptions{Unique: true, Key: valueKey}))
	require.ErrorIs(t, e.CreateIndex(ctx, "t", "t_v_key", IndexOptions{Key: valueKey}), errs.ErrTableExists)
	require.Equal(t, []string{"t"}, e.Tables(), "the index's table is hidden")

	tx := begin(t, e, TxOptions{})
	require.NoError(t, tx.Insert(ctx, "t", []byte("1"), []byte("a")))
	require.NoError(t, tx.Insert(ctx, "t", []byte("2"), nil), "NULL")
	require.NoError(t, tx.Insert(ctx, "t", []byte("3"), nil), "NULLs never conflict")
	require.Equal(t, "1", lookup(t, tx, "t_v_key", "a", ScanSpec{}))
	err := tx.Insert(ctx, "t", []byte("4"), []byte("a"))
	require.ErrorIs(t, err, errs.ErrDuplicateKey)
	require.Contains(t, err.Error(), `"t_v_key"`)
	tx.Rollback()

	tx = begin(t, e, TxOptions{})
	require.Equal(t, "", lookup(t, tx, "t_v_key", "a", ScanSpec{}), "the abort took the entry with the row")
	require.NoError(t, tx.Insert(ctx, "t", []byte("1"), []byte("a")))
	require.NoError(t, tx.Write(ctx, "t", []byte("1"), []byte("b"), false, Block), "moving the key")
	require.NoError(t, tx.Insert(ctx, "t", []byte("2"), []byte("a")), "the old key is free")
	require.Equal(t, "1", lookup(t, tx, "t_v_key", "b", ScanSpec{}))
	require.Equal(t, "2", lookup(t, tx, "t_v_key", "a", ScanSpec{}))
	require.NoError(t, tx.Write(ctx, "t", []byte("2"), nil, true, Block))
	require.Equal(t, "", lookup(t, tx, "t_v_key", "a", ScanSpec{}))
	require.NoError(t, tx.Commit())

	require.ErrorIs(t, tx2(t, e).IndexScan(ctx, "nope", nil, ScanSpec{}, nil), ErrNoIndex)
	require.ErrorIs(t, e.DropIndex(ctx, "nope", false), ErrNoIndex)
	require.NoError(t, e.DropIndex(ctx, "nope", true))
	require.NoError(t, e.DropIndex(ctx, "t_v_key", false))
	tx = begin(t, e, TxOptions{})
	require.NoError(t, tx.Insert(ctx, "t", []byte("9"), []byte("b")), "the dropped index no longer checks")
	require.NoError(t, tx.Commit())
}

func tx2(t *testing.T, e *Engine) *Tx { return begin(t, e, TxOptions{}) }

// TestUniqueIndexWaits: a second inserter of a unique key waits for the
// first (its wait is in Locks) and fails with 23505 when the first
// commits, or succeeds when it aborts.
func TestUniqueIndexWaits(t *testing.T) {
	for _, commit := range []bool{true, false} {
		e := open(t, "", nil, false)
		require.NoError(t, e.CreateTable("t"))
		require.NoError(t, e.CreateIndex(ctx, "t", "t_v_key", IndexOptions{Unique: true, Key: valueKey}))
		t1, t2 := tx2(t, e), tx2(t, e)
		require.NoError(t, t1.Insert(ctx, "t", []byte("1"), []byte("a")))
		done := make(chan error, 1)
		go func() { done <- t2.Insert(ctx, "t", []byte("2"), []byte("a")) }()
		require.Eventually(t, func() bool {
			for _, l := range e.Locks() {
				if !l.Granted && l.TxID == t2.ID() {
					return true
				}
			}
			return false
		}, 10*time.Second, time.Millisecond)
		if commit {
			require.NoError(t, t1.Commit())
			require.ErrorIs(t, <-done, errs.ErrDuplicateKey)
		} else {
			t1.Rollback()
			require.NoError(t, <-done)
			require.Equal(t, "2", lookup(t, t2, "t_v_key", "a", ScanSpec{}))
			require.NoError(t, t2.Commit())
		}
		t2.Rollback()
		require.NoError(t, e.Close())
	}
}

func TestIndexSavepoint(t *testing.T) {
	e := open(t, "", nil, false)
	defer e.Close()
	require.NoError(t, e.CreateTable("t"))
	require.NoError(t, e.CreateIndex(ctx, "t", "t_v_key", IndexOptions{Unique: true, Key: valueKey}))
	tx := tx2(t, e)
	require.NoError(t, tx.Insert(ctx, "t", []byte("1"), []byte("a")))
	require.NoError(t, tx.Savepoint("s"))
	require.NoError(t, tx.Write(ctx, "t", []byte("1"), []byte("b"), false, Block))
	require.NoError(t, tx.Insert(ctx, "t", []byte("2"), []byte("c")))
	require.NoError(t, tx.RollbackTo("s"))
	require.Equal(t, "1", lookup(t, tx, "t_v_key", "a", ScanSpec{}))
	require.Equal(t, "", lookup(t, tx, "t_v_key", "b", ScanSpec{}))
	require.Equal(t, "", lookup(t, tx, "t_v_key", "c", ScanSpec{}))
	require.ErrorIs(t, tx.Insert(ctx, "t", []byte("3"), []byte("a")), errs.ErrDuplicateKey)
	require.NoError(t, tx.RollbackTo("s"))
	require.NoError(t, tx.Insert(ctx, "t", []byte("3"), []byte("b")))
	require.NoError(t, tx.Commit())
	tx = tx2(t, e)
	require.Equal(t, "3", lookup(t, tx, "t_v_key", "b", ScanSpec{}))
	tx.Rollback()
}

func TestNonUniqueIndexAndBuild(t *testing.T) {
	e := open(t, "", nil, false)
	defer e.Close()
	require.NoError(t, e.CreateTable("t"))
	tx := tx2(t, e)
	for _, kv := range []string{"1=a", "2=b", "3=a", "4=a\x00", "5="} {
		k, v, _ := strings.Cut(kv, "=")
		require.NoError(t, tx.Insert(ctx, "t", []byte(k), []byte(v)))
	}
	require.NoError(t, tx.Commit())
	old := begin(t, e, TxOptions{RepeatableRead: true})
	_, err := old.Get(ctx, "t", []byte("1")) // takes the snapshot
	require.NoError(t, err)
	err = e.CreateIndex(ctx, "t", "t_v_key", IndexOptions{Unique: true, Key: valueKey})
	require.ErrorIs(t, err, errs.ErrDuplicateKey)
	require.Contains(t, err.Error(), `could not create unique index "t_v_key"`)
	require.Empty(t, e.Indexes("t"), "a failed build leaves nothing")
	require.Equal(t, []string{"t"}, e.Tables())

	require.NoError(t, e.CreateIndex(ctx, "t", "t_v_idx", IndexOptions{Key: valueKey}))
	tx = tx2(t, e)
	require.Equal(t, "1,3", lookup(t, tx, "t_v_idx", "a", ScanSpec{}), "a prefix of another key is not it")
	require.Equal(t, "4", lookup(t, tx, "t_v_idx", "a\x00", ScanSpec{}))
	require.Equal(t, "1", lookup(t, tx, "t_v_idx", "a", ScanSpec{Limit: 1}))
	require.NoError(t, tx.Write(ctx, "t", []byte("1"), []byte("b"), false, Block))
	require.Equal(t, "3", lookup(t, tx, "t_v_idx", "a", ScanSpec{}))
	require.Equal(t, "1,2", lookup(t, tx, "t_v_idx", "b", ScanSpec{}))
	require.NoError(t, tx.Commit())
	// A snapshot older than the build finds its own rows (by a table scan).
	require.Equal(t, "1,3", lookup(t, old, "t_v_idx", "a", ScanSpec{}))
	old.Rollback()
}

// TestIndexLockingLookup: a locking lookup locks the base row and, under
// READ COMMITTED, skips a row whose newest version lost the key.
func TestIndexLockingLookup(t *testing.T) {
	e := open(t, "", nil, false)
	defer e.Close()
	require.NoError(t, e.CreateTable("t"))
	require.NoError(t, e.CreateIndex(ctx, "t", "t_v_idx", IndexOptions{Key: valueKey}))
	tx := tx2(t, e)
	require.NoError(t, tx.Insert(ctx, "t", []byte("1"), []byte("a")))
	require.NoError(t, tx.Insert(ctx, "t", []byte("2"), []byte("a")))
	require.NoError(t, tx.Commit())
	w := tx2(t, e)
	require.NoError(t, w.Write(ctx, "t", []byte("1"), []byte("z"), false, Block))
	r := tx2(t, e)
	done := make(chan string, 1)
	go func() {
		var out []string
		err := r.IndexScan(ctx, "t_v_idx", []byte("a"), ScanSpec{Lock: true, Mode: tuplemode.Share}, func(k, _ []byte) error {
			out = append(out, string(k))
			return nil
		})
		if err != nil {
			out = append(out, err.Error())
		}
		done <- strings.Join(out, ",")
	}()
	require.Eventually(t, func() bool {
		for _, l := range e.Locks() {
			if !l.Granted && l.TxID == r.ID() {
				return true
			}
		}
		return false
	}, 10*time.Second, time.Millisecond)
	require.NoError(t, w.Commit())
	require.Equal(t, "2", <-done, "EvalPlanQual: row 1 no longer has the key")
	require.NoError(t, r.Commit())
}

func TestIndexReopen(t *testing.T) {
	dir := t.TempDir()
	e := open(t, dir, nil, false)
	require.NoError(t, e.CreateTable("t"))
	require.NoError(t, e.CreateIndex(ctx, "t", "t_v_key", IndexOptions{Unique: true, Key: valueKey}))
	tx := tx2(t, e)
	require.NoError(t, tx.Insert(ctx, "t", []byte("1"), []byte("a")))
	require.NoError(t, tx.Insert(ctx, "t", []byte("2"), []byte("b")))
	require.NoError(t, tx.Commit())
	tx = tx2(t, e)
	require.NoError(t, tx.Write(ctx, "t", []byte("2"), []byte("c"), false, Block))
	require.NoError(t, tx.Commit())
	require.NoError(t, e.Close())

	e = open(t, dir, nil, false)
	defer e.Close()
	require.Equal(t, []string{"t"}, e.Tables())
	tx = tx2(t, e)
	require.ErrorIs(t, tx.Insert(ctx, "t", []byte("3"), []byte("x")), ErrIndexNotReady, "an unregistered index refuses writes")
	tx.Rollback()
	require.NoError(t, e.CreateIndex(ctx, "t", "t_v_key", IndexOptions{Unique: true, Key: valueKey}), "registers the Key again")
	require.ErrorIs(t, e.CreateIndex(ctx, "t", "t_v_key", IndexOptions{Unique: true, Key: valueKey}), errs.ErrTableExists)
	tx = tx2(t, e)
	require.Equal(t, "2", lookup(t, tx, "t_v_key", "c", ScanSpec{}))
	require.Equal(t, "", lookup(t, tx, "t_v_key", "b", ScanSpec{}))
	require.ErrorIs(t, tx.Insert(ctx, "t", []byte("3"), []byte("a")), errs.ErrDuplicateKey)
	tx.Rollback()
}

// TestUniqueKeyUpdateConflictsWithKeyShare: an update that changes a
// unique index's key is a key update: it waits for a FOR KEY SHARE locker;
// one that leaves every unique key alone does not.
func TestUniqueKeyUpdateConflictsWithKeyShare(t *testing.T) {
	e := open(t, "", nil, false)
	defer e.Close()
	require.NoError(t, e.CreateTable("t"))
	// The index key is the value's first byte; the rest is not a key.
	first := func(_, v []byte) ([]byte, bool) { return v[:1], len(v) > 0 }
	require.NoError(t, e.CreateIndex(ctx, "t", "t_k_key", IndexOptions{Unique: true, Key: first}))
	tx := tx2(t, e)
	require.NoError(t, tx.Insert(ctx, "t", []byte("1"), []byte("a1")))
	require.NoError(t, tx.Commit())
	locker := tx2(t, e)
	_, err := locker.Lock(ctx, "t", []byte("1"), tuplemode.KeyShare, Block)
	require.NoError(t, err)
	w := tx2(t, e)
	require.NoError(t, w.Write(ctx, "t", []byte("1"), []byte("a2"), false, Block), "a no-key update passes FOR KEY SHARE")
	done := make(chan error, 1)
	go func() { done <- w.Write(ctx, "t", []byte("1"), []byte("b2"), false, Block) }()
	require.Eventually(t, func() bool {
		for _, l := range e.Locks() {
			if !l.Granted && l.TxID == w.ID() {
				return true
			}
		}
		return false
	}, 10*time.Second, time.Millisecond, "the key update waits for the key-share locker")
	require.NoError(t, locker.Commit())
	require.NoError(t, <-done)
	require.NoError(t, w.Commit())
	tx = tx2(t, e)
	require.Equal(t, "1", lookup(t, tx, "t_k_key", "b", ScanSpec{}))
	tx.Rollback()
}

// TestUpsertOnIndex: ON CONFLICT on a unique index that is not the key:
// the second upserter waits for the first, then updates the row the first
// inserted (commit) or inserts (abort).
func TestUpsertOnIndex(t *testing.T) {
	for _, commit := range []bool{true, false} {
		e := open(t, "", nil, false)
		require.NoError(t, e.CreateTable("t"))
		lower := func(_, v []byte) ([]byte, bool) { return []byte(strings.ToLower(string(v))), true }
		require.NoError(t, e.CreateIndex(ctx, "t", "t_lower", IndexOptions{Unique: true, Key: lower}))
		t1, t2 := tx2(t, e), tx2(t, e)
		out, err := t1.UpsertOn(ctx, "t", "t_lower", []byte("1"), []byte("FooFoo"), nil)
		require.NoError(t, err)
		require.Equal(t, UpsertInserted, out)
		done := make(chan UpsertOutcome, 1)
		var gotKey string
		go func() {
			out, err := t2.UpsertOn(ctx, "t", "t_lower", []byte("2"), []byte("FOOFOO"), func(k, old []byte) ([]byte, bool) {
				gotKey = string(k)
				return []byte("FOOFOO"), true
			})
			require.NoError(t, err)
			done <- out
		}()
		require.Eventually(t, func() bool {
			for _, l := range e.Locks() {
				if !l.Granted && l.TxID == t2.ID() {
					return true
				}
			}
			return false
		}, 10*time.Second, time.Millisecond)
		if commit {
			require.NoError(t, t1.Commit())
			require.Equal(t, UpsertUpdated, <-done)
			require.Equal(t, "1", gotKey)
			v, err := t2.Get(ctx, "t", []byte("1"))
			require.NoError(t, err)
			require.Equal(t, "FOOFOO", string(v))
		} else {
			t1.Rollback()
			require.Equal(t, UpsertInserted, <-done)
			require.Equal(t, "2", lookup(t, t2, "t_lower", "foofoo", ScanSpec{}))
		}
		out, err = t2.UpsertOn(ctx, "t", "t_lower", []byte("3"), []byte("fOOfoo"), nil)
		require.NoError(t, err)
		require.Equal(t, UpsertUnchanged, out, "DO NOTHING")
		require.NoError(t, t2.Commit())
		require.NoError(t, e.Close())
	}
}

// checkIndexConsistent: every row the snapshot sees has exactly one entry
// in the index (found by a lookup of its key) and the index has no other.
func checkIndexConsistent(t *testing.T, e *Engine, index string, key func(k, v []byte) ([]byte, bool)) {
	t.Helper()
	tx := tx2(t, e)
	defer tx.Rollback()
	rows := 0
	require.NoError(t, tx.Scan(ctx, "t", ScanSpec{}, func(k, v []byte) error {
		ik, ok := key(k, v)
		if !ok {
			return nil
		}
		rows++
		found := 0
		require.NoError(t, tx.IndexScan(ctx, index, ik, ScanSpec{}, func(k2, _ []byte) error {
			if bytes.Equal(k, k2) {
				found++
			}
			return nil
		}))
		require.Equal(t, 1, found, "row %q", k)
		return nil
	}))
	entries := 0
	ix := e.idx.load().byName[index]
	snap, err := tx.start(ctx, false)
	require.NoError(t, err)
	ix.tbl.Ascend(nil, nil, func(r *heap.Row) bool {
		if r.Transient() {
			entries++
			return true
		}
		r.Lock()
		if e.visibleVersion(r, snap) != nil {
			entries++
		}
		r.Unlock()
		return true
	})
	require.Equal(t, rows, entries, "entries without a row")
}

// TestIndexCrash: after a crash (pebble on a crashable in-memory FS: the
// clone keeps only what was synced) the index and its table agree: the
// committed transactions' entries are there, the running one's are not.
func TestIndexCrash(t *testing.T) {
	mem := vfs.NewCrashableMem()
	e := open(t, "/db", mem, false)
	require.NoError(t, e.CreateTable("t"))
	for i := 0; i < 20; i++ { // rows from before the index: built
		tx := tx2(t, e)
		require.NoError(t, tx.Insert(ctx, "t", []byte{byte('a' + i)}, []byte{byte(i % 7)}))
		require.NoError(t, tx.Commit())
	}
	require.NoError(t, e.CreateIndex(ctx, "t", "t_v_idx", IndexOptions{Key: valueKey}))
	require.NoError(t, e.Checkpoint())
	for i := 0; i < 30; i++ {
		tx := tx2(t, e)
		k := []byte{byte('a' + i%25)}
		var err error
		switch i % 3 {
		case 0:
			err = tx.Write(ctx, "t", k, []byte{byte(i % 5)}, false, Block)
		case 1:
			err = tx.Write(ctx, "t", k, nil, true, Block)
		case 2:
			err = tx.Insert(ctx, "t", k, []byte{byte(i % 4)})
		}
		if err != nil {
			tx.Rollback()
			continue
		}
		require.NoError(t, tx.Commit())
	}
	running := tx2(t, e)
	require.NoError(t, running.Insert(ctx, "t", []byte("zz"), []byte{9}))
	checkIndexConsistent(t, e, "t_v_idx", valueKey)
	clone := mem.CrashClone(vfs.CrashCloneCfg{})
	running.Rollback()
	require.NoError(t, e.Close())

	e = open(t, "/db", clone, false)
	defer e.Close()
	require.NoError(t, e.CreateIndex(ctx, "t", "t_v_idx", IndexOptions{Key: valueKey}))
	checkIndexConsistent(t, e, "t_v_idx", valueKey)
	tx := tx2(t, e)
	require.Equal(t, "", lookup(t, tx, "t_v_idx", "\x09", ScanSpec{}), "the running transaction's row is gone with its entry")
	tx.Rollback()
}

// TestIndexBuildWaitsForWriters: building takes ShareLock on the table: it
// waits for a running writer (its wait shows in Locks) while readers go on,
// and indexes the writer's row once it commits.
func TestIndexBuildWaitsForWriters(t *testing.T) {
	e := open(t, "", nil, false)
	defer e.Close()
	require.NoError(t, e.CreateTable("t"))
	w := tx2(t, e)
	require.NoError(t, w.Insert(ctx, "t", []byte("1"), []byte("a")))
	done := make(chan error, 1)
	go func() { done <- e.CreateIndex(ctx, "t", "t_v_key", IndexOptions{Unique: true, Key: valueKey}) }()
	require.Eventually(t, func() bool {
		for _, l := range e.Locks() {
			if !l.Granted && l.Mode == "ShareLock" {
				return true
			}
		}
		return false
	}, 10*time.Second, time.Millisecond)
	r := tx2(t, e)
	_, err := r.Get(ctx, "t", []byte("1"))
	require.ErrorIs(t, err, errs.ErrNotFound, "a reader does not wait for the build")
	r.Rollback()
	require.NoError(t, w.Commit())
	require.NoError(t, <-done)
	tx := tx2(t, e)
	require.Equal(t, "1", lookup(t, tx, "t_v_key", "a", ScanSpec{}))
	tx.Rollback()
}
