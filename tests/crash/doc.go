// Package crash holds the crash suites of tupled's embedded API (issue 3,
// suites 1 and 2): a crash at any moment loses no acknowledged commit,
// keeps every transaction atomic, leaves no row lock behind, and never
// brings back a value written by a transaction that did not commit.
//
// Simulated crashes run the database on pebble's vfs.NewCrashableMem; a
// crash point is a CrashClone taken with the ledger of tests/utils frozen,
// and the clone is reopened and checked against the ledger while the
// concurrent workload goes on:
//
//   - crash_test.go: TestCrashRandomPoints (pebble, -crash.points random
//     points, 400 by default), TestCrashAtEveryWrite (a crash point after
//     each write, fsync, create, rename and remove of any file,
//     -crash.writes of them, 150 by default), two regressions found by them
//     (TestCheckpointDuringCommitKeepsIt, TestOpenSyncsEveryCreatedDirectory)
//     and TestSimulatedCrashKeepsAcknowledgedCommits, a bank workload
//     crashed 20 times;
//   - crash_bbolt_test.go: TestCrashRandomPointsBbolt, the same on bbolt
//     (a quarter of -crash.points; the top of the file says why its crash
//     images are sound);
//   - bigcommit_test.go: TestLargeTransactions, commits too large for one
//     WAL segment (a 100 MB value, 1M rows) that survive a crash and a
//     reopen; and BenchmarkCommit1GB, a 1 GiB commit, its checkpoint and
//     its recovery (run it with
//     go test -run '^$' -bench Commit1GB -benchtime 1x ./tests/crash).
//
// Real crashes: kill_test.go's TestKillRestart re-executes the test binary
// as a child that drives the workload on a real directory, SIGKILLs it at
// a random moment, reopens and checks, -crash.kills times per backend (20;
// 1000 with -soak); TestHelperProcess is the child, and run directly it
// checks the child's line protocol on its own.
//
// Run it with
//
//	go test ./tests/crash                       # everything
//	go test ./tests/crash -run Kill -crash.kills 100
//	go test ./tests/crash -crash.seed N         # replay a failure's seed
//
// Every test logs its seed, and again with the flag to rerun it when it
// fails. -short skips TestLargeTransactions (hundreds of MB per case); with
// -race and -short the crash and kill counts are cut to a quarter, a third
// and a fifth. Measured on the project's shared two-core machine
// (2026-12), the test binary's own time: about 90 s in full
// (TestLargeTransactions is most of it), 17 s with -short, 14 s with -race
// -short.
package crash
