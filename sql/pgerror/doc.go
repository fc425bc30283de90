// Package pgerror is the SQL layer's error: a PostgreSQL ErrorResponse or
// NoticeResponse (SQLSTATE, message, DETAIL, HINT, position, context) and
// the SQLSTATEs the layer produces itself.
//
// Who calls it: every sql/ package and sqlfe build their errors with
// Errorf and NotSupported; pgwire sends an *Error as it is. sqlfe.ToError
// turns any other error (the engine's, a context's) into one.
//
// Invariants:
//   - A Code is a PostgreSQL 15 SQLSTATE for the same condition, and the
//     Message is PostgreSQL's wording, so clients and tests can match on
//     either.
//   - Position is 1-based in characters of the query text, 0 for none; At
//     never overwrites one set nearer to the cause.
//   - Nothing here imports the engine or the parser: it sits below every
//     other sql/ package.
//
// Files: errors.go.
package pgerror
