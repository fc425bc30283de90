package tupled_test

// The crash images of the root's own tests (TestDropTableCrash,
// TestDropTableVerifyWAL). The crash suites, which use the same helpers,
// are in tests/crash (bigcommit_test.go, crash_bbolt_test.go).

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/internal/storage"
)

// crashableDB is an on-disk database whose state can be cut as a crash
// would cut it. Its WAL (and pebble's files) live on a crashable MemFS; a
// bbolt file lives on the real disk at the same path, and since only
// recovery and checkpoints write it — and this database never checkpoints
// on its own — a copy of it is what a crash would leave.
type crashableDB struct {
	t    *testing.T
	be   tupled.Backend
	mem  *vfs.MemFS
	dir  string
	opts *tupled.Options
	db   *tupled.DB
}

func openCrashable(t *testing.T, be tupled.Backend) *crashableDB {
	c := &crashableDB{t: t, be: be, mem: vfs.NewCrashableMem(), dir: filepath.Join(t.TempDir(), "db")}
	c.opts = &tupled.Options{Backend: be, FS: c.mem, VacuumInterval: -1, CheckpointInterval: time.Hour, CheckpointWALSize: -1}
	db, err := tupled.Open(c.dir, c.opts)
	require.NoError(t, err)
	c.db = db
	return c
}

// crash takes the image of a crash now (everything fsynced survives,
// nothing else), closes the database and opens the image.
func (c *crashableDB) crash() {
	t := c.t
	clone := c.mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	bbolt := filepath.Join(c.dir, "data", storage.BboltFile)
	saved := filepath.Join(t.TempDir(), "bbolt.copy")
	if c.be == tupled.Bbolt {
		require.NoError(t, copyFile(saved, bbolt))
	}
	require.NoError(t, c.db.Close())
	if c.be == tupled.Bbolt {
		require.NoError(t, copyFile(bbolt, saved))
		require.NoError(t, os.Remove(saved))
	}
	c.mem = clone
	c.opts.FS = clone
	db, err := tupled.Open(c.dir, c.opts)
	require.NoError(t, err, "open after the crash")
	c.db = db
}

// reopen closes the database cleanly (a checkpoint) and opens it again.
func (c *crashableDB) reopen() {
	require.NoError(c.t, c.db.Close())
	db, err := tupled.Open(c.dir, c.opts)
	require.NoError(c.t, err, "open after Close")
	c.db = db
}

func rowKey(i int) []byte   { return []byte(fmt.Sprintf("r%07d", i)) }
func rowValue(i int) []byte { return []byte(fmt.Sprintf("%080d", i)) } // 80 bytes

// copyTree copies the directory src to dst: with no checkpoint running and
// every commit fsynced, the image of a crash.
func copyTree(dst, src string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		return copyFile(filepath.Join(dst, rel), path)
	})
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
