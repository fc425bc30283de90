// Package heap stores tables of rows by primary key, each row a list of
// tuple versions whose headers (xmin, xmax, infomask, infomask2, t_ctid as
// Next) mean what they mean in PostgreSQL, and decides visibility
// (SatisfiesMVCC, SatisfiesUpdate) from them.
//
// # Invariants
//
//   - Xmin and Value of a Tuple never change; every other header field, and
//     a row's version list, is read and written only under the row's latch
//     (Row.Lock). The latch is never held while waiting for a transaction or
//     a heavyweight lock, nor while calling into another row.
//   - Every mutation of a header or a version list goes through Table.Apply
//     (a Change), the single place the write-ahead log will hook into.
//     Exceptions, as in PostgreSQL: hint bits, and pruning/freezing by
//     vacuum, which report a ChangeVacuum.
//   - A version whose Next is non-nil was updated; the successor's Xmin is
//     the predecessor's update xid (callers verify it, as PostgreSQL checks
//     t_xmin against the prior xmax when following t_ctid).
//   - A lock-only xmax never leaves a Next link (heap_lock_tuple resets
//     t_ctid to self).
//   - Versions are removed only when dead to every snapshot (inserter
//     aborted, or updater committed at or below the horizon), so a reader
//     holding a *Tuple obtained under the latch may still follow its Next
//     links to the live version.
//
// # Storage
//
// Rows live in a Store (an in-memory B-tree now). Tables are looked up by
// name in the Heap's catalog.
//
// Callers: package tuplelock (which decides what to write) and the root
// package (reads, catalog, vacuum).
package heap
