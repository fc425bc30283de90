package tupled_test

// Tests of ScanOptions' Reverse, Prefix and Where, of Tx.Rows, and of
// UpdateWait/DeleteWait (issue 11, "scans for queues").

import (
	"bytes"
	"context"

	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

// scanKeys runs a scan and returns the keys it passed to fn.
func scanKeys(t *testing.T, tx *tupled.Tx, opts tupled.ScanOptions) []string {
	t.Helper()
	var keys []string
	require.NoError(t, tx.Scan(bg, "t", opts, func(k, v []byte) error {
		keys = append(keys, string(k))
		return nil
	}))
	return keys
}

// modelScan is what a scan of opts over the sorted live keys must return.
func modelScan(live []string, opts tupled.ScanOptions) []string {
	var out []string
	for _, k := range live {
		if opts.Start != nil && k < string(opts.Start) {
			continue
		}
		if opts.End != nil && k >= string(opts.End) {
			continue
		}
		if !strings.HasPrefix(k, string(opts.Prefix)) {
			continue
		}
		out = append(out, k)
	}
	if opts.Reverse {
		slices.Reverse(out)
	}
	if opts.Limit > 0 && len(out) > opts.Limit {
		out = out[:opts.Limit]
	}
	return out
}

// edgeCases are scans at the edges of Reverse, Prefix, Start/End and Limit.
func edgeCases() []tupled.ScanOptions {
	b := func(s string) []byte { return []byte(s) }
	var cases []tupled.ScanOptions
	for _, rev := range []bool{false, true} {
		for _, o := range []tupled.ScanOptions{
			{},
			{Prefix: []byte{}},              // empty prefix: everything
			{Prefix: b("\xff")},             // keys beginning with 0xFF
			{Prefix: b("\xff\xff")},         // prefix all 0xFF: no upper bound exists
			{Prefix: b("\xff\xff\xff")},     // longer than every key with it
			{Prefix: b("k001")},             // 100 keys, across batches of 64
			{Prefix: b("k"), Limit: 3},      // Limit keeps the first (or, reversed, last) ones
			{Prefix: b("k"), Limit: 70},     // a Limit inside the second batch
			{Start: b("ab"), End: b("b")},   // keys equal to both bounds
			{Start: b("ab"), End: b("abc")}, // end equal to a key: excluded
			{Start: b("b"), End: b("ab")},   // Start > End
			{Start: b("ab"), End: b("ab")},  // Start == End
			{Prefix: b("k"), Start: b("k00150"), End: b("k00155")},
			{Prefix: b("a"), End: b("ab")},                // prefix and End intersect
			{Prefix: b("k0"), Start: b("a"), End: b("z")}, // the prefix is the narrower
			{Prefix: b("k"), Start: b("z")},               // disjoint
			{Prefix: b("a"), Start: b("abc"), Limit: 1},
			{Start: b("\xff")},
			{End: b("a")},
			{Start: b("k00199\x00")},
		} {
			o.Reverse = rev
			cases = append(cases, o)
		}
	}
	return cases
}

func edgeKeys() []string {
	keys := []string{"a", "ab", "abc", "b", "\xff", "\xff\xff", "\xff\xff\x01", "\xfe"}
	for i := range 200 {
		keys = append(keys, string(key(i)))
	}
	sort.Strings(keys)
	return keys
}

// checkEdges runs every edge case against the model, plain and locking.
func checkEdges(t *testing.T, db *tupled.DB, live []string) {
	t.Helper()
	for _, o := range edgeCases() {
		name := fmt.Sprintf("%+v", o)
		for _, lock := range []tupled.LockStrength{tupled.NoLock, tupled.ForShare} {
			o.Lock = lock
			tx := begin(t, db, nil)
			require.Equal(t, modelScan(live, o), scanKeys(t, tx, o), name)
			require.NoError(t, tx.Commit())
		}
	}
}

// TestScanReversePrefixEdges: Reverse and Prefix at their edges, in memory
// and on disk, where the rows come from the backend (after a reopen), from
// memory (written since) or both.
func TestScanReversePrefixEdges(t *testing.T) {
	keys := edgeKeys()
	fill := func(t *testing.T, db *tupled.DB) {
		require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
			for _, k := range keys {
				if err := tx.Insert(bg, "t", []byte(k), []byte("v"+k)); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	t.Run("memory", func(t *testing.T) {
		db := openDB(t, nil, nil)
		fill(t, db)
		checkEdges(t, db, keys)
	})
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			db := reopenedOnDisk(t, be.b, func(db *tupled.DB) { fill(t, db) })
			checkEdges(t, db, keys) // every row from the backend

			// Now some rows only in memory, some deleted in memory only.
			live := slices.Clone(keys)
			require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
				for _, k := range []string{"aa", "k00150a", "\xff\xff\x00", "k001"} {
					if err := tx.Insert(bg, "t", []byte(k), []byte("v"+k)); err != nil {
						return err
					}
					live = append(live, k)
				}
				for _, k := range []string{"abc", string(key(199)), "\xff\xff"} {
					if err := tx.Delete(bg, "t", []byte(k)); err != nil {
						return err
					}
					live = slices.DeleteFunc(live, func(s string) bool { return s == k })
				}
				return nil
			}))
			sort.Strings(live)
			checkEdges(t, db, live)
		})
	}
}

