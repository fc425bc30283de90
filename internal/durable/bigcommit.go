package durable

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/internal/storage"
	"github.com/tupled/tupled/wal"
)

// Large transactions.
//
// A commit record holds the whole write set (EncodeCommit), but a WAL record
// never spans segments (64 MiB by default). A write set whose encoding does
// not fit in one record — a million rows, a 100 MB value, a gigabyte — is
// logged as a stream instead:
//
//	RecCommitPart  xid, bytes of the encoded write set   (zero or more)
//	RecCommitEnd   xid, the last bytes of it
//
// The parts are cut from EncodeCommit's byte stream at commitPartSize bytes,
// so a value may run across any number of parts, and the concatenation of
// one xid's fragments in LSN order is exactly the payload a single
// RecCommit would have carried. Only RecCommitEnd commits: recovery keeps
// an xid's parts until its end record, and drops parts that no end record
// follows (a crash while streaming; the transaction never committed). Parts
// of concurrent commits may interleave; the xid tells them apart.
//
// The redo point stays correct because the transaction is in inflight from
// its FIRST part on (registered under inflightMu with that part's LSN, as
// a single record is), so no checkpoint chooses a redo point past a part
// whose end record it does not contain.
//
// Memory. At commit the write set is not encoded in one piece: one part
// buffer is filled and appended at a time, and every commitWriteAhead bytes
// the committer waits for the WAL writer to have written what it appended
// (WaitWritten), so a 1 GiB commit allocates about 11 MiB besides the
// transaction's own tuples (BenchmarkCommit1GB): the WAL's buffers stay
// small enough to be reused. With 16 MiB between waits they were not, and
// the same commit allocated 2.5 GiB. Recovery holds one transaction's parts until
// its end record (the size of its write set) and applies them to the
// backend in batches of backendChunk bytes, as the checkpoint does too:
// both commit early batches without sync and the redo point only in the
// last one, which is safe because redo is idempotent (durable.go) — a
// crash in between leaves the old redo point, and the next recovery
// replays everything after it again.
const (
	commitPartSize   = 1 << 20
	commitWriteAhead = 2 << 20
	backendChunk     = 64 << 20
)

// WAL record types of a commit logged as a stream (see above).
const (
	RecCommitPart wal.RecordType = 4 // xid, part of the encoded write set
	RecCommitEnd  wal.RecordType = 5 // xid, last part: the transaction committed
)

// commitSizeBound is at least len(EncodeCommit(xid, ws)).
func commitSizeBound(ws []Write) int {
	n := 2 * binary.MaxVarintLen64
	for _, w := range ws {
		n += 1 + 3*binary.MaxVarintLen32 + len(w.Table) + len(w.Key) + len(w.Value)
	}
	return n
}

// logCommit appends the commit of xid — one RecCommit record, or a stream
// of parts when it does not fit in one — and registers xid in inflight
// from the first record on. It returns the LSN of the last record. A
// failure that is not a WAL I/O failure (the WAL was closed, a record was
// refused) fails this commit only; the records appended before it are
// parts without an end, which recovery drops.
func (d *Store) logCommit(xid uint64, ws []Write) (wal.LSN, error) {
	maxRec := d.wal.MaxRecordSize()
	if commitSizeBound(ws) <= maxRec {
		d.inflightMu.Lock()
		lsn, err := d.wal.Append(wal.Record{Type: RecCommit, Data: EncodeCommit(xid, ws)})
		if err == nil {
			d.inflight[xid] = lsn
		}
		d.inflightMu.Unlock()
		return lsn, d.appendFailed(err)
	}
	var lsn wal.LSN
	registered := false
	sinceWait := 0
	err := streamCommit(xid, ws, min(commitPartSize, maxRec), func(data []byte, last bool) error {
		rec := wal.Record{Type: RecCommitPart, Data: data}
		if last {
			rec.Type = RecCommitEnd
		}
		if !registered {
			d.inflightMu.Lock()
			l, err := d.wal.Append(rec)
			if err == nil {
				d.inflight[xid] = l
				registered = true
			}
			d.inflightMu.Unlock()
			lsn = l
			return err
		}
		l, err := d.wal.Append(rec)
		if err != nil {
			return err
		}
		lsn = l
		if sinceWait += len(data); sinceWait >= commitWriteAhead && !last {
			sinceWait = 0
			return d.wal.WaitWritten(context.Background(), l)
		}
		return nil
	})
	if err != nil {
		if registered {
			d.inflightMu.Lock()
			delete(d.inflight, xid)
			d.inflightMu.Unlock()
		}
		return 0, d.appendFailed(err)
	}
	return lsn, nil
}

