package xact

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// The schedule of tuplelock/README.md's savepoint design, at the xact
// level: SAVEPOINT a; (a write: subxid s1); SAVEPOINT b; (s2); ROLLBACK TO b;
// (s3); ROLLBACK TO a; COMMIT.
func TestSubtransactionsRollBackToTheirSavepoint(t *testing.T) {
	m := NewManager()
	top := m.Begin()
	other := m.Begin()

	markA := m.NextXid() // SAVEPOINT a
	s1 := m.BeginSub(top)
	markB := m.NextXid() // SAVEPOINT b
	s2 := m.BeginSub(top)
	assert.Greater(t, s1.ID(), top.ID())
	assert.Greater(t, s2.ID(), s1.ID())
	assert.Same(t, top, s1.Top())
	assert.Same(t, top, top.Top())
	assert.True(t, s1.IsSub())
	assert.False(t, top.IsSub())

	for _, x := range []*Xact{top, s1, s2} {
		for _, asker := range []*Xact{top, s1, s2} {
			assert.True(t, asker.IsCurrent(x.ID()), "%d is current for %d", x.ID(), asker.ID())
		}
		assert.False(t, other.IsCurrent(x.ID()))
		assert.True(t, m.IsInProgress(x.ID()))
		assert.Same(t, x, m.Lookup(x.ID()))
	}
	assert.False(t, top.IsCurrent(other.ID()))
	assert.False(t, top.IsCurrent(InvalidXID))
	assert.Equal(t, 2, m.NumLive(), "subtransactions are their top level's, not counted")
	assert.ElementsMatch(t, []XID{top.ID(), other.ID()}, m.Live())

	m.AbortSubsFrom(top, markB) // ROLLBACK TO b
	assert.True(t, isDone(s2))
	assert.False(t, isDone(s1))
	st, _ := m.Status(s2.ID())
	assert.Equal(t, Aborted, st)
	assert.False(t, top.IsCurrent(s2.ID()), "a rolled-back subxid is no longer current")
	assert.True(t, top.IsCurrent(s1.ID()))
	assert.Nil(t, m.Lookup(s2.ID()))
	assert.Equal(t, 1, m.Subs(top))

	s3 := m.BeginSub(top) // b stays established: the next write gets a new subxid
	assert.Greater(t, s3.ID(), s2.ID())
	m.AbortSubsFrom(top, markA) // ROLLBACK TO a: s1 and s3
	for _, x := range []*Xact{s1, s3} {
		assert.True(t, isDone(x))
		st, _ := m.Status(x.ID())
		assert.Equal(t, Aborted, st)
		assert.False(t, top.IsCurrent(x.ID()))
	}
	assert.Equal(t, 0, m.Subs(top))
	assert.True(t, top.IsCurrent(top.ID()))

	s4 := m.BeginSub(top)
	m.Commit(top)
	for _, x := range []*Xact{top, s4} {
		assert.True(t, isDone(x))
		assert.True(t, m.DidCommit(x.ID()))
	}
	_, c4 := m.Status(s4.ID())
	_, ct := m.Status(top.ID())
	assert.Equal(t, ct, c4, "a released subtransaction commits with its top level's CSN")
	for _, x := range []*Xact{s1, s2, s3} {
		assert.False(t, m.DidCommit(x.ID()), "a rolled-back subtransaction stays aborted when its top level commits")
	}
	m.Abort(other)
}

func TestTopLevelAbortAbortsItsSubtransactions(t *testing.T) {
	m := NewManager()
	top := m.Begin()
	s1 := m.BeginSub(top)
	s2 := m.BeginSub(s1) // a subtransaction's subtransaction belongs to the same top level
	assert.Same(t, top, s2.Top())
	m.Abort(top)
	for _, x := range []*Xact{top, s1, s2} {
		assert.True(t, isDone(x))
		st, _ := m.Status(x.ID())
		assert.Equal(t, Aborted, st)
		assert.Nil(t, m.Lookup(x.ID()))
	}
}