// reopenedOnDisk creates table "t" in a new database on backend be with a
// 16-row cache, fills it, and returns it reopened (closed at the test's
// end): every row is then on disk and none in memory.
func reopenedOnDisk(t *testing.T, be tupled.Backend, fill func(*tupled.DB)) *tupled.DB {
	t.Helper()
	dir := t.TempDir()
	opts := &tupled.Options{Backend: be, CacheRows: 16}
	db, err := tupled.Open(dir, opts)
	require.NoError(t, err)
	require.NoError(t, db.CreateTable(bg, "t"))
	fill(db)
	require.NoError(t, db.Close())
	db, err = tupled.Open(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	return db
}

// TestScanBadOptions: a prefix one past the key limit, a negative Limit.
func TestScanBadOptions(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "1"})
	tx := begin(t, db, nil)
	require.Len(t, scanKeys(t, tx, tupled.ScanOptions{Prefix: bytes.Repeat([]byte{'a'}, tupled.MaxKeySize)}), 0, "a prefix at the limit")
	err := tx.Scan(bg, "t", tupled.ScanOptions{Prefix: bytes.Repeat([]byte{'a'}, tupled.MaxKeySize+1)}, func(k, v []byte) error { return nil })
	require.ErrorIs(t, err, tupled.ErrProgramLimitExceeded)
	tx = begin(t, db, nil)
	err = tx.Scan(bg, "t", tupled.ScanOptions{Limit: -1}, func(k, v []byte) error { return nil })
	require.ErrorIs(t, err, tupled.ErrInvalid)
	require.Equal(t, "22023", tupled.SQLState(err))
}

// lockedBy returns the keys of table t that tx holds a row lock on.
func lockedBy(t *testing.T, db *tupled.DB, table string, tx *tupled.Tx) []string {
	t.Helper()
	rls, err := db.RowLocks(bg, table)
	require.NoError(t, err)
	var keys []string
	for _, rl := range rls {
		if slices.Contains(rl.Lockers, tx.ID()) {
			keys = append(keys, string(rl.Key))
		}
	}
	sort.Strings(keys)
	return keys
}

