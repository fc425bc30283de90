package wal

import (
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// defaultPreallocStep is how far ahead of its last record a segment is
// preallocated (Options.Preallocate). The whole segment at once would make
// Open read up to 64 MiB of zeros (it must check a segment's room for
// records written past a hole before a crash, see README.md): ~300 ms
// here, against ~5 ms for a step. One commit in several thousand grows the
// file by a step and pays for the size change in its fdatasync.
const defaultPreallocStep = 1 << 20

// preallocate makes segment file f (name; size bytes long now) at least
// want bytes long — at most the segment size — with zeros, when
// Options.Preallocate asks for it: by fallocate on a real file, by writing
// zeros under the zeroFill test knob on a file without a descriptor. It
// returns the file's size afterwards. It is best effort: a failure (no
// space: nothing is written yet, so nothing is lost) is logged, and the
// segment then grows by appends, as without the option (the size returned
// is then maxRoom, so that the writer stops trying for this segment). The
// caller's next fsync makes the new size durable.
func (w *WAL) preallocate(f vfs.File, name string, size, want int64) int64 {
	if !w.prealloc {
		return maxRoom
	}
	if want = min(want, w.segSize); size >= want {
		return size
	}
	var err error
	if fd := f.Fd(); fd != vfs.InvalidFd {
		err = fallocate(fd, want)
	} else if w.zeroFill {
		err = writeZeros(f, size, want)
	} else {
		return maxRoom
	}
	if err != nil {
		w.log.Warn("wal segment not preallocated; it grows as records are written", "segment", name, "size", want, "err", err)
		return maxRoom
	}
	return want
}

// maxRoom stands for "no more preallocation for this segment".
const maxRoom = int64(1) << 62

// writeZeros writes zeros to f from off up to size.
func writeZeros(f vfs.File, off, size int64) error {
	zeros := make([]byte, min(size-off, 64<<10))
	for off < size {
		n, err := f.WriteAt(zeros[:min(int64(len(zeros)), size-off)], off)
		if err == nil && n == 0 {
			err = io.ErrShortWrite
		}
		if err != nil {
			return fmt.Errorf("zero-fill at offset %d: %w", off, err)
		}
		off += int64(n)
	}
	return nil
}
