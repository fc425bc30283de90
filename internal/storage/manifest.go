package storage

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// pebble's MANIFEST, checked before pebble reads it.
//
// pebble reads its MANIFEST (the log of which tables make up the store) up
// to the first record that fails its checksum and takes everything after
// it for a torn tail. A damaged record in the middle therefore does not fail
// Open: pebble comes up with an older set of tables — committed rows
// missing, later ones (still in pebble's WAL) present — and every value
// still passes its own checksum. A torn tail can only be the end of the
// file; damage followed by intact records cannot be a crash. So before
// pebble opens the store, checkManifest walks the current MANIFEST's chunks
// (pebble's record format: 32 KiB blocks of chunks, each with a 7-byte
// header: masked CRC32C, length, type) and fails with ErrCorrupted if an
// invalid chunk is followed by a valid one.
//
// PebbleManifest reports which MANIFEST is current and how long it is: the
// engine's control file records it at each checkpoint, so an older MANIFEST
// (a smaller number) or a cut one (same number, shorter) is recognised too.
// pebble writes a new MANIFEST at every Open, and never shortens one.

const (
	recordBlockSize  = 32 << 10
	recordHeaderSize = 7
)

var recordCRC = crc32.MakeTable(crc32.Castagnoli)

func maskedCRC(b []byte) uint32 {
	c := crc32.Update(0, recordCRC, b)
	return uint32(c>>15|c<<17) + 0xa282ead8
}

// validChunkAt reports whether a legacy chunk (the MANIFEST's format)
// starts at off, and its total length.
func validChunkAt(data []byte, off int) (int, bool) {
	inBlock := off % recordBlockSize
	if inBlock+recordHeaderSize > recordBlockSize || off+recordHeaderSize > len(data) {
		return 0, false
	}
	h := data[off : off+recordHeaderSize]
	n := int(binary.LittleEndian.Uint16(h[4:6]))
	typ := h[6]
	if typ < 1 || typ > 4 || inBlock+recordHeaderSize+n > recordBlockSize || off+recordHeaderSize+n > len(data) {
		return 0, false
	}
	if maskedCRC(data[off+6:off+recordHeaderSize+n]) != binary.LittleEndian.Uint32(h[0:4]) {
		return 0, false
	}
	return recordHeaderSize + n, true
}

// manifestDamage returns the offset of damage in a MANIFEST's bytes that is
// followed by an intact chunk, or that lies before synced (the length known
// to have been durable), or -1 if the chunks are intact up to a (possibly
// torn) end past synced.
func manifestDamage(data []byte, synced int) (bad, next int) {
	off := 0
	for off < len(data) {
		if rest := recordBlockSize - off%recordBlockSize; rest < recordHeaderSize {
			off += rest // the writer zero-fills a block's tail too short for a header
			continue
		}
		if n, ok := validChunkAt(data, off); ok {
			off += n
			continue
		}
		if off < synced {
			return off, synced
		}
		for q := off + 1; q+recordHeaderSize < len(data); q++ {
			if n, ok := validChunkAt(data, q); ok && n > recordHeaderSize {
				return off, q
			}
		}
		return -1, -1
	}
	return -1, -1
}

// PebbleManifest returns the number and size of the MANIFEST that pebble's
// store in dir names as current; ok is false if dir has none (a new store).
func PebbleManifest(fs vfs.FS, dir string) (num uint64, size int64, ok bool, err error) {
	if fs == nil {
		fs = vfs.Default
	}
	names, err := fs.List(dir)
	if err != nil {
		return 0, 0, false, nil // no directory: a new store
	}
	var iter uint64
	for _, name := range names {
		// marker.manifest.<iteration>.MANIFEST-<number>
		rest, found := strings.CutPrefix(name, "marker.manifest.")
		if !found {
			continue
		}
		it, val, found := strings.Cut(rest, ".")
		if !found {
			continue
		}
		i, err1 := strconv.ParseUint(it, 10, 64)
		n, err2 := strconv.ParseUint(strings.TrimPrefix(val, "MANIFEST-"), 10, 64)
		if err1 != nil || err2 != nil || !strings.HasPrefix(val, "MANIFEST-") {
			continue
		}
		if !ok || i > iter {
			iter, num, ok = i, n, true
		}
	}
	if !ok {
		return 0, 0, false, nil
	}
	path := fs.PathJoin(dir, fmt.Sprintf("MANIFEST-%06d", num))
	st, err := fs.Stat(path)
	if err != nil {
		return 0, 0, false, &CorruptionError{What: "pebble store " + dir, Detail: "the current MANIFEST is missing", Cause: err}
	}
	return num, st.Size(), true, nil
}

// checkManifest fails if the current MANIFEST in dir has damage followed by
// intact records (see above).
func checkManifest(fs vfs.FS, dir string) error {
	num, _, ok, err := PebbleManifest(fs, dir)
	if err != nil || !ok {
		return err
	}
	return CheckPebbleManifest(fs, dir, num, 0)
}

// CheckPebbleManifest checks MANIFEST-num in dir: damage followed by intact
// records, or within its first synced bytes (a length the caller knows was
// durable: see ManifestState), is ErrCorrupted.
func CheckPebbleManifest(fs vfs.FS, dir string, num uint64, synced int64) error {
	if fs == nil {
		fs = vfs.Default
	}
	path := fs.PathJoin(dir, fmt.Sprintf("MANIFEST-%06d", num))
	f, err := fs.Open(path)
	if err != nil {
		return &CorruptionError{What: "file " + path, Detail: "cannot open the current MANIFEST", Cause: err}
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("storage: read %s: %w", path, err)
	}
	if int64(len(data)) < synced {
		return &CorruptionError{What: "file " + path, Detail: fmt.Sprintf("%d bytes, shorter than the %d bytes known durable: it was cut", len(data), synced)}
	}
	if bad, next := manifestDamage(data, int(synced)); bad >= 0 {
		return &CorruptionError{What: "file " + path, Detail: fmt.Sprintf("damaged record at offset %d, before intact or durable bytes at %d (pebble would silently drop every table added after it)", bad, next)}
	}
	return nil
}

// ManifestState returns pebble's current MANIFEST number and a length of it
// known to be durable, for the engine's control file; ok is false for bbolt
// or when no such state is known yet. pebble writes a MANIFEST record and
// fsyncs it in flushes and compactions: the size is read only while none is
// running (between their Begin and End events), so it never counts a
// record that a crash could still take away. Otherwise the last such
// reading is returned, a smaller but still true bound.
func ManifestState(be Backend) (num uint64, size int64, ok bool) {
	p, isPebble := Raw(be).(*pebbleBackend)
	if !isPebble {
		return 0, 0, false
	}
	return p.manifestState()
}

type manifestReading struct {
	num  uint64
	size int64
}

func (p *pebbleBackend) manifestState() (uint64, int64, bool) {
	gen := p.mwGen.Load()
	if p.mwActive.Load() == 0 {
		num, size, ok, err := PebbleManifest(p.fs, p.dir)
		if err == nil && ok && p.mwActive.Load() == 0 && p.mwGen.Load() == gen {
			r := &manifestReading{num, size}
			p.manifest.Store(r)
		}
	}
	if r := p.manifest.Load(); r != nil {
		return r.num, r.size, true
	}
	return 0, 0, false
}
