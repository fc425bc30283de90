package storage

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func reverseAll(t *testing.T, b Backend, start, end []byte) []string {
	t.Helper()
	var keys []string
	require.NoError(t, b.ReverseScan(start, end, func(k, v []byte) error {
		require.Equal(t, "v"+string(k), string(v))
		keys = append(keys, string(k))
		return nil
	}))
	return keys
}

// TestReverseScan: ReverseScan visits exactly Scan's range, backwards, on
// every backend (the checksummed wrapper included), at the range's edges.
func TestReverseScan(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		b := e.open()
		var want []string
		for i := range 100 {
			want = append(want, fmt.Sprintf("key%03d", i))
		}
		commit(t, b, false, func(bt Batch) {
			for _, k := range want {
				bt.Set([]byte(k), []byte("v"+k))
			}
		})
		rev := func(s []string) []string { s = slices.Clone(s); slices.Reverse(s); return s }
		require.Equal(t, rev(want), reverseAll(t, b, nil, nil))
		require.Equal(t, rev(want[10:20]), reverseAll(t, b, []byte("key010"), []byte("key020")), "[start, end): end excluded, start included")
		require.Equal(t, rev(want[11:13]), reverseAll(t, b, []byte("key0105"), []byte("key0125")), "bounds between keys")
		require.Equal(t, rev(want[90:]), reverseAll(t, b, []byte("key090"), nil))
		require.Equal(t, rev(want[:5]), reverseAll(t, b, nil, []byte("key005")))
		require.Equal(t, rev(want), reverseAll(t, b, nil, []byte("zzz")), "end past the last key")
		require.Equal(t, rev(want), reverseAll(t, b, []byte{}, []byte{}))
		require.Empty(t, reverseAll(t, b, []byte("key020"), []byte("key010")), "start > end")
		require.Empty(t, reverseAll(t, b, []byte("key020"), []byte("key020")), "start == end")
		require.Empty(t, reverseAll(t, b, nil, []byte("key000")), "before the first key")
		require.Empty(t, reverseAll(t, b, []byte("zzz"), nil), "past the last key")

		stop := errors.New("stop")
		var seen []string
		err := b.ReverseScan(nil, nil, func(k, v []byte) error {
			seen = append(seen, string(k))
			if len(seen) == 3 {
				return stop
			}
			return nil
		})
		require.ErrorIs(t, err, stop)
		require.Equal(t, rev(want)[:3], seen)
		require.Error(t, b.ReverseScan(nil, nil, nil), "nil fn")
	})
}
