package durable

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/internal/storage"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/multixact"
	"github.com/tupled/tupled/wal"
)

var ctx = context.Background()

func randomWriteSet(rng *rand.Rand) []Write {
	tables := []string{"t", "accounts", ""}
	ws := make([]Write, rng.IntN(20))
	for i := range ws {
		w := Write{Table: tables[rng.IntN(len(tables))], Key: randBytes(rng, rng.IntN(40)), Delete: rng.IntN(4) == 0}
		if !w.Delete {
			n := rng.IntN(50)
			if rng.IntN(8) == 0 {
				n = rng.IntN(5000)
			}
			w.Value = randBytes(rng, n)
		}
		ws[i] = w
	}
	return ws
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

func sameWrites(t *testing.T, want, got []Write, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		require.Equal(t, want[i].Table, got[i].Table, "%s: write %d", what, i)
		require.True(t, bytes.Equal(want[i].Key, got[i].Key), "%s: write %d key", what, i)
		require.Equal(t, want[i].Delete, got[i].Delete, "%s: write %d", what, i)
		require.True(t, bytes.Equal(want[i].Value, got[i].Value), "%s: write %d value", what, i)
	}
}

// TestStreamCommitRoundTrip: a commit cut into parts of any size is the
// byte stream of EncodeCommit, each record within the part size and
// prefixed by the xid, and decodes to the write set whatever the cuts.
func TestStreamCommitRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 300; i++ {
		xid := rng.Uint64() >> rng.IntN(64)
		ws := randomWriteSet(rng)
		whole := EncodeCommit(xid, ws)
		require.LessOrEqual(t, len(whole), commitSizeBound(ws))
		gotXid, got, err := decodeCommit(whole)
		require.NoError(t, err)
		require.Equal(t, xid, gotXid)
		sameWrites(t, ws, got, "single record")

		prefix := binary.AppendUvarint(nil, xid)
		partSize := len(prefix) + 1 + rng.IntN(300)
		var frags [][]byte
		lasts := 0
		require.NoError(t, streamCommit(xid, ws, partSize, func(data []byte, last bool) error {
			require.LessOrEqual(t, len(data), partSize)
			require.True(t, bytes.HasPrefix(data, prefix))
			if last {
				lasts++
			}
			frags = append(frags, bytes.Clone(data[len(prefix):]))
			return nil
		}))
		require.Equal(t, 1, lasts)
		require.Equal(t, whole, bytes.Join(frags, nil), "the parts are EncodeCommit's bytes")
		got = nil
		gotXid, err = decodeCommitStream(frags, func(w Write) error {
			w.Key, w.Value = bytes.Clone(w.Key), bytes.Clone(w.Value)
			got = append(got, w)
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, xid, gotXid)
		sameWrites(t, ws, got, fmt.Sprintf("%d parts of %d bytes", len(frags), partSize))
	}
}

// TestFailedAppendDoesNotPoison: only a WAL I/O failure fails the
// database; a record the WAL refuses fails that commit alone.
func TestFailedAppendDoesNotPoison(t *testing.T) {
	d := openStore(t, vfs.NewMem())
	defer d.Close()
	err := d.appendFailed(fmt.Errorf("x: %w", wal.ErrRecordTooLarge))
	require.Equal(t, "54000", errs.SQLState(err))
	require.NoError(t, d.FatalErr())
	require.ErrorIs(t, d.appendFailed(wal.ErrClosed), errs.ErrClosed)
	require.NoError(t, d.FatalErr())
	err = d.appendFailed(fmt.Errorf("%w: disk on fire", wal.ErrFatal))
	require.Equal(t, "58030", errs.SQLState(err))
	require.Error(t, d.FatalErr())
}

// openStore opens a Store in "db" on fs over fresh engine state.
func openStore(t *testing.T, fs vfs.FS) *Store {
	t.Helper()
	x, m := xact.NewManager(), multixact.NewStore()
	d, err := Open("db", Config{FS: fs, Kind: storage.KindPebble, SyncCommit: true, Logger: slog.New(slog.DiscardHandler)},
		Machinery{Xacts: x, Multi: m, Heap: heap.New(x, m, nil)})
	require.NoError(t, err)
	return d
}

// failingGet is a backend whose reads fail.
type failingGet struct{ storage.Backend }

func (failingGet) Get([]byte) ([]byte, bool, error) {
	return nil, false, errFailedRead
}

// ReverseScan fails too: a load's first miss asks for the table's largest
// backend key (heap's ceil) before any Get.
func (failingGet) ReverseScan([]byte, []byte, func(k, v []byte) error) error { return errFailedRead }

var errFailedRead = fmt.Errorf("storage: backend failed after an I/O error; close and reopen: %w", errors.New("no space left on device"))

// TestBackendReadFailureIsIO: a row that could not be loaded fails the
// operation with ErrIO (58030) and the Store with it, not with the
// backend's bare error (which carried no SQLSTATE: tests/fault's
// TestFaults, short backend write, surfaced it now and then).
func TestBackendReadFailureIsIO(t *testing.T) {
	d := openStore(t, vfs.NewMem())
	defer d.Close()
	d.heap.SetBackend(failingGet{d.be})
	tbl, err := d.heap.CreateTable("t")
	require.NoError(t, err)
	require.Nil(t, tbl.PinRow([]byte("k")))
	err = d.BackendError()
	require.ErrorIs(t, err, errs.ErrIO)
	require.Equal(t, "58030", errs.SQLState(err))
	require.ErrorIs(t, d.FatalErr(), errs.ErrIO, "writes are refused from then on")
	d.heap.SetBackend(d.be) // Close checkpoints through the heap's backend
}
