package pgwire

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Advisory locks through a real client: pg_advisory_lock returns void (an
// empty value), a session lock outlives its transaction and is released
// when the connection closes, and unlocking a lock not held sends
// PostgreSQL's WARNING.
func TestAdvisoryLocksOverTheWire(t *testing.T) {
	ts := startServer(t, nil)
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(ts.connString(""))
	if err != nil {
		t.Fatal(err)
	}
	notices := make(chan *pgconn.Notice, 4)
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices <- n }
	c1, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c2 := ts.connect(t)

	var void string
	if err := c1.QueryRow(ctx, "SELECT pg_advisory_lock($1)::text", int64(42)).Scan(&void); err != nil || void != "" {
		t.Fatalf("pg_advisory_lock: %q %v", void, err)
	}
	try := func() bool {
		var ok bool
		if err := c2.QueryRow(ctx, "SELECT pg_try_advisory_lock(42)").Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if try() {
		t.Fatal("c2 got a lock c1 holds")
	}
	// parameters take the overload's types: bigint, or integer pairs
	var pairOK bool
	if err := c2.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1, $2)", 0, 42).Scan(&pairOK); err != nil || !pairOK {
		t.Fatalf("the pair (0, 42) is another lock: %v %v", pairOK, err)
	}
	var ok bool
	if err := c1.QueryRow(ctx, "SELECT pg_advisory_unlock_shared(42)").Scan(&ok); err != nil || ok {
		t.Fatalf("unlock_shared of an exclusive lock: %v %v", ok, err)
	}
	select {
	case n := <-notices:
		if n.Severity != "WARNING" || n.Code != "01000" || n.Message != "you don't own a lock of type ShareLock" {
			t.Fatalf("notice %+v", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no WARNING")
	}
	if err := c1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The server ends the session when it sees the connection closed.
	deadline := time.Now().Add(10 * time.Second)
	for !try() {
		if time.Now().After(deadline) {
			t.Fatal("the lock outlived its connection")
		}
		time.Sleep(time.Millisecond)
	}
}
