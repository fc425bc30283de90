package heap

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRowTreeOrdersAsBytesCompare: keys of 0 to 12 bytes from a tiny
// alphabet with zero bytes (so that prefixes tie, padding meets real zeros
// and one key is another's prefix) come out of the tree in bytes.Compare
// order, and walks from any key start where the keys' order says.
func TestRowTreeOrdersAsBytesCompare(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	key := func() []byte {
		k := make([]byte, rng.IntN(13))
		for i := range k {
			k[i] = []byte{0, 1, 0xff}[rng.IntN(3)]
		}
		return k
	}
	tr := newRowTree()
	seen := map[string]bool{}
	var want [][]byte
	for range 2000 {
		k := key()
		if seen[string(k)] {
			continue
		}
		seen[string(k)] = true
		want = append(want, k)
		tr.ReplaceOrInsert(&Row{key: k})
	}
	slices.SortFunc(want, bytes.Compare)
	var got [][]byte
	tr.Ascend(func(r *Row) bool { got = append(got, r.key); return true })
	require.Equal(t, want, got)
	require.Equal(t, len(want), tr.Len())

	for range 200 {
		from := key()
		i, _ := slices.BinarySearchFunc(want, from, bytes.Compare)
		up := [][]byte{}
		tr.AscendGreaterOrEqual(from, func(r *Row) bool { up = append(up, r.key); return len(up) < 3 })
		require.Equal(t, want[i:min(i+3, len(want))], up, "ascending from %x", from)
		j, found := slices.BinarySearchFunc(want, from, bytes.Compare)
		if found {
			j++
		}
		down := [][]byte{}
		tr.DescendLessOrEqual(from, func(r *Row) bool { down = append(down, r.key); return len(down) < 3 })
		wantDown := slices.Clone(want[max(0, j-3):j])
		slices.Reverse(wantDown)
		require.Equal(t, wantDown, down, "descending from %x", from)
	}
	tr.Delete(&Row{key: want[0]})
	require.Equal(t, len(want)-1, tr.Len())
}
