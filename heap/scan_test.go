package heap_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/storage"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/multixact"
)

// persistentEnv drives a persistent table through the heap's own calls, as
// the engine and package durable do: writes by Apply, checkpoints, vacuum
// and eviction, row locks, and scans that read each row the way the
// engine's Scan does.
type persistentEnv struct {
	t   testing.TB
	x   *xact.Manager
	h   *heap.Heap
	be  storage.Backend
	tbl *heap.Table
}

func newPersistentEnv(t *testing.T) *persistentEnv {
	x, h, be, tbl := persistentTable(t)
	return &persistentEnv{t: t, x: x, h: h, be: be, tbl: tbl}
}

// visibleIn is the version of r that snap sees, or nil. Latch held.
func visibleIn(h *heap.Heap, r *heap.Row, snap xact.Snapshot) *heap.Tuple {
	vs := r.Versions()
	for i := len(vs) - 1; i >= 0; i-- {
		if h.SatisfiesMVCC(vs[i], snap) {
			return vs[i]
		}
	}
	return nil
}

// write runs one transaction that sets key to value (nil: deletes it), and
// commits or aborts it. It reports whether it wrote (a delete of a key with
// no live row, or an insert over a live one, writes nothing).
func (e *persistentEnv) write(key string, value []byte, commit bool) bool {
	tx := e.x.Begin()
	snap := e.x.TakeSnapshot(tx)
	r := e.tbl.RowForInsert([]byte(key)) // latched
	live := visibleIn(e.h, r, snap)
	wrote := true
	switch {
	case live == nil && value != nil:
		e.tbl.Apply(r, heap.Change{Kind: heap.ChangeInsert, Xid: tx.ID(), New: heap.NewTuple(tx.ID(), value, false)})
	case live != nil && value != nil:
		e.tbl.Apply(r, heap.Change{Kind: heap.ChangeUpdate, Xid: tx.ID(), Old: live, Xmax: tx.ID(), New: heap.NewTuple(tx.ID(), value, true)})
	case live != nil:
		e.tbl.Apply(r, heap.Change{Kind: heap.ChangeXmax, Xid: tx.ID(), Old: live, Xmax: tx.ID(), Infomask2: heap.KeysUpdated})
	default:
		wrote = false
	}
	r.Unlock()
	if commit {
		e.x.Commit(tx)
	} else {
		e.x.Abort(tx)
	}
	return wrote && commit
}

// lockShare locks key's row FOR SHARE in a transaction that commits: a
// row loaded, with lock state, and not written.
func (e *persistentEnv) lockShare(key string) {
	r := e.tbl.PinRow([]byte(key))
	if r == nil {
		return
	}
	defer r.Unpin()
	tx := e.x.Begin()
	r.Lock()
	if v := visibleIn(e.h, r, e.x.TakeSnapshot(tx)); v != nil && v.Infomask()&heap.XmaxInvalid != 0 {
		e.tbl.Apply(r, heap.Change{Kind: heap.ChangeXmax, Xid: tx.ID(), Old: v, Xmax: tx.ID(), Infomask: heap.XmaxLockOnly | heap.XmaxShrLock})
	}
	r.Unlock()
	e.x.Commit(tx)
}

// checkpoint writes the dirty rows' committed values as package durable
// does, and marks them clean.
func (e *persistentEnv) checkpoint() {
	reader := e.x.Begin()
	snap := e.x.TakeSnapshot(reader)
	b := e.be.NewBatch()
	clean, err := e.tbl.CheckpointRows(snap, func(key, value []byte, ok bool) error {
		if ok {
			b.Set(heap.RowKey("t", key), value)
		} else {
			b.Delete(heap.RowKey("t", key))
		}
		return nil
	})
	require.NoError(e.t, err)
	e.x.Abort(reader)
	if b.Len() > 0 {
		require.NoError(e.t, e.be.Commit(b, true))
	}
	clean()
}

// settle vacuums below the horizon (twice: prune, then freeze) and evicts
// down to keep rows.
func (e *persistentEnv) settle(keep int) {
	hz := e.x.Horizon()
	e.h.SetPruneHorizon(hz)
	e.tbl.Vacuum(hz, e.x.FreezeCutoff(hz))
	e.tbl.Vacuum(hz, e.x.FreezeCutoff(hz))
	e.tbl.Evict(keep)
}

