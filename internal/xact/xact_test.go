package xact

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// isDone reports whether x's Done channel is closed, without blocking.
func isDone(x *Xact) bool {
	select {
	case <-x.Done():
		return true
	default:
		return false
	}
}

func TestBeginAssignsXidsFromOneInIncreasingOrder(t *testing.T) {
	m := NewManager()
	require.Equal(t, XID(1), m.NextXid(), "the first xid handed out is 1")

	var prev XID
	for i := 1; i <= 5; i++ {
		x := m.Begin()
		assert.Equal(t, XID(i), x.ID())
		assert.Greater(t, x.ID(), prev)
		assert.Equal(t, x.ID()+1, m.NextXid())
		prev = x.ID()
	}
	assert.NotEqual(t, InvalidXID, prev)
}

func TestConcurrentBeginHandsOutDistinctXids(t *testing.T) {
	m := NewManager()
	const workers, each = 4, 500
	ids := make([][]XID, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var last XID
			for range each {
				x := m.Begin()
				// Within one goroutine xids are strictly increasing.
				if x.ID() <= last {
					t.Errorf("xid %d after %d in one goroutine", x.ID(), last)
				}
				last = x.ID()
				ids[w] = append(ids[w], x.ID())
			}
		})
	}
	wg.Wait()
	all := slices.Concat(ids...)
	slices.Sort(all)
	require.Len(t, all, workers*each)
	for i, id := range all {
		require.Equal(t, XID(i+1), id, "xids are exactly 1..n, no gaps, no duplicates")
	}
	assert.Equal(t, workers*each, m.NumLive())
}

func TestCommitAndAbortRecordStatusAndCloseDone(t *testing.T) {
	m := NewManager()
	c, a := m.Begin(), m.Begin()

	for _, x := range []*Xact{c, a} {
		st, csn := m.Status(x.ID())
		assert.Equal(t, InProgress, st)
		assert.Zero(t, csn)
		assert.True(t, m.IsInProgress(x.ID()))
		assert.False(t, m.DidCommit(x.ID()))
		assert.False(t, isDone(x))
		assert.Same(t, x, m.Lookup(x.ID()))
	}
	assert.Equal(t, 2, m.NumLive())
	assert.ElementsMatch(t, []XID{c.ID(), a.ID()}, m.Live())

	before := m.LastCSN()
	m.Commit(c)
	st, csn := m.Status(c.ID())
	assert.Equal(t, Committed, st)
	assert.Equal(t, before+1, csn, "a commit gets the next CSN")
	assert.Equal(t, csn, m.LastCSN())
	assert.Greater(t, csn, FrozenCSN, "a real commit's CSN is above the frozen CSN")
	assert.False(t, m.IsInProgress(c.ID()))
	assert.True(t, m.DidCommit(c.ID()))
	assert.True(t, isDone(c))
	assert.Nil(t, m.Lookup(c.ID()))

	m.Abort(a)
	st, csn = m.Status(a.ID())
	assert.Equal(t, Aborted, st)
	assert.Zero(t, csn)
	assert.Equal(t, before+1, m.LastCSN(), "an abort consumes no CSN")
	assert.False(t, m.IsInProgress(a.ID()))
	assert.False(t, m.DidCommit(a.ID()))
	assert.True(t, isDone(a))
	assert.Nil(t, m.Lookup(a.ID()))

	assert.Zero(t, m.NumLive())
	assert.Empty(t, m.Live())
	assert.Equal(t, "committed", Committed.String())
	assert.Equal(t, "aborted", Aborted.String())
	assert.Equal(t, "in progress", InProgress.String())
}

