package wal

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Replay calls fn, in log order, for every record that is not wholly
// before from (that is, whose LSN is greater than from), with the record's
// LSN (the position just past it, as Append returned it). Passing a value
// that Append or EndLSN returned visits exactly the records appended after
// it; passing 0 visits the whole retained log.
//
// Replay first hands buffered records to the file (without an fsync), so
// it sees every record appended before the call. Right after Open every
// record it sees is durable. fn may keep r.Data. If fn returns an error,
// Replay stops and returns it unchanged. fn must not call Replay,
// RemoveBefore or Close. A record that fails its checks now (damaged after
// Open) is reported as ErrCorrupt; asking for records that RemoveBefore
// deleted (from below the oldest segment's base) is ErrRemoved.
func (w *WAL) Replay(from LSN, fn func(lsn LSN, r Record) error) error {
	end := w.EndLSN()
	ch, err := w.enqueue(end, false)
	if err != nil {
		return err
	}
	if ch != nil {
		if err := <-ch; err != nil {
			return err
		}
	}
	w.replayMu.RLock()
	defer w.replayMu.RUnlock()
	w.mu.Lock()
	segs := slices.Clone(w.segs)
	w.mu.Unlock()
	if from < segs[0] {
		return fmt.Errorf("%w: Replay from LSN %d, the oldest segment starts at %d", ErrRemoved, from, segs[0])
	}
	for i, base := range segs {
		if base >= end {
			break
		}
		limit := end
		if i+1 < len(segs) && segs[i+1] < end {
			limit = segs[i+1]
		}
		if limit <= from {
			continue // every record here ends at or before limit
		}
		if err := w.replaySegment(base, limit, from, fn); err != nil {
			return err
		}
	}
	return nil
}

// replaySegment reads the segment at base up to LSN limit and calls fn for
// the records that end after from.
func (w *WAL) replaySegment(base, limit, from LSN, fn func(LSN, Record) error) error {
	name := w.segPath(base)
	f, err := w.fs.Open(name)
	if err != nil {
		return fmt.Errorf("wal: replay: open %s: %w", name, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	readErr := func(off int64, err error) error {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return w.corrupt(base, off, "segment ends before LSN %d", limit)
		}
		return fmt.Errorf("wal: replay: read %s: %w", name, err)
	}
	hdr := make([]byte, segHeaderSize)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return readErr(0, err)
	}
	if err := checkSegmentHeader(hdr, base); err != nil {
		return w.corrupt(base, 0, "%v", err)
	}
	h := make([]byte, recHeaderSize)
	off := int64(segHeaderSize)
	for base+LSN(off) < limit {
		if _, err := io.ReadFull(r, h); err != nil {
			return readErr(off, err)
		}
		rh, err := decodeRecordHeader(h, base+LSN(off))
		if err != nil {
			return w.corrupt(base, off, "%v", err)
		}
		next := off + recHeaderSize + int64(rh.length)
		lsn := base + LSN(next)
		if lsn > limit {
			return w.corrupt(base, off, "record of %d bytes runs past LSN %d", rh.length, limit)
		}
		if lsn <= from {
			if _, err := r.Discard(int(rh.length)); err != nil {
				return readErr(off, err)
			}
			off = next
			continue
		}
		payload := make([]byte, rh.length)
		if _, err := io.ReadFull(r, payload); err != nil {
			return readErr(off, err)
		}
		if err := checkRecordCRC(h, rh, payload); err != nil {
			return w.corrupt(base, off, "%v", err)
		}
		if rh.typ == voidType { // a record whose write failed for lack of space
			off = next
			continue
		}
		if err := fn(lsn, Record{Type: rh.typ, Data: payload}); err != nil {
			return err
		}
		off = next
	}
	return nil
}

// RemoveBefore deletes the segments that hold only records wholly before
// lsn (a checkpoint made them unnecessary), oldest first, fsyncing the
// directory after each removal so that the retained segments always form
// an unbroken chain even if a crash interrupts it. The segment being
// written is never removed. It waits for running Replays to finish.
//
// A failed removal is returned as a plain error (nothing is lost; call
// again); a failed directory fsync is fatal like any other fsync error.
func (w *WAL) RemoveBefore(lsn LSN) error {
	w.replayMu.Lock()
	defer w.replayMu.Unlock()
	w.mu.Lock()
	err := w.usableLocked()
	segs := slices.Clone(w.segs)
	w.mu.Unlock()
	if err != nil {
		return err
	}
	removed := 0
	for i := 0; i+1 < len(segs) && segs[i+1] <= lsn; i++ {
		name := w.segPath(segs[i])
		if err := w.fs.Remove(name); err != nil {
			return fmt.Errorf("wal: remove %s: %w", name, err)
		}
		w.mu.Lock()
		w.segs = w.segs[1:]
		w.mu.Unlock()
		removed++
		if err := w.syncDir(); err != nil {
			return w.die(err)
		}
	}
	if removed > 0 {
		w.log.Info("wal segments removed", "count", removed, "before", lsn)
	}
	return nil
}
