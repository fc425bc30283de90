package xact

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The striped layout must give every xid of a page its own entry, and put
// neighbouring xids on different cache lines (8 entries of 8 bytes each).
func TestClogSlotIsAPermutationThatSeparatesNeighbours(t *testing.T) {
	seen := make([]bool, clogPageSize)
	for i := uint64(0); i < clogPageSize; i++ {
		s := clogSlot(i)
		require.Less(t, s, uint64(clogPageSize))
		require.False(t, seen[s], "xid %d shares slot %d", i, s)
		seen[s] = true
		if i > 0 {
			require.NotEqual(t, clogSlot(i-1)/8, s/8, "xids %d and %d on one line", i-1, i)
		}
	}
	require.Equal(t, clogSlot(5), clogSlot(5+3*clogPageSize), "slot depends on the xid within its page only")
}
