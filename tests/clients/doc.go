// Package clients runs real PostgreSQL client libraries against tupled
// serve and against PostgreSQL 15 (issue 24): one small program or script
// per client under go/ (a module of its own: database/sql with pgx/stdlib
// and lib/pq, pgx's CopyFrom and Batch, GORM's quickstart, sqlc-shaped
// queries), python/ (psycopg2, psycopg 3, SQLAlchemy 1.4, Debian's
// packages run by /usr/bin/python3), node/ (node-postgres, npm ci) and
// java/ (JDBC, Debian's /usr/share/java/postgresql.jar). Each takes a
// postgres:// URL, runs numbered ordinary application steps and prints one
// line per step, "STEP <name> ok" or "STEP <name> FAIL <error>", exiting
// non-zero when a step failed. Each creates its own tables, named with the
// process id, and drops them at the end.
//
// Who runs it: `go test ./...` (and so .ci/run, which installs the
// runtimes and libraries first) runs TestClients: it starts tupled in
// process (in memory, sqlfe, pgwire on a loopback port) and a throw-away
// PostgreSQL 15 (internal/pgoracle; its unix socket is forwarded to a
// loopback TCP port, since JDBC speaks only TCP), and runs every client
// against both. `go test ./tests/clients -run TestClients -v` shows the
// client × step table; `-update-results` also writes it to RESULTS.md.
//
// Invariants:
//   - Every step passes against PostgreSQL, or the test fails: the script,
//     not tupled, is wrong then. A step PostgreSQL ran that tupled's run
//     never printed (the client stopped early) counts as failed on tupled.
//   - Against tupled, a step listed in expected-tupled.txt ("client step
//     reason", one a line) must fail, and one not listed must pass: a
//     listed step that passes fails the test with "now passes: remove from
//     expected-tupled.txt", so the list only shrinks and each improvement
//     is recorded. A listing without a reason, or naming a step no client
//     has, fails too.
//   - A client whose runtime or library is missing is skipped with a
//     message saying what is missing — unless the environment variable CI
//     is set, when it fails: CI installs them all (.ci/run). Without
//     PostgreSQL 15 the whole test is skipped (pgoracle's rule, the same
//     CI exception).
package clients
