package invariants

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFailNamesTheInvariant(t *testing.T) {
	defer func() {
		r := recover()
		require.NotNil(t, r)
		require.Equal(t, "x.y", Name(r))
		require.Equal(t, "invariant x.y violated: 3 > 2", r.(*Violation).Error())
	}()
	Check(3 <= 2, "x.y", "%d > %d", 3, 2)
}

func TestCheckHolds(t *testing.T) {
	Check(true, "x.y", "never")
}

func TestNameOfOtherPanics(t *testing.T) {
	require.Equal(t, "", Name("boom"))
	require.Equal(t, "a.b", Name("invariant a.b violated: c"))
	require.Equal(t, "", Name(42))
}
