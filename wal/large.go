package wal

import "context"

// Large records.
//
// A record never spans segments (see the package invariants), so no record
// is larger than MaxRecordSize. A caller with more to log than that — the
// engine's commit of a large transaction — splits it into several records
// and gives them meaning itself (the engine writes parts that only a final
// record makes valid; see internal/durable/commit.go). While it
// appends them it calls WaitWritten now and then, so that the appended but
// unwritten records it leaves in memory stay bounded: Append itself never
// blocks.

// MaxRecordSize is the largest payload Append accepts: what fits in one
// segment after its header and the record's header.
func (w *WAL) MaxRecordSize() int {
	return int(w.segSize - segHeaderSize - recHeaderSize)
}

// WaitWritten returns once every record up to upTo has been handed to the
// segment file (written, not necessarily fsynced), so that the memory
// holding it is free again. It is Sync without the fsync; the errors are
// Sync's.
func (w *WAL) WaitWritten(ctx context.Context, upTo LSN) error {
	if p := w.fatal.Load(); p != nil {
		return *p
	}
	if upTo <= LSN(w.written.Load()) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ch, err := w.enqueue(upTo, false)
	if ch == nil {
		return err
	}
	return awaitWriter(ctx, ch)
}