func TestSnapshotSeesExactlyWhatCommittedBeforeIt(t *testing.T) {
	m := NewManager()
	early := m.Begin()
	m.Commit(early)
	aborted := m.Begin()
	m.Abort(aborted)
	running := m.Begin()
	late := m.Begin()
	reader := m.Begin()

	snap := m.TakeSnapshot(reader)
	assert.True(t, snap.IsCurrent(reader.ID()))
	assert.Equal(t, m.LastCSN(), snap.CSN())
	m.Commit(late)

	assert.True(t, m.Visible(early.ID(), snap), "committed before the snapshot")
	assert.True(t, m.Visible(reader.ID(), snap), "a transaction sees itself")
	assert.False(t, m.Visible(aborted.ID(), snap), "aborted")
	assert.False(t, m.Visible(running.ID(), snap), "still running")
	assert.False(t, m.Visible(late.ID(), snap), "committed after the snapshot was taken")

	m.Commit(running)
	assert.False(t, m.Visible(running.ID(), snap), "a snapshot never changes its mind")

	again := m.TakeSnapshot(reader)
	assert.True(t, m.Visible(late.ID(), again))
	assert.True(t, m.Visible(running.ID(), again))
	assert.False(t, m.Visible(aborted.ID(), again))
}

// TestVisibilityModel checks Visible against a model over random schedules:
// a snapshot sees exactly the transactions that had committed when it was
// taken, plus its own.
func TestVisibilityModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := NewManager()
		var live []*Xact
		committed := map[XID]bool{}
		type taken struct {
			snap Snapshot
			saw  map[XID]bool // committed at the time it was taken
		}
		var snaps []taken
		all := []XID{}

		steps := rapid.IntRange(1, 60).Draw(t, "steps")
		for range steps {
			switch op := rapid.IntRange(0, 3).Draw(t, "op"); {
			case op == 0 || len(live) == 0:
				x := m.Begin()
				live = append(live, x)
				all = append(all, x.ID())
			case op == 1:
				i := rapid.IntRange(0, len(live)-1).Draw(t, "commit")
				m.Commit(live[i])
				committed[live[i].ID()] = true
				live = slices.Delete(live, i, i+1)
			case op == 2:
				i := rapid.IntRange(0, len(live)-1).Draw(t, "abort")
				m.Abort(live[i])
				live = slices.Delete(live, i, i+1)
			default:
				i := rapid.IntRange(0, len(live)-1).Draw(t, "snapshot")
				snaps = append(snaps, taken{m.TakeSnapshot(live[i]), maps(committed)})
			}
		}
		for _, s := range snaps {
			for _, xid := range all {
				want := s.saw[xid] || s.snap.IsCurrent(xid)
				if got := m.Visible(xid, s.snap); got != want {
					t.Fatalf("snapshot %+v: Visible(%d) = %v, want %v", s.snap, xid, got, want)
				}
			}
		}
	})
}

