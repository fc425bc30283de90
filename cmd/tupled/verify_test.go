package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

func TestVerifySalvageCLI(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "db")
	ctx := context.Background()
	db, err := tupled.Open(dir, &tupled.Options{Backend: tupled.Bbolt, VacuumInterval: -1})
	require.NoError(t, err)
	require.NoError(t, db.CreateTable(ctx, "t"))
	require.NoError(t, db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.Insert(ctx, "t", []byte("k"), []byte("v"))
	}))
	require.NoError(t, db.Close())

	code, out, errs := runCLI("verify", dir)
	require.Equal(t, 0, code, out+errs)
	require.Contains(t, out, "no damage found")

	code, _, errs = runCLI("verify")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "usage: tupled verify DIR")

	require.NoError(t, os.Remove(filepath.Join(dir, "control")))
	code, out, _ = runCLI("verify", dir)
	require.Equal(t, 1, code)
	require.Contains(t, out, "control file")

	code, out, errs = runCLI("salvage", dir, filepath.Join(base, "new"))
	require.Equal(t, 0, code, out+errs)
	code, out, errs = runCLI("verify", filepath.Join(base, "new"))
	require.Equal(t, 0, code, out+errs)
	code, _, errs = runCLI("salvage", dir, filepath.Join(base, "new"))
	require.Equal(t, 1, code)
	require.Contains(t, errs, "already exists")
}
