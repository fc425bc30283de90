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
//	xact.Manager      (internal/xact) transaction ids, commit status (clog), snapshots
//	multixact.Store   (multixact) multixacts: several lockers of one row
//	heap.Heap         (heap) tables of rows, each row's versions with xmin/xmax/infomask
//	lockmgr.Manager   (lockmgr) heavyweight locks that order waiters; the deadlock detector
//	tuplelock.Locker  (tuplelock) heap_lock_tuple, heap_update, heap_delete, insert
//	durable.Store     (internal/durable) WAL, backend, checkpoints, recovery (on disk only)
//
// and a background goroutine that refreshes the prune horizon, runs vacuum
// passes and lets the Store checkpoint and evict — or, in memory, moves
// settled rows into each table's storage.Arena and evicts them
// (memstore.go, whose comment is the design).
//
// # One transaction, five objects
//
// A transaction is one object per layer, each holding only what its layer
// needs, so that no layer below the engine sees the API's concerns:
//
//	tupled.Tx        the API's handle: one call at a time (ErrTxBusy), public types
//	  engine.Tx      state (active/aborted/done), snapshot, savepoints, write set,
//	   │             relation and advisory locks: everything PostgreSQL keeps per backend
//	   ├ tuplelock.Txn  what the row-lock code needs of the actor: its current
//	   │   │            (sub)transaction, its Proc, its lock timeout
//	   │   └ xact.Xact  the shared record other transactions see: xid, status,
//	   │                subxids, Done() closed at commit/abort (what waiters wait on)
//	   └ lockmgr.Proc   its PGPROC: the heavyweight locks it holds, the one
//	                    thing it waits for (the deadlock detector's graph node)
//
// Five objects in one record: the engine.Tx (Engine.BeginIn) embeds the
// xact.Xact and the lockmgr.Proc (xact.Manager.BeginIn,
// lockmgr.Manager.InitProc) and holds the tuplelock.Txn by value; the
// Done channel is made only if someone waits (package xact). Records are
// reused (BeginIn on a Tx whose Commit or Rollback returned): a
// tupled.Session's transactions run on one record of its own, so they
// allocate nothing, and a DB.Begin transaction takes its record from the
// DB's pool and gives it back at its end, so it allocates only the small
// tupled.Tx handle the caller may keep (which forgets the record then:
// tupled.Tx.release). A waiter, the deadlock detector or the lock
// table may still hold the old Xact or Proc then, and must find that
// transaction ended, not the newer one: the xid is each record's
// generation. Waiters read an Xact only under the live set's lock, by the
// xid they wait for (xact.Manager.Await: the Done channel they get is that
// xid's, closed at its end, never the reused record's next one); the lock
// table lists only current holders and registers waiting Procs by the xid
// they wait under, and the deadlock detector follows a holder's wait only
// if it began before the holder was seen holding (lockmgr.Manager.InitProc).
// The handle itself is the one thing that cannot tell: a Session's Tx is
// the caller's until the session's next Begin (tupled.Session.Begin), and
// a DB.Begin Tx drops its record before the record goes back to the pool
// (and keeps it out of the pool while a scan of it still runs).
//
// A row lock is NOT an object of any of them: it is the xmax (and
// infomask bits, or a multixact) written into the locked version. It lasts
// exactly as long as the xact.Xact is in progress, and so needs no
// release: committing or aborting the Xact ends every row lock at once.
//
// # The path of a Lock (SELECT … FOR SHARE of one key)
//
//	tupled.Tx.Lock             enter (one call at a time); LockStrength → tuplemode.Mode
//	└ engine.Tx.Lock
//	  ├ startOn                tx usable? ctx? RowShareLock on the table:
//	  │ └ lockmgr.Proc         (fast path: HoldsRelation) else lockmgr.Manager.Lock
//	  ├ targetLatched          heap.Table lookup → heap.Row pinned and latched, version
//	  │                        visible to the statement's snapshot (xact.Snapshot)
//	  └ lockVersionFrom        ExecLockRows; follows the update chain under READ COMMITTED
//	    └ tuplelock.Locker.LockTupleLatched     heap_lock_tuple, first pass in the same
//	      │                                     latch hold (later ones: LockTuple)
//	      ├ heap.SatisfiesUpdate                who is in xmax, and are they running? (xact.Manager)
//	      ├ no conflict: computeNewXmax         single xid + lock bits, or
//	      │   └ multixact.Store.Add/Create      a multixact of the old lockers and us
//	      │  heap.Table.Apply(ChangeXmax)       the lock is written; latch released: done
//	      └ conflict: sleep, then start over
//	        ├ lockmgr.Manager.Lock(tuple tag)   our place in line (heavyweight tuple lock)
//	        └ lockmgr.Manager.WaitXacts         wait for each conflicting xid's Done();
//	                                            the deadlock detector sees the Proc waiting
//
// Nothing of it touches the disk: a lock-only change is never logged
// (internal/durable's doc says why that is safe).
//
// # The path of a Commit
//
//	tupled.Tx.Commit
//	└ engine.Tx.Commit         state check; savepoints and advisory bookkeeping dropped
//	  ├ on disk and wrote something:
//	  │ └ durable.Store.Commit
//	  │   ├ checkTablesExist                    no DROP TABLE between (dropMu)
//	  │   ├ logCommit                           EncodeCommit → wal.WAL.Append (one record,
//	  │   │                                     or parts for a huge write set); in inflight
//	  │   ├ wal.WAL.Sync                        group commit: one fsync per batch
//	  │   └ xact.Manager.Commit                 clog: committed; Done() closed, so every
//	  │                                         waiter on our xid wakes; our row locks end
//	  ├ in memory, or read/lock only: xact.Manager.CommitNoWrite   no WAL record, no fsync;
//	  │                                 one that wrote (xact.Xact.NoteWrite: every tuplelock
//	  │                                 write, an index build) gets a fresh CSN under commitMu,
//	  │                                 one that only read or locked the last CSN, without it
//	  ├ releaseRelLocks → lockmgr.Manager.ReleaseAll(proc)   table, tuple, xact locks
//	  └ endAdvisory                             transaction-level advisory locks
//
// Rollback is the same without the WAL: xact.Manager.Abort, then the
// releases. The versions a transaction wrote stay in the heap; visibility
// (the clog) makes them dead, and vacuum reclaims them.
//
// # Names
//
// A name means one thing per layer; where two layers use the same word,
// this is the map:
//
//	tupled.Session        an API connection (session-level advisory locks, its transactions)
//	  = engine.Session    its engine side
//	  = lockmgr.SessionOwner  its identity in the lock manager (a PGPROC outliving transactions)
//	sqlfe.Session         one SQL connection's state (prepared statements, portals, GUCs);
//	                      it owns a tupled.Session
//	isospec.Session       a session of an isolationtester spec file
//	xact.Xact             a transaction's shared record; lockmgr.AwaitedXact is the view of
//	                      one the lock manager waits on (xid, top xid, Done)
//	Engine                only this package's type; the others are tuplelock.Locker,
//	                      sqlfe.Executor and isospec.Target
//
// # Dependencies
//
// They point one way: tupled → internal/engine → tuplelock → heap,
// multixact, lockmgr, internal/xact; internal/engine → internal/durable →
// heap, internal/storage, wal (README.md's generated map has them all). No package below
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
//     under its latch only — except GetNoCopy's (and so Get's) first try,
//     heap.Table.ReadResident, which reads the row's published summary
//     of its newest version without pin or latch and falls back to the
//     latched read whenever that summary cannot decide.
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
