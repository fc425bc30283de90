//go:build !invariants

package invariants

// Enabled is false: build with -tags invariants to check the invariants.
const Enabled = false
