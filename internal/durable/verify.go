package durable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tupled/tupled/internal/storage"
	"github.com/tupled/tupled/wal"
)

// Verify and Salvage: the way forward from errs.ErrCorrupted (tupled verify,
// tupled salvage).
//
// Verify reads a closed database without changing it — the backend is
// opened read-only and the WAL is read from an in-memory copy — and reports
// every problem it finds: the control file, pebble's MANIFEST, the backend's
// own structure (bbolt's Tx.Check, pebble's CheckLevels), every stored value
// against its checksum, the format marker and checkpoint number against the
// control file, and every WAL record from the redo point on. Salvage copies
// every intact row, and then every intact WAL record after the backend's
// redo point, into a new database, and lists what it could not copy.

// VerifyResult is what Verify found.
type VerifyResult struct {
	// Problems lists the damage found, one line each; empty if none.
	Problems []string
	// Rows is the number of rows per table with an intact value.
	Rows map[string]int
	// WALRecords is the number of WAL records after the redo point.
	WALRecords int
}

// UsesBbolt reports whether the database in dir has the bbolt backend
// (DetectBackend).
func UsesBbolt(dir string) bool { return DetectBackend(dir) == storage.KindBbolt }

// DetectBackend returns the backend kind (storage.KindPebble or
// storage.KindBbolt) of the database in dir: the one its control file
// names, else the one whose files are there.
func DetectBackend(dir string) string {
	if ctl, ok, err := readControl(vfs.Default, dir); err == nil && ok {
		if ctl.backend == backendBbolt {
			return storage.KindBbolt
		}
		return storage.KindPebble
	}
	if _, err := os.Stat(filepath.Join(dir, "data", storage.BboltFile)); err == nil {
		return storage.KindBbolt
	}
	return storage.KindPebble
}

// parseRowKey splits a backend row key into table and key.
func parseRowKey(k []byte) (table string, key []byte, ok bool) {
	if len(k) < 2 || k[0] != 'r' {
		return "", nil, false
	}
	n, w := binary.Uvarint(k[1:])
	if w <= 0 || uint64(len(k)-1-w) < n {
		return "", nil, false
	}
	return string(k[1+w : 1+w+int(n)]), k[1+w+int(n):], true
}

// scanResuming scans the whole raw backend, resuming after the last key it
// read when the scan fails (damage met by the backend itself), and reports
// each failure to bad. It stops when a resumed scan makes no progress.
func scanResuming(be storage.Backend, fn func(k, v []byte), bad func(after []byte, err error)) {
	var start []byte
	for attempts := 0; attempts < 10000; attempts++ {
		progressed := false
		err := be.Scan(start, nil, func(k, v []byte) error {
			fn(k, v)
			start = append(append(start[:0], k...), 0)
			progressed = true
			return nil
		})
		if err == nil {
			return
		}
		bad(start, err)
		if !progressed {
			return
		}
	}
}

