package heap_test

import (
	"bytes"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/multixact"
)

// rowStoreModel is one writer's view of a table: every committed state,
// by the CSN of the commit that made it, so a reader can ask what a
// snapshot must see.
type rowStoreModel struct {
	mu      sync.Mutex
	csns    []uint64            // increasing
	states  []map[string]string // states[i]: the table after the commit at csns[i]
	current map[string]string
}

func (m *rowStoreModel) commit(csn uint64) {
	next := make(map[string]string, len(m.current))
	for k, v := range m.current {
		next[k] = v
	}
	m.mu.Lock()
	m.csns = append(m.csns, csn)
	m.states = append(m.states, next)
	m.mu.Unlock()
}

// at is the state a snapshot of csn sees.
func (m *rowStoreModel) at(csn uint64) map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := sort.Search(len(m.csns), func(i int) bool { return m.csns[i] > csn })
	return m.states[i-1]
}

// rowStoreWriter changes one table through Table.Apply as tuplelock
// would, one transaction at a time (so there are no write conflicts).
type rowStoreWriter struct {
	x     *xact.Manager
	tbl   *heap.Table
	model *rowStoreModel
}

// op runs one transaction on key: "put" (insert or update to value),
// "delete", or "lock" (FOR KEY SHARE), committed or aborted.
func (w *rowStoreWriter) op(h *heap.Heap, kind, key, value string, commit bool) {
	x := w.x.Begin()
	snap := w.x.TakeSnapshot(x)
	r := w.tbl.RowForInsert([]byte(key))
	old := visibleIn(h, r, snap)
	switch {
	case kind == "put" && old == nil:
		w.tbl.Apply(r, heap.Change{Kind: heap.ChangeInsert, Xid: x.ID(), New: heap.NewTuple(x.ID(), []byte(value), false)})
	case kind == "put":
		w.tbl.Apply(r, heap.Change{Kind: heap.ChangeUpdate, Xid: x.ID(), Old: old, New: heap.NewTuple(x.ID(), []byte(value), true), Xmax: x.ID()})
	case kind == "delete" && old != nil:
		w.tbl.Apply(r, heap.Change{Kind: heap.ChangeXmax, Xid: x.ID(), Old: old, Xmax: x.ID(), Infomask2: heap.KeysUpdated})
	case kind == "lock" && old != nil:
		w.tbl.Apply(r, heap.Change{Kind: heap.ChangeXmax, Xid: x.ID(), Old: old, Xmax: x.ID(), Infomask: heap.XmaxLockOnly | heap.XmaxKeyShrLock})
	}
	r.Unlock()
	if !commit {
		w.x.Abort(x)
		return
	}
	w.x.Commit(x)
	switch {
	case kind == "put":
		w.model.current[key] = value
	case kind == "delete":
		delete(w.model.current, key)
	}
	_, csn := w.x.Status(x.ID())
	w.model.commit(csn)
}

// slowRead is the latched read ReadResident stands in for.
func slowRead(h *heap.Heap, tbl *heap.Table, key string, snap xact.Snapshot) (string, bool) {
	r := tbl.PinRow([]byte(key))
	if r == nil {
		return "", false
	}
	defer r.Unpin()
	r.Lock()
	defer r.Unlock()
	if v := visibleIn(h, r, snap); v != nil {
		return string(v.Value()), true
	}
	return "", false
}

// readerObservation is one read a concurrent reader made: the snapshot's
// CSN, the key, and a copy of what it found, checked against the model
// once the run is done.
type readerObservation struct {
	csn   uint64
	key   string
	value []byte
	found bool
}