// appendFailed decides what a failed append means: a WAL I/O failure
// fails the database (the WAL is dead anyway); anything else fails only
// the commit that met it.
func (d *Store) appendFailed(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, wal.ErrNoSpace):
		return diskFull(err)
	case errors.Is(err, wal.ErrFatal):
		return d.fail(err)
	case errors.Is(err, wal.ErrClosed):
		return errs.ErrClosed
	case errors.Is(err, wal.ErrRecordTooLarge):
		return &errs.OpError{Sentinel: errs.ErrProgramLimitExceeded, Msg: "tupled: commit record too large: " + err.Error(), Cause: err}
	}
	return fmt.Errorf("tupled: commit not logged: %w", err)
}

// streamCommit encodes the commit of xid as EncodeCommit does, cut into
// records of at most partSize bytes that each start with uvarint(xid):
// emit gets each record's payload (valid only during the call), last=true
// for the final one.
func streamCommit(xid uint64, ws []Write, partSize int, emit func(data []byte, last bool) error) error {
	prefix := binary.AppendUvarint(nil, xid)
	buf := make([]byte, 0, partSize)
	buf = append(buf, prefix...)
	var err error
	write := func(p []byte) {
		for len(p) > 0 && err == nil {
			if len(buf) == partSize {
				err = emit(buf, false)
				buf = buf[:len(prefix)]
				continue
			}
			n := min(partSize-len(buf), len(p))
			buf = append(buf, p[:n]...)
			p = p[n:]
		}
	}
	var scratch [binary.MaxVarintLen64]byte
	uvarint := func(v uint64) { write(scratch[:binary.PutUvarint(scratch[:], v)]) }
	uvarint(xid)
	uvarint(uint64(len(ws)))
	for _, w := range ws {
		if w.Delete {
			write([]byte{2})
		} else {
			write([]byte{1})
		}
		uvarint(uint64(len(w.Table)))
		write([]byte(w.Table))
		uvarint(uint64(len(w.Key)))
		write(w.Key)
		if !w.Delete {
			uvarint(uint64(len(w.Value)))
			write(w.Value)
		}
	}
	if err != nil {
		return err
	}
	return emit(buf, true)
}

// fragReader reads EncodeCommit's format from a sequence of fragments. A
// length is checked against the bytes left before anything is allocated
// for it, so a damaged length cannot cause a huge allocation.
type fragReader struct {
	frags [][]byte // frags[0] is being read; consumed fragments are dropped
	left  int      // bytes left in all fragments
	err   error
}

func newFragReader(frags [][]byte) *fragReader {
	r := &fragReader{frags: frags}
	for _, f := range frags {
		r.left += len(f)
	}
	return r
}

// cur returns the fragment being read, dropping exhausted ones (so that
// recovery does not keep what it already applied).
func (r *fragReader) cur() []byte {
	for len(r.frags) > 0 && len(r.frags[0]) == 0 {
		r.frags[0] = nil
		r.frags = r.frags[1:]
	}
	if len(r.frags) == 0 {
		return nil
	}
	return r.frags[0]
}

func (r *fragReader) byte() byte {
	f := r.cur()
	if r.err != nil || len(f) == 0 {
		r.err = errBadRecord
		return 0
	}
	r.frags[0] = f[1:]
	r.left--
	return f[0]
}

func (r *fragReader) uvarint() uint64 {
	var x uint64
	for i := 0; i < binary.MaxVarintLen64; i++ {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		if i == binary.MaxVarintLen64-1 && c > 1 {
			break // overflows 64 bits
		}
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return x
		}
	}
	r.err = errBadRecord
	return 0
}

// bytes reads a length-prefixed byte string: a sub-slice of its fragment
// when it lies in one, else a copy.
func (r *fragReader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil || n > uint64(r.left) {
		r.err = errBadRecord
		return nil
	}
	if n == 0 {
		return []byte{}
	}
	f := r.cur()
	if n <= uint64(len(f)) {
		v := f[:n:n]
		r.frags[0] = f[n:]
		r.left -= int(n)
		return v
	}
	v := make([]byte, 0, n)
	for uint64(len(v)) < n {
		f := r.cur()
		k := min(int(n)-len(v), len(f))
		v = append(v, f[:k]...)
		r.frags[0] = f[k:]
		r.left -= k
	}
	return v
}

