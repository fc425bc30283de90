// Package durable is the persistence of an on-disk database: the WAL
// record codec, commit logging, checkpoints, recovery, the control file,
// the triggers of checkpoints and cache eviction, and the offline tools
// (Verify, Salvage). It is engine machinery: package engine opens one
// Store per on-disk database and is its only caller, also of Verify and
// Salvage (closed databases), which it passes through for the API.
//
// # Commit-time logical redo
//
// A writing transaction's changes live only in memory until it commits.
// Commit appends ONE WAL record with its write set (table, key, new value or
// delete, in the order they were made) — or, for a write set larger than a
// record can hold, a stream of parts ended by one record that commits them
// (commit.go) — waits until the record is durable
// (group commit; skipped with SyncCommit off), and only then makes the
// transaction committed and releases its row locks. A transaction that
// wrote nothing — one that only read and locked rows — appends nothing and
// never waits for the disk: its row locks are meaningless after a crash,
// since every transaction of the crashed process is over.
//
// The backend holds the state of the last checkpoint: one committed value per
// key. A checkpoint takes a snapshot S and a redo point R — the smallest LSN
// of a commit record whose transaction has not yet been given its commit
// number, or the end of the WAL — writes for every row written since the
// previous checkpoint its version visible to S, records R, and then drops
// WAL segments before R. Recovery loads nothing into memory: it replays
// every commit record after R into the backend, in LSN order, and
// checkpoints. Replay is idempotent and order-correct: two transactions that
// wrote the same key did so one after the other's commit (the row lock), so
// their records are in commit order; replaying records the checkpoint
// already contains only rewrites values that a later record then sets again.
//
// Damage: the backend is wrapped in storage.WithChecksums (every value
// sealed with CRC32C over key and value), and each checkpoint is numbered
// in the backend and in the control file outside it (control.go), written
// after the backend batch and before WAL segments are removed; Open refuses
// a backend behind the control file, a WAL ending before its redo point, or
// damaged files, with errs.ErrCorrupted (XX001).
//
// No transaction is in progress after recovery, so no xmax, lock or
// multixact survives: every row comes back as one frozen version. Xids are
// reserved in the WAL in ranges before they are handed out, so no id a
// previous incarnation showed is handed out again.
//
// # Who does what
//
// The Store owns the WAL (package wal), the backend (package storage,
// pebble or bbolt, wrapped in checksums) and the control file. The heap
// (package heap) owns the rows: their cache, which rows are dirty since
// the last checkpoint, and the mechanism of eviction (a dirty or pinned
// row, or one with live lockers, is never evicted). The Store decides when:
// Maintain checkpoints on time and on WAL size and then evicts down to the
// cache size; Checkpoint asks each table for its dirty rows' versions as
// of the checkpoint's snapshot (heap.Table.CheckpointRows), in key order;
// a row nothing is visible of and whose key the backend never held (a
// running bulk load's) is left out, not written as a delete.
//
// # Files
//
//   - durable.go: Store, Open, Checkpoint, xid reservations, CREATE
//     TABLE's record, Close.
//   - commit.go: the commit path, in the order a commit takes it: the
//     record codec (EncodeCommit, and the stream decoder), Store.Commit,
//     logging as one RecCommit or as RecCommitPart…RecCommitEnd for a
//     write set larger than a WAL record.
//   - redo.go: recovery, the inverse of commit.go: replay after the redo
//     point (Store.recover, the redoer), reassembling streamed commits.
//   - control.go: the control file (pg_control), the format marker and the
//     migration of databases written before checksums.
//   - drop.go: DROP TABLE's record and its redo.
//   - maintain.go: the background triggers, counters.
//   - verify.go: Verify and Salvage.
//
// # Invariants
//
//   - A transaction that wrote is committed in package xact only after its
//     commit record is durable (SyncCommit) and never if appending failed.
//   - The redo point of a checkpoint is never past a commit record whose
//     transaction is not in the checkpoint's snapshot (inflight).
//   - The control file names a checkpoint the backend has; WAL before the
//     redo point is removed only after the control file says so.
//   - No transaction id handed out is below an id a previous incarnation
//     may have shown (ReserveXid).
package durable
