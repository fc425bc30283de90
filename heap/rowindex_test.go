package heap

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRowIndex: a key has at most one row; putIfAbsent returns the row
// already there, inserts nothing when refused, and deleteIf removes only
// the row it is given; len and each see every shard.
func TestRowIndex(t *testing.T) {
	x := newRowIndex()
	const n = 1000
	rows := make([]*Row, n)
	for i := range rows {
		rows[i] = &Row{key: []byte(fmt.Sprintf("k%04d", i))}
		require.Same(t, rows[i], x.putIfAbsent(rows[i], nil))
	}
	require.Equal(t, n, x.len())

	other := &Row{key: []byte("k0007")}
	require.Same(t, rows[7], x.putIfAbsent(other, nil), "the row already there wins")
	require.Same(t, rows[7], x.putIfAbsent(other, func() bool { return false }), "refusal only stops an insert")
	require.False(t, x.deleteIf(other), "another row of the same key is not removed")
	require.True(t, x.deleteIf(rows[7]))
	require.Nil(t, x.get([]byte("k0007")))
	require.Nil(t, x.putIfAbsent(other, func() bool { return false }), "refused: nothing inserted")
	require.Nil(t, x.get([]byte("k0007")))
	require.Equal(t, n-1, x.len())

	seen := map[string]bool{}
	x.each(func(r *Row) bool { seen[string(r.key)] = true; return true })
	require.Len(t, seen, n-1)
	k := 0
	x.each(func(*Row) bool { k++; return k < 10 })
	require.Equal(t, 10, k, "each stops when fn says so")
}

// TestRowIndexConcurrentLoads: goroutines racing to insert the rows of the
// same keys (as concurrent cold reads do) all get one row per key (-race).
func TestRowIndexConcurrentLoads(t *testing.T) {
	x := newRowIndex()
	const keys, workers = 500, 8
	got := make([][]*Row, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range keys {
				k := []byte(fmt.Sprintf("k%04d", (i*7+w)%keys))
				got[w] = append(got[w], x.putIfAbsent(&Row{key: k}, nil))
				_ = x.len()
			}
		}()
	}
	wg.Wait()
	require.Equal(t, keys, x.len())
	for w := range workers {
		for _, r := range got[w] {
			require.Same(t, x.get(r.key), r, "every worker got the key's one row")
		}
	}
}