// decodeCommitStream decodes EncodeCommit's format from fragments, calling
// fn for each write in order. The table strings of consecutive writes to
// one table are shared.
func decodeCommitStream(frags [][]byte, fn func(Write) error) (xid uint64, err error) {
	r := newFragReader(frags)
	xid = r.uvarint()
	n := r.uvarint()
	table := ""
	for i := uint64(0); i < n && r.err == nil; i++ {
		op := r.byte()
		if r.err == nil && op != 1 && op != 2 {
			r.err = errBadRecord
		}
		tb := r.bytes()
		if string(tb) != table {
			table = string(tb)
		}
		w := Write{Table: table, Key: r.bytes(), Delete: op == 2}
		if op == 1 {
			w.Value = r.bytes()
		}
		if r.err != nil {
			break
		}
		if err := fn(w); err != nil {
			return 0, err
		}
	}
	if r.err == nil && r.left != 0 {
		r.err = errBadRecord // trailing bytes
	}
	return xid, r.err
}

// redoer applies the WAL's records to the backend during recovery.
type redoer struct {
	d       *Store
	b       storage.Batch
	parts   streamedCommits
	nextXid uint64
	skipped int // writes the backend could not hold (see storable)
}

func (d *Store) newRedoer(nextXid uint64) *redoer {
	return &redoer{d: d, b: d.be.NewBatch(), parts: streamedCommits{}, nextXid: nextXid}
}

// commit redoes a RecCommit record.
func (rd *redoer) commit(lsn wal.LSN, data []byte) error {
	return rd.apply(lsn, [][]byte{data})
}

// part keeps a RecCommitPart record's fragment; end redoes the whole
// streamed commit.
func (rd *redoer) part(lsn wal.LSN, data []byte, end bool) error {
	frags, done, err := rd.parts.add(data, end)
	if err != nil || !done {
		return err
	}
	return rd.apply(lsn, frags)
}

// streamedCommits gathers the fragments of streamed commits as the WAL is
// read: recovery, verify and salvage all read them through add.
type streamedCommits map[uint64][][]byte // xid -> fragments of a commit not yet ended

// add keeps a RecCommitPart (end false) or RecCommitEnd (end true)
// record's fragment; at the end it returns the commit's fragments, for
// decodeCommitStream.
func (sc streamedCommits) add(data []byte, end bool) (frags [][]byte, done bool, err error) {
	xid, n := binary.Uvarint(data)
	if n <= 0 {
		return nil, false, errBadRecord
	}
	frags = append(sc[xid], data[n:])
	if !end {
		sc[xid] = frags
		return nil, false, nil
	}
	delete(sc, xid)
	return frags, true, nil
}

func (rd *redoer) apply(lsn wal.LSN, frags [][]byte) error {
	xid, err := decodeCommitStream(frags, func(w Write) error {
		if !storable(w.Table, w.Key, w.Value) {
			// Accepted before there were limits; the backend cannot hold
			// it, and refusing to recover would lose the whole database.
			rd.skipped++
			rd.d.log.Error("recovery: skipping a logged write the backend cannot store",
				"lsn", lsn, "table", truncated(w.Table), "key_len", len(w.Key), "value_len", len(w.Value))
			return nil
		}
		if w.Delete {
			rd.b.Delete(heap.RowKey(w.Table, w.Key))
		} else {
			rd.b.Set(heap.RowKey(w.Table, w.Key), w.Value)
		}
		return rd.d.flushIfLarge(rd.b)
	})
	if err != nil {
		return fmt.Errorf("record at %d: %w", lsn, err)
	}
	rd.nextXid = max(rd.nextXid, xid+1)
	return nil
}

// createTable redoes a RecCreateTable record; false if the name cannot be
// stored (a name the engine accepted before there were limits).
func (rd *redoer) createTable(lsn wal.LSN, name string) bool {
	if len(catalogKey(name)) > storage.MaxKeySize {
		rd.skipped++
		rd.d.log.Error("recovery: skipping a logged table whose name the backend cannot store",
			"lsn", lsn, "table", truncated(name), "name_len", len(name))
		return false
	}
	rd.b.Set(catalogKey(name), nil)
	return true
}

// finish reports what replay left unfinished.
func (rd *redoer) finish() {
	for xid, frags := range rd.parts {
		n := 0
		for _, f := range frags {
			n += len(f)
		}
		rd.d.log.Info("recovery: dropping a commit cut off while it was logged", "xid", xid, "bytes", n)
	}
	rd.parts = nil
	if rd.skipped > 0 {
		rd.d.log.Error("recovery: skipped logged writes the backend cannot store", "count", rd.skipped)
	}
	rd.d.skippedAtRecovery.Store(uint64(rd.skipped))
}

// flushIfLarge commits b without sync once it holds backendChunk bytes,
// and empties it (see "Memory" above).
func (d *Store) flushIfLarge(b storage.Batch) error {
	if b.Size() < backendChunk {
		return nil
	}
	if err := d.be.Commit(b, false); err != nil {
		return d.fail(err)
	}
	b.Reset()
	return nil
}

func truncated(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
