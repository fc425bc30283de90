// Package soak is the soak of tupled's embedded API (issue 10): TestSoak
// runs a mixed locking workload (FOR SHARE and FOR KEY SHARE lockers on a
// hot set, pairs that make a multixact each time, kv inserts, updates and
// deletes, a SKIP LOCKED job queue) with vacuum and checkpoints on an
// on-disk database, in four phases of the same fixed amount of work, and
// compares the first measured third with the last: goroutines, heap after
// GC, live multixacts and tuple versions must stay flat, and the CPU time
// per commit must not grow beyond a generous factor (x2.5).
//
// Run it with
//
//	go test -v ./tests/soak   # -v shows each phase's figures
//
// It is skipped with -short. Measured on the project's shared two-core
// machine (2026-12), the test binary's own time: about 1 s (117k
// commits; each phase has a one-minute hang guard, and the skip message's
// "about a minute" dates from before issue 12 made the queue's scans cheap).
package soak
