package wal

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

var errInjected = errors.New("injected I/O error")

// faultFS wraps a crashable MemFS with an injector that can be armed with
// a rule, and with short writes: an armed short write writes half of the
// buffer and fails with ENOSPC, as a full disk does.
type faultFS struct {
	mem   *vfs.MemFS
	rule  atomic.Pointer[func(errorfs.Op) error]
	short atomic.Bool
	vfs.FS
}

func newFaultFS() *faultFS {
	f := &faultFS{mem: vfs.NewCrashableMem()}
	f.FS = errorfs.Wrap(f.mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if r := f.rule.Load(); r != nil {
			return (*r)(op)
		}
		return nil
	}))
	return f
}

func (f *faultFS) arm(rule func(errorfs.Op) error) { f.rule.Store(&rule) }
func (f *faultFS) disarm()                         { f.rule.Store(nil); f.short.Store(false) }

func (f *faultFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.Create(name, c)
	if err != nil {
		return nil, err
	}
	return &shortFile{File: file, fs: f}, nil
}

func (f *faultFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	file, err := f.FS.OpenReadWrite(name, c, opts...)
	if err != nil {
		return nil, err
	}
	return &shortFile{File: file, fs: f}, nil
}

type shortFile struct {
	vfs.File
	fs *faultFS
}

func (s *shortFile) WriteAt(p []byte, off int64) (int, error) {
	if s.fs.short.Load() && len(p) > 1 {
		n, err := s.File.WriteAt(p[:len(p)/2], off)
		if err != nil {
			return n, err
		}
		return n, syscall.ENOSPC
	}
	return s.File.WriteAt(p, off)
}

// onSegment is a rule that fails ops of the given kinds on segment files.
func onSegment(err error, kinds ...errorfs.OpKind) func(errorfs.Op) error {
	return func(op errorfs.Op) error {
		if !strings.HasSuffix(op.Path, segSuffix) {
			return nil
		}
		for _, k := range kinds {
			if op.Kind == k {
				return err
			}
		}
		return nil
	}
}

// requireDead checks the fatal-error rule on a WAL whose I/O failed with
// cause: every call refuses with ErrFatal and the cause, even once the
// disk works again, even for an LSN that was durable before, and no fsync
// is ever retried.
func requireDead(t *testing.T, w *WAL, cause error, durable LSN) {
	t.Helper()
	ctx := context.Background()
	fsyncs := w.Stats().Fsyncs
	_, err := w.Append(testRecord(99, 50))
	require.ErrorIs(t, err, ErrFatal)
	require.ErrorIs(t, err, cause)
	require.ErrorIs(t, w.Sync(ctx, w.EndLSN()), ErrFatal)
	require.ErrorIs(t, w.Sync(ctx, durable), ErrFatal, "a dead WAL acknowledges nothing, not even what was durable")
	require.ErrorIs(t, w.Replay(0, func(LSN, Record) error { return nil }), ErrFatal)
	require.ErrorIs(t, w.RemoveBefore(durable), ErrFatal)
	require.Equal(t, fsyncs, w.Stats().Fsyncs, "an fsync is never retried after a failure")
	require.ErrorIs(t, w.Close(), ErrFatal)
}

// requireRecovers reopens the log on what the disk holds now (a process
// restart) and on a crash clone of it (a power loss) and checks that every
// acknowledged record is there, in order.
func requireRecovers(t *testing.T, f *faultFS, acked []entry, segSize int64) {
	t.Helper()
	f.disarm()
	for _, fs := range []vfs.FS{f.mem.CrashClone(vfs.CrashCloneCfg{}), f.mem} {
		w := openT(t, fs, segSize)
		got := replayAll(t, w, 0)
		require.GreaterOrEqual(t, len(got), len(acked))
		requireSameEntries(t, acked, got[:len(acked)])
		require.NoError(t, w.Close())
	}
}

