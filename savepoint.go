package tupled

// Savepoints are PostgreSQL's: SAVEPOINT, ROLLBACK TO SAVEPOINT and RELEASE
// SAVEPOINT on a Tx. A savepoint's subtransaction gets a transaction id of
// its own at its first lock or write, and every row lock and version it
// makes carries that id, so rolling back to the savepoint releases exactly
// its locks and discards exactly its writes — including the case
// PostgreSQL once got wrong: a lock made stronger under a savepoint that is
// rolled back leaves the weaker lock taken before it (tuplelock/README.md,
// "Savepoints and subtransactions").
//
// An operation that fails under a savepoint (a deadlock, a lock timeout, a
// duplicate key, a cancelled context…) rolls back the innermost savepoint's
// subtransaction at once and leaves the transaction aborted — every call
// returns ErrTxAborted — until RollbackTo one of the open savepoints makes
// it usable again, or Rollback ends it. Without a savepoint such an error
// aborts the whole transaction, as before.
//
//	tx.Lock(ctx, "accounts", k, tupled.ForKeyShare, tupled.Block)
//	tx.Savepoint("upgrade")
//	if _, err := tx.Lock(ctx, "accounts", k, tupled.ForUpdate, tupled.NoWait); err != nil {
//		tx.RollbackTo("upgrade") // the FOR KEY SHARE lock is still held
//	}

// Savepoint establishes a savepoint named name (SAVEPOINT name). Names may
// repeat: the newest savepoint of a name hides older ones until it is
// released or rolled back past. ErrTxAborted in an aborted transaction,
// ErrTxDone after Commit or Rollback.
func (tx *Tx) Savepoint(name string) error {
	if err := tx.enter(); err != nil {
		return err
	}
	defer tx.exit()
	return tx.t.Savepoint(name)
}

// RollbackTo undoes everything the transaction did since savepoint name
// was established (ROLLBACK TO SAVEPOINT name): the row locks and writes
// made since then vanish — waiters on them go on — while those made
// before stay. The savepoint stays established, and savepoints
// established after it are gone. It also makes a transaction that an
// error aborted under a savepoint usable again. ErrNoSavepoint (3B001)
// if no open savepoint has that name — an error like any other, so it
// aborts the transaction down to its innermost savepoint (or wholly,
// with none), as in PostgreSQL.
func (tx *Tx) RollbackTo(name string) error {
	if err := tx.enter(); err != nil {
		return err
	}
	defer tx.exit()
	return tx.t.RollbackTo(name)
}

// Release forgets savepoint name and every savepoint established after it
// (RELEASE SAVEPOINT name); what was done under them is kept, to commit
// or roll back with the enclosing level. ErrNoSavepoint (3B001) if no
// open savepoint has that name (aborting the transaction down to its
// innermost savepoint, as any error does); ErrTxAborted in an aborted
// transaction.
func (tx *Tx) Release(name string) error {
	if err := tx.enter(); err != nil {
		return err
	}
	defer tx.exit()
	return tx.t.Release(name)
}
