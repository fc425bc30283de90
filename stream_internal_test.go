package tupled

// Streamed commits (internal/durable/commit.go) through the API, on a WAL with
// small segments (Options.walSegmentSize, unexported: only these tests set
// it).

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled/internal/durable"
	"github.com/tupled/tupled/wal"
)

var ctx = context.Background()

// smallSegments opens an on-disk database on fs whose WAL segments are 4
// KiB, so that every commit of more than about 4 KiB is streamed and
// crosses segments.
func smallSegments(t *testing.T, fs vfs.FS) *DB {
	t.Helper()
	db, err := Open("db", &Options{FS: fs, VacuumInterval: -1, CheckpointInterval: time.Hour, CheckpointWALSize: -1, walSegmentSize: 4096})
	require.NoError(t, err)
	return db
}

func getValue(t *testing.T, db *DB, table, key string) ([]byte, error) {
	t.Helper()
	tx, err := db.Begin(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	return tx.Get(ctx, table, []byte(key))
}

// TestStreamedCommitSurvivesCrash: a commit streamed over many records and
// segments is replayed whole after a crash, and again after a clean
// reopen.
func TestStreamedCommitSurvivesCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	db := smallSegments(t, fs)
	require.NoError(t, db.CreateTable(ctx, "t"))
	want := map[string][]byte{}
	before := db.Stats().WALRecords
	require.NoError(t, db.RunTx(ctx, nil, func(tx *Tx) error {
		for i := 0; i < 300; i++ {
			k, v := fmt.Sprintf("k%03d", i), bytes.Repeat([]byte{byte(i)}, 100)
			want[k] = v
			if err := tx.Insert(ctx, "t", []byte(k), v); err != nil {
				return err
			}
		}
		want["big"] = bytes.Repeat([]byte("0123456789"), 2000) // five segments' worth
		return tx.Insert(ctx, "t", []byte("big"), want["big"])
	}))
	require.Greater(t, db.Stats().WALRecords-before, uint64(10))
	check := func(db *DB, what string) {
		for k, v := range want {
			got, err := getValue(t, db, "t", k)
			require.NoError(t, err, "%s: %s", what, k)
			require.True(t, bytes.Equal(v, got), "%s: %s", what, k)
		}
	}
	check(db, "before the crash")
	clone := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	require.NoError(t, db.Close())
	db = smallSegments(t, clone)
	check(db, "after the crash")
	require.NoError(t, db.Close())
	db = smallSegments(t, clone)
	check(db, "after a clean reopen")
	require.NoError(t, db.Close())
}

// appendRaw appends records to the WAL of the closed database "db" on fs,
// as a previous version (or a crash in the middle of a stream) left them.
func appendRaw(t *testing.T, fs vfs.FS, recs ...wal.Record) {
	t.Helper()
	w, err := wal.Open(wal.Options{FS: fs, Dir: fs.PathJoin("db", "wal")})
	require.NoError(t, err)
	lsn, err := w.Append(recs...)
	require.NoError(t, err)
	require.NoError(t, w.Sync(ctx, lsn))
	require.NoError(t, w.Close())
}

func withXid(xid uint64, frag []byte) []byte {
	return append(binary.AppendUvarint(nil, xid), frag...)
}

// TestStreamedCommitWithoutEndIsDropped: parts of two commits interleave;
// the one whose end record is there is replayed, the one cut off before
// its end (a crash while it was logged: never acknowledged) is dropped.
func TestStreamedCommitWithoutEndIsDropped(t *testing.T) {
	fs := vfs.NewMem()
	db := smallSegments(t, fs)
	require.NoError(t, db.CreateTable(ctx, "t"))
	require.NoError(t, db.Close())
	a := durable.EncodeCommit(1000, []durable.Write{{Table: "t", Key: []byte("a1"), Value: []byte("A1")}, {Table: "t", Key: []byte("a2"), Value: []byte("A2")}})
	b := durable.EncodeCommit(1001, []durable.Write{{Table: "t", Key: []byte("b1"), Value: []byte("B1")}})
	appendRaw(t, fs,
		wal.Record{Type: durable.RecCommitPart, Data: withXid(1000, a[:5])},
		wal.Record{Type: durable.RecCommitPart, Data: withXid(1001, b[:7])},
		wal.Record{Type: durable.RecCommitPart, Data: withXid(1000, a[5:12])},
		wal.Record{Type: durable.RecCommitEnd, Data: withXid(1000, a[12:])},
		wal.Record{Type: durable.RecCommitPart, Data: withXid(1001, b[7:])},
	)
	db = smallSegments(t, fs)
	for _, k := range []string{"a1", "a2"} {
		v, err := getValue(t, db, "t", k)
		require.NoError(t, err, k)
		require.Equal(t, "A"+k[1:], string(v))
	}
	_, err := getValue(t, db, "t", "b1")
	require.ErrorIs(t, err, ErrNotFound, "a commit without its end record never committed")
	require.Greater(t, db.Stats().NextXid, uint64(1000))
	require.NoError(t, db.Close())
}

