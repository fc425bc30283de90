//go:build !invariants

package invariants

import "testing"

// TestDisabledByDefault: without -tags invariants every check compiles away.
func TestDisabledByDefault(t *testing.T) {
	if Enabled {
		t.Fatal("invariants.Enabled is true without the invariants build tag")
	}
}
