//go:build invariants

package tuplelock

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tupled/tupled/internal/invariants"
	"github.com/tupled/tupled/internal/tuplemode"
	"github.com/tupled/tupled/multixact"
)

func TestInvariantLockDiesWithXid(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(r *rig, tx *Txn)
	}{
		{"lock", func(r *rig, tx *Txn) {
			row, tup := r.committedRow("k")
			_, _ = r.e.LockTuple(r.ctx, tx, r.tbl, row, tup, tuplemode.KeyShare, Block, true)
		}},
		{"lock beside a sharer", func(r *rig, tx *Txn) {
			row, tup := r.committedRow("k")
			other := r.begin()
			r.lock(other, row, tup, tuplemode.KeyShare)
			_, _ = r.e.LockTuple(r.ctx, tx, r.tbl, row, tup, tuplemode.KeyShare, Block, true)
		}},
		{"update", func(r *rig, tx *Txn) {
			row, tup := r.committedRow("k")
			_, _ = r.e.Update(r.ctx, tx, r.tbl, row, tup, []byte("v2"), false)
		}},
		{"delete", func(r *rig, tx *Txn) {
			row, tup := r.committedRow("k")
			_, _ = r.e.Update(r.ctx, tx, r.tbl, row, tup, nil, true)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			tx := r.begin()
			r.commit(tx) // ended: whatever it writes now would outlive it
			invariants.ExpectViolation(t, invLockDiesWithXid, func() { tc.do(r, tx) })
		})
	}
}

func TestInvariantLockDiesWithXidOwnXmax(t *testing.T) {
	r := newRig(t)
	tx, other := r.begin(), r.begin()
	invariants.ExpectViolation(t, invLockDiesWithXid, func() {
		r.e.checkNewXmax(tx.x, newXmax{xmax: other.x.ID()}, "test")
	})
	m, err := r.ms.Create([]multixact.Member{{Xid: other.x.ID(), Status: multixact.ForShare}})
	require.NoError(t, err)
	invariants.ExpectViolation(t, invLockDiesWithXid, func() {
		r.e.checkNewXmax(tx.x, viaMulti(m), "test")
	})
	r.abort(tx)
	r.abort(other)
}