// Verify checks the database in dir (closed: not open in any process) and
// writes a report to w. It returns an error only if it could not run.
func Verify(dir string, w io.Writer) (*VerifyResult, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	res := &VerifyResult{Rows: map[string]int{}}
	problem := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		res.Problems = append(res.Problems, msg)
		fmt.Fprintf(w, "DAMAGED  %s\n", msg)
	}
	okf := func(format string, args ...any) { fmt.Fprintf(w, "ok       %s\n", fmt.Sprintf(format, args...)) }
	fs := vfs.Default
	be := DetectBackend(dir)
	fmt.Fprintf(w, "verifying %s (%s backend)\n", dir, be)

	ctl, hasCtl, err := readControl(fs, dir)
	switch {
	case err != nil:
		problem("%v", err)
	case !hasCtl:
		problem("control file %s is missing", fs.PathJoin(dir, controlName))
	default:
		okf("control file: checkpoint %d, redo LSN %d", ctl.checkpoint, ctl.redo)
		if err := checkManifest(fs, dir, be); err != nil {
			problem("%v", err)
		} else if be == storage.KindPebble {
			okf("pebble MANIFEST-%06d (at least %d bytes durable)", ctl.manifestNum, ctl.manifestSize)
		}
	}

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	raw, err := storage.Open(be, fs.PathJoin(dir, "data"), storage.Options{ReadOnly: true, Logger: quiet})
	var redo uint64
	haveRedo := false
	if err != nil {
		problem("backend does not open: %v", err)
	} else {
		defer raw.Close()
		if probs := storage.CheckConsistency(raw); len(probs) > 0 {
			for _, p := range probs {
				problem("backend structure: %v", p)
			}
		} else {
			okf("backend structure (%s)", map[string]string{storage.KindPebble: "pebble CheckLevels", storage.KindBbolt: "bbolt Tx.Check"}[be])
		}
		damaged, total := 0, 0
		meta := map[string]uint64{}
		scanResuming(raw, func(k, v []byte) {
			total++
			val, err := storage.Unseal(k, v)
			if err != nil {
				damaged++
				if damaged <= 20 {
					problem("%v", err)
				}
				return
			}
			switch {
			case k[0] == 'r':
				if t, _, ok := parseRowKey(k); ok {
					res.Rows[t]++
				} else {
					problem("malformed row key %q", k)
				}
			case k[0] == 'm':
				x, n := binary.Uvarint(val)
				if n > 0 {
					meta[string(k)] = x
				}
			}
		}, func(after []byte, err error) {
			problem("backend read failed after key %q: %v", after, err)
		})
		if damaged > 20 {
			problem("... %d damaged values in all", damaged)
		}
		if damaged == 0 {
			okf("%d stored values pass their checksums", total)
		}
		if _, ok := meta[string(metaFormat)]; !ok && total > 0 {
			problem("backend has no format marker (written before checksums, or damaged)")
		}
		if hasCtl {
			ck := meta[string(metaCheckpoint)]
			switch {
			case ck < ctl.checkpoint:
				problem("backend is at checkpoint %d, behind the control file's %d: backend files rolled back or lost", ck, ctl.checkpoint)
			case ck > ctl.checkpoint+1:
				problem("backend is at checkpoint %d, the control file names %d: the control file is stale", ck, ctl.checkpoint)
			default:
				okf("backend checkpoint %d matches the control file", ck)
			}
		}
		redo, haveRedo = meta[string(metaRedo)], true
	}
	if !haveRedo && hasCtl {
		redo, haveRedo = ctl.redo, true
	}
	n, err := verifyWAL(fs, fs.PathJoin(dir, "wal"), redo, haveRedo, hasCtl, ctl.redo)
	res.WALRecords = n
	if err != nil {
		problem("%v", err)
	} else {
		okf("WAL: %d records after redo LSN %d", n, redo)
	}
	tables := make([]string, 0, len(res.Rows))
	for t := range res.Rows {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		fmt.Fprintf(w, "table %q: %d intact rows in the backend\n", t, res.Rows[t])
	}
	if len(res.Problems) == 0 {
		fmt.Fprintln(w, "no damage found")
	} else {
		fmt.Fprintf(w, "%d problems found; `tupled salvage %s NEWDIR` copies every intact row to a new database\n", len(res.Problems), dir)
	}
	return res, nil
}

// copyWAL copies the WAL directory into a fresh in-memory filesystem, so
// that reading it (wal.Open cuts a torn tail) changes nothing on disk.
func copyWAL(fs vfs.FS, dir string) (vfs.FS, error) {
	mem := vfs.NewMem()
	if err := mem.MkdirAll("/wal", 0o755); err != nil {
		return nil, err
	}
	names, err := fs.List(dir)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		f, err := fs.Open(fs.PathJoin(dir, name))
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, err
		}
		out, err := mem.Create("/wal/"+name, vfs.WriteCategoryUnspecified)
		if err != nil {
			return nil, err
		}
		if _, err := out.Write(data); err != nil {
			return nil, err
		}
		out.Close()
	}
	return mem, nil
}

