package tupled

import (
	"context"
	"time"

	"github.com/tupled/tupled/internal/errs"

	"github.com/tupled/tupled/internal/engine"
)

// TableLockMode is one of PostgreSQL's eight table lock modes (LOCK TABLE
// ... IN mode MODE), weakest first. Two transactions' modes on one table
// conflict as in PostgreSQL's table:
//
//	                         AS  RS  RE  SUE  S  SRE  E  AE
//	AccessShare                                          x
//	RowShare                                         x   x
//	RowExclusive                         x   x   x   x
//	ShareUpdateExclusive             x   x   x   x   x
//	Share                        x   x       x   x   x
//	ShareRowExclusive            x   x   x   x   x   x
//	Exclusive                x   x   x   x   x   x   x
//	AccessExclusive      x   x   x   x   x   x   x   x
//
// Every operation takes one implicitly, as PostgreSQL's statements do: Get
// and plain scans AccessShare, Lock and locking scans RowShare, Insert,
// Update and Delete RowExclusive. A transaction never conflicts with its
// own locks.
type TableLockMode int

// The table lock modes.
const (
	AccessShare          TableLockMode = iota + 1 // SELECT
	RowShare                                      // SELECT ... FOR UPDATE/SHARE
	RowExclusive                                  // INSERT, UPDATE, DELETE
	ShareUpdateExclusive                          // VACUUM, CREATE INDEX CONCURRENTLY
	Share                                         // CREATE INDEX
	ShareRowExclusive                             // CREATE TRIGGER
	Exclusive                                     // REFRESH MATERIALIZED VIEW CONCURRENTLY
	AccessExclusive                               // DROP TABLE, LOCK TABLE's default
)

// String returns PostgreSQL's name of the mode, as pg_locks shows it
// ("AccessShareLock", ...).
func (m TableLockMode) String() string { return engine.TableLockMode(m).String() }

// LockTable locks table in mode until the transaction ends: LOCK TABLE
// table IN mode MODE, or with nowait LOCK TABLE ... NOWAIT. It waits, like
// a row lock, for the transactions holding conflicting modes and for the
// earlier requests it conflicts with (FIFO), with the transaction's lock
// timeout and deadlock detection (a cycle through table and row locks is
// found, 40P01). Errors (each aborts the transaction): ErrNoTable (42P01);
// ErrInvalid (22023) for a mode outside AccessShare..AccessExclusive; with
// nowait ErrLockNotAvailable (55P03, `could not obtain
// lock on relation "t"`) if it cannot be granted at once; ErrDeadlock
// (40P01), ErrLockTimeout (55P03), ctx's error (57014). The lock shows in
// DB.Locks as "relation <table>". Allowed in a read-only transaction, in
// every mode, as in PostgreSQL. ErrTxBusy while another call on tx runs.
func (tx *Tx) LockTable(ctx context.Context, table string, mode TableLockMode, nowait bool) error {
	if err := tx.enter(); err != nil {
		return err
	}
	defer tx.exit()
	return tx.t.LockTable(ctx, table, engine.TableLockMode(mode), nowait)
}

// SetDeadlockTimeout changes the transaction's deadlock timeout
// (TxOptions.DeadlockTimeout) for the lock waits it begins from now on, as
// SET deadlock_timeout does in a PostgreSQL session; 0 = the DB's.
// ErrInvalid (22023) for a negative d; ErrTxBusy while another call on tx
// runs.
func (tx *Tx) SetDeadlockTimeout(d time.Duration) error {
	if d < 0 {
		return errs.Op(ErrInvalid, "tupled: negative DeadlockTimeout")
	}
	if err := tx.enter(); err != nil {
		return err
	}
	defer tx.exit()
	tx.t.SetDeadlockTimeout(d)
	return nil
}