// scan returns key=value for every row of [start, end) that snap sees, in
// the scan's order, reading each row as the engine's Scan does.
func (e *persistentEnv) scan(snap xact.Snapshot, start, end []byte, reverse bool) []string {
	var got []string
	visit := func(r *heap.Row) bool {
		r.Lock()
		defer r.Unlock()
		vs := r.Versions()
		for i := len(vs) - 1; i >= 0; i-- {
			if e.h.SatisfiesMVCC(vs[i], snap) {
				got = append(got, string(r.Key())+"="+string(vs[i].Value()))
				break
			}
		}
		return true
	}
	if reverse {
		e.tbl.Descend(start, end, visit)
	} else {
		e.tbl.Ascend(start, end, visit)
	}
	return got
}

// TestPersistentScanMatchesModel: whatever mix of writes, aborts,
// checkpoints, vacuum, eviction and locks brought them there — rows only in
// the backend, loaded and untouched, loaded and locked, written and dirty,
// deleted and checkpointed, dead below the floor — a scan in either
// direction over any range sees exactly the committed state, and a scan by
// an older snapshot still sees the state it was taken in.
func TestPersistentScanMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := newPersistentEnv(t)
		model := map[string]string{}
		keyGen := rapid.IntRange(0, 40)
		keyOf := func(i int) string { return fmt.Sprintf("k%03d", i) }
		expect := func(m map[string]string, start, end []byte, reverse bool) []string {
			var out []string
			for k, v := range m {
				if (start == nil || k >= string(start)) && (end == nil || k < string(end)) {
					out = append(out, k+"="+v)
				}
			}
			slices.Sort(out)
			if reverse {
				slices.Reverse(out)
			}
			return out
		}
		var old *xact.Xact
		var oldSnap xact.Snapshot
		var oldModel map[string]string
		for step := range rapid.IntRange(1, 120).Draw(rt, "steps") {
			switch op := rapid.IntRange(0, 9).Draw(rt, "op"); op {
			case 0, 1, 2: // insert or update
				k := keyOf(keyGen.Draw(rt, "key"))
				v := fmt.Sprintf("v%d", step)
				commit := rapid.IntRange(0, 4).Draw(rt, "commit") > 0
				if e.write(k, []byte(v), commit) {
					model[k] = v
				}
			case 3: // delete, mostly at the head (a queue's consumers)
				i := keyGen.Draw(rt, "key")
				if rapid.Bool().Draw(rt, "head") {
					i = 0
					for i < 40 {
						if _, ok := model[keyOf(i)]; ok {
							break
						}
						i++
					}
				}
				if e.write(keyOf(i), nil, rapid.IntRange(0, 4).Draw(rt, "commit") > 0) {
					delete(model, keyOf(i))
				}
			case 4:
				e.checkpoint()
			case 5:
				e.settle(rapid.IntRange(0, 20).Draw(rt, "keep"))
			case 6:
				e.lockShare(keyOf(keyGen.Draw(rt, "key")))
			case 7: // an old snapshot, kept across later steps
				if old != nil {
					e.x.Abort(old)
				}
				old = e.x.Begin()
				oldSnap = e.x.TakeSnapshot(old)
				oldModel = maps(model)
			default: // scans
				var start, end []byte
				if rapid.Bool().Draw(rt, "bounded") {
					a, b := keyGen.Draw(rt, "a"), keyGen.Draw(rt, "b")
					start, end = []byte(keyOf(min(a, b))), []byte(keyOf(max(a, b)))
				}
				reverse := rapid.Bool().Draw(rt, "reverse")
				reader := e.x.Begin()
				snap := e.x.TakeSnapshot(reader)
				require.Equal(rt, expect(model, start, end, reverse), e.scan(snap, start, end, reverse), "step %d", step)
				e.x.Abort(reader)
				if old != nil {
					require.Equal(rt, expect(oldModel, start, end, reverse), e.scan(oldSnap, start, end, reverse), "old snapshot, step %d", step)
				}
			}
		}
		if old != nil {
			e.x.Abort(old)
		}
		reader := e.x.Begin()
		snap := e.x.TakeSnapshot(reader)
		require.Equal(rt, expect(model, nil, nil, false), e.scan(snap, nil, nil, false))
		require.Equal(rt, expect(model, nil, nil, true), e.scan(snap, nil, nil, true))
		e.x.Abort(reader)
	})
}

