// Package pgoracle starts a throw-away PostgreSQL 15 server for tests that
// check tupled's answers against PostgreSQL's (the project's oracle; see
// shared/reference/postgres-oracle.md).
//
// Callers: test packages only (tests/sqllogic with -pg). Start(t) runs
// initdb into a temp dir (as the postgres user via runuser when the test
// runs as root, since PostgreSQL refuses to run as root), starts the
// server with pg_ctl listening only on a unix socket in that dir (so no
// TCP port can clash with another test or user on the machine), and
// returns a pgx/libpq connection string for the "postgres" database as
// the superuser "postgres" (trust authentication). t.Cleanup stops the
// server (pg_ctl stop -m immediate) and removes the dir.
//
// Invariants:
//   - The cluster is created with --locale=C and UTF8, so text compares
//     and sorts bytewise (C collation), as tupled does, and with the
//     server's TimeZone UTC; fsync is off (it is thrown away).
//   - When PostgreSQL's initdb cannot be found (neither
//     /usr/lib/postgresql/15/bin nor PATH), or the postgres user or
//     runuser is missing while running as root, Start skips the test with
//     a message saying so — unless the environment variable CI is set, in
//     which case it fails the test: CI machines have PostgreSQL 15, and a
//     check against it must not silently disappear there.
//   - A server that does not start fails the test with its log's tail.
package pgoracle
