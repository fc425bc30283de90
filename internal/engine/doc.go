// Package engine is tupled's one engine facade: an Engine is one open
// database, with its machinery wired together behind it, and a Tx is one
// of its transactions. Package tupled (the embedded API) is its only
// caller: it checks what only the API knows about (a Tx used by one call
// at a time, option defaults, the public enumerations) and converts types;
// everything else — snapshots, visibility, row locks, EvalPlanQual, limits,
// durability — happens here or below. Applications use package tupled;
// the SQL front end and the wire server use package tupled too.
//
// # What an Engine owns
//
//	xact.Manager      transaction ids, commit status, snapshots
//	multixact.Store   multixacts (several lockers of one row)
//	heap.Heap         tables of rows, each row's versions with xmin/xmax/infomask
//	lockmgr.Manager   heavyweight locks that order waiters, and the deadlock detector
//	tuplelock.Locker  heap_lock_tuple, heap_update, heap_delete, insert
//	durable.Store     WAL, backend, checkpoints, recovery (on-disk engines only)
//
// and a background goroutine that refreshes the prune horizon, runs vacuum
// passes and lets the Store checkpoint and evict.
//
// # Dependencies
//
// They point one way: tupled → engine → tuplelock → heap, multixact,
// lockmgr, xact; engine → durable → heap, storage, wal. No package below
// engine imports it, and none of them is meant to be called by an
// application: each one's doc says who calls it.
//
// # Invariants the Engine keeps
//
//   - Every API call is counted (Enter/Exit) while it runs, and Close
//     waits for the count to drain after ending every lock wait: the
//     storage is closed under no running call.
//   - An operation on a Tx first checks the transaction (start: ended,
//     aborted, context done, read-only, storage failed), takes the table
//     lock PostgreSQL's statement would (startOn, rellock.go), then checks
//     its arguments, then acts; any error but ErrNotFound and ErrSkipped
//     aborts the transaction (Fail), releasing its locks at once — or,
//     under a savepoint, aborts the savepoint's subtransaction only
//     (savepoint.go), releasing its row and advisory locks.
//   - Under a savepoint, the first lock or write gives the savepoint its
//     subtransaction xid (xact.Manager.BeginSub), which tuplelock writes
//     into every xmax and xmin from then on (Txn.SetCurrent); RollbackTo
//     aborts the subxids assigned since the savepoint and cuts the write
//     set back. The snapshot and the commit stay the top level's.
//   - A row is pinned while an operation holds it, and read or changed
//     under its latch only.
//   - A writing transaction on disk is committed only once
//     durable.Store.Commit has logged its write set.
//   - Scans are the one place where a qualification is checked and
//     rechecked on a newer locked version (EvalPlanQual; scan.go).
//   - A key update (UpdateKey, move.go) is the old key's delete and the
//     new key's insert plus a link, kept beside the heap, from the deleted
//     version to the inserted one: READ COMMITTED locking scans follow it
//     as PostgreSQL follows t_ctid; nothing else does.
//   - Indexes (index.go) are hidden tables written in the same
//     transaction as each base write; a unique one waits like the primary
//     key, and an update changing its key is a key update.
//   - Foreign keys (fk.go) act inside the write that needs them: a child
//     insert or reference change locks the parent FOR KEY SHARE with the
//     statement's snapshot; a parent delete or key change, after its own
//     lock, finds children with a fresh snapshot and runs the action as
//     ordinary writes (which fire the children's own keys).
//   - Advisory locks (advisory.go): a Tx's transaction-level ones are
//     released when it commits or aborts; a Session (a connection: the
//     owner of session-level ones, beginning its transactions) links itself
//     to its running transaction for the deadlock detector. A Tx that took
//     none and belongs to no Session does no advisory work at its end.
package engine
