package sqlfe

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tupled/tupled/sql/types"
)

// TestJoinHashInts: the integer table of a hash join finds, for every
// key, exactly the inner rows of that key in inner order — keys that
// collide in the table (multiples of its size), 0, negative and extreme
// keys, many rows of one key, NULLs that match nothing — as a plain map
// of lists does.
func TestJoinHashInts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var keys []types.Value
	for i := range 3000 {
		var v types.Value
		switch i % 6 {
		case 0:
			v = types.Int8(int64(i) << 13) // collide: the table's low bits all zero
		case 1:
			v = types.Int8(-int64(rng.IntN(50)))
		case 2:
			v = types.Int4(int32(rng.IntN(20)))
		case 3:
			v = types.Int8([]int64{math.MinInt64, math.MaxInt64, 0}[rng.IntN(3)])
		case 4:
			v = types.Null(types.TInt4)
		default:
			v = types.Int8(rng.Int64())
		}
		keys = append(keys, v)
	}
	want := map[int64][]int32{}
	for i, k := range keys {
		if !k.Null {
			want[k.I] = append(want[k.I], int32(i))
		}
	}
	h := &joinHash{}
	xs := []expr{&colExpr{idx: 0, t: types.TInt8}}
	e := &env{row: make([]types.Value, 1)}
	require.NoError(t, h.build(len(keys), xs, e, func(i int) { e.row[0] = keys[i] }))
	rows := func(k types.Value) []int32 {
		e.row[0] = k
		i, more, err := h.first(xs, e)
		require.NoError(t, err)
		var got []int32
		for i >= 0 {
			got = append(got, i)
			if !more {
				break
			}
			i = h.next[i]
		}
		return got
	}
	for k, w := range want {
		require.Equal(t, w, rows(types.Int8(k)), "key %d", k)
	}
	for _, k := range []types.Value{types.Int8(12345), types.Int8(-51), types.Null(types.TInt8), types.Int8(1 << 40)} {
		if _, ok := want[k.I]; ok && !k.Null {
			continue
		}
		require.Empty(t, rows(k), "key %v", k)
	}
}

// TestInnerRows: a join's inner rows come back by index as they were
// added, across the first chunk's growth and later chunks, whole or as
// the kept columns only.
func TestInnerRows(t *testing.T) {
	for _, w := range []int{0, 1, 3} {
		r := innerRows{w: w}
		const n = 1000
		for i := range n {
			row := make([]types.Value, w)
			for j := range row {
				row[j] = types.Int8(int64(i*10 + j))
			}
			if i%2 == 0 {
				r.add(row)
			} else {
				copy(r.add(nil), row)
			}
		}
		require.Equal(t, n, r.n)
		for i := range n {
			got := r.row(i)
			require.Len(t, got, w)
			for j, v := range got {
				require.Equal(t, int64(i*10+j), v.I, "w %d row %d col %d", w, i, j)
			}
		}
	}
}