func maps(m map[XID]bool) map[XID]bool {
	out := make(map[XID]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestHorizonIsHeldBackByLiveSnapshot(t *testing.T) {
	m := NewManager()
	assert.Equal(t, m.LastCSN(), m.Horizon(), "no snapshot: the horizon is the last CSN")

	reader := m.Begin()
	assert.Equal(t, m.LastCSN(), m.Horizon(), "a transaction without a snapshot holds nothing back")
	snap := m.TakeSnapshot(reader)

	for range 3 {
		w := m.Begin()
		m.Commit(w)
	}
	require.Greater(t, m.LastCSN(), snap.CSN())
	assert.Equal(t, snap.CSN(), m.Horizon(), "the live snapshot holds the horizon back")

	// A new snapshot (READ COMMITTED's next statement) releases the old one.
	snap2 := m.TakeSnapshot(reader)
	assert.Equal(t, m.LastCSN(), snap2.CSN())
	assert.Equal(t, snap2.CSN(), m.Horizon())

	w := m.Begin()
	m.Commit(w)
	assert.Equal(t, snap2.CSN(), m.Horizon())

	// The oldest of several snapshots wins.
	other := m.Begin()
	snap3 := m.TakeSnapshot(other)
	require.Greater(t, snap3.CSN(), snap2.CSN())
	assert.Equal(t, snap2.CSN(), m.Horizon())

	m.Commit(reader)
	assert.Equal(t, snap3.CSN(), m.Horizon(), "ending the transaction releases its snapshot")
	m.Abort(other)
	assert.Equal(t, m.LastCSN(), m.Horizon())
}

// TestHorizonNeverPassesPublishedSnapshot takes snapshots while commits
// happen and samples Horizon concurrently. A snapshot counts as in use from
// just before TakeSnapshot is called until it is dropped; every Horizon call
// that ran entirely inside that interval must return at most its CSN (else
// vacuum could remove a version the snapshot still sees). Run with -race.
func TestHorizonNeverPassesPublishedSnapshot(t *testing.T) {
	m := NewManager()

	type use struct {
		csn      atomic.Uint64 // 0 until TakeSnapshot returns
		maxHoriz atomic.Uint64 // largest horizon sampled while in use throughout
	}
	var (
		mu    sync.Mutex
		inUse = map[*use]bool{}
		uses  []*use
	)
	register := func() *use {
		u := new(use)
		mu.Lock()
		inUse[u] = true
		uses = append(uses, u)
		mu.Unlock()
		return u
	}
	release := func(u *use) {
		mu.Lock()
		delete(inUse, u)
		mu.Unlock()
	}
	current := func() map[*use]bool {
		mu.Lock()
		defer mu.Unlock()
		out := make(map[*use]bool, len(inUse))
		for u := range inUse {
			out[u] = true
		}
		return out
	}

	var stop atomic.Bool
	var bg sync.WaitGroup
	// Committers keep the last CSN moving.
	for range 2 {
		bg.Go(func() {
			for !stop.Load() {
				m.Commit(m.Begin())
			}
		})
	}
	// The sampler: a horizon taken while a snapshot was in use throughout
	// is recorded against it.
	var samples atomic.Int64
	bg.Go(func() {
		for !stop.Load() {
			before := current()
			h := m.Horizon()
			after := current()
			for u := range before {
				if !after[u] {
					continue
				}
				for {
					old := u.maxHoriz.Load()
					if h <= old || u.maxHoriz.CompareAndSwap(old, h) {
						break
					}
				}
			}
			samples.Add(1)
		}
	})
	// Readers take several snapshots per transaction, as READ COMMITTED
	// does, and also check the horizon themselves while holding them.
	// They go on until the sampler has overlapped them for a while.
	const readers, rounds, minSamples = 3, 300, 500
	var rd sync.WaitGroup
	for range readers {
		rd.Go(func() {
			for i := 0; i < rounds || samples.Load() < minSamples; i++ {
				x := m.Begin()
				for range 3 {
					u := register()
					s := m.TakeSnapshot(x)
					u.csn.Store(s.CSN())
					if h := m.Horizon(); h > s.CSN() {
						t.Errorf("horizon %d passed the caller's own snapshot %d", h, s.CSN())
					}
					release(u)
				}
				m.Commit(x)
			}
		})
	}
	rd.Wait()
	stop.Store(true)
	bg.Wait()

	require.GreaterOrEqual(t, samples.Load(), int64(minSamples))
	for _, u := range uses {
		if h := u.maxHoriz.Load(); h > u.csn.Load() {
			t.Errorf("horizon %d sampled while snapshot %d was in use", h, u.csn.Load())
		}
	}
	assert.Equal(t, m.LastCSN(), m.Horizon(), "all snapshots released")
}

func TestOldestLive(t *testing.T) {
	m := NewManager()
	assert.Equal(t, m.NextXid(), m.OldestLive(), "nothing runs")

	x1, x2, x3 := m.Begin(), m.Begin(), m.Begin()
	assert.Equal(t, x1.ID(), m.OldestLive())
	m.Commit(x2)
	assert.Equal(t, x1.ID(), m.OldestLive(), "ending a younger transaction changes nothing")
	m.Abort(x1)
	assert.Equal(t, x3.ID(), m.OldestLive())
	m.Commit(x3)
	assert.Equal(t, m.NextXid(), m.OldestLive())
}

func TestFreezeCutoff(t *testing.T) {
	m := NewManager()
	c1 := m.Begin()
	a2 := m.Begin()
	run3 := m.Begin()
	c4 := m.Begin()
	m.Commit(c1)
	m.Abort(a2)
	m.Commit(c4)

	assert.Equal(t, run3.ID(), m.FreezeCutoff(m.LastCSN()), "stops at a running xid; aborted xids below are passed")

	// A reader pins the horizon; run3 then commits above it.
	reader := m.Begin()
	snap := m.TakeSnapshot(reader)
	m.Commit(run3)
	assert.Equal(t, run3.ID(), m.FreezeCutoff(m.Horizon()), "stops at a commit newer than the horizon")
	assert.Equal(t, snap.CSN(), m.Horizon())

	// With a horizon that covers run3's commit the cutoff runs on to the
	// oldest running transaction (the reader).
	assert.Equal(t, reader.ID(), m.FreezeCutoff(m.LastCSN()))
	m.Commit(reader)
	assert.Equal(t, m.NextXid(), m.FreezeCutoff(m.Horizon()), "nothing runs: everything can be frozen")
}

func TestClogGrowsAcrossPages(t *testing.T) {
	m := NewManager()
	assert.Zero(t, m.ClogEntries())
	n := clogPageSize + 100
	xs := make([]*Xact, n)
	for i := range xs {
		xs[i] = m.Begin()
	}
	assert.Equal(t, uint64(2*clogPageSize), m.ClogEntries(), "xid %d needs a second page", clogPageSize)
	// Finish them in a pattern that makes every neighbour differ.
	for i, x := range xs {
		if i%3 == 0 {
			m.Abort(x)
		} else {
			m.Commit(x)
		}
	}
	lastCSN := uint64(0)
	for i, x := range xs {
		st, csn := m.Status(x.ID())
		if i%3 == 0 {
			require.Equal(t, Aborted, st, "xid %d", x.ID())
			continue
		}
		require.Equal(t, Committed, st, "xid %d", x.ID())
		require.Greater(t, csn, lastCSN, "CSNs follow commit order")
		lastCSN = csn
	}
	for _, xid := range []XID{clogPageSize - 1, clogPageSize, clogPageSize + 1} {
		st, _ := m.Status(xid)
		assert.NotEqual(t, InProgress, st, "xid %d around the page boundary", xid)
	}
	st, _ := m.Status(XID(n + 1))
	assert.Equal(t, InProgress, st, "an xid beyond the last page reads as not finished")
}

func TestTruncateClog(t *testing.T) {
	m := NewManager()
	// Xids 1..n fill pages 0 and 1, odd ones aborted, even ones committed.
	n := 2*clogPageSize - 10
	var committed []XID
	for i := range n {
		x := m.Begin()
		if i%2 == 0 {
			m.Abort(x)
		} else {
			m.Commit(x)
			committed = append(committed, x.ID())
		}
	}
	require.Equal(t, uint64(2*clogPageSize), m.ClogEntries())
	_, csnAbove := m.Status(committed[len(committed)-1])

	// Truncating in the middle of page 1 drops page 0 only.
	cutoff := XID(clogPageSize + 7)
	m.TruncateClog(cutoff)
	assert.Equal(t, uint64(clogPageSize), m.ClogEntries(), "one whole page dropped")

	for _, xid := range []XID{1, 2, clogPageSize - 1} {
		st, csn := m.Status(xid)
		assert.Equal(t, Committed, st, "xid %d below the truncation point (even an aborted one)", xid)
		assert.Equal(t, FrozenCSN, csn, "xid %d reports the frozen CSN", xid)
		assert.True(t, m.DidCommit(xid))
		assert.False(t, m.IsInProgress(xid))
	}
	// Visible to every snapshot, even one taken before anything committed.
	assert.True(t, m.Visible(1, Snapshot{csn: FrozenCSN}))

	// The kept page still knows its entries, below and above the cutoff.
	for _, xid := range []XID{clogPageSize, clogPageSize + 1, cutoff + 1} {
		st, _ := m.Status(xid)
		want := Committed
		if xid%2 == 1 {
			want = Aborted
		}
		assert.Equal(t, want, st, "xid %d in the kept page", xid)
	}
	st, csn := m.Status(committed[len(committed)-1])
	assert.Equal(t, Committed, st)
	assert.Equal(t, csnAbove, csn, "the kept page keeps real CSNs")

	// Truncating below the current point is a no-op.
	m.TruncateClog(5)
	assert.Equal(t, uint64(clogPageSize), m.ClogEntries())

	// The log keeps growing after truncation, into page 2.
	var xs []*Xact
	for range 20 {
		xs = append(xs, m.Begin())
	}
	for _, x := range xs {
		m.Commit(x)
	}
	assert.Equal(t, uint64(2*clogPageSize), m.ClogEntries())
	last := xs[len(xs)-1].ID()
	require.GreaterOrEqual(t, last, XID(2*clogPageSize))
	st, _ = m.Status(last)
	assert.Equal(t, Committed, st)
}

// TestRefreshFinished: IsInProgress answers for xids below the refreshed
// bound without the clog, and the bound never passes a transaction whose
// entry still says "in progress" — even one that ended after a later one.
func TestRefreshFinished(t *testing.T) {
	m := NewManager()
	a, b, c := m.Begin(), m.Begin(), m.Begin()
	m.Commit(a)
	m.Commit(c) // b still runs
	m.RefreshFinished()
	require.Equal(t, b.ID(), m.finishedBelow.Load(), "stops at the first xid still in progress")
	require.False(t, m.IsInProgress(a.ID()))
	require.True(t, m.IsInProgress(b.ID()))
	require.False(t, m.IsInProgress(c.ID()))

	m.Abort(b)
	m.RefreshFinished()
	require.Equal(t, c.ID()+1, m.finishedBelow.Load())
	require.False(t, m.IsInProgress(b.ID()))

	// The bound holds without the clog: drop the entries and a finished
	// xid still reads as ended, while a new one runs.
	d := m.Begin()
	m.TruncateClog(c.ID() + 1)
	require.False(t, m.IsInProgress(c.ID()))
	require.True(t, m.IsInProgress(d.ID()))
	m.RefreshFinished()
	require.Equal(t, d.ID(), m.finishedBelow.Load())
	m.Commit(d)
}

// TestIsCurrent: a transaction's own xid is current to it and to its
// snapshots, nobody else's is, and InvalidXID never is — not even to a
// snapshot of no transaction (CommittedNow, the zero Snapshot), whose
// frozen versions carry xmin 0.
func TestIsCurrent(t *testing.T) {
	m := NewManager()
	a, b := m.Begin(), m.Begin()
	assert.True(t, a.IsCurrent(a.ID()))
	assert.False(t, a.IsCurrent(b.ID()))
	assert.False(t, a.IsCurrent(InvalidXID))
	snap := m.TakeSnapshot(a)
	assert.True(t, snap.IsCurrent(a.ID()))
	assert.False(t, snap.IsCurrent(b.ID()))
	assert.False(t, snap.IsCurrent(InvalidXID))
	assert.True(t, m.Visible(a.ID(), snap), "own changes are visible while running")
	assert.False(t, m.Visible(b.ID(), snap))
	for _, s := range []Snapshot{m.CommittedNow(), {}} {
		assert.False(t, s.IsCurrent(InvalidXID), "a snapshot of no transaction has no own xid")
		assert.False(t, s.IsCurrent(a.ID()))
	}
	m.Commit(a)
	assert.True(t, a.IsCurrent(a.ID()), "an xid stays its transaction's after the end")
}

// TestAdvanceXidCostsOnePage: recovery advances a fresh Manager past every
// id a previous incarnation may have used (each reopen of an on-disk
// database moves it up by a reservation chunk). That must not allocate and
// fill clog entries for all the skipped ids: it once did, so that Open took
// time and memory in proportion to the database's xid (8 bytes per xid ever
// reserved, found by tests/metamorphic's reopens).
func TestAdvanceXidCostsOnePage(t *testing.T) {
	m := NewManager()
	next := XID(1<<24 + 5) // small enough that the old code fails in a second rather than exhausting memory
	m.AdvanceXid(next)
	require.Equal(t, uint64(clogPageSize), m.ClogEntries(), "one page: next's")
	require.Equal(t, next, m.NextXid())

	// Skipped ids: below next's page they read as frozen, in it as
	// aborted; none is in progress.
	for _, xid := range []XID{1, 1 << 20, next&^(clogPageSize-1) - 1} {
		st, csn := m.Status(xid)
		require.Equal(t, Committed, st, "xid %d", xid)
		require.Equal(t, FrozenCSN, csn, "xid %d", xid)
		require.False(t, m.IsInProgress(xid))
	}
	for _, xid := range []XID{next &^ (clogPageSize - 1), next - 1} {
		st, _ := m.Status(xid)
		require.Equal(t, Aborted, st, "xid %d", xid)
		require.False(t, m.IsInProgress(xid))
	}
	require.Equal(t, next, m.FreezeCutoff(m.Horizon()), "nothing runs: every skipped id is settled")

	// Transactions go on from next, across the page boundary.
	x := m.Begin()
	require.Equal(t, next, x.ID())
	require.True(t, m.IsInProgress(x.ID()))
	m.Commit(x)
	st, _ := m.Status(x.ID())
	require.Equal(t, Committed, st)
	for range clogPageSize {
		m.Commit(m.Begin())
	}
	require.Equal(t, uint64(2*clogPageSize), m.ClogEntries())
	m.RefreshFinished()
	require.Equal(t, m.NextXid(), m.finishedBelow.Load())
}

// TestDoneOnDemand: the Done channel is made by the first waiter, not by
// Begin, and whichever of Done and the end comes first, a waiter never
// gets a channel that stays open.
func TestDoneOnDemand(t *testing.T) {
	m := NewManager()
	before := m.Begin()
	ch := before.Done() // asked while running: closed by the end
	require.False(t, isDone(before))
	require.Same(t, before.done.Load(), before.done.Load())
	m.Commit(before)
	require.True(t, isDone(before))
	<-ch

	after := m.Begin()
	require.Nil(t, after.done.Load(), "Begin makes no channel")
	m.Abort(after)
	require.True(t, isDone(after), "Done of an ended transaction nobody waited for")

	var in Xact
	m.BeginIn(&in)
	require.True(t, m.IsInProgress(in.ID()))
	require.Same(t, &in, m.Lookup(in.ID()))
	m.Commit(&in)
	require.True(t, isDone(&in))

	// Racing waiters and the end (run under -race).
	for range 200 {
		x := m.Begin()
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-x.Done()
			}()
		}
		m.Commit(x)
		wg.Wait()
	}
}

