//go:build race

package pgwire

// raceEnabled: the race detector keeps shadow memory for all the process
// ever touched, so resident-size checks mean nothing under it.
const raceEnabled = true
