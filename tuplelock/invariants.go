package tuplelock

import (
	"github.com/tupled/tupled/internal/invariants"
	"github.com/tupled/tupled/internal/xact"
)

// invLockDiesWithXid names doc.go's "nothing outlives the transaction": a
// row lock is its xid in the header, and it vanishes when that xid ends
// only if no ended xid is ever written into a new xmax.
const invLockDiesWithXid = "tuplelock.lock-dies-with-xid"

// invWriteNoted names doc.go's "a writer commits with a CSN": every
// insert, update or delete is preceded by xact.Xact.NoteWrite, so that
// CommitNoWrite can never skip the CSN of a transaction whose writes a
// snapshot must see or not see.
const invWriteNoted = "tuplelock.write-noted"

// checkWriteNoted checks that me's transaction noted its write before
// where applies it (invariants.Enabled only).
func checkWriteNoted(me *xact.Xact, where string) {
	if !me.Wrote() {
		invariants.Fail(invWriteNoted, "%s: transaction %d writes a tuple without NoteWrite", where, me.ID())
	}
}

// checkNewXmax checks the xmax nx that me is about to write (latch held;
// invariants.Enabled only; O(1), or O(members) for a multixact): me is
// still running, and the xmax names it, as the plain xid or as a member.
func (e *Locker) checkNewXmax(me *xact.Xact, nx newXmax, where string) {
	if !e.xacts.IsInProgress(me.ID()) {
		invariants.Fail(invLockDiesWithXid, "%s: transaction %d, which has ended, writes xmax %d", where, me.ID(), nx.xmax)
	}
	if nx.multi == nil {
		if nx.xmax != me.ID() {
			invariants.Fail(invLockDiesWithXid, "%s: transaction %d writes plain xmax %d, not its own", where, me.ID(), nx.xmax)
		}
		return
	}
	for _, mb := range nx.multi.Members() {
		if mb.Xid == me.ID() {
			return
		}
	}
	invariants.Fail(invLockDiesWithXid, "%s: transaction %d writes multixact %d, not one of its members %v", where, me.ID(), nx.xmax, nx.multi.Members())
}