// TestCommitNoWrite: a transaction that noted no write commits with the
// last CSN, handing out none, and still ends as any commit does (clog,
// live set, Done — a waiter's channel closes); one that noted a write,
// itself or through a subtransaction, gets a fresh CSN exactly as Commit
// gives it, unseen by a snapshot taken before.
func TestCommitNoWrite(t *testing.T) {
	m := NewManager()
	w := m.Begin()
	m.Commit(w) // a CSN above the frozen one
	c0 := m.LastCSN()

	ro := m.Begin()
	sub := m.BeginSub(ro) // a savepoint that only locked
	done := ro.Done()     // a waiter
	m.CommitNoWrite(ro)
	assert.Equal(t, c0, m.LastCSN(), "no CSN handed out")
	for _, x := range []*Xact{ro, sub} {
		st, csn := m.Status(x.ID())
		assert.Equal(t, Committed, st)
		assert.Equal(t, c0, csn, "the last CSN published")
		assert.False(t, m.IsInProgress(x.ID()))
		assert.Nil(t, m.Lookup(x.ID()))
		assert.True(t, isDone(x))
	}
	select {
	case <-done:
	default:
		t.Fatal("the waiter's Done channel stayed open")
	}
	assert.Zero(t, m.NumLive())

	for _, viaSub := range []bool{false, true} {
		x := m.Begin()
		snap := m.TakeSnapshot(m.Begin())
		if viaSub {
			m.BeginSub(x).NoteWrite()
		} else {
			x.NoteWrite()
		}
		require.True(t, x.Wrote())
		before := m.LastCSN()
		m.CommitNoWrite(x)
		_, csn := m.Status(x.ID())
		assert.Equal(t, before+1, csn, "a writer gets a fresh CSN (viaSub %v)", viaSub)
		assert.Equal(t, csn, m.LastCSN())
		assert.False(t, m.Visible(x.ID(), snap), "an older snapshot does not see the writer")
		assert.True(t, m.Visible(x.ID(), m.CommittedNow()))
	}
}
