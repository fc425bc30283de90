package wal

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// scanResult is what scanSegment found in one segment file.
type scanResult struct {
	valid   int64 // bytes of intact header and records at the start of the file (0 if the header is bad)
	records int
	bad     error // why the byte at offset valid is not the start of an intact record; nil if valid == len(data)
}

// scanSegment walks the records of a segment file's contents.
func scanSegment(data []byte, base LSN) scanResult {
	if err := checkSegmentHeader(data, base); err != nil {
		return scanResult{bad: err}
	}
	res := scanResult{valid: segHeaderSize}
	for res.valid < int64(len(data)) {
		rh, _, err := decodeRecordAt(data, res.valid, base)
		if err != nil {
			res.bad = err
			return res
		}
		res.valid += recHeaderSize + int64(rh.length)
		res.records++
	}
	return res
}

// scanSegmentFile is scanSegment over the segment file at name, read as a
// stream through one buffer rather than held whole: the common case at
// Open, an intact segment (its records, then the end of the file or a
// preallocated tail of zeros), costs a buffer instead of a copy of the
// file, which after a bulk load is tens of megabytes of garbage the first
// work after Open would pay to collect. intact reports that case, with
// res.valid the offset just past the last record and size the file's length;
// anything else (a damaged or torn record, a short file) reports intact
// false, and the caller reads the file whole to judge it.
func (w *WAL) scanSegmentFile(name string, base LSN) (res scanResult, size int64, intact bool, err error) {
	f, err := w.fs.Open(name)
	if err != nil {
		return res, 0, false, fmt.Errorf("wal: open %s: %w", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return res, 0, false, fmt.Errorf("wal: stat %s: %w", name, err)
	}
	r := bufio.NewReaderSize(f, 1<<20)
	hdr := make([]byte, segHeaderSize)
	if _, err := io.ReadFull(r, hdr); err != nil || checkSegmentHeader(hdr, base) != nil {
		return res, 0, false, nil
	}
	res.valid = segHeaderSize
	h := make([]byte, recHeaderSize)
	var payload []byte
	for {
		n, err := io.ReadFull(r, h)
		if err == io.EOF {
			return res, res.valid, true, nil // the file ends after its last record
		}
		if err != nil && err != io.ErrUnexpectedEOF {
			return res, 0, false, fmt.Errorf("wal: read %s: %w", name, err)
		}
		if allZero(h[:n]) {
			// Preallocated room if every byte to the end is zero.
			zeros, zerr := zeroRun(r)
			if zerr != nil {
				return res, 0, false, fmt.Errorf("wal: read %s: %w", name, zerr)
			}
			if zeros < 0 {
				return res, 0, false, nil
			}
			return res, res.valid + int64(n) + zeros, true, nil
		}
		if err != nil {
			return res, 0, false, nil // a header cut short
		}
		rh, err := decodeRecordHeader(h, base+LSN(res.valid))
		if err != nil || res.valid+recHeaderSize+int64(rh.length) > fi.Size() {
			return res, 0, false, nil // damaged, or a length past the end of the file
		}
		if cap(payload) < int(rh.length) {
			payload = make([]byte, rh.length)
		}
		payload = payload[:rh.length]
		if _, err := io.ReadFull(r, payload); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return res, 0, false, nil
			}
			return res, 0, false, fmt.Errorf("wal: read %s: %w", name, err)
		}
		if checkRecordCRC(h, rh, payload) != nil {
			return res, 0, false, nil
		}
		res.valid += recHeaderSize + int64(rh.length)
		res.records++
	}
}

