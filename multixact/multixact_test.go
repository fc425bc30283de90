package multixact

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled/internal/tuplemode"
	"github.com/tupled/tupled/internal/xact"
)

// The transaction manager is what the engine passes as XidStatus.
var _ XidStatus = (*xact.Manager)(nil)

// fates is a hand-written XidStatus: "running", "committed" or "aborted"
// per xid.
type fates map[uint64]string

func (f fates) IsInProgress(xid uint64) bool { return f[xid] == "running" }
func (f fates) DidCommit(xid uint64) bool    { return f[xid] == "committed" }

func mustCreate(t *testing.T, s *Store, members ...Member) *MultiXact {
	t.Helper()
	m, err := s.Create(members)
	require.NoError(t, err)
	require.NotNil(t, m)
	return m
}

func TestCreateSortsAndDeduplicates(t *testing.T) {
	s := NewStore()
	require.Equal(t, ID(1), s.NextID())
	in := []Member{{5, ForShare}, {3, Update}, {5, ForShare}, {3, ForKeyShare}, {4, ForKeyShare}}
	orig := append([]Member(nil), in...)

	m := mustCreate(t, s, in...)
	assert.Equal(t, ID(1), m.id, "the first multixact id is 1")
	assert.Equal(t, ID(2), s.NextID())
	assert.Equal(t, []Member{{3, ForKeyShare}, {3, Update}, {4, ForKeyShare}, {5, ForShare}}, m.members,
		"sorted by (xid, status), duplicates dropped; one xid may keep two statuses")
	assert.Equal(t, orig, in, "the caller's slice is not modified")
	assert.Equal(t, Stats{Created: 1, MembersWritten: 4}, s.Stats())
}

func TestCreateRejectsTwoUpdaters(t *testing.T) {
	s := NewStore()
	for _, members := range [][]Member{
		{{1, Update}, {2, NoKeyUpdate}},
		{{1, NoKeyUpdate}, {2, NoKeyUpdate}, {3, ForShare}},
		{{1, NoKeyUpdate}, {1, Update}}, // even of one transaction
	} {
		m, err := s.Create(members)
		assert.Error(t, err, "%v", members)
		assert.Nil(t, m)
	}
	assert.Equal(t, ID(1), s.NextID(), "no id consumed")
	assert.Zero(t, s.Stats().Created)

	// One updater beside lockers, even of its own transaction, is fine.
	m := mustCreate(t, s, Member{1, ForShare}, Member{1, NoKeyUpdate}, Member{2, ForKeyShare})
	assert.Len(t, m.members, 3)
}

func TestCreateInternsIdenticalMemberSets(t *testing.T) {
	s := NewStore()
	a := mustCreate(t, s, Member{7, ForShare}, Member{9, ForKeyShare})
	b := mustCreate(t, s, Member{9, ForKeyShare}, Member{7, ForShare}, Member{7, ForShare})
	assert.Same(t, a, b, "the same member set, in any order, is the same multixact")

	c := mustCreate(t, s, Member{7, ForShare}, Member{9, ForShare})
	assert.NotSame(t, a, c, "a different status is a different set")
	assert.NotEqual(t, a.id, c.id)
	assert.Equal(t, Stats{Created: 2, Reused: 1, MembersWritten: 4}, s.Stats())
}

func TestConcurrentCreateOfOneSetYieldsOneMultixact(t *testing.T) {
	s := NewStore()
	const n = 8
	got := make([]*MultiXact, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			m, err := s.Create([]Member{{uint64(10 + i%2), ForKeyShare}, {uint64(11 - i%2), ForKeyShare}})
			if err != nil {
				t.Error(err)
			}
			got[i] = m
		})
	}
	wg.Wait()
	for _, m := range got {
		assert.Same(t, got[0], m)
	}
	assert.Equal(t, uint64(1), s.Stats().Created)
}

