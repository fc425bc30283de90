// Package isospec parses and runs lock schedules written in a format modelled
// on PostgreSQL's isolation specs (src/test/isolation/specs), whose steps are a
// small command language over tupled's embedded API, and prints
// isolationtester-style output.
//
// A spec file:
//
//	# comment
//	options { deadlock_timeout 100ms  lock_timeout 0 }
//	setup { create t; insert 1 10 }
//	teardown { ... }
//	session s1
//	setup { begin }
//	step s1a { lock 1 update }
//	step s1c { commit }
//	teardown { rollback }
//	session s2
//	...
//	permutation s1a s2a s1c s2c
//
// With no permutation, every interleaving of the sessions' steps is run, in the
// order isolationtester uses. A permutation step may carry isolationtester's
// blocker annotations: s1a(*) (report as waiting on first try) and s1a(s2b)
// (report as waiting while step s2b is still running).
//
// The same block structure is used by PostgreSQL's own isolation specs, whose
// blocks hold SQL; Parse keeps every block's raw text so that the PostgreSQL
// twin of a spec (NAME.pg.spec) can be read by the same code (ParseRaw).
//
// # Invariants
//
//   - Blocking is observed, never guessed: a step counts as waiting only when
//     its transaction shows in DB.Locks() as an ungranted entry.
//   - Each permutation runs on a fresh in-memory database, so permutations
//     cannot leak state into each other.
//   - Every wait of the runner is bounded; a stuck engine fails the run with a
//     message instead of hanging it.
//
// Callers: cmd/tupled (the spec subcommand) and the tests, which compare each
// testdata/spec schedule's output with what PostgreSQL 15 printed for its SQL
// twin (see testdata/spec/README.md).
package isospec
