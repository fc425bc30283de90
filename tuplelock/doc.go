// Package tuplelock implements PostgreSQL's row-locking protocol over the
// heap: heap_lock_tuple (Locker.LockTuple), heap_lock_updated_tuple,
// heap_update / heap_delete (Locker.Update) and the unique check of an
// insert (Locker.Insert). README.md in this directory explains the
// algorithm and the xmax/infomask/multixact decision table.
//
// # Who calls it
//
// It is engine machinery: package engine alone, one Locker per database
// (NewEngine) and one Txn per transaction (NewTxn), for every row lock,
// update, delete and insert. Applications use package tupled.
//
// # Invariants
//
//   - A row lock is state in the tuple header only: xmax plus infomask bits
//     for a single locker, a multixact when more must be remembered. Nothing
//     is recorded in the lock manager for a granted row lock, so commit makes
//     every row lock vanish in O(1) and lock-manager memory does not grow
//     with the number of rows locked. So no row lock survives its
//     transaction: a lock or update writes a new xmax only for a running
//     transaction, naming it (tuplelock.lock-dies-with-xid, checked under
//     -tags invariants wherever Locker writes an xmax).
//   - A writer commits with a CSN: Update, KeyUpdate and Insert call
//     xact.Xact.NoteWrite before they can change anything, so the engine's
//     CommitNoWrite, which skips the CSN of a transaction that only read or
//     locked, takes the full commit for every transaction that put its xid
//     into a tuple as inserter or updater (tuplelock.write-noted, checked
//     under -tags invariants where a write is applied). A lock alone never
//     notes a write: a locker's xid is subject to no visibility test.
//   - The heavyweight tuple lock (lockmgr, TagTuple) is taken only when the
//     caller must sleep, only to fix its place in line, and released before
//     LockTuple/Update return. A transaction holds or awaits at most one
//     tuple lock at a time.
//   - The row latch is never held across a wait.
//   - Waits are on transactions (their Done channels, through the lock
//     manager so the deadlock detector sees them): on the xmax xid, or on
//     each running, conflicting member of a multixact.
package tuplelock