func TestExpandReturnsSameMultixactWhenAlreadyMember(t *testing.T) {
	s := NewStore()
	st := fates{1: "running", 2: "running"}
	m := mustCreate(t, s, Member{1, ForShare}, Member{2, ForKeyShare})
	reused := s.Stats().Reused

	e, err := s.Expand(m, 2, ForKeyShare, st)
	require.NoError(t, err)
	assert.Same(t, m, e)
	assert.Equal(t, reused+1, s.Stats().Reused)

	// The same xid with another status is a new member.
	e, err = s.Expand(m, 2, ForUpdate, st)
	require.NoError(t, err)
	assert.NotSame(t, m, e)
	assert.Equal(t, []Member{{1, ForShare}, {2, ForKeyShare}, {2, ForUpdate}}, e.members)
	assert.Equal(t, []Member{{1, ForShare}, {2, ForKeyShare}}, m.members, "the old multixact never changes")
}

func TestExpandPrunesWhatCannotMatter(t *testing.T) {
	s := NewStore()
	st := fates{
		1: "committed", // locker, finished: pruned
		2: "aborted",   // locker, finished: pruned
		3: "running",   // locker: kept
		4: "committed", // updater: kept
		5: "running",   // the newcomer
	}
	m := mustCreate(t, s, Member{1, ForShare}, Member{2, ForUpdate}, Member{3, ForKeyShare}, Member{4, NoKeyUpdate})
	e, err := s.Expand(m, 5, ForKeyShare, st)
	require.NoError(t, err)
	assert.Equal(t, []Member{{3, ForKeyShare}, {4, NoKeyUpdate}, {5, ForKeyShare}}, e.members)

	// An aborted updater is pruned, which frees the updater slot.
	st[4] = "aborted"
	e, err = s.Expand(m, 5, Update, st)
	require.NoError(t, err)
	assert.Equal(t, []Member{{3, ForKeyShare}, {5, Update}}, e.members)
	upd, us := e.UpdateXid()
	assert.Equal(t, uint64(5), upd)
	assert.Equal(t, Update, us)

	// Expanding a multixact whose members all finished leaves the newcomer.
	st[3] = "committed"
	e, err = s.Expand(m, 5, ForShare, st)
	require.NoError(t, err)
	assert.Equal(t, []Member{{5, ForShare}}, e.members)
}

func TestExpandKeepsRunningUpdaterAndRejectsSecond(t *testing.T) {
	s := NewStore()
	st := fates{1: "running", 2: "running"}
	m := mustCreate(t, s, Member{1, NoKeyUpdate})
	_, err := s.Expand(m, 2, Update, st)
	assert.Error(t, err, "a running updater is kept, so a second one is refused")

	st[1] = "committed"
	_, err = s.Expand(m, 2, Update, st)
	assert.Error(t, err, "so is a committed one")

	st[1] = "aborted"
	e, err := s.Expand(m, 2, Update, st)
	require.NoError(t, err)
	assert.Equal(t, []Member{{2, Update}}, e.members)
}

func TestIsRunning(t *testing.T) {
	s := NewStore()
	m := mustCreate(t, s, Member{1, ForShare}, Member{2, Update})
	assert.True(t, IsRunning(m, fates{1: "running", 2: "committed"}))
	assert.True(t, IsRunning(m, fates{1: "aborted", 2: "running"}))
	assert.False(t, IsRunning(m, fates{1: "committed", 2: "aborted"}))
}

