// Package pgwire serves the PostgreSQL frontend/backend protocol (v3.0) over
// tupled, with github.com/jackc/pgx/v5/pgproto3 as the message codec and
// package sqlfe for everything SQL.
//
// Callers: cmd/tupled (the serve command) and tests.
//
// Invariants:
//   - One goroutine per connection reads its messages and runs its
//     statements, in order; a statement runs under a context that a
//     CancelRequest (arriving on another connection, matched by pid and
//     secret key), Shutdown, or the client-connection check (the client
//     went away) cancels — the engine then ends the wait with 57014.
//   - Startup: SSLRequest/GSSENCRequest are answered 'N'; authentication
//     is trust, or SCRAM-SHA-256 when a password is configured; then the
//     ParameterStatus set clients expect, BackendKeyData, ReadyForQuery.
//     Beyond MaxConns sessions a client gets FATAL 53300.
//   - Extended protocol: after an error the ErrorResponse is flushed at once
//     and every message up to Sync is discarded; Sync ends the implicit
//     transaction and sends ReadyForQuery with the true status (I/T/E).
//   - A message body is bounded by MaxMessageSize; results are built in
//     memory per statement (a huge SELECT costs its size).
//   - Shutdown stops accepting, cancels running statements, sends FATAL
//     57P01 to every session, rolls back their transactions and waits for
//     the sessions to end; the caller then closes the DB (a checkpoint).
package pgwire
