// Package fault holds the I/O-fault suites of tupled's embedded API (issue
// 3, suite 3, and issue 10's disk full): what a failing disk does to
// commits, reads and recovery.
//
//   - fault_test.go: TestFaults injects, with pebble's vfs/errorfs, fsync
//     errors, write errors, short writes and ENOSPC on the WAL and on the
//     backend's files while the concurrent workload of tests/utils runs,
//     on both backends. No false acknowledgement (every Commit that
//     returned nil is in the synced data and after a reopen); once a
//     writing Commit failed, every later one, CreateTable and Checkpoint
//     fail with ErrIO (58030); recovery reaches a consistent state. With
//     SyncCommit on, ENOSPC and short writes on the WAL are not fatal:
//     commits fail with ErrDiskFull (53100) and resume once space is back.
//   - diskfull_test.go: TestDiskFullWAL, TestDiskFullSyncCommitOff,
//     TestDiskFullCheckpoint, TestDiskFullClose: a full disk under the WAL,
//     with SyncCommit off, under a checkpoint and at Close.
//   - diskfull_linux_test.go: TestDiskFullTmpfs fills a real small tmpfs;
//     it needs to mount one (root, as in CI) and is skipped otherwise, and
//     with -short.
//
// Run it with
//
//	go test ./tests/fault
//	go test ./tests/fault -run TestFaults -crash.seed N   # replay a seed
//
// Measured on the project's shared two-core machine (2026-12), the test
// binary's own time: 3 s in full (as root, with the tmpfs), 1.5 s with
// -short, 3 s with -race -short.
package fault
