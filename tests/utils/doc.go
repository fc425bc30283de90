// Package utils is the shared machinery of the robustness suites under
// tests/ (crash, fault, corrupt, soak). It is an ordinary package, not a
// test file, so that every suite package can import it; it uses only the
// public API of package tupled.
//
//   - crash.go: the concurrent workload over two tables (bank transfers, kv
//     inserts, updates and deletes, FOR SHARE / FOR KEY SHARE lockers,
//     key-share multixacts beside updaters, checkpoints), the Ledger of
//     what each commit wrote (acknowledged or in flight at a crash point),
//     CheckRecovered, which checks a recovered database against it, and
//     the seed (-crash.seed) and options of the crash suites.
//   - helpers.go: Begin, Get, Eventually, Async, Key and Backends, copies of
//     the root package's test helpers of the same names.
//
// It holds no tests; see tests/crash and tests/fault for the suites that
// drive it.
package utils