// zeroRun reads r to its end and returns how many bytes it read, or -1 if
// one of them was not zero.
func zeroRun(r io.Reader) (int64, error) {
	buf := make([]byte, 64<<10)
	var n int64
	for {
		k, err := r.Read(buf)
		if !allZero(buf[:k]) {
			return -1, nil
		}
		n += int64(k)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// findVoucher looks past the first damaged byte (at offset bad) of the last
// segment for an intact record that says the damaged byte had already been
// fsynced when the record was appended (its synced field is beyond bad).
// Such a record proves the damage is not a torn write of unsynced data but
// lost durable data. Intact records that make no such claim are what a
// crash leaves when the disk wrote unsynced blocks out of order; they are
// cut with the rest of the tail.
func findVoucher(data []byte, base LSN, bad int64) (off int64, synced LSN, ok bool) {
	damaged := base + LSN(bad)
	for p := bad + 1; p+recHeaderSize <= int64(len(data)); p++ {
		// Cheap filter first: an intact header carries its own LSN.
		if LSN(binary.LittleEndian.Uint64(data[p+12:p+20])) != base+LSN(p) {
			continue
		}
		rh, _, err := decodeRecordAt(data, p, base)
		if err != nil {
			continue
		}
		if rh.synced > damaged {
			return p, rh.synced, true
		}
	}
	return 0, 0, false
}

func (w *WAL) corrupt(base LSN, off int64, format string, args ...any) error {
	return fmt.Errorf("%w: %s at offset %d (LSN %d): %s", ErrCorrupt, w.segPath(base), off, base+LSN(off), fmt.Sprintf(format, args...))
}

// recover reads every segment, checks the chain, cuts a torn tail of the
// last segment, and leaves the writer's segment open with everything in it
// fsynced.
func (w *WAL) recover() error {
	names, err := w.fs.List(w.dirname)
	if err != nil {
		return fmt.Errorf("wal: list %s: %w", w.dirname, err)
	}
	var bases []LSN
	removedTmp := false
	for _, name := range names {
		if strings.HasSuffix(name, segSuffix+tmpSuffix) {
			// A cut that crashed before its rename: the original is intact.
			if err := w.fs.Remove(w.fs.PathJoin(w.dirname, name)); err != nil {
				return fmt.Errorf("wal: remove leftover %s: %w", name, err)
			}
			removedTmp = true
			continue
		}
		if b, ok := parseSegmentName(name); ok {
			bases = append(bases, b)
		}
	}
	if removedTmp {
		if err := w.syncDir(); err != nil {
			return fmt.Errorf("wal: %w", err)
		}
	}
	slices.Sort(bases)
	if len(bases) == 0 {
		f, room, err := w.createSegment(0)
		if err != nil {
			return fmt.Errorf("wal: %w", err)
		}
		w.cur = segFile{base: 0, f: f, off: segHeaderSize, room: room}
		w.log.Info("wal created")
		return nil
	}

	var prevEnd LSN
	records := 0
	for i, base := range bases {
		last := i == len(bases)-1
		if i > 0 && base != prevEnd {
			return w.corrupt(base, 0, "segment starts at LSN %d but the previous one ends at %d (a segment is missing or overlaps)", base, prevEnd)
		}
		// Zeros after the last record are a preallocated segment's free
		// room (Options.Preallocate): the segment ends at its last record.
		res, size, intact, err := w.scanSegmentFile(w.segPath(base), base)
		if err != nil {
			return err
		}
		end := res.valid
		var data []byte // the whole file, read only when it is not intact
		if !intact {
			if data, err = w.readFile(w.segPath(base)); err != nil {
				return err
			}
			res = scanSegment(data, base)
			end, size = int64(len(data)), int64(len(data))
			if res.bad != nil && res.valid > 0 && allZero(data[res.valid:]) {
				end, res.bad = res.valid, nil
			}
		}
		records += res.records
		if !last {
			if res.bad != nil {
				return w.corrupt(base, res.valid, "%v (a segment that has a successor was complete when sealed, so this is not a torn write)", res.bad)
			}
			prevEnd = base + LSN(end)
			w.segs = append(w.segs, base)
			continue
		}
		if res.bad != nil {
			if off, synced, ok := findVoucher(data, base, res.valid); ok {
				return w.corrupt(base, res.valid, "%v, and the intact record at offset %d says everything up to LSN %d had been fsynced (durable data lost, refusing to cut)", res.bad, off, synced)
			}
			keep := data[:res.valid]
			if res.valid == 0 {
				// Torn header of a segment whose creation crashed: no
				// record can have been written into it, so write a fresh one.
				keep = encodeSegmentHeader(base)
			}
			if err := w.cut(base, keep); err != nil {
				return err
			}
			w.log.Warn("wal torn tail cut", "segment", segmentName(base), "offset", res.valid,
				"lsn", base+LSN(len(keep)), "dropped_bytes", len(data)-len(keep), "reason", res.bad.Error())
			end = int64(len(keep))
			size = end
		}
		w.segs = append(w.segs, base)
		f, err := w.fs.OpenReadWrite(w.segPath(base), vfs.WriteCategoryUnspecified)
		if err != nil {
			return fmt.Errorf("wal: open %s: %w", w.segPath(base), err)
		}
		// A segment cut above, or written without Preallocate, gets its
		// room now; the fsync below makes its size durable.
		room := w.preallocate(f, w.segPath(base), size, end+w.step)
		w.cur = segFile{base: base, f: f, off: end, room: room}
		// A process crash leaves written but unsynced records in the page
		// cache, where Open reads them as valid: make them durable before
		// anyone acts on them.
		err = f.Sync()
		w.fsyncs.Add(1)
		if err != nil {
			return fmt.Errorf("wal: fsync %s: %w", w.segPath(base), err)
		}
		if err := w.syncDir(); err != nil {
			return fmt.Errorf("wal: %w", err)
		}
	}
	w.log.Debug("wal recovered", "records", records)
	return nil
}

func (w *WAL) readFile(name string) ([]byte, error) {
	f, err := w.fs.Open(name)
	if err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("wal: stat %s: %w", name, err)
	}
	// Read what Stat promised, then anything beyond it (a file that grew).
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("wal: read %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// cut replaces the segment at base by keep, durably: keep goes to a
// temporary file that is fsynced and renamed over the segment, then the
// directory is fsynced. A crash at any point leaves either the old file
// (cut again at the next Open) or the new one. vfs.File has no Truncate,
// and a cut that merely overwrote would not do: an old record beyond the
// cut point carries the same LSN a new record will get there, so it must
// be gone before anything new is written.
func (w *WAL) cut(base LSN, keep []byte) error {
	name := w.segPath(base)
	tmp := name + tmpSuffix
	f, err := w.fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("wal: cut %s: %w", name, err)
	}
	n, err := f.WriteAt(keep, 0)
	if err == nil && n != len(keep) {
		err = io.ErrShortWrite
	}
	if err == nil {
		err = f.Sync()
		w.fsyncs.Add(1)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("wal: cut %s: write %s: %w", name, tmp, err)
	}
	if err := w.fs.Rename(tmp, name); err != nil {
		return fmt.Errorf("wal: cut %s: rename: %w", name, err)
	}
	if err := w.syncDir(); err != nil {
		return fmt.Errorf("wal: cut %s: %w", name, err)
	}
	return nil
}
