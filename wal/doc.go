// Package wal is tupled's write-ahead log: an append-only log of typed,
// opaque records in segment files, with CRC32C framing, group commit,
// torn-tail recovery and a fatal-error rule for failed writes and fsyncs.
// It knows nothing of the engine: a Record is a RecordType and bytes, and
// the engine defines both. README.md in this directory describes the
// on-disk format, group commit, recovery and the fatal-error rule in prose.
//
// # Callers
//
// Package durable only (engine machinery, not an API): it appends a record for every change
// it must be able to redo, calls Sync with the LSN of a commit record before
// acknowledging the commit (when SyncCommit is on), Replays from the redo
// point of its last checkpoint at startup, and calls RemoveBefore once a
// checkpoint made older records unnecessary. Nothing else in tupled opens
// a WAL.
//
// # Using it
//
//	w, err := wal.Open(wal.Options{FS: fs, Dir: dir})
//	err = w.Replay(redoPoint, func(lsn wal.LSN, r wal.Record) error { return redo(lsn, r) })
//	lsn, err := w.Append(wal.Record{Type: recCommit, Data: payload})
//	err = w.Sync(ctx, lsn) // nil only once lsn is durable
//	err = w.RemoveBefore(checkpointRedoPoint)
//
// # Invariants
//
//   - LSNs are byte positions in one logical log that runs through the
//     segments without gaps (segment headers included). The LSN of a record
//     is the position just past it; Append returns it for the last record
//     it appended, and Replay reports it for every record.
//   - FlushedLSN <= EndLSN, both only grow, and every record at or below
//     FlushedLSN is on stable storage: FlushedLSN advances only after a
//     successful fsync that covered it.
//   - Sync(ctx, lsn) returns nil only if lsn <= FlushedLSN. After the first
//     failed write or fsync the WAL is dead: Append, Sync, Replay and
//     RemoveBefore return an error wrapping ErrFatal and that first cause,
//     for ever; no fsync is retried. The one exception, with
//     Options.RetryNoSpace: a write (of records or of a new segment) that
//     fails with ENOSPC voids every record not yet written — type 0xff,
//     same length, same LSN, so LSNs are never reused; Replay skips them
//     and a Sync covering one returns ErrNoSpace for ever — and the writer
//     writes them again at its next round, so the log goes on once space
//     is freed.
//   - Exactly one goroutine, the writer, writes and fsyncs segment files once
//     Open has returned. Appenders only encode into a buffer under a mutex;
//     Sync callers queue and wait on a channel.
//   - A record never spans segments (at most MaxRecordSize bytes of
//     payload); a caller with more streams it as several records whose
//     meaning it defines itself, pacing itself with WaitWritten (large.go).
//     A segment that has a successor was fsynced in full before the
//     successor was created, so only the last
//     segment can have a torn tail. A segment ends at its last record;
//     zeros after it are preallocated room (Options.Preallocate), never
//     damage and never cut. A new segment's header is fsynced and
//     its directory entry fsynced before any record is written into it.
//   - Every record header carries its own LSN, so bytes from any other
//     position (a recycled file, a cut tail) never pass as a record; and the
//     FlushedLSN of the moment it was appended, so Open can prove that
//     damage below that point is lost durable data rather than a torn write.
//   - Open never drops a record that a later intact record proves durable,
//     and never leaves a torn tail in place: the cut is made durable
//     (rename of a shortened copy, directory fsync) before anything new is
//     appended at the cut point.
//
// # Threading
//
// All methods are safe for concurrent use. Replay may run alongside Append
// and Sync; RemoveBefore waits for running Replays. The callback of Replay
// must not call Replay, RemoveBefore or Close.
package wal
