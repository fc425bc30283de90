//go:build invariants

package invariants

import "testing"

func TestEnabledUnderTag(t *testing.T) {
	if !Enabled {
		t.Fatal("invariants.Enabled is false under the invariants build tag")
	}
}
