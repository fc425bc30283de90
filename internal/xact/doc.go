// Package xact owns transaction identity and fate: 64-bit transaction ids, the
// commit-status log (clog), commit sequence numbers (CSNs) and snapshots.
//
// # Who calls it
//
// It is engine machinery: package engine begins, commits and aborts
// transactions and takes their snapshots; heap decides visibility from
// the commit log; tuplelock asks whether lockers are still running and
// whether an xid is the current transaction's (Xact.IsCurrent, the one
// place for that test); durable commits a writing transaction once its
// record is durable and advances ids after recovery.
//
// # Transaction ids
//
// An XID is a uint64 handed out in increasing order from 1 by Manager.Begin; it
// never wraps, so there is no freezing for wraparound's sake. XID 0 is
// InvalidXID.
//
// # Snapshots are one number
//
// Instead of PostgreSQL's GetSnapshotData (copying the list of running xids
// into every snapshot, O(running transactions) per statement under READ
// COMMITTED), a transaction gets a commit sequence number (CSN) when it
// commits, and a snapshot is just the last CSN handed out when it was taken.
// "xid is visible to snapshot s" is "xid committed with csn <= s.CSN" (or
// xid is the snapshot's own transaction). The observable rules stay
// PostgreSQL's: a change is visible exactly when its transaction had
// committed before the snapshot was taken.
//
// Invariant (commit atomicity): the clog entry of a transaction is written
// before its CSN is published as Manager's last CSN, under commitMu; so a
// reader that loads last CSN c and then reads the clog sees every
// transaction with csn <= c as committed.
//
// # Commits that wrote nothing
//
// A CSN orders a transaction's effects — the versions it inserted (xmin)
// and the versions it updated or deleted (an updater's xmax) — against
// snapshots. A transaction that only read, or only locked rows, has no
// such effect, and CommitNoWrite ends it without commitMu and without a
// CSN of its own: its clog entry gets the last CSN already published.
// Why that is safe, case by case — where a locker's xid can be found and
// what each reader asks of it:
//
//   - a lock-only xmax (LOCK_ONLY set: one locker, any strength): every
//     test asks only "still in progress?" (SatisfiesUpdate, the lock
//     conflict tests, the hint that marks a finished locker XMAX_INVALID);
//     SatisfiesMVCC returns "visible" for a lock-only xmax before it would
//     look at a CSN. A committed FOR UPDATE locker and a committed deleter
//     both have KEYS_UPDATED and differ by LOCK_ONLY, never by CSN, so the
//     interpretation of xmax does not change.
//   - a multixact member with a lock status (ForKeyShare … ForUpdate):
//     members are asked "running?" (a committed locker's lock is gone,
//     exactly as for an aborted one) and only the updater member's fate
//     and CSN are read (UpdateXid).
//   - the lock manager (a waiter on the xid) and Done: they need the fate
//     recorded before Done closes, which CommitNoWrite keeps (the clog
//     entry, then the live set, then Done, as Commit does).
//
// The CSN recorded, c, was published when CommitNoWrite loads it. It is at
// least the CSN of every snapshot the transaction took (lastCSN only
// grows), so the transaction still commits after everything it saw; a
// writer committing concurrently with c+1 is ordered after it, a valid
// order for a transaction with no effects. Commit atomicity (above) is a
// statement about transactions with a CSN of their own: a snapshot taken
// before a no-write commit with CSN ≥ c finds that xid "visible" once the
// commit is in the clog, which is harmless only because there is nothing
// to see. So nobody may use the visibility of an xid as a signal unless
// that transaction noted a write: an index build does (the engine's
// Index.built, which snapshots compare against), even on an empty table.
//
// Invariant (a writer gets a CSN): Xact.NoteWrite is called before a
// transaction's first write can be seen — tuplelock calls it at the start
// of every insert, update and delete (tuplelock.write-noted checks it
// where the write is applied, under -tags invariants) — and CommitNoWrite
// takes Commit's full path for a transaction that noted one, so no caller
// can skip the CSN of a writer by calling the wrong commit. The flag is
// the top level's (a subtransaction's write counts) and is never reset: a
// write rolled back by ROLLBACK TO still commits with a CSN, which is
// merely the old cost.
//
// Invariant (final once): a clog entry moves only from in progress to
// committed (a CSN) or aborted, once, and never back (xact.clog-final-once,
// checked under -tags invariants wherever an entry is written). Commit,
// Abort and AbortSubsFrom write an xid's entry once; AdvanceXid marks the
// skipped ids aborted before any of them can be handed out.
//
// # Transactions as objects
//
// Every live transaction is an *Xact with a Done channel that is closed when
// it ends (after its final status is in the clog). Waiting for a transaction
// is a select on Done; row locks recorded in tuple headers "die with the xid"
// when Done closes: commit and abort are O(1) whatever was locked.
//
// Invariant (Done never stays open): the channel is made by the first Done
// call, not by Begin, since most transactions end without a waiter; a Done
// call after the end returns a channel already closed. A transaction costs
// no allocation here when its caller embeds the Xact (BeginIn), as the
// engine does, and none at all when it begins an ended transaction's record
// again (BeginIn reuses it, as a Session does).
//
// Invariant (a record's generation is its xid): nobody but its owner reads
// an Xact outside the live set's shard lock, and under it the record found
// for xid is xid's own (it leaves the set before its Done closes, and is
// begun again only after). A waiter gets what it needs there, by xid
// (Await): the Done channel it holds is then xid's, closed at xid's end,
// whatever the record runs later.
//
// # Subtransactions
//
// A savepoint's subtransaction that locks or writes gets an xid of its own
// (BeginSub): greater than every xid before it, in progress in the clog,
// with its own Done channel, and current for its top-level transaction
// (Xact.IsCurrent) until rolled back. ROLLBACK TO is AbortSubsFrom(top,
// mark), mark being NextXid() when the savepoint was established: every
// subxid at or above it is set aborted, then its Done closes — the same
// "locks die with the xid" as a top-level abort. A subtransaction never
// commits on its own: the top level's Commit gives every subxid it kept
// the top level's CSN inside the same commitMu hold, so commit atomicity
// covers them (CommitNoWrite gives them the same last CSN it gives the
// top level). Snapshots being CSNs, no pg_subtrans is needed to test a
// subxid against a snapshot. tuplelock/README.md, "Savepoints and
// subtransactions", has the whole design.
//
// # Horizons and truncation
//
// Each live transaction publishes the CSN of the snapshot it currently uses
// (PublishSnapshot). Horizon() is the oldest CSN any live or future snapshot
// can hold; a version deleted by a transaction that committed at or below it
// is invisible to everyone (vacuum may remove it) and an xmin committed at or
// below it is visible to everyone (vacuum may freeze it). TruncateClog drops
// clog pages below an xid the caller (vacuum) guarantees no tuple still
// references unfrozen; lookups below the truncation point report "frozen".
//
// Callers: see "Who calls it" above; multixact also asks for member
// liveness. All methods are safe for concurrent use.
package xact
