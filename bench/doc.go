// Package bench holds tupled's benchmarks. For now these are the engine's
// micro-benchmarks (go test -bench . ./bench), which measure the design
// budget of the row-locking core:
//
//   - BenchmarkGet vs BenchmarkLockFastPath: a transaction that reads a row
//     vs one that locks it FOR SHARE. An uncontended row lock is one xmax
//     write on the tuple (no multixact, nothing in the lock manager), so the
//     two should cost about the same.
//   - BenchmarkLockMultiXact: the second sharer of a row must record a
//     multixact (the 2012 seed's slow path); BenchmarkLockFastPathOff forces
//     that for every lock (Options.ShareFastPathOff, the pre-9.3 situation).
//   - BenchmarkLocks1000Waiters: DB.Locks() with 1000 transactions waiting.
//
// The seed workloads (forshare, hotrow, storm, manyrows, tpcb-like) and the
// side-by-side comparison with PostgreSQL arrive with `tupled bench`.
package bench
