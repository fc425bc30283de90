package heap_test

import (
	"bytes"
	"fmt"
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

// visibleTo is the version of r visible to snap (latch held).
func visibleTo(h *heap.Heap, r *heap.Row, snap xact.Snapshot) *heap.Tuple {
	vs := r.Versions()
	for i := len(vs) - 1; i >= 0; i-- {
		if h.SatisfiesMVCC(vs[i], snap) {
			return vs[i]
		}
	}
	return nil
}

// op runs one transaction on key: "put" (insert or update to value),
// "delete", or "lock" (FOR KEY SHARE), committed or aborted.
func (w *rowStoreWriter) op(h *heap.Heap, kind, key, value string, commit bool) {
	x := w.x.Begin()
	snap := w.x.TakeSnapshot(x)
	r := w.tbl.RowForInsert([]byte(key))
	old := visibleTo(h, r, snap)
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
	if v := visibleTo(h, r, snap); v != nil {
		return string(v.Value()), true
	}
	return "", false
}

// readerObservation is what a concurrent reader saw: under one
// snapshot, the values it was handed (not copied), checked against the
// model once it is done.
type readerObservation struct {
	csn    uint64
	values map[string][]byte
}

// TestReadResidentModel drives a table with random inserts, updates,
// deletes, row locks (committed and aborted) and vacuums against a model
// of committed states, while reader goroutines read every key under a
// snapshot with ReadResident and with the latched read, hold the values
// they were handed — not copies — across vacuums, and check them at the
// end of their transaction (run it under -race: the fast path takes no
// latch, and the detector must see no race with Apply or vacuum).
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
		var wg sync.WaitGroup
		var mu sync.Mutex
		var seen []readerObservation
		var fast atomic.Int64
		bad := make(chan string, 1)
		fail := func(format string, a ...any) {
			select {
			case bad <- fmt.Sprintf(format, a...):
			default:
			}
		}
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					rx := x.Begin()
					snap := x.TakeSnapshot(rx)
					obs := readerObservation{csn: snap.CSN(), values: map[string][]byte{}}
					for _, k := range keys {
						v, ok := tbl.ReadResident([]byte(k), snap)
						sv, sok := slowRead(h, tbl, k, snap)
						if ok {
							fast.Add(1)
							if !sok || sv != string(v) {
								fail("key %q at csn %d: ReadResident %q, latched read %q (found %v)", k, snap.CSN(), v, sv, sok)
							}
							obs.values[k] = v
						} else if sok {
							obs.values[k] = []byte(sv)
						}
					}
					// The values are held over the writer's vacuums.
					x.Commit(rx)
					mu.Lock()
					seen = append(seen, obs)
					mu.Unlock()
				}
			}()
		}

		n := rapid.IntRange(1, 150).Draw(rt, "ops")
		for i := range n {
			switch op := rapid.SampledFrom([]string{"put", "put", "delete", "lock", "vacuum"}).Draw(rt, "op"); op {
			case "vacuum":
				horizon := x.Horizon()
				tbl.Vacuum(horizon, x.FreezeCutoff(horizon))
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
			want := model.at(o.csn)
			for k, v := range o.values {
				if want[k] != string(v) {
					rt.Fatalf("a reader at csn %d held %q for %q, the model says %q", o.csn, v, k, want[k])
				}
			}
			for k := range want {
				if _, ok := o.values[k]; !ok {
					rt.Fatalf("a reader at csn %d missed %q", o.csn, k)
				}
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