// readWAL opens a copy of the WAL and replays it from redo (from the
// oldest record if !haveRedo).
func readWAL(fs vfs.FS, dir string, redo uint64, haveRedo bool, fn func(wal.LSN, wal.Record) error) (end wal.LSN, err error) {
	mem, err := copyWAL(fs, dir)
	if err != nil {
		return 0, fmt.Errorf("WAL %s: %w", dir, err)
	}
	w, err := wal.Open(wal.Options{FS: mem, Dir: "/wal"})
	if err != nil {
		return 0, fmt.Errorf("WAL %s: %w", dir, err)
	}
	defer w.Close()
	if !haveRedo {
		redo = 0
		if err := w.Replay(0, func(wal.LSN, wal.Record) error { return nil }); errors.Is(err, wal.ErrRemoved) {
			return 0, fmt.Errorf("WAL %s: no redo point known and the oldest records were removed: %w", dir, err)
		}
	}
	if err := w.Replay(wal.LSN(redo), fn); err != nil {
		return 0, fmt.Errorf("WAL %s: %w", dir, err)
	}
	return w.EndLSN(), nil
}

func verifyWAL(fs vfs.FS, dir string, redo uint64, haveRedo, hasCtl bool, ctlRedo uint64) (int, error) {
	n := 0
	parts := streamedCommits{}
	end, err := readWAL(fs, dir, redo, haveRedo, func(lsn wal.LSN, rec wal.Record) error {
		n++
		switch rec.Type {
		case RecCommit:
			if _, _, err := decodeCommit(rec.Data); err != nil {
				return fmt.Errorf("record at LSN %d: %w", lsn, err)
			}
		case RecCommitPart, RecCommitEnd:
			frags, done, err := parts.add(rec.Data, rec.Type == RecCommitEnd)
			if err == nil && done {
				_, err = decodeCommitStream(frags, func(Write) error { return nil })
			}
			if err != nil {
				return fmt.Errorf("record at LSN %d: %w", lsn, err)
			}
		case RecBulkLoad:
			if _, n := binary.Uvarint(rec.Data); n <= 0 {
				return fmt.Errorf("record at LSN %d: %w", lsn, errBadRecord)
			}
		case RecCreateTable, RecDropTable, RecXidReserve:
		default:
			return fmt.Errorf("record at LSN %d: unknown type %d", lsn, rec.Type)
		}
		return nil
	})
	if err != nil {
		return n, err
	}
	if hasCtl && uint64(end) < ctlRedo {
		return n, fmt.Errorf("WAL %s ends at LSN %d, before the control file's redo point %d: segments lost or cut", dir, end, ctlRedo)
	}
	return n, nil
}

// SalvageResult is what Salvage copied.
type SalvageResult struct {
	Tables, Rows, WALRecords int
	// Lost lists what could not be copied (damaged values, unreadable
	// ranges, an unreadable WAL).
	Lost []string
}

// Target is where Salvage copies to: a new database, written through its
// API (package tupled's Salvage implements it over a DB).
type Target interface {
	// EnsureTable creates the table unless it exists.
	EnsureTable(name string) error
	// DropTable drops the table if it exists.
	DropTable(name string) error
	// Apply writes ws in one transaction: each Write sets its key's row
	// to Value (inserting it if absent) or, with Delete, removes it (if
	// present).
	Apply(ws []Write) error
}