func TestStatusTable(t *testing.T) {
	for _, c := range []struct {
		s        Status
		mode     tuplemode.Mode
		isUpdate bool
		name     string
	}{
		{ForKeyShare, tuplemode.KeyShare, false, "ForKeyShare"},
		{ForShare, tuplemode.Share, false, "ForShare"},
		{ForNoKeyUpdate, tuplemode.NoKeyExclusive, false, "ForNoKeyUpdate"},
		{ForUpdate, tuplemode.Exclusive, false, "ForUpdate"},
		{NoKeyUpdate, tuplemode.NoKeyExclusive, true, "NoKeyUpdate"},
		{Update, tuplemode.Exclusive, true, "Update"},
	} {
		assert.Equal(t, c.mode, c.s.LockMode(), "%v.LockMode", c.s)
		assert.Equal(t, c.isUpdate, c.s.IsUpdate(), "%v.IsUpdate", c.s)
		assert.Equal(t, c.name, c.s.String())
		assert.Equal(t, c.s, StatusFor(c.mode, c.isUpdate), "StatusFor(%v, %v)", c.mode, c.isUpdate)
	}
	assert.Equal(t, "Status(9)", Status(9).String())
	assert.Panics(t, func() { StatusFor(tuplemode.Share, true) }, "a FOR SHARE update")
}

func TestUpdateXid(t *testing.T) {
	s := NewStore()
	locks := mustCreate(t, s, Member{1, ForShare}, Member{2, ForUpdate})
	x, st := locks.UpdateXid()
	assert.Zero(t, x, "lock-only")
	assert.Zero(t, st)

	for _, us := range []Status{NoKeyUpdate, Update} {
		m := mustCreate(t, s, Member{1, ForShare}, Member{3, us}, Member{4, ForKeyShare})
		x, st = m.UpdateXid()
		assert.Equal(t, uint64(3), x)
		assert.Equal(t, us, st)
	}
}

// TestReclamation drops every reference to a multixact (the intern cache
// included): the garbage collector reclaims it, as nothing else (no id
// registry) holds it. A multixact still referenced stays, and its member set
// is not resurrected under the old id.
func TestReclamation(t *testing.T) {
	s := NewStore()
	var gone ID
	reclaimed := make(chan struct{})
	func() {
		m := mustCreate(t, s, Member{1, ForShare}, Member{2, ForShare})
		gone = m.id
		runtime.AddCleanup(m, func(chan struct{}) { close(reclaimed) }, reclaimed)
	}()
	kept := mustCreate(t, s, Member{1, ForKeyShare}, Member{2, ForKeyShare})
	// Flush the intern cache: every slot gets another set.
	for i := range 8 * cacheSize {
		mustCreate(t, s, Member{uint64(100 + i), ForKeyShare})
	}
	deadline := time.Now().Add(5 * time.Second)
	for done := false; !done; {
		runtime.GC()
		select {
		case <-reclaimed:
			done = true
		case <-time.After(5 * time.Millisecond):
			require.True(t, time.Now().Before(deadline), "multixact %d not reclaimed", gone)
		}
	}
	assert.Equal(t, []Member{{1, ForKeyShare}, {2, ForKeyShare}}, kept.members)
	again := mustCreate(t, s, Member{1, ForShare}, Member{2, ForShare})
	assert.NotEqual(t, gone, again.id)
}

func TestExpandAddsLast(t *testing.T) {
	s := NewStore()
	st := fates{1: "running", 3: "running", 5: "committed", 7: "running", 4: "running"}
	m := mustCreate(t, s, Member{1, ForKeyShare}, Member{3, ForShare}, Member{5, ForShare}, Member{7, ForKeyShare})
	e, err := s.Expand(m, 4, ForKeyShare, st)
	require.NoError(t, err)
	assert.Equal(t, []Member{{1, ForKeyShare}, {3, ForShare}, {7, ForKeyShare}, {4, ForKeyShare}}, e.members,
		"survivors in their order, the newcomer last")
	e2, err := s.Expand(m, 4, ForKeyShare, st)
	require.NoError(t, err)
	assert.Same(t, e, e2, "the same copy is interned")
	e3, err := s.Expand(m, 9, ForKeyShare, st)
	require.NoError(t, err)
	assert.Equal(t, []Member{{1, ForKeyShare}, {3, ForShare}, {7, ForKeyShare}, {9, ForKeyShare}}, e3.members)
}

