package heap_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled/heap"
)

// TestDescendOrderRangeAndStop mirrors TestAscendOrderRangeAndStop: the same
// half-open range [start, end), visited from the top, across batches.
func TestDescendOrderRangeAndStop(t *testing.T) {
	e := newEnv(t)
	x := e.committed()
	for i := 0; i < 300; i += 2 {
		e.insert(key(i), live(x))
	}
	collect := func(start, end []byte) []string {
		var got []string
		e.tbl.Descend(start, end, func(r *heap.Row) bool { got = append(got, string(r.Key())); return true })
		return got
	}

	got := collect(nil, nil)
	require.Len(t, got, 150, "every row, across three batches of 64")
	for i, k := range got {
		assert.Equal(t, key(298-2*i), k)
	}

	got = collect([]byte(key(11)), []byte(key(250)))
	require.NotEmpty(t, got)
	assert.Equal(t, key(248), got[0], "end is exclusive")
	assert.Equal(t, key(12), got[len(got)-1], "start is inclusive, and need not exist")
	assert.Len(t, got, (248-12)/2+1)

	assert.Equal(t, []string{key(10)}, collect([]byte(key(10)), []byte(key(12))))
	assert.Equal(t, []string{key(10)}, collect([]byte(key(10)), []byte(key(11))), "an end between keys")
	assert.Empty(t, collect([]byte(key(12)), []byte(key(10))), "start > end")
	assert.Empty(t, collect([]byte(key(10)), []byte(key(10))), "start == end")
	assert.Empty(t, collect(nil, []byte(key(0))), "end at the first key")

	n := 0
	e.tbl.Descend(nil, nil, func(*heap.Row) bool { n++; return n < 70 })
	assert.Equal(t, 70, n, "returning false stops the scan, also inside the second batch")
}