// Salvage copies every intact row of the database in dir, then replays its
// intact WAL records after the backend's redo point, into dst, and writes
// a report to w. The source is not changed. Rows whose stored value is
// damaged, and whatever the backend or WAL cannot read, are listed in
// Lost, not copied. It returns dst's first error. The caller reports the
// totals (SalvageResult) once dst is closed.
func Salvage(dir string, dst Target, w io.Writer) (*SalvageResult, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	fs := vfs.Default
	be := DetectBackend(dir)
	res := &SalvageResult{}
	lost := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		res.Lost = append(res.Lost, msg)
		fmt.Fprintf(w, "LOST     %s\n", msg)
	}
	tables := map[string]bool{}
	ensureTable := func(t string) error {
		if tables[t] {
			return nil
		}
		if err := dst.EnsureTable(t); err != nil {
			return err
		}
		tables[t] = true
		return nil
	}
	// pending writes go to dst in transactions of up to 1000 rows.
	var pending []Write
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		for _, o := range pending {
			if err := ensureTable(o.Table); err != nil {
				return err
			}
		}
		err := dst.Apply(pending)
		pending = pending[:0]
		return err
	}
	add := func(o Write) error {
		pending = append(pending, o)
		if len(pending) >= 1000 {
			return flush()
		}
		return nil
	}

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var redo uint64
	haveRedo := false
	raw, err := storage.Open(be, fs.PathJoin(dir, "data"), storage.Options{ReadOnly: true, Logger: quiet})
	if err != nil {
		lost("the backend does not open, only the WAL is copied: %v", err)
	} else {
		var addErr error
		scanResuming(raw, func(k, v []byte) {
			if addErr != nil {
				return
			}
			val, err := storage.Unseal(k, v)
			if err != nil {
				lost("%v", err)
				return
			}
			switch k[0] {
			case 'c':
				addErr = ensureTable(string(k[1:]))
			case 'm':
				if string(k) == string(metaRedo) {
					if x, n := binary.Uvarint(val); n > 0 {
						redo, haveRedo = x, true
					}
				}
			case 'r':
				t, key, ok := parseRowKey(k)
				if !ok {
					lost("malformed row key %q", k)
					return
				}
				res.Rows++
				addErr = add(Write{Table: t, Key: append([]byte(nil), key...), Value: append([]byte(nil), val...)})
			}
		}, func(after []byte, err error) {
			lost("backend range after key %q: %v", after, err)
		})
		raw.Close()
		if addErr != nil {
			return res, addErr
		}
	}
	if err := flush(); err != nil {
		return res, err
	}
	if !haveRedo {
		if ctl, ok, err := readControl(fs, dir); err == nil && ok {
			redo, haveRedo = ctl.redo, true
		}
	}
	var walErr error
	parts := streamedCommits{}
	bulk := map[uint64][]string{} // bulk loads no commit settled (bulk.go)
	_, err = readWAL(fs, fs.PathJoin(dir, "wal"), redo, haveRedo, func(lsn wal.LSN, rec wal.Record) error {
		switch rec.Type {
		case RecBulkLoad:
			res.WALRecords++
			if xid, n := binary.Uvarint(rec.Data); n > 0 {
				bulk[xid] = append(bulk[xid], string(rec.Data[n:]))
			}
		case RecCommit, RecCommitPart, RecCommitEnd:
			frags, done := [][]byte{rec.Data}, true
			if rec.Type != RecCommit {
				var err error
				if frags, done, err = parts.add(rec.Data, rec.Type == RecCommitEnd); err != nil {
					return fmt.Errorf("record at LSN %d: %w", lsn, err)
				}
			}
			res.WALRecords++
			if !done {
				return nil
			}
			xid, err := decodeCommitStream(frags, func(x Write) error {
				if err := add(x); err != nil {
					walErr = err
					return err
				}
				return nil
			})
			if err == nil {
				delete(bulk, xid)
			}
			if err != nil && walErr == nil {
				return fmt.Errorf("record at LSN %d: %w", lsn, err)
			}
			return err
		case RecCreateTable:
			res.WALRecords++
			if err := flush(); err != nil {
				walErr = err
				return err
			}
			if err := ensureTable(string(rec.Data)); err != nil {
				walErr = err
				return err
			}
		case RecDropTable:
			res.WALRecords++
			if err := flush(); err != nil {
				walErr = err
				return err
			}
			if err := dst.DropTable(string(rec.Data)); err != nil {
				walErr = err
				return err
			}
			delete(tables, string(rec.Data))
			for x, ts := range bulk {
				bulk[x] = slices.DeleteFunc(ts, func(t string) bool { return t == string(rec.Data) })
			}
		}
		return nil
	})
	if walErr != nil {
		return res, walErr
	}
	if err != nil {
		lost("WAL records from the damage on (commits after the last checkpoint may be missing): %v", err)
	}
	if err := flush(); err != nil {
		return res, err
	}
	// a table a transaction that never committed was loading is empty,
	// as recovery leaves it
	for _, ts := range bulk {
		for _, t := range ts {
			if !tables[t] {
				continue
			}
			if err := dst.DropTable(t); err != nil {
				return res, err
			}
			delete(tables, t)
			if err := ensureTable(t); err != nil {
				return res, err
			}
			lost("table %q: rows of a bulk load that never committed left out", t)
		}
	}
	res.Tables = len(tables)
	return res, nil
}
