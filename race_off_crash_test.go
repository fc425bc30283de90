//go:build !race

package tupled_test

const raceEnabled = false
