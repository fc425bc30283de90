package wal

import (
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// allocBound is how much a reader may allocate for n bytes of input: a
// small multiple of the input plus fixed buffers, never what a damaged
// length field asks for.
func allocBound(n int) uint64 { return uint64(8*n) + 2<<20 }

func totalAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// segmentSeeds are real segment files: a few records written by the WAL,
// and cut or damaged copies of them.
func segmentSeeds(f *testing.F) [][]byte {
	fs := vfs.NewMem()
	w, err := Open(Options{FS: fs, Dir: testDir})
	if err != nil {
		f.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if _, err := w.Append(testRecord(i, 300)); err != nil {
			f.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	file, err := fs.Open(fs.PathJoin(testDir, segmentName(0)))
	if err != nil {
		f.Fatal(err)
	}
	seg, err := io.ReadAll(file)
	file.Close()
	if err != nil {
		f.Fatal(err)
	}
	huge := append([]byte(nil), seg...)
	huge[segHeaderSize+4], huge[segHeaderSize+5], huge[segHeaderSize+6], huge[segHeaderSize+7] = 0xff, 0xff, 0xff, 0x7f // length 2 GiB
	flipped := append([]byte(nil), seg...)
	flipped[len(flipped)-3] ^= 0x40
	return [][]byte{seg, seg[:segHeaderSize], seg[:len(seg)-10], seg[:segHeaderSize+recHeaderSize+3], huge, flipped, {}, make([]byte, 100)}
}

// FuzzScanSegment: the framing reader Open uses (scanSegment, and
// findVoucher past damage) never panics, never claims bytes beyond the
// input, and allocates nothing for a record's length field.
func FuzzScanSegment(f *testing.F) {
	for _, s := range segmentSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		before := totalAlloc()
		res := scanSegment(data, 0)
		if res.valid < 0 || res.valid > int64(len(data)) {
			t.Fatalf("valid %d outside [0, %d]", res.valid, len(data))
		}
		if res.bad == nil && res.valid != int64(len(data)) {
			t.Fatalf("valid %d of %d but bad=%v", res.valid, len(data), res.bad)
		}
		if res.bad != nil && res.valid > 0 {
			if off, synced, ok := findVoucher(data, 0, res.valid); ok && (off <= res.valid || synced <= LSN(res.valid)) {
				t.Fatalf("voucher at %d (synced %d) for damage at %d", off, synced, res.valid)
			}
		}
		if got := totalAlloc() - before; got > allocBound(len(data)) {
			t.Fatalf("allocated %d bytes for %d bytes of input", got, len(data))
		}
	})
}

// FuzzOpenReplay: a WAL directory holding one arbitrary segment file opens
// (or is refused with an error) and replays without panicking; Replay's
// payload allocations are bounded by what the file holds.
func FuzzOpenReplay(f *testing.F) {
	for _, s := range segmentSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := vfs.NewMem()
		if err := fs.MkdirAll(testDir, 0o755); err != nil {
			t.Fatal(err)
		}
		file, err := fs.Create(fs.PathJoin(testDir, segmentName(0)), vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := file.Write(data); err != nil {
			t.Fatal(err)
		}
		file.Close()
		before := totalAlloc()
		w, err := Open(Options{FS: fs, Dir: testDir})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open: %v is not ErrCorrupt", err)
			}
			return
		}
		defer w.Close()
		var n int
		if err := w.Replay(0, func(lsn LSN, r Record) error {
			n += recHeaderSize + len(r.Data)
			if lsn > w.EndLSN() {
				t.Fatalf("record at %d beyond the end %d", lsn, w.EndLSN())
			}
			return nil
		}); err != nil {
			t.Fatalf("Replay after a successful Open: %v", err)
		}
		if n > len(data) {
			t.Fatalf("replayed %d bytes from a %d-byte file", n, len(data))
		}
		if got := totalAlloc() - before; got > allocBound(len(data)) {
			t.Fatalf("allocated %d bytes for a %d-byte file", got, len(data))
		}
	})
}