// TestExpandAppendsInPlace: the hot row's newest locker is appended to its
// predecessor's backing array — no copy, no liveness checks — and neither
// the predecessor nor a sibling expansion ever sees it.
func TestExpandAppendsInPlace(t *testing.T) {
	s := NewStore()
	st := fates{1: "running", 2: "running", 3: "running", 4: "running", 5: "running"}
	m := mustCreate(t, s, Member{1, ForKeyShare}, Member{2, ForKeyShare})
	c, err := s.Expand(m, 3, ForKeyShare, st) // a copy with room to grow
	require.NoError(t, err)
	require.Greater(t, cap(c.members), len(c.members))
	before := s.Stats()

	st[1] = "committed" // a finished locker: an append keeps it
	a, err := s.Expand(c, 4, ForShare, st)
	require.NoError(t, err)
	assert.Equal(t, []Member{{1, ForKeyShare}, {2, ForKeyShare}, {3, ForKeyShare}, {4, ForShare}}, a.members)
	assert.Same(t, &c.members[0], &a.members[0], "appended in place")
	assert.Equal(t, []Member{{1, ForKeyShare}, {2, ForKeyShare}, {3, ForKeyShare}}, c.members, "the predecessor never changes")
	assert.Equal(t, uint64(1), s.Stats().Appended-before.Appended)
	assert.Equal(t, uint64(1), s.Stats().MembersWritten-before.MembersWritten, "an append writes one member")
	strongest, keysUpdated, hasUpdate := a.Summary()
	assert.Equal(t, []any{ForShare.LockMode(), false, false}, []any{strongest, keysUpdated, hasUpdate})

	// A second expansion of c cannot take the element a took: it copies,
	// and the copy drops the finished locker.
	b, err := s.Expand(c, 5, ForKeyShare, st)
	require.NoError(t, err)
	assert.Equal(t, []Member{{2, ForKeyShare}, {3, ForKeyShare}, {5, ForKeyShare}}, b.members)
	assert.Equal(t, []Member{{1, ForKeyShare}, {2, ForKeyShare}, {3, ForKeyShare}, {4, ForShare}}, a.members, "a is untouched")

	// A newcomer with an older xid (it began earlier, locks later) is
	// appended too: the order is the order of locking.
	o, err := s.Expand(a, 0, ForKeyShare, st)
	require.NoError(t, err)
	assert.Same(t, &a.members[0], &o.members[0])
	assert.Equal(t, []Member{{1, ForKeyShare}, {2, ForKeyShare}, {3, ForKeyShare}, {4, ForShare}, {0, ForKeyShare}}, o.members)
	assert.Equal(t, []Member{{1, ForKeyShare}, {2, ForKeyShare}, {3, ForKeyShare}, {4, ForShare}}, a.members)

	// An updater joining lock-only lockers is appended too (an update of
	// a hot row costs O(1)), and so is a locker joining that set; a second
	// updater is not: the copy prunes, so an aborted updater cannot stay
	// beside a new one.
	u, err := s.Expand(o, 5, NoKeyUpdate, st)
	require.NoError(t, err)
	assert.Same(t, &a.members[0], &u.members[0])
	assert.Equal(t, []Member{{1, ForKeyShare}, {2, ForKeyShare}, {3, ForKeyShare}, {4, ForShare}, {0, ForKeyShare}, {5, NoKeyUpdate}}, u.members)
	_, keysUpdated, hasUpdate = u.Summary()
	assert.Equal(t, []bool{false, true}, []bool{keysUpdated, hasUpdate})
	ux, us := u.UpdateXid()
	assert.Equal(t, []any{uint64(5), NoKeyUpdate}, []any{ux, us})
	st[6], st[7] = "running", "running"
	l, err := s.Expand(u, 6, ForKeyShare, st)
	require.NoError(t, err)
	assert.Same(t, &a.members[0], &l.members[0], "a locker beside the updater: appended")
	ux, _ = l.UpdateXid()
	assert.Equal(t, uint64(5), ux, "the updater stays the updater")
	st[5] = "aborted"
	u2, err := s.Expand(l, 7, Update, st)
	require.NoError(t, err)
	assert.NotSame(t, &a.members[0], &u2.members[0], "a second updater copies")
	assert.Equal(t, []Member{{2, ForKeyShare}, {3, ForKeyShare}, {4, ForShare}, {6, ForKeyShare}, {7, Update}}, u2.members, "the aborted updater (and xid 0, never running here) pruned")
}