func TestFaults(t *testing.T) {
	cases := []struct {
		name    string
		segSize int64
		cause   error
		arm     func(f *faultFS)
		// records to append after arming, so that the failing Sync has
		// something to do (enough to rotate when the fault is at rotation)
		n int
	}{
		{"fsync of a segment fails", 0, errInjected, func(f *faultFS) {
			f.arm(onSegment(errInjected, errorfs.OpFileSyncData, errorfs.OpFileSync))
		}, 3},
		{"write fails", 0, errInjected, func(f *faultFS) {
			f.arm(onSegment(errInjected, errorfs.OpFileWriteAt))
		}, 3},
		{"short write on a full disk", 0, syscall.ENOSPC, func(f *faultFS) {
			f.short.Store(true)
		}, 3},
		{"no space for the next segment", 512, syscall.ENOSPC, func(f *faultFS) {
			f.arm(onSegment(syscall.ENOSPC, errorfs.OpCreate))
		}, 20},
		{"fsync sealing a segment fails", 512, errInjected, func(f *faultFS) {
			f.arm(onSegment(errInjected, errorfs.OpFileSyncData))
		}, 20},
		{"fsync of the directory for a new segment fails", 512, errInjected, func(f *faultFS) {
			f.arm(func(op errorfs.Op) error {
				if op.Kind == errorfs.OpFileSync && op.Path == testDir {
					return errInjected
				}
				return nil
			})
		}, 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			f := newFaultFS()
			w := openT(t, f, tc.segSize)
			acked := appendAll(t, w, testRecords(0, 10, 100))
			durable := acked[len(acked)-1].LSN
			require.NoError(t, w.Sync(ctx, durable))

			tc.arm(f)
			more := appendAll(t, w, testRecords(10, tc.n, 100))
			err := w.Sync(ctx, more[len(more)-1].LSN)
			require.ErrorIs(t, err, ErrFatal, "a Sync that could not make its records durable must fail")
			require.ErrorIs(t, err, tc.cause, "the error names the first cause")
			t.Log(err)
			f.disarm()
			requireDead(t, w, tc.cause, durable)
			requireRecovers(t, f, acked, tc.segSize)
		})
	}
}

// Every Sync waiting on a failing fsync gets the error; none gets nil.
func TestFaultFailsEveryWaiter(t *testing.T) {
	ctx := context.Background()
	f := newFaultFS()
	w := openT(t, f, 0)
	acked := appendAll(t, w, testRecords(0, 5, 100))
	require.NoError(t, w.Sync(ctx, w.EndLSN()))
	var failing atomic.Bool
	failing.Store(true)
	f.arm(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFileSyncData && failing.Load() {
			return errInjected
		}
		return nil
	})
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lsn, err := w.Append(testRecord(100+i, 100))
			if err != nil {
				errs[i] = err
				return
			}
			errs[i] = w.Sync(ctx, lsn)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		require.ErrorIs(t, err, ErrFatal, "writer %d", i)
	}
	requireDead(t, w, errInjected, acked[4].LSN)
	requireRecovers(t, f, acked, 0)
}

// A failed directory fsync while removing segments is fatal too.
func TestFaultInRemoveBefore(t *testing.T) {
	ctx := context.Background()
	f := newFaultFS()
	w := openT(t, f, 512)
	acked := appendAll(t, w, testRecords(0, 40, 100))
	require.NoError(t, w.Sync(ctx, w.EndLSN()))
	f.arm(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFileSync && op.Path == testDir {
			return errInjected
		}
		return nil
	})
	require.ErrorIs(t, w.RemoveBefore(acked[20].LSN), ErrFatal)
	f.disarm()
	requireDead(t, w, errInjected, acked[39].LSN)
	// Some early segments may be gone; the rest of the log is intact.
	w = openT(t, f.mem, 512)
	defer w.Close()
	got := replayAll(t, w, w.segs[0])
	require.NotEmpty(t, got)
	requireSameEntries(t, acked[len(acked)-len(got):], got)
}

// A failed removal (not an fsync) is an ordinary error: nothing is lost.
func TestRemoveFailureIsNotFatal(t *testing.T) {
	ctx := context.Background()
	f := newFaultFS()
	w := openT(t, f, 512)
	defer w.Close()
	acked := appendAll(t, w, testRecords(0, 40, 100))
	require.NoError(t, w.Sync(ctx, w.EndLSN()))
	f.arm(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpRemove {
			return errInjected
		}
		return nil
	})
	err := w.RemoveBefore(acked[20].LSN)
	require.ErrorIs(t, err, errInjected)
	require.NotErrorIs(t, err, ErrFatal)
	f.disarm()
	require.NoError(t, w.RemoveBefore(acked[20].LSN))
	lsn, err := w.Append(testRecord(1, 10))
	require.NoError(t, err)
	require.NoError(t, w.Sync(ctx, lsn))
}

// An Open that cannot read is an error, not a cut, and leaves the
// directory unlocked and unchanged.
func TestOpenReadError(t *testing.T) {
	f := newFaultFS()
	w := openT(t, f, 0)
	_ = appendAll(t, w, testRecords(0, 5, 100))
	require.NoError(t, w.Close())
	f.arm(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFileRead {
			return errInjected
		}
		return nil
	})
	_, err := Open(Options{FS: f, Dir: testDir})
	require.ErrorIs(t, err, errInjected)
	require.NotErrorIs(t, err, ErrCorrupt)
	f.disarm()
	w = openT(t, f, 0)
	defer w.Close()
	require.Len(t, replayAll(t, w, 0), 5)
}
