package tuplelock

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/tuplemode"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/multixact"
)

// TestComputeNewXmaxNeverForgets checks computeNewXmax over random xmax
// states that the locking protocol can reach when it writes (every other
// running member and any committed updater is compatible with the request;
// our own update makes the version invisible, so it is not one of them):
//
//   - whatever must still be remembered — another running member, or a
//     committed updater — is a member of the result, with its status;
//   - the requester is recorded with at least the requested strength;
//   - the infomask bits are those of a single locker/updater, or
//     GetMultiXactIdHintBits of the new multixact;
//   - a multixact appears for a plain or empty xmax only when something
//     else must be remembered (or ShareFastPathOff asks for one).
func TestComputeNewXmaxNeverForgets(t *testing.T) {
	statuses := []multixact.Status{multixact.ForKeyShare, multixact.ForShare, multixact.ForNoKeyUpdate,
		multixact.ForUpdate, multixact.NoKeyUpdate, multixact.Update}
	rapid.Check(t, func(rt *rapid.T) {
		e := NewLocker(nil, xact.NewManager(), multixact.NewStore(), nil, rapid.Bool().Draw(rt, "shareFastPathOff"))
		// Transactions 1..n; me is one of them and is running.
		n := rapid.IntRange(1, 5).Draw(rt, "n")
		xs := make([]*xact.Xact, n)
		for i := range xs {
			xs[i] = e.xacts.Begin()
		}
		meIdx := rapid.IntRange(0, n-1).Draw(rt, "me")
		me := xs[meIdx].ID()
		fate := map[uint64]string{me: "running"}
		for i, x := range xs {
			if i == meIdx {
				continue
			}
			fate[x.ID()] = rapid.SampledFrom([]string{"running", "committed", "aborted"}).Draw(rt, "fate")
			switch fate[x.ID()] {
			case "committed":
				e.xacts.Commit(x)
			case "aborted":
				e.xacts.Abort(x)
			}
		}
		mode := tuplemode.Mode(rapid.IntRange(0, 3).Draw(rt, "mode"))
		isUpdate := rapid.Bool().Draw(rt, "isUpdate") && mode >= tuplemode.NoKeyExclusive

		// member draws a status for xid that the protocol can leave in
		// xmax when we write: ours is a lock (our own update would make
		// the version invisible to us); another running transaction's,
		// or a committed updater, does not conflict with the request
		// (else the caller would have waited, or failed with TM_Updated).
		member := func(xid uint64) multixact.Member {
			var ok []multixact.Status
			for _, st := range statuses {
				switch {
				case xid == me:
					if st.IsUpdate() {
						continue
					}
				case fate[xid] == "running" || fate[xid] == "committed" && st.IsUpdate():
					if conflicts(st.LockMode(), mode) || isUpdate && st.IsUpdate() {
						continue
					}
				}
				ok = append(ok, st)
			}
			if len(ok) == 0 {
				rt.Skip("no compatible status")
			}
			return multixact.Member{Xid: xid, Status: rapid.SampledFrom(ok).Draw(rt, "status")}
		}

		// The old xmax: none, a plain xid, or a multixact.
		tup := heap.NewFrozenTuple(nil) // xmax invalid
		var old []multixact.Member
		switch kind := rapid.IntRange(0, 2).Draw(rt, "kind"); kind {
		case 0:
		case 1:
			m := member(xs[rapid.IntRange(0, n-1).Draw(rt, "xmax")].ID())
			old = []multixact.Member{m}
			var im, im2 uint16
			if !m.Status.IsUpdate() {
				im, im2 = lockBits(tuplemode.Mode(m.Status))
			} else if m.Status == multixact.Update {
				im2 = heap.KeysUpdated
			}
			tup.SetInitialXmax(m.Xid, nil, im, im2)
		default:
			k := rapid.IntRange(1, 4).Draw(rt, "members")
			for range k {
				old = append(old, member(xs[rapid.IntRange(0, n-1).Draw(rt, "member")].ID()))
			}
			m, err := e.multi.Create(old)
			if err != nil {
				rt.Skip("two updaters")
			}
			old = m.Members()
			im, im2 := multiHintBits(m)
			tup.SetInitialXmax(m.ID(), m, im, im2)
		}

		// What must survive: other running members and a committed
		// updater. ownOld is the strength of our own plain lock, if any.
		var mustKeep []multixact.Member
		ownOld, hasOwnOld := tuplemode.Mode(0), false
		for _, m := range old {
			switch {
			case m.Xid == me:
				if tup.Multi() == nil {
					ownOld, hasOwnOld = m.Status.LockMode(), true
				}
			case fate[m.Xid] == "running" || fate[m.Xid] == "committed" && m.Status.IsUpdate():
				mustKeep = append(mustKeep, m)
			}
		}

		nx, err := e.computeNewXmax(tup, xs[meIdx], mode, isUpdate)
		if err != nil {
			rt.Fatalf("computeNewXmax: %v", err)
		}
		want := status(mode, isUpdate)

		if nx.multi == nil {
			if len(mustKeep) > 0 {
				rt.Fatalf("single xid %d forgets %v", nx.xmax, mustKeep)
			}
			if nx.xmax != me {
				rt.Fatalf("single xmax %d, want me %d", nx.xmax, me)
			}
			if e.shareFastPathOff && !isUpdate {
				rt.Fatalf("ShareFastPathOff lock recorded as a plain xid")
			}
			eff := mode
			if hasOwnOld && ownOld > eff {
				eff = ownOld
			}
			wantIm, wantIm2 := lockBits(eff)
			if isUpdate {
				wantIm, wantIm2 = 0, 0
				if eff == tuplemode.Exclusive {
					wantIm2 = heap.KeysUpdated
				}
			}
			if nx.im != wantIm || nx.im2 != wantIm2 {
				rt.Fatalf("bits %s, want %s", formatBits(nx.im, nx.im2), formatBits(wantIm, wantIm2))
			}
			return
		}

		got := nx.multi.Members()
		if nx.xmax != nx.multi.ID() {
			rt.Fatalf("xmax %d is not the multixact id %d", nx.xmax, nx.multi.ID())
		}
		for _, m := range mustKeep {
			if !slices.Contains(got, m) {
				rt.Fatalf("%v forgotten: %v -> %v", m, old, got)
			}
		}
		recorded := false
		for _, m := range got {
			if m.Xid == me && (m.Status == want || !isUpdate && !m.Status.IsUpdate() && m.Status.LockMode() >= mode) {
				recorded = true
			}
		}
		if !recorded {
			rt.Fatalf("requester %d (%v) missing from %v", me, want, got)
		}
		im, im2 := multiHintBits(nx.multi)
		if nx.im != im || nx.im2 != im2 {
			rt.Fatalf("bits %s, want %s for %v", formatBits(nx.im, nx.im2), formatBits(im, im2), got)
		}
		if tup.Multi() == nil && len(mustKeep) == 0 && !(e.shareFastPathOff && !isUpdate) {
			rt.Fatalf("a multixact %v for nothing to remember (old %v)", got, old)
		}
	})
}
