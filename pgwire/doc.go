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
//   - Startup: SSLRequest/GSSENCRequest are answered 'N' (or 'S' with TLS);
//     authentication is trust, or SCRAM-SHA-256 when a password is
//     configured; then the ParameterStatus set clients expect,
//     BackendKeyData, ReadyForQuery. The startup phase (TLS handshake
//     included) must end within AuthTimeout; at most MaxStartupConns
//     connections are in it at once (beyond: FATAL 53300 at accept).
//     Beyond MaxConns sessions a client gets FATAL 53300.
//   - Protocol 3.0 only, as PostgreSQL 15: 3.x minors and _pq_ options get
//     NegotiateProtocolVersion, other majors FATAL 0A000 (1.x/2.x in the
//     old error format). The startup options (-c name=value, --name=value)
//     and parameters are applied as SET after AuthenticationOk; a refused
//     value is FATAL with SET's SQLSTATE.
//   - Every message is bounded on its length word before its body is read
//     (proto.go): startup packet 10000 bytes, authentication message 65535,
//     Query/Parse/Bind/FunctionCall/CopyData MaxMessageSize, the others
//     10000. A bad length or unknown type is FATAL 08P01 (the message
//     boundaries are lost); a malformed body is ERROR 08P01 and the session
//     goes on. A connection keeps no buffer above 8 KiB between messages.
//   - A panic in a connection's goroutine ends that connection only: FATAL
//     XX000, the stack in the log, its transaction rolled back.
//   - Accept errors that can pass (EMFILE, ENFILE, ...) are retried after a
//     back-off (5ms doubling to 1s); Serve does not return for them.
//   - Extended protocol: after an error the ErrorResponse is flushed at once
//     and every message up to Sync is discarded; Sync ends the implicit
//     transaction and sends ReadyForQuery with the true status (I/T/E).
//     Execute with a row limit ends a full batch with PortalSuspended; the
//     last batch's tag counts its own rows, as PostgreSQL's.
//   - LISTEN's notifications (sqlfe/notify.go) go out as
//     NotificationResponse between transactions: before a ReadyForQuery
//     outside a transaction block, and while the session is idle, from a
//     goroutine of the connection (notifier) that writes only then; wmu
//     orders its writes and the message loop's. DISCARD ALL drops the
//     connection's prepared statements and portals.
//   - COPY (copy.go): FROM STDIN answers CopyInResponse and hands each
//     CopyData to sqlfe as it arrives (rows are inserted line by line,
//     nothing buffered beyond the line being read) until CopyDone ("COPY
//     n") or CopyFail (57014); Flush and Sync in between are ignored, any
//     other message is 08P01, in the simple and the extended protocol
//     alike. TO STDOUT sends CopyOutResponse, one CopyData per row,
//     CopyDone. A client gone mid-COPY rolls it back and ends the session.
//   - Results are built in memory per statement (a huge SELECT costs its
//     size) and written out in 64 KiB pieces; a result is at most 1664
//     columns wide (54011), so a field count never overflows its 16 bits.
//   - Shutdown stops accepting, cancels running statements, sends FATAL
//     57P01 to every session, rolls back their transactions and waits for
//     the sessions to end; the caller then closes the DB (a checkpoint).
package pgwire
