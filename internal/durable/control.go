package durable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/internal/storage"
	"github.com/tupled/tupled/wal"
)

// The control file: what the database must look like, kept outside the
// backend (PostgreSQL's pg_control).
//
// Checksums on values (storage.WithChecksums) catch a value that changed;
// they cannot catch one that is missing or old. A backend that lost files
// or went back in time — pebble reopening an older MANIFEST, a lost .sst, an
// older data.bbolt copied over the current one — hands back a consistent
// but older state, with every checksum intact: rows committed since are
// simply gone, or older versions come back. So every checkpoint gets a
// number, stored in the backend (key mckpt) in the same atomic batch as the
// rows it writes, and also in the control file, written after that batch
// is durable and before any WAL segment is removed:
//
//	backend commit (rows, mredo = R, mckpt = N)  → durable
//	control file   (checkpoint N, redo R)        → written to a temporary
//	               file, fsynced, renamed over "control", directory fsynced
//	WAL            segments before R removed
//
// At Open the backend's number must be the control file's, or one more (a
// crash between the backend commit and the control file; the backend is
// then the newer, and the WAL still holds everything after either redo
// point since nothing was removed). Behind the control file means the
// backend rolled back or lost data: Open fails with errs.ErrCorrupted rather than
// serve it. A WAL that ends before the control file's redo point lost
// segments or was cut short: errs.ErrCorrupted too.
//
// Layout (little endian), controlSize bytes:
//
//	magic "TUPLEDCF" | version uint32 | data format uint32 | backend uint8 |
//	checkpoint uint64 | redo LSN uint64 | MANIFEST number uint64 |
//	MANIFEST size uint64 | CRC32C of the preceding bytes
//
// The MANIFEST fields (pebble only) name pebble's current MANIFEST and its
// size as the checkpoint left them: pebble never shortens a MANIFEST and
// starts a new one, with a higher number, at every Open. A MANIFEST that is
// older (lower number) or shorter at Open lost edits: tables pebble would
// silently leave out (see internal/storage/manifest.go). It is checked before pebble
// opens the store, since opening it writes a new MANIFEST.
//
// Format versions. dataFormat 1: every backend value is sealed by
// storage.Seal, and the backend holds mformat = 1. A database written
// before checksums (no control file, no mformat, values not sealed) is
// migrated at Open: every value is sealed in one atomic batch.
const (
	controlName    = "control"
	controlTmpName = "control.tmp"
	controlMagic   = "TUPLEDCF"
	controlVersion = 1
	dataFormat     = 1
	controlSize    = 8 + 4 + 4 + 1 + 8 + 8 + 8 + 8 + 4
)

var (
	metaFormat     = []byte("mformat")
	metaCheckpoint = []byte("mckpt")
)

type controlData struct {
	backend    uint8 // 1 pebble, 2 bbolt
	checkpoint uint64
	// redo is the checkpoint's redo point, or the WAL's durable end when
	// that is lower: a checkpoint does not wait for the fsync of records
	// past its snapshot (a table creation, an xid reservation, a commit
	// not yet acknowledged), so its redo point may be past the durable
	// WAL, and a crash may legitimately leave the WAL ending there. The WAL
	// must reach this LSN at Open, and the backend's redo point too.
	redo uint64
	// manifestNum and manifestSize: pebble's current MANIFEST (0 for bbolt).
	manifestNum, manifestSize uint64
}

// controlAt is the control data of checkpoint n with redo point redo,
// written after the checkpoint's backend batch is durable.
func (d *Store) controlAt(n uint64, redo wal.LSN) (controlData, error) {
	c := controlData{backend: d.ctlBackend, checkpoint: n, redo: uint64(min(redo, d.wal.FlushedLSN()))}
	if num, size, ok := storage.ManifestState(d.be); ok {
		c.manifestNum, c.manifestSize = num, uint64(size)
	}
	return c, nil
}

// writeCheckpointControl writes the control file of checkpoint n.
func (d *Store) writeCheckpointControl(n uint64, redo wal.LSN) error {
	c, err := d.controlAt(n, redo)
	if err != nil {
		return err
	}
	return writeControl(d.fs, d.dir, c)
}