// TestScanWhereFiltersBeforeLocking: rows failing Where are neither locked
// nor returned nor counted toward Limit, also with Reverse and SkipLocked.
func TestScanWhereFiltersBeforeLocking(t *testing.T) {
	db := openDB(t, nil, map[string]string{"1": "done", "2": "done", "3": "todo", "4": "done", "5": "todo", "6": "todo"})
	todo := func(k, v []byte) bool { return string(v) == "todo" }

	a := begin(t, db, nil)
	require.Equal(t, []string{"3"}, scanKeys(t, a, tupled.ScanOptions{Where: todo, Lock: tupled.ForUpdate, Wait: tupled.SkipLocked, Limit: 1}))
	require.Equal(t, []string{"3"}, lockedBy(t, db, "t", a), "only the row returned is locked")

	b := begin(t, db, nil)
	require.Equal(t, []string{"5"}, scanKeys(t, b, tupled.ScanOptions{Where: todo, Lock: tupled.ForUpdate, Wait: tupled.SkipLocked, Limit: 1}))
	require.Equal(t, []string{"6"}, scanKeys(t, b, tupled.ScanOptions{Where: todo, Lock: tupled.ForUpdate, Wait: tupled.SkipLocked, Limit: 1, Reverse: true}))
	require.Equal(t, []string{"5", "6"}, lockedBy(t, db, "t", b))

	c := begin(t, db, nil)
	require.Empty(t, scanKeys(t, c, tupled.ScanOptions{Where: todo, Lock: tupled.ForUpdate, Wait: tupled.SkipLocked}), "every todo row is locked")
	require.Empty(t, lockedBy(t, db, "t", c))
	_, err := c.Lock(bg, "t", []byte("1"), tupled.ForUpdate, tupled.NoWait)
	require.NoError(t, err, "a done row was never locked by a or b")

	// NoWait: a row that fails Where is not even asked for.
	d := begin(t, db, nil)
	require.Equal(t, []string{"2"}, scanKeys(t, d, tupled.ScanOptions{Where: func(k, v []byte) bool { return string(k) == "2" }, Lock: tupled.ForShare, Wait: tupled.NoWait}))
	// A plain scan filters too.
	require.Equal(t, []string{"6", "5", "3"}, scanKeys(t, d, tupled.ScanOptions{Where: todo, Reverse: true}))

	// Where gets copies: changing them changes nothing stored.
	require.NoError(t, d.Scan(bg, "t", tupled.ScanOptions{Where: func(k, v []byte) bool {
		v[0] = 'X'
		k[0] = 'Z'
		return true
	}}, func(k, v []byte) error {
		require.NotEqual(t, byte('X'), v[0])
		require.NotEqual(t, byte('Z'), k[0])
		return nil
	}))
}

// TestScanWherePanics: a panic in Where (on the snapshot's version) ends
// the scan and passes on; the rows locked before stay locked, no
// lock-manager entry is left, and the Tx goes on.
func TestScanWherePanics(t *testing.T) {
	db := openDB(t, nil, map[string]string{"1": "a", "2": "b", "3": "boom", "4": "c"})
	tx := begin(t, db, nil)
	func() {
		defer func() { require.Equal(t, "where: boom", recover()) }()
		_ = tx.Scan(bg, "t", tupled.ScanOptions{Lock: tupled.ForUpdate, Where: func(k, v []byte) bool {
			if string(v) == "boom" {
				panic("where: boom")
			}
			return true
		}}, func(k, v []byte) error { return nil })
	}()
	for _, l := range db.Locks() {
		// the table lock is held until the transaction ends (PostgreSQL's too)
		require.False(t, l.TxID == tx.ID() && !strings.HasPrefix(l.Tag, "transaction") && !strings.HasPrefix(l.Tag, "relation "), "lock-manager entry left behind: %+v", l)
	}
	require.Equal(t, []string{"1", "2"}, lockedBy(t, db, "t", tx))
	require.Equal(t, []string{"4"}, scanKeys(t, tx, tupled.ScanOptions{Start: []byte("4"), Lock: tupled.ForUpdate}), "the Tx is usable")
	require.NoError(t, tx.Commit())
}

