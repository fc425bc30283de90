// Package tupled is PostgreSQL's row-locking machinery rebuilt as an
// embedded Go key-value store: tables of rows by primary key, MVCC
// transactions (READ COMMITTED and REPEATABLE READ), and row locks in
// PostgreSQL's four strengths — FOR KEY SHARE, FOR SHARE, FOR NO KEY
// UPDATE, FOR UPDATE — recorded, as in PostgreSQL, in each tuple's xmax and
// infomask bits, with multixacts when several transactions must be
// remembered.
//
// # Using it
//
//	db, err := tupled.Open("", nil) // in-memory
//	err = db.CreateTable(ctx, "accounts")
//	err = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
//		v, err := tx.Lock(ctx, "accounts", key, tupled.ForUpdate, tupled.Wait)
//		if err != nil {
//			return err
//		}
//		return tx.Update(ctx, "accounts", key, newValue(v))
//	})
//
// Every error that PostgreSQL would report with a SQLSTATE answers
// SQLState(err) with the same code; IsRetryable tells deadlock victims and
// serialization failures, which RunTx retries.
//
// # Semantics
//
// Behaviour follows PostgreSQL 15, which is the oracle of the tests (see
// testdata/spec: each schedule there has a SQL twin and its expected output
// is what PostgreSQL 15 printed). In short: READ COMMITTED takes a snapshot
// per operation and follows a concurrent update to the newest version when
// locking or writing; REPEATABLE READ takes one snapshot at the first
// operation and fails with ErrSerialization (40001) when a row it locks or
// writes was changed by a transaction its snapshot cannot see (for FOR KEY
// SHARE only a delete conflicts). Waiters for a row queue in arrival order
// on a heavyweight tuple lock; a deadlock is detected DeadlockTimeout after
// a wait began and the victim is chosen as PostgreSQL chooses it.
//
// # Reading the source
//
// Dependencies point one way: this package → tuplelock → heap, multixact,
// lockmgr (→ deadlock), xact. Start with tuplelock/README.md (the
// algorithm), then xact (ids, CSN snapshots), heap (tuples, visibility,
// vacuum), multixact, lockmgr and deadlock/README.md.
package tupled
