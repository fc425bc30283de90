// Package bench replays the seed experiments: `tupled bench <workload>` (see
// README.md) runs a workload's variants with pgbench-like clients and
// reports tps, latency percentiles (HDR histogram), failures by SQLSTATE,
// per-second series (JSON, PNG plot) and ratios between variants.
//
// Layout: runner.go is the harness (clients, progress lines, histograms),
// report.go the rounds, summaries, ratio table and JSON; explain.go the
// reference figures, each ratio's spread over the rounds, the goal's verdict
// and the counters' explanations; plot.go the plot; pgoracle.go
// PostgreSQL 15's side of forshare, measured in the same run; each workload
// has a file (forshare.go, hotrow.go, storm.go, manyrows.go, tpcb.go)
// implementing Workload. bench/pg/ runs the same workloads against
// PostgreSQL 15 from a script.
//
// Invariants: a variant's figures come from one run of the same clients for
// the same duration; ratios are only ever computed between variants of one
// invocation, and of one round when the variants alternate (absolute times
// drift on a shared machine); a goal is judged on the middle half of the
// rounds, never on one round without saying so. The per-interval series
// holds whole intervals only. PostgreSQL never runs while tupled measures,
// nor tupled while PostgreSQL does. Workloads use the public tupled API
// only.
//
// The package's tests also hold the engine's micro-benchmarks
// (go test -bench . ./bench): an uncontended row lock costs about what a
// read does (BenchmarkLockFastPath vs BenchmarkGet), a second sharer costs a
// multixact (BenchmarkLockMultiXact, BenchmarkLockFastPathOff), DB.Locks()
// with 1000 waiters (BenchmarkLocks1000Waiters), and the durability
// benchmarks of durable_test.go (fsyncs per commit, recovery time, a 10M-row
// table's open time and memory).
//
// Callers: cmd/tupled (the bench subcommand).
package bench