// TestScanWhereRecheck is the EvalPlanQual schedule checked on PostgreSQL
// 15 (see scan.go): the row a waiting claim locks after its updater commits
// fails the recheck, so the claim returns the next row, and keeps the lock
// it took on the first one, as PostgreSQL does.
func TestScanWhereRecheck(t *testing.T) {
	todo := func(k, v []byte) bool { return !strings.HasPrefix(string(v), "done") }
	claim := tupled.ScanOptions{Where: todo, Lock: tupled.ForUpdate, Limit: 1}

	t.Run("fails recheck", func(t *testing.T) {
		db := openDB(t, nil, map[string]string{"1": "todo", "2": "todo", "3": "todo"})
		s1 := begin(t, db, nil)
		require.NoError(t, s1.Update(bg, "t", []byte("1"), []byte("done")))
		s2 := begin(t, db, nil)
		var got []string
		res := async(func() error {
			return s2.Scan(bg, "t", claim, func(k, v []byte) error { got = append(got, string(k)+"="+string(v)); return nil })
		})
		eventually(t, "s2 waits for s1", func() bool { return waitingOn(db, s2) })
		require.NoError(t, s1.Commit())
		require.NoError(t, <-res)
		require.Equal(t, []string{"2=todo"}, got)
		require.Equal(t, []string{"1", "2"}, lockedBy(t, db, "t", s2), "the row that failed the recheck stays locked")

		s3 := begin(t, db, nil)
		_, err := s3.Lock(bg, "t", []byte("1"), tupled.ForUpdate, tupled.NoWait)
		require.ErrorIs(t, err, tupled.ErrLockNotAvailable)
		s4 := begin(t, db, nil)
		require.Equal(t, []string{"3"}, scanKeys(t, s4, tupled.ScanOptions{Lock: tupled.ForUpdate, Wait: tupled.SkipLocked}))
		require.NoError(t, s2.Commit())
	})
	t.Run("passes recheck", func(t *testing.T) {
		db := openDB(t, nil, map[string]string{"1": "todo", "2": "todo"})
		s1 := begin(t, db, nil)
		require.NoError(t, s1.Update(bg, "t", []byte("1"), []byte("todo, retried")))
		s2 := begin(t, db, nil)
		var got []string
		res := async(func() error {
			return s2.Scan(bg, "t", claim, func(k, v []byte) error { got = append(got, string(k)+"="+string(v)); return nil })
		})
		eventually(t, "s2 waits for s1", func() bool { return waitingOn(db, s2) })
		require.NoError(t, s1.Commit())
		require.NoError(t, <-res)
		require.Equal(t, []string{"1=todo, retried"}, got, "the newest version is returned")
		require.Equal(t, []string{"1"}, lockedBy(t, db, "t", s2))
	})
	t.Run("repeatable read", func(t *testing.T) {
		db := openDB(t, nil, map[string]string{"1": "todo", "2": "todo"})
		s1 := begin(t, db, nil)
		require.NoError(t, s1.Update(bg, "t", []byte("1"), []byte("done")))
		s2 := begin(t, db, &tupled.TxOptions{Isolation: tupled.RepeatableRead})
		res := async(func() error { return s2.Scan(bg, "t", claim, func(k, v []byte) error { return nil }) })
		eventually(t, "s2 waits for s1", func() bool { return waitingOn(db, s2) })
		require.NoError(t, s1.Commit())
		err := <-res
		require.ErrorIs(t, err, tupled.ErrSerialization)
		require.True(t, tupled.IsRetryable(err))
	})
	t.Run("panic in recheck", func(t *testing.T) {
		db := openDB(t, nil, map[string]string{"1": "todo", "2": "todo"})
		s1 := begin(t, db, nil)
		require.NoError(t, s1.Update(bg, "t", []byte("1"), []byte("done")))
		s2 := begin(t, db, nil)
		panicky := claim
		panicky.Where = func(k, v []byte) bool {
			if string(v) == "done" {
				panic("where: done")
			}
			return true
		}
		res := async(func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panicked: %v", r)
				}
			}()
			return s2.Scan(bg, "t", panicky, func(k, v []byte) error { return nil })
		})
		eventually(t, "s2 waits for s1", func() bool { return waitingOn(db, s2) })
		require.NoError(t, s1.Commit())
		require.EqualError(t, <-res, "panicked: where: done")
		for _, l := range db.Locks() {
			require.False(t, l.TxID == s2.ID() && strings.HasPrefix(l.Tag, "tuple"), "lock-manager entry left behind: %+v", l)
		}
		// The Tx is usable, its row lock (taken before the recheck) held.
		v, err := s2.Get(bg, "t", []byte("2"))
		require.NoError(t, err)
		require.Equal(t, "todo", string(v))
		require.Equal(t, []string{"1"}, lockedBy(t, db, "t", s2))
		require.NoError(t, s2.Commit())
		require.Empty(t, lockedBy(t, db, "t", s2))
	})
}

