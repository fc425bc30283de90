// Package heap stores tables of rows by primary key, each row a list of
// tuple versions whose headers (xmin, xmax, infomask, infomask2, t_ctid as
// Next) mean what they mean in PostgreSQL, and decides visibility
// (SatisfiesMVCC, SatisfiesUpdate) from them.
//
// # Who calls it
//
// It is engine machinery, not an API: package engine (which creates the
// Heap and its tables and reads rows for scans, reads and introspection),
// package tuplelock (every change of a tuple header, through Table.Apply)
// and package durable (checkpoints read dirty rows; recovery creates the
// tables and sets the backend). Applications use package tupled.
//
// # Invariants
//
//   - Xmin and Value of a Tuple never change; every other header field, and
//     a row's version list, is read and written only under the row's latch
//     (Row.Lock). The latch is never held while waiting for a transaction or
//     a heavyweight lock, nor while calling into another row.
//   - Every mutation of a header or a version list goes through Table.Apply
//     (a Change). Apply also marks a persistent table's row dirty (for the
//     next checkpoint), notes the row for vacuum, and shows the Change to
//     the Heap's optional ChangeHook (tests use it; package engine passes
//     none). Exceptions, as in PostgreSQL: hint bits, and pruning/freezing
//     by vacuum, which report a ChangeVacuum. The write-ahead log does not
//     hook in here: package durable logs each writing transaction's write
//     set once, at commit (logical redo, internal/durable/doc.go), and a checkpoint
//     writes the dirty rows' committed values to the backend.
//   - A version whose Next is non-nil was updated; the successor's Xmin is
//     the predecessor's update xid (callers verify it, as PostgreSQL checks
//     t_xmin against the prior xmax when following t_ctid).
//   - A lock-only xmax never leaves a Next link (heap_lock_tuple resets
//     t_ctid to self). This and the previous one are heap.version-chain
//     (checked under -tags invariants, by Apply after every header write).
//   - Xmax and the infomask bits agree (heap.xmax-infomask-agree, checked
//     under -tags invariants by Apply, SetInitialXmax and vacuum's
//     freezing): IS_MULTI iff xmax names a multixact (Tuple.Multi, whose id
//     is xmax; IS_MULTI without one is a reclaimed multixact); a multi
//     xmax carries GetMultiXactIdHintBits' bits (LOCK_ONLY iff no member
//     updates, the strongest member's lock bits, KEYS_UPDATED iff a member
//     is FOR UPDATE or Update, never XMAX_COMMITTED); a plain lock-only
//     xmax has lock bits, and KEYS_UPDATED only with the exclusive ones
//     (FOR UPDATE); a plain updater has none; xmax 0 carries no lock bits,
//     LOCK_ONLY, IS_MULTI nor KEYS_UPDATED.
//   - Versions are removed only when dead to every snapshot (inserter
//     aborted, or updater committed at or below the horizon), so a reader
//     holding a *Tuple obtained under the latch may still follow its Next
//     links to the live version.
//
// # Storage
//
// Rows live in a rowStore. An in-memory database's tables keep all their rows
// in memory (a B-tree for ordered scans beside a hash index, store.go). An
// on-disk database's tables are persistent (backed.go, whose "Persistent
// tables" comment is the design): the storage.Backend holds one committed
// value per key as of the last checkpoint, and memory holds the rows in use
// — every one in a hash (sharded, rowindex.go: a cold read's insert takes
// one shard's lock, not the table's), and those written since they
// entered memory also in a B-tree. A row missing from memory has one frozen version, visible to
// every snapshot: a point read loads it into the hash; a scan merges the
// batches of one backend cursor with the B-tree and passes such rows as transient
// copies (Row.Transient) without loading them, and a caller that locks one
// brings it in with Table.PinScanned. A clean, unpinned row whose only
// version is frozen and carries no xmax can be evicted again (when: package
// durable decides). A floor per table lets scans start past a head of rows
// dead to every snapshot (a queue's consumed jobs). Tables are looked up by
// name in the Heap's catalog.
package heap
