package durable

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/wal"
)

// The commit path: a write set is encoded (EncodeCommit), logged as one
// RecCommit record or, when too large for one, streamed as parts, and only
// then is the transaction committed in the clog (Store.Commit). Recovery's
// side, reading these records back, is redo.go.

// Write is one change of a transaction's write set, as its commit record
// logs it: Value is the new value, or Delete removes the key's row.
type Write struct {
	Table  string
	Key    []byte
	Value  []byte
	Delete bool
}

// EncodeCommit encodes a write set as a RecCommit record's payload:
// uvarint xid, uvarint count, then per write an op byte (1 put, 2 delete),
// the table, the key and, for a put, the value, each uvarint-length-prefixed.
// A write set too large for one record is cut from this same byte stream
// into RecCommitPart/RecCommitEnd records (streamCommit).
func EncodeCommit(xid uint64, ws []Write) []byte {
	n := 2 * binary.MaxVarintLen64
	for _, w := range ws {
		n += 1 + 3*binary.MaxVarintLen32 + len(w.Table) + len(w.Key) + len(w.Value)
	}
	b := make([]byte, 0, n)
	b = binary.AppendUvarint(b, xid)
	b = binary.AppendUvarint(b, uint64(len(ws)))
	for _, w := range ws {
		op := byte(1)
		if w.Delete {
			op = 2
		}
		b = append(b, op)
		b = binary.AppendUvarint(b, uint64(len(w.Table)))
		b = append(b, w.Table...)
		b = binary.AppendUvarint(b, uint64(len(w.Key)))
		b = append(b, w.Key...)
		if !w.Delete {
			b = binary.AppendUvarint(b, uint64(len(w.Value)))
			b = append(b, w.Value...)
		}
	}
	return b
}

var errBadRecord = errors.New("tupled: malformed WAL record")

// decodeCommit decodes a RecCommit record (see decodeCommitStream).
func decodeCommit(data []byte) (xid uint64, ws []Write, err error) {
	xid, err = decodeCommitStream([][]byte{data}, func(w Write) error {
		ws = append(ws, w)
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return xid, ws, nil
}

// Commit makes the write set ws of transaction x durable and then commits
// x (see the package comment): errs.ErrNoTable if ws names a table dropped
// meanwhile, errs.ErrDiskFull when the WAL found no space (x is not
// committed, the database goes on), errs.ErrIO after any other failure
// (the database refuses writes from then on). x is committed only when it
// returns nil; the caller aborts it otherwise.
func (d *Store) Commit(x *xact.Xact, ws []Write) error {
	if err := d.FatalErr(); err != nil {
		return err
	}
	// dropMu (shared): no DROP TABLE record between the check that every
	// table written still exists and this commit's record (drop.go).
	d.dropMu.RLock()
	if err := d.checkTablesExist(ws); err != nil {
		d.dropMu.RUnlock()
		return err
	}
	lsn, err := d.logCommit(x.ID(), ws) // registers x in inflight
	d.dropMu.RUnlock()
	if err != nil {
		return err
	}
	if d.sync {
		if err := d.wal.Sync(context.Background(), lsn); err != nil {
			d.inflightMu.Lock()
			delete(d.inflight, x.ID())
			d.inflightMu.Unlock()
			// Out of space: the record is void, never replayed, and the
			// transaction is rolled back.
			return d.walFailed(err)
		}
	}
	d.inflightMu.Lock()
	d.xacts.Commit(x)
	delete(d.inflight, x.ID())
	d.inflightMu.Unlock()
	return nil
}

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
// transaction's own tuples (tests/crash's BenchmarkCommit1GB): the WAL's buffers stay
// small enough to be reused. With 16 MiB between waits they were not, and
// the same commit allocated 2.5 GiB. Recovery holds one transaction's parts until
// its end record (the size of its write set) and applies them to the
// backend in batches of backendChunk bytes, as the checkpoint does too:
// both commit early batches without sync and the redo point only in the
// last one, which is safe because redo is idempotent (doc.go) — a
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
		if l, ok := d.inflight[xid]; err == nil && (!ok || lsn < l) {
			d.inflight[xid] = lsn // a bulk load's RecBulkLoad may hold an earlier one (bulk.go)
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
				if old, ok := d.inflight[xid]; !ok || l < old {
					d.inflight[xid] = l
				}
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
