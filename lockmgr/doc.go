// Package lockmgr is tupled's heavyweight lock manager: PostgreSQL's lock
// table (lock.c, proc.c) — tuple locks that give row-lock waiters a FIFO
// queue, waits for transactions to end (XactLockTableWait /
// MultiXactIdWait), relation (table) locks with their fast path, and
// advisory locks — with the deadlock detector of package deadlock wired in.
//
// # Who calls it
//
// Package tuplelock, the way heap_lock_tuple calls LockTuple and
// XactLockTableWait: one Proc per transaction (NewProc or InitProc), Lock/Unlock of a
// tuple lock around the acquisition of a row lock, WaitXacts to wait for the
// current lockers/updater of a row. Package engine creates the Proc of each
// transaction (InitProc, in Engine.BeginIn, embedding it in its own
// transaction record), calls Locks and Stats for
// introspection (DB.Locks, DB.Stats above it), and New, Shutdown and Close
// with the Engine. It is engine machinery, not an API.
//
// # Invariants
//
//   - Grant rule (PostgreSQL's): a request is granted at once iff it conflicts
//     neither with modes granted to other procs nor with any waiter's request;
//     otherwise it waits in FIFO order; a release wakes, in queue order, every
//     waiter compatible with the modes granted to others and with the requests
//     of the waiters still ahead of it. A proc never conflicts with itself.
//     Re-entrant acquisitions are counted per mode (PROCLOCK holdMask).
//   - Transaction locks are implicit: a transaction holds its xid until its
//     Done channel closes. Nothing is registered when a Proc is created or
//     when a transaction starts; only waiters are recorded, and only while
//     they wait.
//   - Memory follows what is in use: lock objects exist only while held or
//     awaited (lockmgr.objects-in-use, checked under -tags invariants
//     whenever a request or a release finds an object in its partition's
//     table); the waiting registry holds only waiting procs.
//   - A lock object's granted counts and masks follow its holders' counts
//     (lockmgr.granted-counts, checked under -tags invariants after every
//     grant and ungrant; lock's comment in lock.go lists the bookkeeping).
//   - Every wait ends in exactly one way (granted, deadlock victim, ctx,
//     lock timeout), and on every error return the waiter has left every queue
//     and the waiters it was blocking have been woken.
//   - A Proc belongs to one goroutine at a time and waits for one thing at a
//     time. A transaction ends (closes Done) only from its own goroutine, never
//     while that goroutine is blocked in Lock or WaitXacts: the deadlock
//     detector relies on "a waiting transaction can neither end nor release a
//     lock".
//
// # What the caller must do
//
// Nothing at transaction end beyond releasing the tuple locks it still holds
// (Unlock; tuplelock holds them only briefly) and closing the transaction's
// Done channel: a Proc holds no other resource and needs no cleanup.
//
// # Advisory locks
//
// pg_advisory_lock and friends are lock objects of kind TagAdvisory (bigint
// and int4-pair keys distinct, as PostgreSQL's objsubid 1 and 2), in
// ExclusiveLock or ShareLock, under the same grant rule, queue and deadlock
// detector. Their holder is an Owner: a transaction's own Proc (TxOwner), or
// a SessionOwner — PostgreSQL's backend, whose Proc outlives its transactions and
// holds both its session-level and its transaction-level locks, with the
// counts per level kept locally as LOCALLOCK does. A session and the
// transaction it runs are one node of the wait-for graph, as a PGPROC is:
// see advisory.go. Nothing of this touches tuple locks or transaction waits
// that involve no advisory lock.
//
// # Relation locks (relation.go, soft.go)
//
// LockRelation takes PostgreSQL's eight modes on a table (TagRelation),
// held until ReleaseAll at transaction end, with the same grant rule, FIFO
// queue and deadlock detection as every lock. The weak modes
// (AccessShareLock, RowShareLock, RowExclusiveLock) that every statement
// takes use PostgreSQL's fast path (FastPathStrongRelationLocks): recorded in
// the transaction's own array after one atomic load of the table's
// strong-lock counter, never in the shared table, unless a strong lock
// (ShareLock or above) is held or requested; a strong locker first bumps the
// counter, then transfers every fast-path holder's weak modes into the
// shared table, so it waits for them and the detector sees them. Invariant:
// while a table's counter is non-zero no fast-path entry for it can appear,
// and every fast-path entry that existed when it went up is in the shared
// table. Locks() lists fast-path locks with FastPath set. The full argument
// is at relProc in relation.go.
//
// A Proc may carry its own deadlock timeout (SetDeadlockTimeout, PostgreSQL's
// per-session deadlock_timeout): each of its waits is checked that long
// after it began. A check that finds a cycle made of "waits behind a
// waiter" edges reorders wait queues instead of choosing a victim (soft.go,
// deadlock.c's soft deadlocks).
//
// The Manager is partitioned (16 partitions by tag hash by default); see the
// Manager type for the layout and the deadlock package for detection.
package lockmgr
