// Package storage is tupled's persistence seam: an ordered byte-key/byte-value
// store with atomic batches (Backend), and two implementations on disk,
// pebble (the default, OpenPebble) and bbolt (OpenBbolt), chosen with Open;
// plus an in-memory one, the arena (OpenArena, arena.go: pointer-free
// pages, nothing durable), which package heap gives each table of an
// in-memory engine opened with Options.MemoryArena.
//
// # Callers
//
// It is engine machinery, under internal/ so no application can import it.
// Package durable opens
// the backend (Open) and is the only writer: checkpoints write the
// committed value of every row changed since the previous checkpoint, the
// catalog, and a few meta keys (redo point, xid bound, checkpoint number);
// recovery replays the engine's own WAL (package wal) into the backend,
// and DROP TABLE deletes a table's range. Package heap reads rows back on
// demand (a persistent table's Get and Scan), and package engine picks the
// backend kind and checks keys against MaxKeySize. No tuple header, lock,
// multixact or commit status is stored: none survives a restart. The
// engine's key layout (heap.RowKey) and its redo/checkpoint protocol live
// above this package, which knows nothing of tuples or transactions.
//
// # Invariants
//
// Keys: non-empty, at most MaxKeySize bytes, ordered by bytes.Compare.
// Values: at most MaxValueSize bytes; an empty value is present (Get reports
// ok=true). The same limits apply on both backends, so the engine behaves the
// same whichever it runs on.
//
// Atomicity: a batch is applied entirely or not at all — when Commit
// returns, after a crash at any moment, and after an I/O error. A batch
// holding an invalid operation (empty or oversized key, bad range, batch of
// another backend) is refused by Commit before anything is applied, and the
// backend stays usable.
//
// Durability: when Commit(b, true) or Sync returns nil, b and every batch
// committed before it are durable. A batch committed with sync=false may be
// lost by a crash — on pebble even by a process crash, since pebble buffers
// its WAL in memory — until the next successful sync. Across a crash the
// surviving batches are a prefix of commit order (pebble replays its
// sequential WAL up to the first invalid record; bbolt makes each commit
// durable before the next one starts). Close makes every committed batch
// durable.
//
// Visibility is not durability: a batch may be visible to Get and Scan of
// other goroutines before its Commit(_, true) returns (pebble publishes a
// batch and then waits for the WAL fsync). The engine must acknowledge a
// transaction, or release its locks, only after Commit returned nil — never
// because another reader saw the data.
//
// Failure: an I/O error in Commit or Sync (write, fsync, ENOSPC) puts the
// backend in a sticky failed state. Every later call, reads included,
// returns an error wrapping ErrFailed and the cause; the batch whose commit
// failed is indeterminate: after reopening it is entirely present or
// entirely absent (on the same disk it is often present: the write reached
// the OS before the fsync failed). A failed Commit is never an
// acknowledgement. The only remedy is Close and reopen, which recovers the
// last durable state; the engine treats the failure as fatal, as
// PostgreSQL treats a failed fsync since 2018. One pebble failure may still
// leave pebble's locks held (failing to create or close a WAL file when a
// full memtable rotates panics inside its commit pipeline): the backend is
// then failed and Close leaves pebble's files locked until the process
// exits. Any other "fatal" pebble error (a MANIFEST write failing during a
// background flush or compaction) records the failed state instead of
// ending the process.
//
// Damage: WithChecksums seals every value with a CRC32C over key and value
// and checks it on every read; a mismatch is ErrCorrupted naming the key.
// Damage a backend meets itself — a pebble block failing its checksum (in a
// read or a background compaction: pebble's DataCorruption event), a
// MANIFEST with damage followed by intact records (checked before pebble
// opens), a bbolt page assertion (a panic, recovered) — is ErrCorrupted and
// puts the backend in the failed state; a read that met it never returns
// data. Nothing read from a damaged store is ever returned as a value.
//
// Concurrency: every Backend method is safe for concurrent use; a Batch is
// not. Scan reads one snapshot. Close waits for the calls in flight; a call
// that starts after Close began returns ErrClosed (pebble itself would
// panic). After Close returns, the same process can reopen the same
// location at once; a location is open in one Backend at a time (a second
// open fails rather than waits).
//
// bbolt commits are always synced (sync=false does not make them cheaper):
// its NoSync mode may let the meta page reach the disk before the pages it
// points to, which corrupts the file on power loss instead of losing a
// batch. bbolt does its own file I/O on the OS filesystem, so it cannot run
// on a vfs.MemFS; Options.FS other than nil or vfs.Default is refused.
//
// pebble (and the checksum wrapper over it) is also an Ingester
// (ingest.go): a run of new keys in increasing order written as an
// sstable of its own and ingested, durable when Ingest returns — a bulk
// load's path past pebble's WAL, memtable and flush.
//
// See README.md for the reasons behind the interface, what each backend
// guarantees, the pitfalls respected, and how the guarantees are tested.
package storage
