//go:build !race

package tupled_test

// raceEnabled: the race detector allocates on its own account (shadow
// state for the memory a call touches), so allocation counts mean nothing
// under it.
const raceEnabled = false