// TestReadResidentModel drives a table with random inserts, updates,
// deletes, row locks (committed and aborted) and vacuums against a model
// of committed states, while reader goroutines read every key under a
// snapshot with ReadResident and with the latched read, hold the values
// they were handed — not copies — across vacuums, and check them at the
// end of their transaction, as a store that recycles a removed
// version's memory must keep them (run it under -race: the fast path
// takes no latch, and the detector must see no race with Apply or
// vacuum).
func TestReadResidentModel(t *testing.T) {
	keys := []string{"a", "b", "c", "longer-than-eight-bytes"}
	rapid.Check(t, func(rt *rapid.T) {
		x := xact.NewManager()
		h := heap.New(x, multixact.NewStore(), nil)
		tbl, err := h.CreateTable("t")
		require.NoError(rt, err)
		model := &rowStoreModel{current: map[string]string{}}
		model.commit(0)
		w := &rowStoreWriter{x: x, tbl: tbl, model: model}

		var stop atomic.Bool
		var vacuums atomic.Int64 // the writer's vacuum passes so far
		var wg sync.WaitGroup
		var mu sync.Mutex
		var seen []readerObservation
		bad := make(chan string, 1)
		fail := func(format string, a ...any) {
			select {
			case bad <- fmt.Sprintf(format, a...):
			default:
			}
		}
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Reader 0 reads every key under one snapshot (REPEATABLE
				// READ); reader 1 takes a snapshot per key (READ
				// COMMITTED), so the versions it read earlier in its
				// transaction are no longer kept by its snapshot: vacuum
				// may prune them while it holds their values, which must
				// stay intact all the same.
				for !stop.Load() {
					rx := x.Begin()
					snap := x.TakeSnapshot(rx)
					var obs []readerObservation
					held := map[int][]byte{}
					for _, k := range keys {
						if g == 1 {
							snap = x.TakeSnapshot(rx)
						}
						v, ok := tbl.ReadResident([]byte(k), snap)
						sv, sok := slowRead(h, tbl, k, snap)
						o := readerObservation{csn: snap.CSN(), key: k, found: sok, value: []byte(sv)}
						if ok {
							if !sok || sv != string(v) {
								fail("key %q at csn %d: ReadResident %q, latched read %q (found %v)", k, snap.CSN(), v, sv, sok)
							}
							held[len(obs)] = v
						}
						obs = append(obs, o)
					}
					// Hold the values, not copies, over three of the writer's
					// vacuums (reader 1 moving its snapshot on, as its next
					// statements would): until the transaction ends they
					// must stay intact.
					for from := vacuums.Load(); vacuums.Load() < from+3 && !stop.Load(); {
						if g == 1 {
							x.TakeSnapshot(rx)
						}
						runtime.Gosched()
					}
					for i, v := range held {
						if !bytes.Equal(v, obs[i].value) {
							fail("key %q at csn %d: the value handed out changed from %q to %q before the reader's end", obs[i].key, obs[i].csn, obs[i].value, v)
						}
					}
					x.Commit(rx)
					mu.Lock()
					seen = append(seen, obs...)
					mu.Unlock()
				}
			}()
		}

		n := rapid.IntRange(1, 150).Draw(rt, "ops")
		for i := range n {
			switch op := rapid.SampledFrom([]string{"put", "put", "put", "delete", "lock", "vacuum", "vacuum"}).Draw(rt, "op"); op {
			case "vacuum":
				horizon := x.Horizon()
				tbl.Vacuum(horizon, x.FreezeCutoff(horizon))
				vacuums.Add(1)
			default:
				k := rapid.SampledFrom(keys).Draw(rt, "key")
				w.op(h, op, k, fmt.Sprintf("v%d", i), rapid.IntRange(0, 3).Draw(rt, "commit") > 0)
			}
			// The writer's own reads, with nothing in flight: the
			// latch-free answer, when it gives one, is the model's.
			snap := x.CommittedNow()
			for _, k := range keys {
				want, inModel := model.current[k]
				if v, ok := tbl.ReadResident([]byte(k), snap); ok && (!inModel || string(v) != want) {
					rt.Fatalf("after op %d: ReadResident(%q) = %q, model has %q (present %v)", i, k, v, want, inModel)
				}
			}
		}
		stop.Store(true)
		wg.Wait()
		select {
		case msg := <-bad:
			rt.Fatal(msg)
		default:
		}
		for _, o := range seen {
			want, ok := model.at(o.csn)[o.key]
			if ok != o.found || want != string(o.value) {
				rt.Fatalf("a reader at csn %d found %q for %q (%v), the model says %q (%v)", o.csn, o.value, o.key, o.found, want, ok)
			}
		}

		// Once vacuum has run with no snapshot live, every key with a
		// value is answered latch-free.
		horizon := x.Horizon()
		tbl.Vacuum(horizon, x.FreezeCutoff(horizon))
		snap := x.CommittedNow()
		for k, want := range model.current {
			v, ok := tbl.ReadResident([]byte(k), snap)
			if !ok || !bytes.Equal(v, []byte(want)) {
				rt.Fatalf("after vacuum: ReadResident(%q) = %q, %v; want %q from the fast path", k, v, ok, want)
			}
		}
	})
}
