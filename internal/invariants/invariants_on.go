//go:build invariants

package invariants

// Enabled is true: the module was built with -tags invariants.
const Enabled = true
