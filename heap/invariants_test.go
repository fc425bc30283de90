//go:build invariants

package heap

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tupled/tupled/internal/invariants"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/multixact"
)

// invEnv is a table with one row holding one committed version, for tests
// that write a header breaking an invariant through Apply.
func invEnv(t *testing.T) (*Table, *Row, *Tuple, *xact.Manager, *multixact.Store) {
	x, ms := xact.NewManager(), multixact.NewStore()
	h := New(x, ms, nil)
	tbl, err := h.CreateTable("t")
	require.NoError(t, err)
	v := NewFrozenTuple([]byte("v"))
	r := tbl.RowForInsert([]byte("k"))
	tbl.Apply(r, Change{Kind: ChangeInsert, Xid: 1, New: v})
	r.Unlock()
	return tbl, r, v, x, ms
}

func TestInvariantXmaxInfomaskAgree(t *testing.T) {
	ms := multixact.NewStore()
	lockers, err := ms.Create([]multixact.Member{{Xid: 7, Status: multixact.ForKeyShare}, {Xid: 8, Status: multixact.ForShare}})
	require.NoError(t, err)
	cases := map[string]Change{
		"multixact without IS_MULTI": {Xmax: lockers.ID(), Multi: lockers, Infomask: XmaxLockOnly | XmaxShrLock},
		"IS_MULTI naming another id": {Xmax: lockers.ID() + 1, Multi: lockers, Infomask: XmaxIsMulti | XmaxLockOnly | XmaxShrLock},
		"multi lock bits weaker than its strongest member": {Xmax: lockers.ID(), Multi: lockers,
			Infomask: XmaxIsMulti | XmaxLockOnly | XmaxKeyShrLock},
		"lock-only multi without LOCK_ONLY": {Xmax: lockers.ID(), Multi: lockers, Infomask: XmaxIsMulti | XmaxShrLock},
		"multi KEYS_UPDATED without a FOR UPDATE member": {Xmax: lockers.ID(), Multi: lockers,
			Infomask: XmaxIsMulti | XmaxLockOnly | XmaxShrLock, Infomask2: KeysUpdated},
		"lock-only xid without lock bits":   {Xmax: 5, Infomask: XmaxLockOnly},
		"KEYS_UPDATED with a share lock":    {Xmax: 5, Infomask: XmaxLockOnly | XmaxShrLock, Infomask2: KeysUpdated},
		"plain updater with lock bits":      {Xmax: 5, Infomask: XmaxExclLock},
		"invalid xmax with lock bits":       {Xmax: 0, Infomask: XmaxLockOnly | XmaxKeyShrLock},
		"invalid xmax with KEYS_UPDATED":    {Xmax: 0, Infomask2: KeysUpdated},
		"invalid xmax with IS_MULTI":        {Xmax: 0, Infomask: XmaxIsMulti},
		"XMAX_COMMITTED on a multi xmax":    {Xmax: lockers.ID(), Multi: lockers, Infomask: XmaxIsMulti | XmaxLockOnly | XmaxShrLock | XmaxCommitted},
		"FOR UPDATE bits but not exclusive": {Xmax: 5, Infomask: XmaxLockOnly | XmaxKeyShrLock, Infomask2: KeysUpdated},
		"lock-only IS_MULTI with xmax 0":    {Xmax: 0, Infomask: XmaxIsMulti | XmaxLockOnly | XmaxKeyShrLock},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			tbl, r, v, _, _ := invEnv(t)
			c.Kind, c.Xid, c.Old = ChangeXmax, 5, v
			r.Lock()
			defer r.Unlock()
			invariants.ExpectViolation(t, invXmaxInfomask, func() { tbl.Apply(r, c) })
		})
	}
	t.Run("SetInitialXmax", func(t *testing.T) {
		nt := NewTuple(9, nil, true)
		invariants.ExpectViolation(t, invXmaxInfomask, func() { nt.SetInitialXmax(5, nil, XmaxLockOnly, 0) })
	})
	t.Run("vacuum", func(t *testing.T) {
		_, _, v, x, _ := invEnv(t)
		h := New(x, ms, nil)
		locker := x.Begin() // running: freezeXmax keeps the xmax as it is
		v.xmax, v.infomask = locker.ID(), v.infomask&^XmaxBits|XmaxLockOnly
		invariants.ExpectViolation(t, invXmaxInfomask, func() { h.freezeXmax(v) })
	})
}

// TestInvariantXmaxInfomaskAgreeHolds: the headers tuplelock writes pass.
func TestInvariantXmaxInfomaskAgreeHolds(t *testing.T) {
	ms := multixact.NewStore()
	upd, err := ms.Create([]multixact.Member{{Xid: 7, Status: multixact.ForKeyShare}, {Xid: 8, Status: multixact.Update}})
	require.NoError(t, err)
	for _, c := range []Change{
		{Xmax: 5, Infomask: XmaxLockOnly | XmaxKeyShrLock},
		{Xmax: 5, Infomask: XmaxLockOnly | XmaxShrLock},
		{Xmax: 5, Infomask: XmaxLockOnly | XmaxExclLock},
		{Xmax: 5, Infomask: XmaxLockOnly | XmaxExclLock, Infomask2: KeysUpdated},
		{Xmax: 5},
		{Xmax: 5, Infomask2: KeysUpdated},
		{Xmax: upd.ID(), Multi: upd, Infomask: XmaxIsMulti | XmaxExclLock, Infomask2: KeysUpdated},
		{Xmax: 12345, Infomask: XmaxIsMulti | XmaxLockOnly | XmaxShrLock}, // reclaimed multixact
		{},
	} {
		tbl, r, v, _, _ := invEnv(t)
		c.Kind, c.Xid, c.Old = ChangeXmax, 5, v
		r.Lock()
		tbl.Apply(r, c)
		r.Unlock()
	}
}

func TestInvariantVersionChain(t *testing.T) {
	t.Run("successor's xmin is not the update xid", func(t *testing.T) {
		tbl, r, v, _, _ := invEnv(t)
		r.Lock()
		defer r.Unlock()
		invariants.ExpectViolation(t, invChain, func() {
			tbl.Apply(r, Change{Kind: ChangeUpdate, Xid: 5, Old: v, New: NewTuple(6, []byte("v2"), true), Xmax: 5})
		})
	})
	t.Run("lock-only xmax with a successor", func(t *testing.T) {
		tbl, r, v, _, _ := invEnv(t)
		r.Lock()
		defer r.Unlock()
		invariants.ExpectViolation(t, invChain, func() {
			tbl.Apply(r, Change{Kind: ChangeUpdate, Xid: 5, Old: v, New: NewTuple(5, []byte("v2"), true),
				Xmax: 5, Infomask: XmaxLockOnly | XmaxKeyShrLock})
		})
	})
	t.Run("a lock keeps a link whose updater is gone", func(t *testing.T) {
		tbl, r, v, _, _ := invEnv(t)
		r.Lock()
		defer r.Unlock()
		tbl.Apply(r, Change{Kind: ChangeUpdate, Xid: 5, Old: v, New: NewTuple(5, []byte("v2"), true), Xmax: 5})
		// Another transaction's lock that forgets the updater but keeps
		// the link: the successor no longer follows from xmax.
		invariants.ExpectViolation(t, invChain, func() {
			tbl.Apply(r, Change{Kind: ChangeXmax, Xid: 7, Old: v, Xmax: 6})
		})
	})
}
