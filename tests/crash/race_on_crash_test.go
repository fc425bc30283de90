//go:build race

package crash_test

const raceEnabled = true
