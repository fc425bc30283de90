package tupled

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestVerifyAndSalvageStreamedCommit: a transaction too large for one WAL
// record is logged as RecCommitPart records and a RecCommitEnd. verify
// must accept them (it refused them as "unknown type") and salvage must
// replay them (it dropped them silently, losing the transaction's rows).
func TestVerifyAndSalvageStreamedCommit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	opts := &Options{VacuumInterval: -1, CheckpointInterval: time.Hour, CheckpointWALSize: -1, walSegmentSize: 1 << 20}
	db, err := Open(dir, opts)
	require.NoError(t, err)
	require.NoError(t, db.CreateTable(ctx, "t"))
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<16) // 3 MiB: three parts
	require.NoError(t, db.RunTx(ctx, nil, func(tx *Tx) error {
		if err := tx.Insert(ctx, "t", []byte("big"), big); err != nil {
			return err
		}
		return tx.Insert(ctx, "t", []byte("small"), []byte("v"))
	}))
	require.GreaterOrEqual(t, db.Stats().WALRecords, uint64(3), "the commit was not streamed")
	// A crash image: the directory as it is while the database is open,
	// before any checkpoint (the WAL holds the commit; nothing is writing).
	image := filepath.Join(t.TempDir(), "image")
	require.NoError(t, os.CopyFS(image, os.DirFS(dir)))
	require.NoError(t, db.Close())
	dir = image

	res, err := Verify(dir, io.Discard)
	require.NoError(t, err)
	require.Empty(t, res.Problems)
	require.GreaterOrEqual(t, res.WALRecords, 3)

	out := filepath.Join(t.TempDir(), "salvaged")
	sres, err := Salvage(dir, out, io.Discard)
	require.NoError(t, err)
	require.Empty(t, sres.Lost)
	db, err = Open(out, nil)
	require.NoError(t, err)
	defer db.Close()
	for k, want := range map[string][]byte{"big": big, "small": []byte("v")} {
		got, err := getValue(t, db, "t", k)
		require.NoError(t, err, k)
		require.True(t, bytes.Equal(got, want), k)
	}
}