// checkManifest runs before the pebble backend is opened: its MANIFEST
// must be the one the control file names, at least as long (see above).
func checkManifest(fs vfs.FS, dir string, kind string) error {
	if backendCode(kind) != backendPebble {
		return nil
	}
	ctl, ok, err := readControl(fs, dir)
	if err != nil || !ok || ctl.backend != backendPebble {
		return err // a bad control file is reported by checkFormat
	}
	data := fs.PathJoin(dir, "data")
	num, size, found, err := storage.PebbleManifest(fs, data)
	if err != nil {
		return AsCorrupted(err)
	}
	switch {
	case !found:
		return corruptf("the pebble store %s has no MANIFEST but the control file names MANIFEST-%06d: backend files were lost", data, ctl.manifestNum)
	case num < ctl.manifestNum:
		return corruptf("the pebble store %s is at MANIFEST-%06d, older than MANIFEST-%06d named by the control file: backend files rolled back", data, num, ctl.manifestNum)
	case num == ctl.manifestNum && uint64(size) < ctl.manifestSize:
		return corruptf("MANIFEST-%06d in %s is %d bytes, shorter than the %d bytes the control file recorded: it was cut", num, data, size, ctl.manifestSize)
	case num == ctl.manifestNum:
		// The bytes the control file recorded were durable: any damage
		// in them is damage, not a torn tail.
		if err := storage.CheckPebbleManifest(fs, data, num, int64(ctl.manifestSize)); err != nil {
			return AsCorrupted(err)
		}
	}
	return nil
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func (c controlData) encode() []byte {
	b := make([]byte, 0, controlSize)
	b = append(b, controlMagic...)
	b = binary.LittleEndian.AppendUint32(b, controlVersion)
	b = binary.LittleEndian.AppendUint32(b, dataFormat)
	b = append(b, c.backend)
	b = binary.LittleEndian.AppendUint64(b, c.checkpoint)
	b = binary.LittleEndian.AppendUint64(b, c.redo)
	b = binary.LittleEndian.AppendUint64(b, c.manifestNum)
	b = binary.LittleEndian.AppendUint64(b, c.manifestSize)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

func decodeControl(path string, b []byte) (controlData, error) {
	bad := func(format string, args ...any) (controlData, error) {
		return controlData{}, corruptf("control file %s: "+format, append([]any{path}, args...)...)
	}
	if len(b) != controlSize {
		return bad("%d bytes, want %d", len(b), controlSize)
	}
	if got, want := crc32.Checksum(b[:controlSize-4], crcTable), binary.LittleEndian.Uint32(b[controlSize-4:]); got != want {
		return bad("checksum mismatch (stored %08x, computed %08x)", want, got)
	}
	if string(b[:8]) != controlMagic {
		return bad("bad magic %q", b[:8])
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != controlVersion {
		return bad("version %d, this tupled reads version %d", v, controlVersion)
	}
	if f := binary.LittleEndian.Uint32(b[12:]); f != dataFormat {
		return bad("data format %d, this tupled reads format %d", f, dataFormat)
	}
	return controlData{
		backend:      b[16],
		checkpoint:   binary.LittleEndian.Uint64(b[17:]),
		redo:         binary.LittleEndian.Uint64(b[25:]),
		manifestNum:  binary.LittleEndian.Uint64(b[33:]),
		manifestSize: binary.LittleEndian.Uint64(b[41:]),
	}, nil
}

// readControl reads dir's control file; ok is false when there is none.
func readControl(fs vfs.FS, dir string) (c controlData, ok bool, err error) {
	path := fs.PathJoin(dir, controlName)
	f, err := fs.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return controlData{}, false, nil
		}
		return controlData{}, false, &errs.OpError{Sentinel: errs.ErrIO, Msg: fmt.Sprintf("tupled: read control file %s: %v", path, err), Cause: err}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, controlSize+1))
	if err != nil {
		return controlData{}, false, &errs.OpError{Sentinel: errs.ErrIO, Msg: fmt.Sprintf("tupled: read control file %s: %v", path, err), Cause: err}
	}
	c, err = decodeControl(path, b)
	return c, err == nil, err
}

// writeControl replaces dir's control file atomically: write a temporary
// file, fsync it, rename it over the control file, fsync the directory.
func writeControl(fs vfs.FS, dir string, c controlData) error {
	tmp, path := fs.PathJoin(dir, controlTmpName), fs.PathJoin(dir, controlName)
	f, err := fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("tupled: write control file: %w", err)
	}
	_, err = f.Write(c.encode())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, path)
	}
	if err == nil {
		err = syncDirs(fs, dir)
	}
	if err != nil {
		return fmt.Errorf("tupled: write control file: %w", err)
	}
	return nil
}

// corruptf is an errs.ErrCorrupted (XX001) error whose message names the damage
// and the way forward.
func corruptf(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return &errs.OpError{Sentinel: errs.ErrCorrupted, Msg: "tupled: data corrupted: " + msg + corruptHint}
}

const corruptHint = " (run `tupled verify DIR` for a report; `tupled salvage DIR NEWDIR` copies every intact row to a new database)"

// AsCorrupted turns an error that reports damage (a value failing its
// checksum, a backend that found damage, a damaged WAL) into errs.ErrCorrupted,
// keeping the original for errors.Is; other errors are returned as they are.
func AsCorrupted(err error) error {
	if err == nil || errors.Is(err, errs.ErrCorrupted) {
		return err
	}
	if errors.Is(err, storage.ErrCorrupted) || errors.Is(err, wal.ErrCorrupt) {
		return &errs.OpError{Sentinel: errs.ErrCorrupted, Msg: "tupled: data corrupted: " + err.Error() + corruptHint, Cause: err}
	}
	return err
}

