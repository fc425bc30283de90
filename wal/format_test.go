package wal

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSegmentNames(t *testing.T) {
	for _, base := range []LSN{0, 1, 0x400000, 1<<64 - 1} {
		got, ok := parseSegmentName(segmentName(base))
		require.True(t, ok)
		require.Equal(t, base, got)
	}
	for _, name := range []string{"LOCK", "0000000000000000.wal.tmp", "000000000000000.wal", "000000000000000G.wal", "00000000000000AB.wal", "0000000000000000.log"} {
		_, ok := parseSegmentName(name)
		require.False(t, ok, name)
	}
}

// Every single-bit flip anywhere in a record or a segment header is
// detected, and a record is only valid at the position it was framed for.
func TestFramingDetectsEveryBitFlip(t *testing.T) {
	const base = LSN(4096)
	rec := Record{Type: 7, Data: []byte("payload of a record")}
	data := append(encodeSegmentHeader(base), appendRecord(nil, base+segHeaderSize, base, rec)...)
	res := scanSegment(data, base)
	require.NoError(t, res.bad)
	require.Equal(t, 1, res.records)
	require.Equal(t, int64(len(data)), res.valid)
	for i := range data {
		for bit := 0; bit < 8; bit++ {
			data[i] ^= 1 << bit
			res := scanSegment(data, base)
			require.Error(t, res.bad, "flip of bit %d of byte %d went unnoticed", bit, i)
			data[i] ^= 1 << bit
		}
	}
	// The same bytes under another base (a stale or renamed file) fail.
	require.Error(t, scanSegment(data, base+1).bad)
	body := data[segHeaderSize:]
	_, _, err := decodeRecordAt(append(encodeSegmentHeader(0), body...), segHeaderSize, 0)
	require.ErrorContains(t, err, "stale or misplaced")
	// Zeroes are never a record, whatever their length.
	for n := 1; n <= 64; n++ {
		_, _, err := decodeRecordAt(make([]byte, n), 0, 0)
		require.ErrorContains(t, err, "zero", "n=%d", n)
	}
}