// TestScanLockingReverse: Lock, Wait, SkipLocked and NoWait with Reverse
// and Prefix.
func TestScanLockingReverse(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a1": "1", "a2": "2", "a3": "3", "b1": "4"})
	other := begin(t, db, nil)
	_, err := other.Lock(bg, "t", []byte("a3"), tupled.ForUpdate, tupled.Wait)
	require.NoError(t, err)
	top := tupled.ScanOptions{Prefix: []byte("a"), Reverse: true, Limit: 1, Lock: tupled.ForUpdate}

	tx := begin(t, db, nil)
	skip := top
	skip.Wait = tupled.SkipLocked
	require.Equal(t, []string{"a2"}, scanKeys(t, tx, skip))

	nowait := top
	nowait.Wait = tupled.NoWait
	err = tx.Scan(bg, "t", nowait, func(k, v []byte) error { return nil })
	require.ErrorIs(t, err, tupled.ErrLockNotAvailable)
	require.Equal(t, "55P03", tupled.SQLState(err))

	waiter := begin(t, db, nil)
	var got []string
	res := async(func() error {
		return waiter.Scan(bg, "t", top, func(k, v []byte) error { got = append(got, string(k)); return nil })
	})
	eventually(t, "the reverse scan waits for a3", func() bool { return waitingOn(db, waiter) })
	require.NoError(t, other.Commit())
	require.NoError(t, <-res)
	require.Equal(t, []string{"a3"}, got)
}

// TestRows: the iterator yields Scan's rows as the caller's own copies;
// break ends the scan and leaves the Tx usable; an error is yielded once.
func TestRows(t *testing.T) {
	rows := map[string]string{}
	for i := range 10 {
		rows[string(key(i))] = fmt.Sprint(i)
	}
	db := openDB(t, nil, rows)

	t.Run("break", func(t *testing.T) {
		tx := begin(t, db, nil)
		var kept []tupled.Row
		for row, err := range tx.Rows(bg, "t", tupled.ScanOptions{Lock: tupled.ForShare, Reverse: true}) {
			require.NoError(t, err)
			// The body may use the Tx.
			v, err := tx.Get(bg, "t", row.Key)
			require.NoError(t, err)
			require.Equal(t, row.Value, v)
			kept = append(kept, row)
			if len(kept) == 3 {
				break
			}
		}
		require.Equal(t, []tupled.Row{{key(9), []byte("9")}, {key(8), []byte("8")}, {key(7), []byte("7")}}, kept, "rows stay valid after the loop")
		require.Equal(t, []string{string(key(7)), string(key(8)), string(key(9))}, lockedBy(t, db, "t", tx), "the rows before the break are locked, no more")
		for _, l := range db.Locks() {
			// the table lock is held until the transaction ends (PostgreSQL's too)
			require.False(t, l.TxID == tx.ID() && !strings.HasPrefix(l.Tag, "transaction") && !strings.HasPrefix(l.Tag, "relation "), "lock-manager entry left behind: %+v", l)
		}
		require.NoError(t, tx.Insert(bg, "t", []byte("new"), []byte("x")), "the Tx is usable")
		require.NoError(t, tx.Commit())
	})
	t.Run("error mid-iteration", func(t *testing.T) {
		other := begin(t, db, nil)
		_, err := other.Lock(bg, "t", key(3), tupled.ForUpdate, tupled.Wait)
		require.NoError(t, err)
		tx := begin(t, db, nil)
		var keys []string
		var errs []error
		for row, err := range tx.Rows(bg, "t", tupled.ScanOptions{Lock: tupled.ForShare, Wait: tupled.NoWait, Prefix: []byte("k")}) {
			if err != nil {
				require.Nil(t, row.Key)
				errs = append(errs, err)
				continue // the iterator ends by itself
			}
			keys = append(keys, string(row.Key))
		}
		require.Equal(t, []string{string(key(0)), string(key(1)), string(key(2))}, keys)
		require.Len(t, errs, 1)
		require.ErrorIs(t, errs[0], tupled.ErrLockNotAvailable)
		_, err = tx.Get(bg, "t", key(0))
		require.ErrorIs(t, err, tupled.ErrTxAborted, "NOWAIT's error aborts the transaction, as Scan's does")
		require.NoError(t, other.Rollback())
	})
	t.Run("canceled", func(t *testing.T) {
		tx := begin(t, db, nil)
		ctx, cancel := context.WithCancel(bg)
		defer cancel()
		n := 0
		var last error
		for _, err := range tx.Rows(ctx, "t", tupled.ScanOptions{}) {
			if err != nil {
				last = err
				break
			}
			n++
			cancel()
		}
		require.Equal(t, 1, n)
		require.ErrorIs(t, last, context.Canceled)
		require.Equal(t, "57014", tupled.SQLState(last))
	})
	t.Run("bad table", func(t *testing.T) {
		tx := begin(t, db, nil)
		n := 0
		for _, err := range tx.Rows(bg, "nope", tupled.ScanOptions{}) {
			require.ErrorIs(t, err, tupled.ErrNoTable)
			n++
		}
		require.Equal(t, 1, n)
	})
	t.Run("panic in body", func(t *testing.T) {
		tx := begin(t, db, nil)
		func() {
			defer func() { require.Equal(t, "body", recover()) }()
			for range tx.Rows(bg, "t", tupled.ScanOptions{Lock: tupled.ForKeyShare}) {
				panic("body")
			}
		}()
		_, err := tx.Get(bg, "t", key(0))
		require.NoError(t, err, "the Tx is usable after a panic in the loop body")
		require.NoError(t, tx.Commit())
	})
}

