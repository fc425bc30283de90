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
//   - A Row's latch-free summary of its newest version (currentVersion,
//     current.go) is published under the latch by every change of the
//     version list or of that version's header, before the latch is
//     released; its bits may know less than the header (a hint bit set
//     later), never more, so a read it decides is one the latch would
//     have decided the same way. A test, TestReadResidentModel, holds it
//     against a model under -race.
//   - Versions are removed only when dead to every snapshot (inserter
//     aborted, or updater committed at or below the horizon), so a reader
//     holding a *Tuple obtained under the latch may still follow its Next
//     links to the live version.
//
// # Storage
//
// Rows live in a rowStore. A Heap with neither a backend nor arenas (this
// package's tests) keeps a table's rows all in memory (store.go): a
// B-tree for ordered scans (rowtree.go, whose items carry the key's first
// 8 bytes so that most comparisons are one integer compare) beside a
// lock-free open-addressing hash index for point lookups (hashindex.go,
// whose comment is its design: a reader takes no lock, and for a key of up
// to 8 bytes decides the match from one slot holding the hash, the length
// and the key's bytes, then loads the *Row).
//
// Every table an engine makes is persistent (backed.go, whose "Persistent
// tables" comment is the design): a storage.Backend holds one committed
// value per key as of the last checkpoint — pebble or bbolt for an on-disk
// database (SetBackend), an arena of the table's own for an in-memory one
// (UseArenas; storage.Arena, pointer-free pages the collector does not
// walk) — and memory holds the rows in use
// — every one in a hash (sharded, rowindex.go: a cold read's insert takes
// one shard's lock, not the table's; each shard a hashindex.go table), and
// those written since they entered memory also in a B-tree. A row missing from memory has one frozen version, visible to
// every snapshot: a point read loads it into the hash (over an arena, a
// plain read reads the record where it is, without loading it:
// backedStore.readCold); a scan merges the
// batches of one backend cursor with the B-tree and passes such rows as transient
// copies (Row.Transient) without loading them, and a caller that locks one
// brings it in with Table.PinScanned. A clean, unpinned row whose only
// version every snapshot sees and that carries no live xmax can be evicted
// again (when: package durable decides on disk, package engine's
// memMaintain in memory). A floor per table lets scans start past a head of rows
// dead to every snapshot (a queue's consumed jobs). Tables are looked up by
// name in the Heap's catalog.
//
// A value a Tuple holds never changes, so package tupled's GetNoCopy and
// LockNoCopy hand it out as it is, valid until the reader's transaction
// ends: the garbage collector keeps the bytes alive while the reader
// refers to them, even after vacuum unlinked the version — or, for a value
// read from an arena, after compaction moved the record (the arena's pages
// are ordinary Go memory).
//
// A plain read of a row in memory takes no latch (Table.ReadResident,
// current.go, whose comment on currentVersion is the design): every Row
// carries a seqlock-published copy of what decides its newest version's
// visibility — the version itself and two bits (xmin frozen; no updater
// in xmax) — written under the latch by every change of the version list
// or of that header (Apply, pruning, vacuum) and read with no lock. A read
// it cannot decide (an updater in xmax, an xmin not yet committed before
// the snapshot, the reader's own write) takes the latch as before.
//
// # Plan (issue 28; items 1 and 4 built, item 2 built and taken out, 3 built in part: settled rows in arenas)
//
// What the in-memory store still costs, measured in bench/RESULTS.md: each
// Row and each Tuple is a heap object full of pointers (key slice,
// versions slice, next, multi, value), so the collector walks every
// resident row on every cycle, and a lookup still follows hash slot → Row
// → versions array → Tuple → header (four dependent loads; item 1 made a
// plain read's slot → Row → Tuple). The design, in this order:
//
//  1. BUILT (current.go; Table.ReadResident): the newest version's
//     visibility summary read without the latch. It lives in the Row,
//     not in the hash slot: a slot moves when the index grows, and a
//     writer holding only the row latch could write a moved slot's copy
//     after the rebuild read it; in the Row it is one dependent load past
//     the slot and needs no coordination with growth.
//  2. Pointer-free value slabs: values (and keys over 8 bytes) are copied
//     into 1 MiB []byte pages the collector never scans, named by a 32-bit
//     page and offset in the Tuple; a Tuple then holds no value pointer.
//     Memory of a version vacuum removes is recycled only after every
//     transaction that was running at the removal has ended (an epoch: the
//     oldest running xid passes the removal's next xid), which is what the
//     NoCopy contract — valid until the transaction ends — allows; the
//     invariants build's scratch copies test callers against it.
//     Built and measured alone (commit 908ce05, taken out by the next):
//     it does not pay by itself. With 1M rows of 100 B the live Go heap
//     fell 392 → 296 B/row and its objects 5.07 → 4.07 per row, but a
//     full collection took longer (75–108 → 87–118 ms: the values were
//     pointer-free objects, cheap to mark, and every Tuple still points
//     into the slab), the smaller heap goal made cycles more frequent
//     (GC share of the read workload 6–13% → 10–15%), and peak RSS did
//     not fall (the load's garbage sets it). Values belong off the heap
//     only together with item 3, when the Tuples pointing at them leave
//     the heap too; the epoch recycling (OldestLive passing the removal's
//     next xid) and its tests are in that commit to be taken up then.
//  3. BUILT IN PART (storage.Arena, engine's memstore.go): an in-memory
//     table is a persistent table over an arena of its own, so a row that
//     is settled (one version every snapshot sees, no live xmax, clean) is
//     a record in pointer-free pages and not an object at all: 1M rows of
//     100 B went from 5 objects and ~390 B of live Go heap per row to 0.1
//     and ~180, a full collection from ~80 ms to ~10. What is not built:
//     a row in use is still a Row, its Tuples and their pointers, and a
//     lock needs that object, so a workload that locks every row of a big
//     table (the FOR SHARE benchmark) brings them all back; the next step
//     is the lock written into the record's own header (xmax and infomask
//     beside the value, one CAS for a single locker) so that only rows with
//     several versions or a multixact become objects. The arena's pages are
//     Go memory, so GOGC's headroom applies to them (peak RSS); pages
//     mmap'd outside the Go heap need the reclamation epoch of item 2
//     (retired pages freed once every transaction running at retirement
//     has ended) and values copied on load.
//     The original plan for it: Rows and Tuples in arrays of structs addressed by index (a slot
//     holds a row index, not a *Row; old versions chained by index), so the
//     collector sees a few large pointer-free arrays instead of millions of
//     objects; multixacts referenced by id through multixact.Store, not by
//     pointer.
//     A first step tried and backed out: allocating an in-memory row with
//     its first version and version list in one object. The row then keeps
//     that version alive after vacuum removed it, and through its Next
//     link the whole chain of later dead versions (TestMemoryFlatUnderEndlessUpdates
//     saw the Go heap grow 15 → 127 MB over a million updates). Doing it
//     needs either Next links that vacuum may clear (readers follow them
//     only under the latch, and only from versions still listed) or the
//     index-addressed arrays above, where a removed version's slot is
//     freed explicitly. What is built (tuple.go, insertedTuple) is the
//     other way round: an inserted version carries the row's first
//     version list, in the size class the Tuple takes alone. The list
//     keeps only its own version alive, and only while the row's
//     versions are that list (an update moves them to a new array, and
//     pruning that empties a row drops the list).
//  4. Built (package tupled, Session.Begin): a Session reuses its ended
//     Tx record, and with it the xact.Xact and lockmgr.Proc inside; the
//     xid is the record's generation, and a waiter takes a transaction's
//     Done channel by xid (xact.Manager.Await), so a late holder never
//     waits on the record's next transaction. A Session's read and
//     lock-only transactions allocate nothing; DB.Begin's still allocate
//     their record.
package heap
