package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/lockmgr"
)

// Relation locks: LOCK TABLE, and the lock every operation takes on the
// table it touches (PostgreSQL's: AccessShareLock to read, RowShareLock to
// lock rows, RowExclusiveLock to write), all held until the transaction
// ends. The lock manager takes the weak modes by its fast path (one atomic
// load and an append to the transaction's own array, lockmgr/relation.go),
// so the implicit locks cost the row-lock hot path next to nothing; a
// strong LOCK TABLE moves them into the shared lock table and waits for
// them.

// LockTable acquires mode on table for the transaction, held until it
// ends: LOCK TABLE table IN mode MODE [NOWAIT]. Errors: errs.ErrNoTable
// (42P01); with nowait
// errs.ErrLockNotAvailable (55P03, `could not obtain lock on relation
// "t"`); a wait's deadlock (40P01), lock timeout (55P03) or ctx's end.
// Every error aborts the transaction.
// TableLockMode is a table-level lock mode (LOCK TABLE's), the lock
// manager's: AccessShareLock..AccessExclusiveLock.
type TableLockMode = lockmgr.LockMode

func (tx *Tx) LockTable(ctx context.Context, table string, mode TableLockMode, nowait bool) error {
	if mode < lockmgr.AccessShareLock || mode > lockmgr.AccessExclusiveLock {
		if _, err := tx.start(ctx, false); err != nil {
			return err
		}
		return tx.Fail(ctx, errs.Op(errs.ErrInvalid, fmt.Sprintf("tupled: invalid table lock mode %d", int(mode))))
	}
	// Allowed in a read-only transaction, in every mode (PostgreSQL 15).
	if _, err := tx.start(ctx, false); err != nil {
		return err
	}
	if _, err := tx.e.table(table); err != nil {
		return tx.Fail(ctx, err)
	}
	return tx.Fail(ctx, tx.lockRel(ctx, table, mode, nowait))
}

func (tx *Tx) lockRel(ctx context.Context, table string, mode lockmgr.LockMode, nowait bool) error {
	err := tx.e.locks.LockRelation(ctx, tx.proc, table, mode, lockmgr.Wait{NoWait: nowait, Timeout: tx.lockTO})
	if errors.Is(err, lockmgr.ErrWouldBlock) {
		return &errs.OpError{Sentinel: errs.ErrLockNotAvailable, Msg: fmt.Sprintf("could not obtain lock on relation %q", table), Table: table}
	}
	return err
}

// releaseRelLocks releases the transaction's relation locks (at its end).
func (tx *Tx) releaseRelLocks() { tx.e.locks.ReleaseAll(tx.proc) }

// SetDeadlockTimeout sets the deadlock timeout of the transaction's waits
// from now on (0: the Config's).
func (tx *Tx) SetDeadlockTimeout(d time.Duration) { tx.proc.SetDeadlockTimeout(d) }
