package wal

import (
	"context"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

// TestMaxRecordSizeAndWaitWritten: MaxRecordSize is exactly the largest
// payload Append takes; WaitWritten returns once the records are in the
// segment file (without waiting for an fsync).
func TestMaxRecordSizeAndWaitWritten(t *testing.T) {
	fs := vfs.NewMem()
	w := openT(t, fs, 4096)
	defer w.Close()
	max := w.MaxRecordSize()
	_, err := w.Append(Record{Type: 1, Data: make([]byte, max+1)})
	require.ErrorIs(t, err, ErrRecordTooLarge)
	lsn, err := w.Append(Record{Type: 1, Data: make([]byte, max)})
	require.NoError(t, err)
	lsn, err = w.Append(Record{Type: 2, Data: []byte("second")})
	require.NoError(t, err)
	require.NoError(t, w.WaitWritten(context.Background(), lsn))
	bases := segmentFiles(t, fs)
	require.Len(t, bases, 2)
	st, err := fs.Stat(fs.PathJoin(testDir, segmentName(bases[1])))
	require.NoError(t, err)
	require.Equal(t, int64(lsn-bases[1]), st.Size(), "the second segment holds the record")
	require.NoError(t, w.WaitWritten(context.Background(), lsn), "already written")
	_, err = w.Append(Record{Type: 1, Data: []byte("x")})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, w.WaitWritten(ctx, w.EndLSN()), context.Canceled, "nothing kicks the writer below 1 MiB")
	require.ErrorIs(t, w.WaitWritten(context.Background(), w.EndLSN()+1), ErrBeyondEnd)
}