func TestSubtransactionVisibility(t *testing.T) {
	m := NewManager()
	top := m.Begin()
	reader := m.Begin()
	sub := m.BeginSub(top)
	before := m.TakeSnapshot(reader)
	own := m.TakeSnapshot(top)
	assert.True(t, m.Visible(sub.ID(), own), "a transaction sees its subtransactions' effects")
	assert.False(t, m.Visible(sub.ID(), before))

	rolled := m.BeginSub(top)
	m.AbortSubsFrom(top, rolled.ID())
	assert.False(t, m.Visible(rolled.ID(), m.TakeSnapshot(top)), "nor those of one rolled back")

	m.Commit(top)
	after := m.TakeSnapshot(reader)
	assert.True(t, m.Visible(sub.ID(), after))
	assert.True(t, m.Visible(top.ID(), after))
	assert.False(t, m.Visible(rolled.ID(), after))
	assert.False(t, m.Visible(sub.ID(), before), "a snapshot taken before the commit still does not see it")
	m.Commit(reader)
}

func TestSubtransactionMisuse(t *testing.T) {
	m := NewManager()
	top := m.Begin()
	sub := m.BeginSub(top)
	assert.Panics(t, func() { m.Commit(sub) }, "a subtransaction ends with its top level or by AbortSubsFrom")
	m.AbortSubsFrom(top, m.NextXid()) // rolls back nothing: no subxid at or above the mark
	assert.Equal(t, 1, m.Subs(top))
	assert.False(t, isDone(sub))
	m.Commit(top)
}

// A reader that sees the top level committed sees every subtransaction it
// kept committed too: the subxids' entries are written before the CSN is
// published (commit atomicity).
func TestSubtransactionCommitIsAtomic(t *testing.T) {
	m := NewManager()
	for range 200 {
		top := m.Begin()
		subs := []*Xact{m.BeginSub(top), m.BeginSub(top), m.BeginSub(top)}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				snap := m.CommittedNow()
				if m.Visible(top.ID(), snap) {
					for _, s := range subs {
						if !m.Visible(s.ID(), snap) {
							t.Errorf("top %d visible to %d but its subxid %d not", top.ID(), snap.CSN(), s.ID())
						}
					}
					return
				}
			}
		}()
		m.Commit(top)
		wg.Wait()
	}
}

// A model of savepoints: a stack of marks, subxids assigned at random
// levels, rolled back and released at random; IsCurrent and the fates
// must match the model at every step and after the end.
func TestSubtransactionsMatchModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := NewManager()
		top := m.Begin()
		var marks []XID        // open savepoints
		live := map[XID]bool{} // subxid -> not rolled back
		var all []*Xact
		for range rapid.IntRange(0, 40).Draw(t, "steps") {
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0:
				marks = append(marks, m.NextXid())
			case 1:
				if len(marks) > 0 {
					x := m.BeginSub(top)
					live[x.ID()] = true
					all = append(all, x)
				}
			case 2: // ROLLBACK TO the savepoint at depth d (it stays open)
				if len(marks) > 0 {
					d := rapid.IntRange(0, len(marks)-1).Draw(t, "depth")
					m.AbortSubsFrom(top, marks[d])
					for id := range live {
						if id >= marks[d] {
							delete(live, id)
						}
					}
					marks = marks[:d+1]
				}
			case 3: // RELEASE the innermost savepoint
				if len(marks) > 0 {
					marks = marks[:len(marks)-1]
				}
			}
			for _, x := range all {
				if top.IsCurrent(x.ID()) != live[x.ID()] {
					t.Fatalf("IsCurrent(%d) = %v, model %v", x.ID(), !live[x.ID()], live[x.ID()])
				}
			}
			require.Equal(t, len(live), m.Subs(top))
		}
		commit := rapid.Bool().Draw(t, "commit")
		if commit {
			m.Commit(top)
		} else {
			m.Abort(top)
		}
		for _, x := range all {
			if !isDone(x) {
				t.Fatalf("subxid %d not done after its top level ended", x.ID())
			}
			if m.DidCommit(x.ID()) != (commit && live[x.ID()]) {
				t.Fatalf("subxid %d committed = %v", x.ID(), m.DidCommit(x.ID()))
			}
		}
	})
}