// TestHotRowSetStaysBounded: lockers come and go on one row for a long
// time; the row's set never holds more than its live members plus maxRoom,
// and as the row stays hot the copies get rare (the room doubles while the
// appends keep filling it).
func TestHotRowSetStaysBounded(t *testing.T) {
	s := NewStore()
	st := fates{}
	const window = 30
	st[1] = "running"
	m := mustCreate(t, s, Member{1, ForKeyShare}, Member{2, ForKeyShare})
	st[2] = "running"
	for xid := uint64(3); xid < 100_000; xid++ {
		st[xid] = "running"
		if xid > window {
			st[xid-window] = "committed"
		}
		var err error
		m, err = s.Expand(m, xid, ForKeyShare, st)
		require.NoError(t, err)
		require.LessOrEqual(t, len(m.members), window+1+maxRoom, "xid %d", xid)
		require.Equal(t, Member{xid, ForKeyShare}, m.members[len(m.members)-1])
	}
	stats := s.Stats()
	assert.Greater(t, float64(stats.Appended)/float64(stats.Created), 0.99, "%+v", stats)
}

// TestConcurrentExpandsOfOneSet: many goroutines expand one multixact at
// once (the racing lockers of a hot row); exactly one appends in place,
// every result holds the parent's members plus its own newcomer. Run with
// -race: an element is written only by the goroutine that claimed it.
func TestConcurrentExpandsOfOneSet(t *testing.T) {
	s := NewStore()
	st := fates{}
	for x := uint64(1); x <= 100; x++ {
		st[x] = "running"
	}
	m := mustCreate(t, s, Member{1, ForKeyShare})
	m, err := s.Expand(m, 2, ForKeyShare, st)
	require.NoError(t, err)
	before := s.Stats()
	var wg sync.WaitGroup
	got := make([]*MultiXact, 50)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := s.Expand(m, uint64(50+i), ForKeyShare, st)
			assert.NoError(t, err)
			got[i] = e
		}()
	}
	wg.Wait()
	for i, e := range got {
		assert.Equal(t, []Member{{1, ForKeyShare}, {2, ForKeyShare}, {uint64(50 + i), ForKeyShare}}, e.members)
	}
	assert.Equal(t, uint64(1), s.Stats().Appended-before.Appended)
	assert.Equal(t, []Member{{1, ForKeyShare}, {2, ForKeyShare}}, m.members)
}

// TestMembersAppendCopies: a caller appending to Members cannot write into
// the growth room that an in-place expansion handed to another multixact.
func TestMembersAppendCopies(t *testing.T) {
	s := NewStore()
	st := fates{1: "running", 2: "running", 3: "running", 4: "running"}
	m := mustCreate(t, s, Member{1, ForKeyShare}, Member{2, ForKeyShare})
	c, err := s.Expand(m, 3, ForKeyShare, st) // a copy with room to grow
	require.NoError(t, err)
	require.Greater(t, cap(c.members), len(c.members))
	a, err := s.Expand(c, 4, ForShare, st) // appended in place
	require.NoError(t, err)
	ms := c.Members()
	assert.Equal(t, len(ms), cap(ms), "clipped")
	_ = append(ms, Member{99, Update}) // would overwrite a's last member
	assert.Equal(t, []Member{{1, ForKeyShare}, {2, ForKeyShare}, {3, ForKeyShare}, {4, ForShare}}, a.Members())
}