func maps(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// TestPersistentScanLeavesCacheAlone: a full scan of rows that are only in
// the backend passes them as transient copies and brings none into memory;
// PinScanned brings in the one a caller wants to lock.
func TestPersistentScanLeavesCacheAlone(t *testing.T) {
	e := newPersistentEnv(t)
	for i := range 1000 {
		require.True(t, e.write(fmt.Sprintf("k%04d", i), []byte("v"), true))
	}
	e.checkpoint()
	e.settle(0)
	require.Zero(t, e.tbl.CachedRows())

	n := 0
	e.tbl.Ascend(nil, nil, func(r *heap.Row) bool {
		require.True(t, r.Transient(), "row %s", r.Key())
		n++
		return true
	})
	require.Equal(t, 1000, n)
	require.Zero(t, e.tbl.CachedRows(), "a reading scan loads nothing")

	// A caller that wants the row brings it in while the scan is on it (a
	// transient row is only valid until the callback returns).
	var r *heap.Row
	e.tbl.Ascend([]byte("k0500"), nil, func(picked *heap.Row) bool {
		require.True(t, picked.Transient())
		require.Panics(t, func() { e.tbl.Apply(picked, heap.Change{Kind: heap.ChangeXmax}) }, "a transient copy is never changed")
		r = e.tbl.PinScanned(picked)
		return false
	})
	require.NotNil(t, r)
	require.False(t, r.Transient())
	require.Equal(t, "k0500", string(r.Key()))
	r.Unpin()
	require.Equal(t, 1, e.tbl.CachedRows())
	require.Same(t, r, e.tbl.Row([]byte("k0500")), "the row in memory is the one PinScanned returned")
}

// TestPersistentScanReusesRowsNotPairs: a long scan of rows only in the
// backend reuses its transient Row structs from batch to batch, but never
// the memory of the keys and values it passed: a reading scan hands those
// to its caller as they are, so every one must still hold its pair after
// the scan, whatever the later batches read.
func TestPersistentScanReusesRowsNotPairs(t *testing.T) {
	e := newPersistentEnv(t)
	const n = 3000 // several batches of the largest size
	value := func(i int) string { return fmt.Sprintf("value-%05d-%s", i, strings.Repeat("x", i%50)) }
	for i := range n {
		require.True(t, e.write(fmt.Sprintf("k%05d", i), []byte(value(i)), true))
	}
	e.checkpoint()
	e.settle(0)
	require.Zero(t, e.tbl.CachedRows())

	for _, reverse := range []bool{false, true} {
		var keys, values [][]byte
		rows := map[*heap.Row]bool{}
		visit := func(r *heap.Row) bool {
			require.True(t, r.Transient())
			rows[r] = true
			keys = append(keys, r.Key())
			values = append(values, r.Versions()[0].Value())
			return true
		}
		if reverse {
			e.tbl.Descend(nil, nil, visit)
		} else {
			e.tbl.Ascend(nil, nil, visit)
		}
		require.Len(t, keys, n)
		require.Less(t, len(rows), n, "transient rows are reused from batch to batch")
		for j := range keys {
			i := j
			if reverse {
				i = n - 1 - j
			}
			require.Equal(t, fmt.Sprintf("k%05d", i), string(keys[j]), "reverse=%v", reverse)
			require.Equal(t, value(i), string(values[j]), "reverse=%v", reverse)
		}
	}
}

// newMemoryEnv is a persistentEnv over an in-memory table (no backend:
// checkpoint does nothing).
func newMemoryEnv(t *testing.T) *persistentEnv {
	x, ms := xact.NewManager(), multixact.NewStore()
	h := heap.New(x, ms, nil)
	tbl, err := h.CreateTable("t")
	require.NoError(t, err)
	return &persistentEnv{t: t, x: x, h: h, tbl: tbl}
}

// TestPersistentScanSkipsDeadHead: a queue's consumers delete from the head.
// After the deletes are dead to every snapshot, a scan from the start
// raises the floor past them, and the next scan starts there: it meets no
// dead row. An insert below the floor lowers it again. The same holds for
// an in-memory table, whose deleted rows stay until vacuum unlinks them.
func TestPersistentScanSkipsDeadHead(t *testing.T) {
	for _, mem := range []bool{false, true} {
		t.Run(fmt.Sprintf("memory=%v", mem), func(t *testing.T) {
			e := newPersistentEnv
			if mem {
				e = newMemoryEnv
			}
			testScanSkipsDeadHead(t, e(t))
		})
	}
}

func testScanSkipsDeadHead(t *testing.T, e *persistentEnv) {
	for i := range 200 {
		require.True(t, e.write(fmt.Sprintf("k%04d", i), []byte("v"), true))
	}
	if e.be != nil {
		e.checkpoint()
	}
	// A snapshot older than the deletes keeps them visible.
	old := e.x.Begin()
	oldSnap := e.x.TakeSnapshot(old)
	for i := range 150 {
		require.True(t, e.write(fmt.Sprintf("k%04d", i), nil, true))
	}
	visited := func() (n int, first string) {
		e.tbl.Ascend(nil, nil, func(r *heap.Row) bool {
			if n == 0 {
				first = string(r.Key())
			}
			n++
			return true
		})
		return n, first
	}
	n, _ := visited()
	require.Equal(t, 200, n, "deletes an old snapshot still sees are not skipped")
	require.Len(t, e.scan(oldSnap, nil, nil, false), 200)
	e.x.Abort(old)

	n, first := visited() // raises the floor
	require.Equal(t, 50, n)
	require.Equal(t, "k0150", first)
	n, first = visited()
	require.Equal(t, 50, n, "the second scan starts at the floor")
	require.Equal(t, "k0150", first)

	require.True(t, e.write("k0007", []byte("back"), true))
	reader := e.x.Begin()
	snap := e.x.TakeSnapshot(reader)
	got := e.scan(snap, nil, []byte("k0151"), false)
	require.Equal(t, []string{"k0007=back", "k0150=v"}, got, "an insert below the floor lowers it")
	require.Equal(t, []string{"k0150=v", "k0007=back"}, e.scan(snap, nil, []byte("k0151"), true))
	e.x.Abort(reader)
}

// TestPersistentScanConcurrentChurn: scans run while other goroutines move
// value between rows (each transaction keeps the total), checkpoint, vacuum
// and evict. Every scan sees one snapshot's rows: all of them, with the
// total intact. A scan reading a backend value while the row goes through
// a life in memory and leaves it again must notice (the removal count)
// and read again.
func TestPersistentScanConcurrentChurn(t *testing.T) {
	e := newPersistentEnv(t)
	const rows, each = 300, 100
	for i := range rows {
		require.True(t, e.write(fmt.Sprintf("k%04d", i), fmt.Appendf(nil, "%d", each), true))
	}
	e.checkpoint()
	e.settle(0)

	var mu sync.Mutex // one writer transaction at a time: no conflicts to resolve
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // transfers
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			a, b := fmt.Sprintf("k%04d", i*7%rows), fmt.Sprintf("k%04d", (i*13+1)%rows)
			if a == b {
				continue
			}
			mu.Lock()
			transfer(e, a, b)
			mu.Unlock()
		}
	}()
	go func() { // checkpoints, vacuum, eviction
		defer wg.Done()
		for !stop.Load() {
			mu.Lock()
			e.checkpoint()
			mu.Unlock()
			e.settle(rows / 3)
		}
	}()
	for i := range 200 {
		reader := e.x.Begin()
		snap := e.x.TakeSnapshot(reader)
		got := e.scan(snap, nil, nil, i%2 == 1)
		e.x.Abort(reader)
		require.Len(t, got, rows, "scan %d", i)
		total := 0
		for _, kv := range got {
			var v int
			_, err := fmt.Sscanf(kv[bytes.IndexByte([]byte(kv), '=')+1:], "%d", &v)
			require.NoError(t, err)
			total += v
		}
		require.Equal(t, rows*each, total, "scan %d saw a torn state", i)
	}
	stop.Store(true)
	wg.Wait()
}

// transfer moves 1 from a to b in one committed transaction.
func transfer(e *persistentEnv, a, b string) {
	tx := e.x.Begin()
	snap := e.x.TakeSnapshot(tx)
	for k, d := range map[string]int{a: -1, b: 1} {
		r := e.tbl.RowForInsert([]byte(k))
		live := visibleIn(e.h, r, snap)
		require.NotNil(e.t, live, "row %s", k)
		var v int
		_, err := fmt.Sscanf(string(live.Value()), "%d", &v)
		require.NoError(e.t, err)
		e.tbl.Apply(r, heap.Change{Kind: heap.ChangeUpdate, Xid: tx.ID(), Old: live, Xmax: tx.ID(), New: heap.NewTuple(tx.ID(), fmt.Appendf(nil, "%d", v+d), true)})
		r.Unlock()
	}
	e.x.Commit(tx)
}