// TestRecoverySkipsUnstorableWrites: a WAL written before there were
// limits may hold a key, or a table name, longer than the backend can
// store. Recovery used to fail on it for ever ("recovery: storage: key
// longer than 32768 bytes"); now it skips those writes (logged at Error
// level and counted in Stats), keeps everything else, and the database
// works, checkpoints and reopens.
func TestRecoverySkipsUnstorableWrites(t *testing.T) {
	fs := vfs.NewMem()
	db := smallSegments(t, fs)
	require.NoError(t, db.CreateTable(ctx, "t"))
	require.NoError(t, db.Close())
	longKey := bytes.Repeat([]byte{'k'}, 40000)
	longName := string(bytes.Repeat([]byte{'n'}, 40000))
	appendRaw(t, fs,
		wal.Record{Type: durable.RecCommit, Data: durable.EncodeCommit(700, []durable.Write{
			{Table: "t", Key: []byte("ok"), Value: []byte("kept")},
			{Table: "t", Key: longKey, Value: []byte("x")},
		})},
		wal.Record{Type: durable.RecCreateTable, Data: []byte(longName)},
		wal.Record{Type: durable.RecCommit, Data: durable.EncodeCommit(701, []durable.Write{{Table: longName, Key: []byte("k"), Value: []byte("x")}})},
	)
	db = smallSegments(t, fs)
	require.Equal(t, uint64(3), db.Stats().RecoverySkippedWrites)
	v, err := getValue(t, db, "t", "ok")
	require.NoError(t, err)
	require.Equal(t, "kept", string(v))
	require.NoError(t, db.RunTx(ctx, nil, func(tx *Tx) error { return tx.Insert(ctx, "t", []byte("new"), []byte("n")) }))
	require.NoError(t, db.Close())
	db = smallSegments(t, fs)
	require.Equal(t, uint64(0), db.Stats().RecoverySkippedWrites, "the checkpoint left nothing to skip")
	v, err = getValue(t, db, "t", "new")
	require.NoError(t, err)
	require.Equal(t, "n", string(v))
	require.NoError(t, db.Close())
}

// TestStreamedCommitsAndCheckpoints: streamed commits run concurrently
// with each other (their parts interleave in the WAL) and with
// checkpoints; after a crash every acknowledged commit is there whole. A
// checkpoint must not choose a redo point past the first part of a commit
// still being streamed.
func TestStreamedCommitsAndCheckpoints(t *testing.T) {
	fs := vfs.NewCrashableMem()
	db := smallSegments(t, fs)
	require.NoError(t, db.CreateTable(ctx, "t"))
	const writers, commits, rows = 4, 6, 20
	value := func(w, c, r int) []byte { return bytes.Repeat([]byte{byte(w*commits*rows + c*rows + r)}, 300) }
	stop := make(chan struct{})
	ckptDone := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				ckptDone <- nil
				return
			default:
			}
			if err := db.Checkpoint(); err != nil {
				ckptDone <- err
				return
			}
		}
	}()
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		go func() {
			for c := 0; c < commits; c++ {
				err := db.RunTx(ctx, nil, func(tx *Tx) error {
					for r := 0; r < rows; r++ {
						if err := tx.Insert(ctx, "t", []byte(fmt.Sprintf("w%d c%d r%02d", w, c, r)), value(w, c, r)); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for w := 0; w < writers; w++ {
		require.NoError(t, <-errs)
	}
	close(stop)
	require.NoError(t, <-ckptDone)
	clone := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	require.NoError(t, db.Close())
	db = smallSegments(t, clone)
	defer db.Close()
	for w := 0; w < writers; w++ {
		for c := 0; c < commits; c++ {
			for r := 0; r < rows; r++ {
				v, err := getValue(t, db, "t", fmt.Sprintf("w%d c%d r%02d", w, c, r))
				require.NoError(t, err, "writer %d commit %d row %d", w, c, r)
				require.Equal(t, value(w, c, r), v)
			}
		}
	}
}
