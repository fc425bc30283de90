package pgwire

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

// TestStartupParameterNames: a startup parameter (or an options -c switch)
// is refused as PostgreSQL 15.18 refuses it — AuthenticationOk, then FATAL
// with its SQLSTATE and the end of the connection — while the server goes
// on serving: an unknown name is 42704, a parameter that cannot change in
// a session 55P02, an invalid value 22023. A custom placeholder is applied;
// PostgreSQL's parameters tupled does not implement are ignored.
func TestStartupParameterNames(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t) // a session that must outlive the refused ones
	for _, tc := range []struct {
		params []string
		want   string
	}{
		{[]string{"foo", "bar"}, `FATAL 42704 unrecognized configuration parameter "foo"`},
		{[]string{"options", "-c foo=bar"}, `FATAL 42704 unrecognized configuration parameter "foo"`},
		{[]string{"Foo", "bar"}, `FATAL 42704 unrecognized configuration parameter "Foo"`},
		{[]string{"max_connections", "10"}, `FATAL 55P02 parameter "max_connections" cannot be changed without restarting the server`},
		{[]string{"options", "-c max_connections=10"}, `FATAL 55P02 parameter "max_connections" cannot be changed without restarting the server`},
		{[]string{"log_timezone", "UTC"}, `FATAL 55P02 parameter "log_timezone" cannot be changed now`},
		{[]string{"block_size", "10"}, `FATAL 55P02 parameter "block_size" cannot be changed`},
		{[]string{"server_version", "1"}, `FATAL 55P02 parameter "server_version" cannot be changed`},
		{[]string{"statement_timeout", "abc"}, `FATAL 22023 invalid value for parameter "statement_timeout": "abc"`},
		{[]string{"options", "-c statement_timeout=abc"}, `FATAL 22023 invalid value for parameter "statement_timeout": "abc"`},
		{[]string{"my app.x", "1"}, `FATAL 42602 invalid configuration parameter name "my app.x"`},
	} {
		rc := ts.dialRaw(t)
		rc.write(startupBytes(protocol30, append([]string{"user", "raw"}, tc.params...)...))
		expect(t, tc.want, rc.recv(nil), "AuthenticationOk", tc.want, "EOF")
		rc.nc.Close()
	}
	// accepted: a placeholder (applied), a backend-only and an unimplemented
	// parameter (ignored), and the ones tupled applies
	ctx := context.Background()
	c2, err := pgx.Connect(ctx, ts.connString(`myapp.x=1 log_connections=on enable_hashjoin=off search_path=foo options='-c other.y=2'`))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close(ctx)
	for name, want := range map[string]string{"myapp.x": "1", "other.y": "2", "search_path": "foo", "enable_hashjoin": "on"} {
		var got string
		if err := c2.QueryRow(ctx, "SHOW "+name).Scan(&got); err != nil || got != want {
			t.Errorf("SHOW %s = %q (%v), want %q", name, got, err, want)
		}
	}
	// the same names at run time
	rc := ts.dialRaw(t)
	rc.start()
	for q, want := range map[string]string{
		"SET foo = 1":              `ERROR 42704 unrecognized configuration parameter "foo"`,
		"SHOW foo":                 `ERROR 42704 unrecognized configuration parameter "foo"`,
		"SET max_connections = 10": `ERROR 55P02 parameter "max_connections" cannot be changed without restarting the server`,
		"SET enable_hashjoin = on": `ERROR 0A000 configuration parameter "enable_hashjoin" is not supported`,
	} {
		rc.send(&pgproto3.Query{String: q})
		expect(t, q, rc.recv(nil), want, "ReadyForQuery")
	}
	rc.send(&pgproto3.Query{String: "SET myapp.x = 'a'; SHOW myapp.x"})
	expect(t, "a placeholder", rc.recv(nil), "C SET", "RowDescription", "D a", "C SHOW", "ReadyForQuery")
	// the server kept serving throughout
	var one int
	if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("the first session: %v", err)
	}
	rc.nc.Close()
	waitFor(t, "the refused sessions to end", func() bool { return ts.srv.Sessions() == 2 })
}
