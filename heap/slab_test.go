package heap

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/multixact"
)

// TestSlabEpoch: a freed block is reused only once reclaim is told that
// the oldest running xid reached the block's epoch, and then by a value
// of its size class.
func TestSlabEpoch(t *testing.T) {
	s := newValueSlab()
	a, ok := s.copyIn([]byte("first value"))
	require.True(t, ok)
	require.Equal(t, "first value", string(a))
	require.Equal(t, len(a), cap(a), "the value is clipped: an append copies")
	s.free(a, 10)
	s.reclaim(9)
	b, _ := s.copyIn([]byte("second val"))
	require.NotEqual(t, &a[0], &b[0], "reused before its epoch")
	require.Equal(t, "first value", string(a), "a block waiting for its epoch is untouched")
	s.reclaim(10)
	c, _ := s.copyIn([]byte("third value!"))
	require.Equal(t, &a[0], &c[0], "the block is reused once its epoch has passed")
	d, _ := s.copyIn(bytes.Repeat([]byte("x"), 40))
	require.NotEqual(t, &a[0], &d[0])

	big := bytes.Repeat([]byte("y"), slabMaxValue+1)
	v, ok := s.copyIn(big)
	require.False(t, ok, "too large for a block")
	require.Equal(t, &big[0], &v[0])
	_, ok = s.copyIn(nil)
	require.False(t, ok)
	mapped, inUse := s.stats()
	require.Equal(t, slabPageSize, mapped)
	require.Equal(t, 16+16+48, inUse) // b, c, d
}

// TestSlabFlatUnderUpdates: endless updates of the same rows, vacuumed
// now and then, keep the slab's memory flat, while a long transaction
// that read a value before the updates began holds it intact until it
// ends (its epoch keeps every block freed meanwhile from reuse).
func TestSlabFlatUnderUpdates(t *testing.T) {
	x := xact.NewManager()
	h := New(x, multixact.NewStore(), nil)
	tbl, err := h.CreateTable("t")
	require.NoError(t, err)
	const rows = 50
	update := func(k int, v []byte) {
		w := x.Begin()
		r := tbl.RowForInsert(fmt.Appendf(nil, "k%d", k))
		if n := len(r.versions); n == 0 {
			tbl.Apply(r, Change{Kind: ChangeInsert, Xid: w.ID(), New: NewTuple(w.ID(), v, false)})
		} else {
			tbl.Apply(r, Change{Kind: ChangeUpdate, Xid: w.ID(), Old: r.versions[n-1], New: NewTuple(w.ID(), v, true), Xmax: w.ID()})
		}
		r.Unlock()
		x.Commit(w)
	}
	vacuum := func() {
		hz := x.Horizon()
		tbl.Vacuum(hz, x.FreezeCutoff(hz))
	}
	for k := range rows {
		update(k, fmt.Appendf(nil, "initial value of row %d", k))
	}
	// A READ COMMITTED reader between statements: running, its value in
	// hand, but no snapshot published, so vacuum's horizon passes it and
	// prunes the version it read.
	reader := x.Begin()
	held, ok := tbl.ReadResident([]byte("k7"), x.CommittedNow())
	require.True(t, ok)
	want := bytes.Clone(held)

	round := func(n int) {
		for i := range n {
			update(i%rows, fmt.Appendf(nil, "value %d of row %d, a bit longer", i, i%rows))
			if i%200 == 0 {
				vacuum()
			}
		}
		vacuum()
	}
	round(5000)
	_, inUse0 := tbl.SlabStats()
	require.Greater(t, inUse0, 5000*32, "the blocks freed while the reader runs wait for it")
	require.Equal(t, want, held, "a value read by a running transaction was overwritten")
	x.Commit(reader)
	vacuum()
	round(5000)
	_, inUse1 := tbl.SlabStats()
	round(20000)
	mapped, inUse2 := tbl.SlabStats()
	require.Equal(t, slabPageSize, mapped, "one page holds 50 live values and what waits between vacuums")
	require.LessOrEqual(t, inUse2, inUse1+rows*48, "the slab's live bytes grow under endless updates")
}
