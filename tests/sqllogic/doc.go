// Package sqllogic runs the SQL logic-test corpus, testdata/sql/*.test
// (issue 24): each file is a sequence of statements with their expected
// rows or SQLSTATE, every expectation produced by PostgreSQL 15. The file
// format, the pending list and the commands are in testdata/sql/README.md.
//
// Who runs it: `go test ./...` (and so .ci/run) runs TestLogic against
// tupled: a fresh in-process server (tupled.Open("") in memory, sqlfe,
// pgwire on a loopback port) per file, one connection, the simple query
// protocol. .ci/run also runs `go test ./tests/sqllogic -pg`, the same
// files against a throw-away PostgreSQL 15 (internal/pgoracle), each file
// in a database of its own made with CREATE DATABASE and dropped after;
// `-pg -rewrite` rewrites the expectations from PostgreSQL's answers.
// One file: `go test ./tests/sqllogic -run TestLogic/<base name>`.
//
// TestRefused (refused_test.go) runs testdata/sql/refused.sql, SQL
// PostgreSQL runs and tupled refuses: each case must get 0A000 with a
// message in SQL words from tupled, and succeed on PostgreSQL with -pg;
// testdata/sql/REFUSED.md, its generated list, must be current.
//
// Invariants:
//   - Expectations come from PostgreSQL, never from tupled: with -pg every
//     file, pending ones included, must pass; -rewrite is accepted only
//     with -pg. So a tupled answer that differs from PostgreSQL's is a
//     tupled bug (or a missing feature), not an expectation to adjust.
//   - Values are compared as text, as the server sent them (PostgreSQL's
//     text output format); errors by SQLSTATE alone.
//   - Against tupled, a file listed in testdata/sql/pending.txt must fail
//     (at least one record): one that passes fails the test with "now
//     passes: remove from pending.txt", so the list only shrinks toward
//     what tupled cannot do yet and no test is left skipped. A file that
//     is listed but missing, or a listing without a reason, fails too.
//   - -rewrite keeps every comment, blank line, directive and the SQL
//     text as written; it replaces only the expected part of each record
//     (ok/error SQLSTATE, the result block), and keeps rowsort results
//     sorted.
package sqllogic
