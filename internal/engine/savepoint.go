package engine

import (
	"fmt"

	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/lockmgr"
)

// savepoint is one open savepoint of a transaction: PostgreSQL's
// subtransaction state, reduced to what tupled needs
// (tuplelock/README.md, "Savepoints and subtransactions").
//
// A savepoint costs nothing until its subtransaction locks or writes:
// then it gets an xid of its own (sub, from xact.Manager.BeginSub), which
// every xmax and xmin it writes carries. Rolling back to it aborts every
// subxid at or above mark — NextXid() when it was established: all of them
// belong to it or to savepoints nested in it — so its row locks and
// versions die with their xids, and its writes are cut from the write set
// (writes: the set's length when it was established), so they never reach
// the commit record. Transaction-level advisory locks taken under it are
// released by its rollback too (adv: how many had been taken before it),
// and so are the table locks (rel: those held when it was established stay;
// PostgreSQL's subtransaction resource owner releases the rest).
type savepoint struct {
	name   string
	mark   xact.XID
	sub    *xact.Xact // nil until the subtransaction locks or writes
	writes int
	adv    int // len(Tx.advTaken) when established
	rel    lockmgr.RelMark
}

// Savepoint establishes a savepoint named name (SAVEPOINT name). A name
// may be reused: the newer savepoint hides the older until released or
// rolled back past. ErrTxAborted in an aborted transaction.
func (tx *Tx) Savepoint(name string) error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if err := tx.usableLocked(); err != nil {
		return err
	}
	tx.savepoints = append(tx.savepoints, savepoint{name: name, mark: tx.e.xacts.NextXid(), writes: len(tx.writes), adv: len(tx.advTaken), rel: tx.proc.RelationMark()})
	return nil
}

// RollbackTo rolls back everything done since savepoint name was
// established (ROLLBACK TO SAVEPOINT name): the row locks and writes of its
// subtransaction and of every savepoint nested in it vanish, the locks and
// writes from before it stay, and the savepoint stays established. It is
// also how a transaction whose operation failed under a savepoint becomes
// usable again. ErrNoSavepoint (3B001) if no open savepoint has that name,
// which, as any error, aborts the transaction down to its innermost
// savepoint (a transaction aborted outside every savepoint stays aborted).
func (tx *Tx) RollbackTo(name string) error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.state == txDone {
		return errs.ErrTxDone
	}
	i := tx.findLocked(name)
	if i < 0 {
		if tx.state == txActive {
			tx.abortLocked()
		}
		return noSavepoint(name)
	}
	tx.rollbackSubsLocked(i)
	tx.savepoints = tx.savepoints[:i+1]
	tx.state = txActive
	tx.subAborted = false
	return nil
}

// Release forgets savepoint name and every savepoint established after it
// (RELEASE SAVEPOINT name): what they did becomes the enclosing level's,
// kept or rolled back with it. ErrNoSavepoint (3B001) if no open savepoint
// has that name (an error: the transaction is aborted down to its
// innermost savepoint, as PostgreSQL does); ErrTxAborted in an aborted
// transaction.
func (tx *Tx) Release(name string) error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if err := tx.usableLocked(); err != nil {
		return err
	}
	i := tx.findLocked(name)
	if i < 0 {
		tx.abortLocked()
		return noSavepoint(name)
	}
	tx.savepoints = tx.savepoints[:i]
	tx.txn.SetCurrent(tx.currentLocked())
	return nil
}

// Savepoints is the number of open savepoints.
func (tx *Tx) Savepoints() int {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	return len(tx.savepoints)
}

// usableLocked is ErrTxDone or ErrTxAborted for a transaction that ended
// or that an error aborted, nil for an active one. tx.mu held.
func (tx *Tx) usableLocked() error {
	switch tx.state {
	case txDone:
		return errs.ErrTxDone
	case txAborted:
		return errs.ErrTxAborted
	}
	return nil
}

// findLocked is the index of the innermost open savepoint named name, or -1.
func (tx *Tx) findLocked(name string) int {
	for i := len(tx.savepoints) - 1; i >= 0; i-- {
		if tx.savepoints[i].name == name {
			return i
		}
	}
	return -1
}

func noSavepoint(name string) error {
	return errs.Op(errs.ErrNoSavepoint, fmt.Sprintf("savepoint %q does not exist", name))
}

// rollbackSubsLocked aborts the subtransactions of savepoint i and of
// every savepoint nested in it, and cuts their writes from the write set.
// Savepoint i stays open, its subtransaction gone: its next lock or write
// takes a new subxid.
func (tx *Tx) rollbackSubsLocked(i int) {
	sp := &tx.savepoints[i]
	tx.e.xacts.AbortSubsFrom(tx.txn.Top(), sp.mark)
	clear(tx.writes[sp.writes:])
	tx.writes = tx.writes[:sp.writes]
	if len(tx.advTaken) > sp.adv {
		tx.releaseAdvisoryFrom(sp.adv)
	}
	tx.e.locks.ReleaseSince(tx.proc, sp.rel)
	for j := i; j < len(tx.savepoints); j++ {
		tx.savepoints[j].sub = nil
	}
	tx.txn.SetCurrent(tx.currentLocked())
}

// currentLocked is the (sub)transaction whose xid the next lock or write
// records: the innermost savepoint's subtransaction, or the top level
// when no savepoint is open. An open savepoint without one yet gets it
// at its first lock or write (assignSubLocked); until then the top level
// stands in (reads record nothing).
func (tx *Tx) currentLocked() *xact.Xact {
	if n := len(tx.savepoints); n > 0 && tx.savepoints[n-1].sub != nil {
		return tx.savepoints[n-1].sub
	}
	return tx.txn.Top()
}

// assignSubLocked gives the innermost savepoint its subtransaction xid
// (reserved in the WAL like any xid) and makes it current.
func (tx *Tx) assignSubLocked() error {
	sp := &tx.savepoints[len(tx.savepoints)-1]
	x := tx.e.xacts.BeginSub(tx.txn.Top())
	sp.sub = x
	tx.txn.SetCurrent(x)
	if tx.e.dur != nil {
		if err := tx.e.dur.ReserveXid(x.ID()); err != nil {
			return err
		}
	}
	return nil
}