// TestUpdateDeleteWait: "write unless locked" in one call.
func TestUpdateDeleteWait(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "1", "b": "2", "c": "3"})
	other := begin(t, db, nil)
	_, err := other.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.Wait)
	require.NoError(t, err)
	_, err = other.Lock(bg, "t", []byte("b"), tupled.ForKeyShare, tupled.Wait)
	require.NoError(t, err)

	tx := begin(t, db, nil)
	require.ErrorIs(t, tx.DeleteWait(bg, "t", []byte("a"), tupled.SkipLocked), tupled.ErrSkipped)
	require.ErrorIs(t, tx.UpdateWait(bg, "t", []byte("a"), []byte("x"), tupled.SkipLocked), tupled.ErrSkipped)
	require.Empty(t, lockedBy(t, db, "t", tx), "a skipped write locks nothing")
	// FOR KEY SHARE does not conflict with a no-key update, does with a delete.
	require.NoError(t, tx.UpdateWait(bg, "t", []byte("b"), []byte("20"), tupled.NoWait))
	require.ErrorIs(t, tx.DeleteWait(bg, "t", []byte("b"), tupled.SkipLocked), tupled.ErrSkipped)
	require.NoError(t, tx.DeleteWait(bg, "t", []byte("c"), tupled.SkipLocked), "an unlocked row is deleted")
	require.ErrorIs(t, tx.DeleteWait(bg, "t", []byte("zz"), tupled.NoWait), tupled.ErrNotFound)
	require.NoError(t, tx.Commit(), "ErrSkipped and ErrNotFound leave the transaction usable")
	require.Equal(t, map[string]string{"a": "1", "b": "20"}, dump(t, db))

	tx = begin(t, db, nil)
	err = tx.UpdateWait(bg, "t", []byte("a"), []byte("x"), tupled.NoWait)
	require.ErrorIs(t, err, tupled.ErrLockNotAvailable)
	require.Equal(t, "55P03", tupled.SQLState(err))
	require.ErrorIs(t, tx.Commit(), tupled.ErrTxAborted)

	tx = begin(t, db, nil)
	require.ErrorIs(t, tx.DeleteWait(bg, "t", []byte("a"), tupled.NoWait), tupled.ErrLockNotAvailable)

	// A row being updated (not only locked) is skipped as well.
	require.NoError(t, other.Rollback())
	writer := begin(t, db, nil)
	require.NoError(t, writer.Update(bg, "t", []byte("a"), []byte("w")))
	tx = begin(t, db, nil)
	require.ErrorIs(t, tx.UpdateWait(bg, "t", []byte("a"), []byte("x"), tupled.SkipLocked), tupled.ErrSkipped)
	// Wait blocks, then (READ COMMITTED) updates the newest version.
	res := async(func() error { return tx.UpdateWait(bg, "t", []byte("a"), []byte("x"), tupled.Wait) })
	eventually(t, "tx waits for writer", func() bool { return waitingOn(db, tx) })
	require.NoError(t, writer.Commit())
	require.NoError(t, <-res)
	require.NoError(t, tx.Commit())
	require.Equal(t, map[string]string{"a": "x", "b": "20"}, dump(t, db))

	tx = begin(t, db, nil)
	err = tx.UpdateWait(bg, "t", []byte("a"), []byte("x"), tupled.WaitPolicy(7))
	require.ErrorIs(t, err, tupled.ErrInvalid)
}

