package wal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

const testDir = "/db/wal"

// entry is a record with the LSN Replay reported for it.
type entry struct {
	LSN LSN
	Rec Record
}

func (e entry) String() string {
	return fmt.Sprintf("{lsn %d type %d len %d}", e.LSN, e.Rec.Type, len(e.Rec.Data))
}

func openT(t testing.TB, fs vfs.FS, segSize int64) *WAL {
	t.Helper()
	w, err := Open(Options{FS: fs, Dir: testDir, SegmentSize: segSize})
	require.NoError(t, err)
	return w
}

// testRecord is record i of a test log: its payload starts with i so that
// every record is distinct, and its length and type vary with i.
func testRecord(i int, maxLen int) Record {
	n := 8 + (i*7919)%(maxLen-7)
	data := make([]byte, n)
	binary.LittleEndian.PutUint64(data, uint64(i))
	for j := 8; j < n; j++ {
		data[j] = byte(i*31 + j)
	}
	return Record{Type: RecordType(1 + i%250), Data: data}
}

// randRecord is a record with a unique id (writer, seq) and random length.
func randRecord(rng *rand.Rand, writer, seq int, maxLen int) Record {
	n := 16 + rng.IntN(maxLen-15)
	data := make([]byte, n)
	binary.LittleEndian.PutUint64(data[0:], uint64(writer))
	binary.LittleEndian.PutUint64(data[8:], uint64(seq))
	for j := 16; j < n; j++ {
		data[j] = byte(rng.Uint32())
	}
	return Record{Type: RecordType(1 + rng.IntN(254)), Data: data} // 255 is voidType
}

// recordID is the (writer, seq) identity randRecord put into a record.
func recordID(r Record) [2]uint64 {
	return [2]uint64{binary.LittleEndian.Uint64(r.Data[0:]), binary.LittleEndian.Uint64(r.Data[8:])}
}

func replayAll(t testing.TB, w *WAL, from LSN) []entry {
	t.Helper()
	var out []entry
	require.NoError(t, w.Replay(from, func(lsn LSN, r Record) error {
		out = append(out, entry{lsn, r})
		return nil
	}))
	return out
}

// requireSameEntries compares two logs record by record, reporting the
// first difference instead of two huge dumps.
func requireSameEntries(t testing.TB, want, got []entry) {
	t.Helper()
	for i := 0; i < min(len(want), len(got)); i++ {
		if want[i].LSN != got[i].LSN || want[i].Rec.Type != got[i].Rec.Type || !bytes.Equal(want[i].Rec.Data, got[i].Rec.Data) {
			t.Fatalf("entry %d differs: want %v, got %v", i, want[i], got[i])
		}
	}
	require.Equal(t, len(want), len(got), "number of entries")
}

// requirePrefix checks that got is a prefix of want: no holes, no garbage,
// nothing reordered.
func requirePrefix(t testing.TB, want, got []entry) {
	t.Helper()
	require.LessOrEqual(t, len(got), len(want), "more records than were ever appended")
	requireSameEntries(t, want[:len(got)], got)
}

// segmentFiles lists the segment bases in the test directory.
func segmentFiles(t testing.TB, fs vfs.FS) []LSN {
	t.Helper()
	names, err := fs.List(testDir)
	require.NoError(t, err)
	var bases []LSN
	for _, n := range names {
		if b, ok := parseSegmentName(n); ok {
			bases = append(bases, b)
		}
	}
	slices.Sort(bases)
	return bases
}
