package pgwire

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestListenNotify: notifications through pgx as PostgreSQL sends them —
// to an idle listener as they are committed (WaitForNotification), with
// the sender's pid; never for a rolled-back NOTIFY or one rolled back to a
// savepoint; once for duplicates in one transaction; to a listener inside
// a transaction block only after that block ends; after UNLISTEN or
// DISCARD ALL, none; to the sender itself too.
func TestListenNotify(t *testing.T) {
	ts := startServer(t, nil)
	ctx := context.Background()
	l, s := ts.connect(t), ts.connect(t)
	exec := func(c *pgx.Conn, sql string) {
		t.Helper()
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	wait := func(c *pgx.Conn) (*pgconn.Notification, error) {
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return c.WaitForNotification(wctx)
	}
	expect := func(c *pgx.Conn, channel, payload string, pid uint32) {
		t.Helper()
		n, err := wait(c)
		if err != nil {
			t.Fatalf("waiting for %s/%s: %v", channel, payload, err)
		}
		if n.Channel != channel || n.Payload != payload || n.PID != pid {
			t.Fatalf("got %+v, want %s/%s from %d", n, channel, payload, pid)
		}
	}
	none := func(c *pgx.Conn) {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		if n, err := c.WaitForNotification(wctx); err == nil {
			t.Fatalf("unexpected notification %+v", n)
		}
	}
	sPID := s.PgConn().PID()
	exec(l, "LISTEN jobs")

	// an idle listener gets it as it commits
	exec(s, "NOTIFY jobs, 'one'")
	expect(l, "jobs", "one", sPID)

	// rolled back, rolled back to a savepoint, folded duplicates
	exec(s, "BEGIN; NOTIFY jobs, 'never'; ROLLBACK")
	exec(s, "BEGIN; NOTIFY jobs, 'kept'; SAVEPOINT a; NOTIFY jobs, 'undone'; ROLLBACK TO a; NOTIFY jobs, 'kept'; SELECT pg_notify('jobs', 'two'); COMMIT")
	expect(l, "jobs", "kept", sPID)
	expect(l, "jobs", "two", sPID)
	none(l)

	// a listener in a transaction block hears it when the block ends
	exec(l, "BEGIN")
	exec(s, "NOTIFY jobs, 'later'")
	none(l)
	exec(l, "COMMIT")
	expect(l, "jobs", "later", sPID)

	// LISTEN in a rolled-back transaction does nothing; the sender hears
	// its own channel
	exec(s, "BEGIN; LISTEN other; ROLLBACK")
	exec(l, "NOTIFY other, 'x'")
	none(s)
	exec(s, "LISTEN other")
	exec(s, "NOTIFY other, 'self'")
	expect(s, "other", "self", sPID)

	// UNLISTEN and DISCARD ALL stop them
	exec(l, "UNLISTEN jobs")
	exec(s, "NOTIFY jobs, 'unheard'")
	none(l)
	exec(s, "DISCARD ALL")
	exec(l, "NOTIFY other, 'unheard'")
	none(s)
}

// TestDiscardAllDropsPreparedStatements: DISCARD ALL drops the protocol's
// prepared statements too, as PostgreSQL's DEALLOCATE ALL does: executing
// one afterwards is 26000; and it is 25001 inside a transaction block.
func TestDiscardAllDropsPreparedStatements(t *testing.T) {
	ts := startServer(t, nil)
	ctx := context.Background()
	c := ts.connect(t)
	pc := c.PgConn()
	if _, err := pc.Prepare(ctx, "s1", "SELECT 1", nil); err != nil {
		t.Fatal(err)
	}
	if err := pc.ExecPrepared(ctx, "s1", nil, nil, nil).Read().Err; err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "DISCARD ALL"); err != nil {
		t.Fatal(err)
	}
	pgErr(t, pc.ExecPrepared(ctx, "s1", nil, nil, nil).Read().Err, "26000")
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(ctx, "DISCARD ALL")
	pgErr(t, err, "25001")
	_ = tx.Rollback(ctx)
}