const (
	backendPebble = 1
	backendBbolt  = 2
)

func backendCode(kind string) uint8 {
	if kind == storage.KindBbolt {
		return backendBbolt
	}
	return backendPebble
}

// checkFormat runs before recovery. It reads the control file and checks
// that the backend is the one it names, at the checkpoint it names (or one
// more: see the comment at the top of this file); it migrates a database
// written before checksums. It returns the control data (ok=false for a new
// or migrated database) and the backend's checkpoint number.
func (d *Store) checkFormat(dir string, kind string) (ctl controlData, ok bool, ckpt uint64, err error) {
	ctl, ok, err = readControl(d.fs, dir)
	if err != nil {
		return controlData{}, false, 0, err
	}
	if ok && ctl.backend != backendCode(kind) {
		return controlData{}, false, 0, &errs.OpError{Sentinel: errs.ErrInvalid, Msg: fmt.Sprintf("tupled: %s was created with the other backend (control file says backend %d)", dir, ctl.backend)}
	}
	_, hasFormat, err := d.be.Get(metaFormat)
	if err != nil {
		return controlData{}, false, 0, AsCorrupted(err)
	}
	if !ok {
		if hasFormat {
			// A crash during the first Open, after the backend's first
			// checkpoint and before its control file, leaves exactly this.
			if ck, err := getUvarint(d.be, metaCheckpoint); err == nil && ck <= 1 {
				return controlData{}, false, ck, nil
			}
			return controlData{}, false, 0, corruptf("control file %s is missing, but the %s backend holds checksummed data", d.fs.PathJoin(dir, controlName), d.be.Name())
		}
		if err := d.migrate(); err != nil {
			return controlData{}, false, 0, err
		}
		return controlData{}, false, 0, nil
	}
	if !hasFormat {
		return controlData{}, false, 0, corruptf("the %s backend in %s has no format marker although control file names checkpoint %d: backend files were lost or replaced", d.be.Name(), dir, ctl.checkpoint)
	}
	ckpt, err = getUvarint(d.be, metaCheckpoint)
	if err != nil {
		return controlData{}, false, 0, AsCorrupted(err)
	}
	redo, err := getUvarint(d.be, metaRedo)
	if err != nil {
		return controlData{}, false, 0, AsCorrupted(err)
	}
	switch {
	case ckpt < ctl.checkpoint:
		return controlData{}, false, 0, corruptf("the %s backend in %s is at checkpoint %d but the control file names checkpoint %d: backend files rolled back or lost", d.be.Name(), dir, ckpt, ctl.checkpoint)
	case ckpt > ctl.checkpoint+1:
		return controlData{}, false, 0, corruptf("control file %s names checkpoint %d but the %s backend is at checkpoint %d: the control file is stale", d.fs.PathJoin(dir, controlName), ctl.checkpoint, d.be.Name(), ckpt)
	case redo < ctl.redo:
		return controlData{}, false, 0, corruptf("checkpoint %d: the %s backend's redo point %d is before the control file's %d", ckpt, d.be.Name(), redo, ctl.redo)
	}
	return ctl, true, ckpt, nil
}

// migrate makes a database written before checksums (no control file, no
// format marker) checksummed: every value is sealed, in one atomic batch
// together with the format marker. An empty backend is a new database.
func (d *Store) migrate() error {
	raw := storage.Raw(d.be)
	type kv struct{ k, v []byte }
	var all []kv
	sealed := 0
	err := raw.Scan(nil, nil, func(k, v []byte) error {
		if _, err := storage.Unseal(k, v); err == nil {
			sealed++
		}
		all = append(all, kv{append([]byte(nil), k...), append([]byte(nil), v...)})
		return nil
	})
	if err != nil {
		return AsCorrupted(err)
	}
	b := d.be.NewBatch()
	if len(all) > 0 {
		if sealed > 0 {
			// Values that pass their checksum were written by this
			// version: the control file and the format marker were lost.
			return corruptf("the %s backend has no format marker and no control file, but %d of its %d values carry checksums: the control file was lost", d.be.Name(), sealed, len(all))
		}
		d.log.Warn("migrating a database written before checksums", "keys", len(all))
		for _, e := range all {
			b.Set(e.k, e.v)
		}
	}
	b.Set(metaFormat, binary.AppendUvarint(nil, dataFormat))
	if err := d.be.Commit(b, true); err != nil {
		return fmt.Errorf("tupled: migrate to checksummed format: %w", err)
	}
	return nil
}

// openFailed is the error of a backend or WAL that could not be opened:
// errs.ErrCorrupted for damage, else errs.ErrIO (58030).
func openFailed(err error) error {
	if c := AsCorrupted(err); c != err {
		return c
	}
	return &errs.OpError{Sentinel: errs.ErrIO, Msg: err.Error(), Cause: err}
}
