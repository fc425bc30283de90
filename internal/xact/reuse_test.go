package xact

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBeginInReusesAnEndedRecord: an ended transaction's Xact begun again
// is a new transaction (new xid, in progress, Done open, nothing written),
// and what a waiter got of the old one (Await) stays the old one's: its
// channel is closed, and the old xid is no longer awaitable.
func TestBeginInReusesAnEndedRecord(t *testing.T) {
	m := NewManager()
	x := new(Xact)
	m.BeginIn(x)
	old := x.ID()
	top, done, ok := m.Await(old)
	require.True(t, ok)
	require.Equal(t, old, top)
	x.NoteWrite()
	m.Commit(x)
	requireClosed(t, done)

	m.BeginIn(x)
	require.Greater(t, x.ID(), old)
	require.True(t, m.IsInProgress(x.ID()))
	require.False(t, x.Wrote(), "the reused record keeps the old transaction's write flag")
	require.False(t, isDone(x), "the reused record's Done is closed")
	_, _, ok = m.Await(old)
	require.False(t, ok, "the ended xid is still awaitable")
	require.Equal(t, InvalidXID, m.TopOf(old))
	_, done2, ok := m.Await(x.ID())
	require.True(t, ok)
	requireClosed(t, done) // still the old one's
	select {
	case <-done2:
		t.Fatal("the new transaction's Done is closed while it runs")
	default:
	}
	m.Abort(x)
	requireClosed(t, done2)
	require.Equal(t, 0, m.NumLive())
}

// TestAwaitAcrossReuse: waiters keep awaiting whatever xid a reused
// record runs while its owner ends and begins transactions in it; every
// channel a waiter got closes once the transaction it was got for has
// ended, whatever the record ran since (run with -race: the record is
// reused under the waiters' reads).
func TestAwaitAcrossReuse(t *testing.T) {
	m := NewManager()
	x := new(Xact)
	var cur atomic.Uint64 // the xid x runs, for the waiters
	const rounds = 2000
	type got struct {
		xid  XID
		done <-chan struct{}
	}
	var mu sync.Mutex
	var seen []got
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				id := cur.Load()
				if _, done, ok := m.Await(id); ok {
					mu.Lock()
					seen = append(seen, got{id, done})
					mu.Unlock()
				}
			}
		}()
	}
	for range rounds {
		m.BeginIn(x)
		cur.Store(x.ID())
		m.CommitNoWrite(x)
	}
	close(stop)
	wg.Wait()
	for _, g := range seen {
		select {
		case <-g.done:
		default:
			t.Fatalf("the Done of ended transaction %d is still open", g.xid)
		}
	}
}

func requireClosed(t *testing.T, c <-chan struct{}) {
	t.Helper()
	select {
	case <-c:
	default:
		t.Fatal("Done channel still open")
	}
}