// dump returns table t's rows.
func dump(t *testing.T, db *tupled.DB) map[string]string {
	t.Helper()
	m := map[string]string{}
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
		clear(m)
		for row, err := range tx.Rows(bg, "t", tupled.ScanOptions{}) {
			if err != nil {
				return err
			}
			m[string(row.Key)] = string(row.Value)
		}
		return nil
	}))
	return m
}

// TestScanCallerOwnsRows: key and value are the caller's to change, also
// for rows a scan read from disk without loading them (handed out without a
// second copy): scribbling over them changes neither the scan's course
// (both directions, batches of every size) nor the data.
func TestScanCallerOwnsRows(t *testing.T) {
	const n = 3000 // past the largest batch, so several batches are read
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			var want []string
			db := reopenedOnDisk(t, be.b, func(db *tupled.DB) {
				require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
					for i := range n {
						k := fmt.Sprintf("k%05d", i)
						want = append(want, k)
						if err := tx.Insert(bg, "t", []byte(k), []byte("v"+k)); err != nil {
							return err
						}
					}
					return nil
				}))
			})
			// Rows written since the open are merged from memory into the
			// batches read from disk.
			require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
				for i := 0; i < n; i += 97 {
					k := fmt.Sprintf("k%05da", i)
					want = append(want, k)
					if err := tx.Insert(bg, "t", []byte(k), []byte("v"+k)); err != nil {
						return err
					}
				}
				return nil
			}))
			sort.Strings(want)
			for _, reverse := range []bool{false, true} {
				for round := range 2 {
					tx, err := db.Begin(bg, &tupled.TxOptions{ReadOnly: true})
					require.NoError(t, err)
					var got []string
					require.NoError(t, tx.Scan(bg, "t", tupled.ScanOptions{Reverse: reverse}, func(k, v []byte) error {
						require.Equal(t, "v"+string(k), string(v))
						got = append(got, string(k))
						for i := range k {
							k[i] = 0xff
						}
						for i := range v {
							v[i] = 0
						}
						return nil
					}))
					require.NoError(t, tx.Rollback())
					w := slices.Clone(want)
					if reverse {
						slices.Reverse(w)
					}
					require.Equal(t, w, got, "reverse=%v round %d", reverse, round)
				}
			}
		})
	}
}

// Where may use the Tx, as a SQL WHERE calling pg_advisory_xact_lock does;
// a Where that ends the transaction stops the scan.
func TestScanWhereMayUseTheTx(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "1", "b": "2", "c": "3"})
	tx := begin(t, db, nil)
	var got []string
	err := tx.Scan(bg, "t", tupled.ScanOptions{Lock: tupled.ForUpdate, Where: func(k, v []byte) bool {
		if err := tx.AdvisoryLock(bg, tupled.AdvisoryKeyInt64(int64(k[0])), false); err != nil {
			t.Errorf("AdvisoryLock in Where: %v", err)
		}
		other, err := tx.Get(bg, "t", []byte("a"))
		return err == nil && string(other) == "1" && string(k) != "b"
	}}, func(k, v []byte) error {
		got = append(got, string(k))
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "c"}, got)
	advisory := 0
	for _, l := range db.Locks() {
		if strings.HasPrefix(l.Tag, "advisory") && l.TxID == tx.ID() {
			advisory++
		}
	}
	require.Equal(t, 3, advisory, "Where ran once per row and its locks are the transaction's")
	require.NoError(t, tx.Commit())

	tx2 := begin(t, db, nil)
	err = tx2.Scan(bg, "t", tupled.ScanOptions{Where: func(k, v []byte) bool {
		require.NoError(t, tx2.Rollback())
		return true
	}}, func(k, v []byte) error {
		t.Fatal("the scan went on after Where ended the transaction")
		return nil
	})
	require.ErrorIs(t, err, tupled.ErrTxDone)
}
