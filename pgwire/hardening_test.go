package pgwire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/pgerror"
)

// rawClient is a frontend speaking the protocol by hand, for what drivers
// never send.
type rawClient struct {
	t  testing.TB
	nc net.Conn
	fe *pgproto3.Frontend
}

func (ts *testServer) dialRaw(t testing.TB) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second)) // a guard, not a wait
	return &rawClient{t: t, nc: nc, fe: pgproto3.NewFrontend(nc, nc)}
}

// startupBytes is a startup packet of protocol version ver with params
// (name, value, name, value, ...).
func startupBytes(ver uint32, params ...string) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint32(b[4:], ver)
	for _, p := range params {
		b = append(b, p...)
		b = append(b, 0)
	}
	b = append(b, 0)
	binary.BigEndian.PutUint32(b, uint32(len(b)))
	return b
}

func (rc *rawClient) write(b []byte) {
	rc.t.Helper()
	if _, err := rc.nc.Write(b); err != nil {
		rc.t.Fatal(err)
	}
}

func (rc *rawClient) send(msgs ...pgproto3.FrontendMessage) {
	rc.t.Helper()
	for _, m := range msgs {
		rc.fe.Send(m)
	}
	if err := rc.fe.Flush(); err != nil {
		rc.t.Fatal(err)
	}
}

// recv reads messages up to and including one for which stop is true (nil:
// ReadyForQuery), or the end of the connection; it returns them, each as
// its type's name or, for some, with what the test looks at.
func (rc *rawClient) recv(stop func(pgproto3.BackendMessage) bool) []string {
	rc.t.Helper()
	if stop == nil {
		stop = func(m pgproto3.BackendMessage) bool { _, ok := m.(*pgproto3.ReadyForQuery); return ok }
	}
	var out []string
	for {
		m, err := rc.fe.Receive()
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
				return append(out, "EOF")
			}
			rc.t.Fatalf("after %v: %v", out, err)
		}
		switch m := m.(type) {
		case *pgproto3.ErrorResponse:
			out = append(out, fmt.Sprintf("%s %s %s", m.Severity, m.Code, m.Message))
		case *pgproto3.CommandComplete:
			out = append(out, "C "+string(m.CommandTag))
		case *pgproto3.DataRow:
			out = append(out, "D "+string(m.Values[0]))
		case *pgproto3.NegotiateProtocolVersion:
			out = append(out, fmt.Sprintf("NPV %d %v", m.NewestMinorProtocol, m.UnrecognizedOptions))
		case *pgproto3.ParameterStatus, *pgproto3.BackendKeyData:
			continue
		default:
			out = append(out, strings.TrimPrefix(fmt.Sprintf("%T", m), "*pgproto3."))
		}
		if stop(m) {
			return out
		}
	}
}

// start sends a 3.0 startup packet and reads up to ReadyForQuery.
func (rc *rawClient) start() {
	rc.t.Helper()
	rc.write(startupBytes(protocol30, "user", "raw"))
	if got := strings.Join(rc.recv(nil), ","); got != "AuthenticationOk,ReadyForQuery" {
		rc.t.Fatalf("startup: %s", got)
	}
}

func expect(t testing.TB, what string, got []string, want ...string) {
	t.Helper()
	if g, w := strings.Join(got, " | "), strings.Join(want, " | "); g != w {
		t.Fatalf("%s:\n got  %s\n want %s", what, g, w)
	}
}

// TestPanicInConnection: a panic in a connection's goroutine ends that
// connection with FATAL XX000 and rolls back its transaction (its row lock
// is released); the server and the other sessions go on.
func TestPanicInConnection(t *testing.T) {
	testHookMessage = func(c *conn, msg pgproto3.FrontendMessage) {
		if q, ok := msg.(*pgproto3.Query); ok && q.String == "SELECT 'panic'" {
			panic("test hook: a bug")
		}
	}
	t.Cleanup(func() { testHookMessage = nil })
	ts := startServer(t, nil)
	c1, c2 := ts.connect(t), ts.connect(t)
	ctx := context.Background()
	lockRow(t, c1, 2)
	exec(t, c1, "UPDATE t SET v = 100 WHERE k = 2")
	_, err := c1.Exec(ctx, "SELECT 'panic'")
	pe := pgErr(t, err, "XX000")
	if pe.Severity != "FATAL" || !strings.Contains(pe.Detail, "test hook: a bug") {
		t.Fatalf("panic reported as %s %q %q", pe.Severity, pe.Message, pe.Detail)
	}
	if _, err := c1.Exec(ctx, "SELECT 1"); err == nil {
		t.Fatal("the panicked session goes on")
	}
	waitFor(t, "the session to end", func() bool { return ts.srv.Sessions() == 1 })
	if locks := ts.db.Locks(); len(locks) != 0 {
		t.Fatalf("locks after the panic: %+v", locks)
	}
	// the transaction was rolled back: the row is free and unchanged
	var v int
	if err := c2.QueryRow(ctx, "SELECT v FROM t WHERE k = 2 FOR UPDATE NOWAIT").Scan(&v); err != nil || v != 2 {
		t.Fatalf("row 2 after the panic: %d %v", v, err)
	}
	c3 := ts.connect(t)
	exec(t, c3, "SELECT 1")
	if got := testutil.ToFloat64(ts.srv.cfg.Metrics.panics); got != 1 {
		t.Fatalf("panics metric %v", got)
	}
}

// emfileListener fails its first n Accepts with EMFILE, as accept(2) does
// when the process has no file descriptor left.
type emfileListener struct {
	net.Listener
	errno syscall.Errno
	n     atomic.Int32
}

func (l *emfileListener) Accept() (net.Conn, error) {
	if l.n.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.Addr(), Err: os.NewSyscallError("accept4", l.errno)}
	}
	return l.Listener.Accept()
}

// TestAcceptEMFILE: accept failing with EMFILE (or ENFILE) does not end
// Serve: it backs off, retries, and then serves.
func TestAcceptEMFILE(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE} {
		t.Run(errno.Error(), func(t *testing.T) {
			var retries atomic.Int32
			testHookAcceptRetry = func(err error) {
				if !errors.Is(err, errno) {
					t.Errorf("retried %v", err)
				}
				retries.Add(1)
			}
			t.Cleanup(func() { testHookAcceptRetry = nil })
			ts := startServerLn(t, 100*time.Millisecond, func(ln net.Listener) net.Listener {
				l := &emfileListener{Listener: ln, errno: errno}
				l.n.Store(4)
				return l
			}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a guard
			defer cancel()
			c, err := pgx.Connect(ctx, ts.connString(""))
			if err != nil {
				t.Fatalf("connect after EMFILE: %v", err)
			}
			defer c.Close(ctx)
			exec(t, c, "SELECT 1")
			if got := retries.Load(); got != 4 {
				t.Fatalf("%d retries, want 4", got)
			}
			if got := testutil.ToFloat64(ts.srv.cfg.Metrics.acceptErrs); got != 4 {
				t.Fatalf("accept errors metric %v", got)
			}
			select {
			case err := <-ts.done:
				t.Fatalf("Serve returned %v", err)
			default:
			}
		})
	}
}

// TestStartupLimits: connections that never authenticate hold a startup
// slot, at most MaxStartupConns of them; beyond, 53300 at once; and they
// are closed after AuthTimeout.
func TestStartupLimits(t *testing.T) {
	t.Run("cap", func(t *testing.T) {
		ts := startServer(t, func(c *Config) { c.MaxStartupConns = 2 })
		idle := []*rawClient{ts.dialRaw(t), ts.dialRaw(t)}
		waitFor(t, "2 connections in startup", func() bool { return ts.srv.starting.Load() == 2 })
		_, err := pgx.Connect(context.Background(), ts.connString(""))
		if pe := pgErr(t, err, "53300"); pe.Message != "sorry, too many clients already" {
			t.Fatal(pe.Message)
		}
		// one past the cap is refused; one at the cap (after a close) is served
		idle[0].nc.Close()
		waitFor(t, "a startup slot", func() bool { return ts.srv.starting.Load() == 1 })
		exec(t, ts.connect(t), "SELECT 1")
		idle[1].write(startupBytes(protocol30, "user", "late"))
		expect(t, "the idle connection's startup", idle[1].recv(nil), "AuthenticationOk", "ReadyForQuery")
		if n := ts.srv.starting.Load(); n != 0 {
			t.Fatalf("%d connections in startup", n)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		ts := startServer(t, func(c *Config) { c.AuthTimeout = 50 * time.Millisecond })
		silent := ts.dialRaw(t)
		partial := ts.dialRaw(t)
		partial.write(startupBytes(protocol30, "user", "slow")[:6])
		for _, rc := range []*rawClient{silent, partial} {
			// closed without a message, as PostgreSQL's authentication_timeout
			if b, err := io.ReadAll(rc.nc); err != nil || len(b) != 0 {
				t.Fatalf("after the timeout: %q %v", b, err)
			}
		}
		waitFor(t, "no connection in startup", func() bool { return ts.srv.starting.Load() == 0 })
		exec(t, ts.connect(t), "SELECT 1")
	})
}

// TestAuthMessageLimit: before the password is checked, an authentication
// message is bounded by PostgreSQL's PG_MAX_AUTH_TOKEN_LENGTH (65535 bytes,
// length word included), checked on the length word: a header announcing
// more is refused at once, its body never awaited nor allocated.
func TestAuthMessageLimit(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.Password = "s3cret" })
	begin := func() *rawClient {
		rc := ts.dialRaw(t)
		rc.write(startupBytes(protocol30, "user", "intruder"))
		expect(t, "auth request", rc.recv(func(pgproto3.BackendMessage) bool { return true }), "AuthenticationSASL")
		return rc
	}
	header := func(n int) []byte { // a 'p' message of length word n
		return []byte{'p', byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
	}
	// one past the limit: the header alone gets 08P01 and the close
	const burst = 50
	var wg sync.WaitGroup
	for range burst {
		rc := begin()
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc.write(header(maxAuthMessageLen + 1))
			expect(t, "an over-long SASL message", rc.recv(func(pgproto3.BackendMessage) bool { return false }), "FATAL 08P01 invalid message length", "EOF")
		}()
	}
	// a 16 MiB one, body never sent: refused as well
	rc := begin()
	rc.write(header(16 << 20))
	expect(t, "a 16 MiB SASL header", rc.recv(func(pgproto3.BackendMessage) bool { return false }), "FATAL 08P01 invalid message length", "EOF")
	wg.Wait()
	// at the limit: read and judged (a malformed SCRAM message: 28P01)
	rc = begin()
	init := &pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256"}
	fixed := 4 + len(init.AuthMechanism) + 1 + 4
	init.Data = bytes.Repeat([]byte("x"), maxAuthMessageLen-fixed)
	b, _ := init.Encode(nil)
	if len(b) != 1+maxAuthMessageLen {
		t.Fatalf("message of %d bytes", len(b))
	}
	rc.write(b)
	expect(t, "a SASL message at the limit", rc.recv(func(pgproto3.BackendMessage) bool { return false }), `FATAL 28P01 password authentication failed for user "intruder"`, "EOF")
	waitFor(t, "no connection in startup", func() bool { return ts.srv.starting.Load() == 0 })
	c, err := pgx.Connect(context.Background(), ts.connString("password=s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	exec(t, c, "SELECT 1")
}

// TestBuffersReleased: a connection keeps no input or output buffer above
// keptBodyBuf after a large message or a large result.
func TestBuffersReleased(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	in := frontendBytes(&pgproto3.Query{String: big}, &pgproto3.Sync{})
	var out bytes.Buffer
	b := newBackend(bytes.NewReader(in), &out, 16<<20)
	b.auth = false
	m, err := b.Receive()
	if err != nil || len(m.(*pgproto3.Query).String) != 1<<20 {
		t.Fatalf("large query: %v", err)
	}
	if _, err := b.Receive(); err != nil {
		t.Fatal(err)
	}
	if cap(b.body) > keptBodyBuf {
		t.Fatalf("input buffer of %d bytes kept", cap(b.body))
	}
	b.Send(&pgproto3.DataRow{Values: [][]byte{[]byte(big)}})
	b.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if cap(b.wbuf) > keptBodyBuf {
		t.Fatalf("output buffer of %d bytes kept", cap(b.wbuf))
	}
	if out.Len() != 1+4+2+4+(1<<20)+6 {
		t.Fatalf("%d bytes written", out.Len())
	}
}

// TestProtocolVersions: PostgreSQL 15's answers to other protocol versions
// and to _pq_ options.
func TestProtocolVersions(t *testing.T) {
	ts := startServer(t, nil)
	for _, v := range []uint32{2 << 16, 1 << 16} {
		rc := ts.dialRaw(t)
		rc.write(startupBytes(v, "user", "old"))
		b, _ := io.ReadAll(rc.nc)
		want := fmt.Sprintf("EFATAL:  unsupported frontend protocol %d.0: server supports 3.0 to 3.0\n\x00", v>>16)
		if string(b) != want {
			t.Fatalf("protocol %d.0: %q", v>>16, b)
		}
	}
	rc := ts.dialRaw(t)
	rc.write(startupBytes(4<<16, "user", "new"))
	expect(t, "protocol 4.0", rc.recv(nil), "FATAL 0A000 unsupported frontend protocol 4.0: server supports 3.0 to 3.0", "EOF")
	for _, tc := range []struct {
		ver    uint32
		params []string
		want   string
	}{
		{3<<16 | 1, nil, "NPV 0 []"},
		{3<<16 | 2, []string{"_pq_.foo", "x"}, "NPV 0 [_pq_.foo]"},
		{protocol30, []string{"_pq_.a", "1", "_pq_.b", "2"}, "NPV 0 [_pq_.a _pq_.b]"},
	} {
		rc := ts.dialRaw(t)
		rc.write(startupBytes(tc.ver, append([]string{"user", "u"}, tc.params...)...))
		expect(t, fmt.Sprintf("protocol %d.%d %v", tc.ver>>16, tc.ver&0xffff, tc.params), rc.recv(nil), tc.want, "AuthenticationOk", "ReadyForQuery")
		rc.send(&pgproto3.Query{String: "SELECT 1"})
		expect(t, "the session", rc.recv(nil), "RowDescription", "D 1", "C SELECT 1", "ReadyForQuery")
	}
	rc = ts.dialRaw(t)
	rc.write(startupBytes(protocol30, "user", "u", "application_name", "plain"))
	expect(t, "3.0 without _pq_", rc.recv(nil), "AuthenticationOk", "ReadyForQuery")
}

// TestStartupPacketErrors: a malformed startup packet gets FATAL 08P01.
func TestStartupPacketErrors(t *testing.T) {
	ts := startServer(t, nil)
	good := startupBytes(protocol30, "user", "u")
	long := startupBytes(protocol30, "user", "u", "application_name", strings.Repeat("a", maxStartupPacketLen))
	atLimit := startupBytes(protocol30, "user", "u", "application_name", "")
	atLimit = startupBytes(protocol30, "user", "u", "application_name", strings.Repeat("a", maxStartupPacketLen+4-len(atLimit)))
	for _, tc := range []struct {
		name string
		b    []byte
		want []string
	}{
		{"length 3", []byte{0, 0, 0, 3}, []string{"FATAL 08P01 invalid length of startup packet", "EOF"}},
		{"length 7", []byte{0, 0, 0, 7, 0, 3, 0}, []string{"FATAL 08P01 invalid length of startup packet", "EOF"}},
		{"one past 10000", long, []string{"FATAL 08P01 invalid length of startup packet", "EOF"}},
		{"at 10000", atLimit, []string{"AuthenticationOk", "ReadyForQuery"}},
		{"no terminator", good[:len(good)-1], []string{"FATAL 08P01 incomplete message from client", "EOF"}},
		{"layout", []byte{0, 0, 0, 10, 0, 3, 0, 0, 'u', 0}, []string{"FATAL 08P01 invalid startup packet layout: expected terminator as last byte", "EOF"}},
		{"no user", startupBytes(protocol30, "database", "d"), []string{"FATAL 28000 no PostgreSQL user name specified in startup packet", "EOF"}},
		{"cancel length", []byte{0, 0, 0, 12, 4, 0xd2, 0x16, 0x2e, 1, 2, 3, 4}, []string{"FATAL 08P01 invalid length of cancel request packet", "EOF"}},
	} {
		rc := ts.dialRaw(t)
		rc.write(tc.b)
		if tc.name == "no terminator" {
			rc.nc.(*net.TCPConn).CloseWrite()
		}
		expect(t, tc.name, rc.recv(nil), tc.want...)
	}
	if len(atLimit)-4 != maxStartupPacketLen {
		t.Fatalf("the at-limit packet has %d bytes", len(atLimit)-4)
	}
}

// TestMalformedMessages: what PostgreSQL does with messages that break the
// protocol: FATAL 08P01 when the message boundaries are lost (an unknown
// type, a bad length, a message cut short), ERROR 08P01 and the session
// goes on when only a body is malformed.
func TestMalformedMessages(t *testing.T) {
	ts := startServer(t, nil)
	for _, tc := range []struct {
		name string
		b    []byte
		want []string
	}{
		{"unknown type", []byte{'Z', 0, 0, 0, 4}, []string{"FATAL 08P01 invalid frontend message type 90", "EOF"}},
		{"length 3", []byte{'Q', 0, 0, 0, 3}, []string{"FATAL 08P01 invalid message length", "EOF"}},
		{"negative length", []byte{'Q', 0x80, 0, 0, 0}, []string{"FATAL 08P01 invalid message length", "EOF"}},
		{"Sync past 10000", []byte{'S', 0, 0, 0x30, 0}, []string{"FATAL 08P01 invalid message length", "EOF"}},
		{"Query past MaxMessageSize", []byte{'Q', 0x01, 0x00, 0x00, 0x05}, []string{"FATAL 08P01 invalid message length", "EOF"}},
		{"Sync with a body", []byte{'S', 0, 0, 0, 6, 1, 1}, []string{"ERROR 08P01 invalid message format", "ReadyForQuery"}},
		{"Query without NUL", []byte{'Q', 0, 0, 0, 6, 'a', 'b'}, []string{"ERROR 08P01 invalid message format", "ReadyForQuery"}},
		{"Bind cut short", append([]byte{'B', 0, 0, 0, 6, 0, 0}, frontendBytes(&pgproto3.Sync{})...), []string{"ERROR 08P01 invalid message format", "ReadyForQuery"}},
		{"FunctionCall", frontendBytes(&pgproto3.FunctionCall{Function: 1}), []string{"ERROR 0A000 fastpath function calls are not supported", "ReadyForQuery"}},
		{"CopyData outside COPY", frontendBytes(&pgproto3.CopyData{Data: []byte("x")}, &pgproto3.Sync{}), []string{"ReadyForQuery"}},
	} {
		rc := ts.dialRaw(t)
		rc.start()
		rc.write(tc.b)
		got := rc.recv(nil)
		expect(t, tc.name, got, tc.want...)
		if got[len(got)-1] == "ReadyForQuery" {
			rc.send(&pgproto3.Query{String: "SELECT 1"})
			expect(t, tc.name+": the session after", rc.recv(nil), "RowDescription", "D 1", "C SELECT 1", "ReadyForQuery")
		}
		rc.nc.Close()
	}
	// a message cut short by a half-close
	rc := ts.dialRaw(t)
	rc.start()
	rc.write([]byte{'Q', 0, 0, 0, 100, 'S', 'E', 'L'})
	rc.nc.(*net.TCPConn).CloseWrite()
	expect(t, "a message cut short", rc.recv(nil), "FATAL 08P01 incomplete message from client", "EOF")
	waitFor(t, "the sessions to end", func() bool { return ts.srv.Sessions() == 0 })
}

// TestStartupOptions: the startup "options" (-c name=value, --name=value)
// and the other startup parameters are applied as SET; a value SET refuses
// is FATAL with SET's SQLSTATE, after AuthenticationOk, as PostgreSQL does.
func TestStartupOptions(t *testing.T) {
	ts := startServer(t, nil)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, ts.connString(`options='-c lock_timeout=50ms --statement-timeout=2s -capplication_name=x\\ y'`))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for name, want := range map[string]string{"lock_timeout": "50ms", "statement_timeout": "2s", "application_name": "x y"} {
		var got string
		if err := c.QueryRow(ctx, "SHOW "+name).Scan(&got); err != nil || got != want {
			t.Fatalf("%s = %q (%v), want %q", name, got, err, want)
		}
	}
	if got := c.PgConn().ParameterStatus("application_name"); got != "x y" {
		t.Errorf("application_name reported as %q", got)
	}
	// the lock timeout is in force: a locked row fails with 55P03
	c2 := ts.connect(t)
	lockRow(t, c2, 1)
	_, err = c.Exec(ctx, "SELECT * FROM t WHERE k = 1 FOR UPDATE")
	pgErr(t, err, "55P03")
	// a startup parameter given directly wins over options, as in PostgreSQL
	c3, err := pgx.Connect(ctx, ts.connString(`options='-c lock_timeout=1s' lock_timeout=3s`))
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close(ctx)
	var lt string
	if err := c3.QueryRow(ctx, "SHOW lock_timeout").Scan(&lt); err != nil || lt != "3s" {
		t.Fatalf("lock_timeout %q %v", lt, err)
	}
	for _, tc := range []struct{ params, code, msg string }{
		{`options='-c lock_timeout=abc'`, "22023", ""},
		{`lock_timeout=abc`, "22023", ""},
		{`options='-c statement_timeout=-5'`, "22023", ""},
		{`options='-X'`, "42601", "invalid command-line argument for server process: -X"},
		{`options='-c lock_timeout'`, "42601", "-c lock_timeout requires a value"},
		{`options='-c'`, "42601", "-c requires a value"},
	} {
		_, err := pgx.Connect(ctx, ts.connString(tc.params))
		pe := pgErr(t, err, tc.code)
		if pe.Severity != "FATAL" || (tc.msg != "" && pe.Message != tc.msg) {
			t.Errorf("%s: %s %s", tc.params, pe.Severity, pe.Message)
		}
	}
	// the refused ones left nothing behind
	waitFor(t, "sessions", func() bool { return ts.srv.Sessions() == 3 })
}

// TestPortalSuspended: Execute with a row limit sends PortalSuspended after
// a full batch, and the batch that ends the portal reports its own rows,
// as PostgreSQL 15 does ("SELECT 2" for the last 2 of 10 rows, "SELECT 0"
// when the rows ran out at a batch's end).
func TestPortalSuspended(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	exec(t, c, "CREATE TABLE t (k int PRIMARY KEY, v int)")
	for k := 1; k <= 10; k++ {
		exec(t, c, "INSERT INTO t VALUES ($1, $1)", k)
	}
	rc := ts.dialRaw(t)
	rc.start()
	for _, tc := range []struct {
		n    int
		want []string
	}{
		{10, []string{"ParseComplete", "BindComplete", "D 1", "D 2", "D 3", "D 4", "PortalSuspended", "D 5", "D 6", "D 7", "D 8", "PortalSuspended", "D 9", "D 10", "C SELECT 2", "ReadyForQuery"}},
		{8, []string{"ParseComplete", "BindComplete", "D 1", "D 2", "D 3", "D 4", "PortalSuspended", "D 5", "D 6", "D 7", "D 8", "PortalSuspended", "C SELECT 0", "ReadyForQuery"}},
	} {
		rc.send(&pgproto3.Parse{Query: fmt.Sprintf("SELECT k FROM t WHERE k <= %d ORDER BY k", tc.n)}, &pgproto3.Bind{},
			&pgproto3.Execute{MaxRows: 4}, &pgproto3.Execute{MaxRows: 4}, &pgproto3.Execute{MaxRows: 4}, &pgproto3.Sync{})
		expect(t, fmt.Sprintf("%d rows by 4", tc.n), rc.recv(nil), tc.want...)
	}
	// a DML with RETURNING reports its own tag with the batch's count
	rc.send(&pgproto3.Parse{Query: "UPDATE t SET v = v + 1 WHERE k <= 3 RETURNING k"}, &pgproto3.Bind{},
		&pgproto3.Execute{MaxRows: 2}, &pgproto3.Execute{MaxRows: 2}, &pgproto3.Sync{})
	got := rc.recv(nil)
	expect(t, "UPDATE RETURNING by 2", got[len(got)-2:], "C UPDATE 1", "ReadyForQuery")
	// no limit: all rows, the full count
	rc.send(&pgproto3.Parse{Query: "SELECT k FROM t WHERE k <= 3 ORDER BY k"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	expect(t, "no limit", rc.recv(nil), "ParseComplete", "BindComplete", "D 1", "D 2", "D 3", "C SELECT 3", "ReadyForQuery")
}

// TestBindFormats: format codes other than 0 and 1 are refused as
// PostgreSQL 15 refuses them (22023 "unsupported format code"), parameter
// codes at Bind, result codes when the first row is sent; a result-format
// count that is neither 0, 1 nor the column count is 08P01 at Bind.
func TestBindFormats(t *testing.T) {
	ts := startServer(t, nil)
	rc := ts.dialRaw(t)
	rc.start()
	rc.send(&pgproto3.Parse{Query: "SELECT $1::int"}, &pgproto3.Bind{ParameterFormatCodes: []int16{7}, Parameters: [][]byte{[]byte("1")}}, &pgproto3.Sync{})
	expect(t, "parameter format 7", rc.recv(nil), "ParseComplete", "ERROR 22023 unsupported format code: 7", "ReadyForQuery")
	rc.send(&pgproto3.Parse{Query: "SELECT 1, 2"}, &pgproto3.Bind{ResultFormatCodes: []int16{7}}, &pgproto3.Execute{}, &pgproto3.Sync{})
	expect(t, "result format 7", rc.recv(nil), "ParseComplete", "BindComplete", "ERROR 22023 unsupported format code: 7", "ReadyForQuery")
	rc.send(&pgproto3.Parse{Query: "SELECT 1 WHERE false"}, &pgproto3.Bind{ResultFormatCodes: []int16{-1}}, &pgproto3.Execute{}, &pgproto3.Sync{})
	expect(t, "result format -1, no row", rc.recv(nil), "ParseComplete", "BindComplete", "C SELECT 0", "ReadyForQuery")
	rc.send(&pgproto3.Parse{Query: "SELECT 1, 2"}, &pgproto3.Bind{ResultFormatCodes: []int16{0, 0, 0}}, &pgproto3.Execute{}, &pgproto3.Sync{})
	expect(t, "3 result formats for 2 columns", rc.recv(nil), "ParseComplete", "ERROR 08P01 bind message has 3 result formats but query has 2 columns", "ReadyForQuery")
	rc.send(&pgproto3.Parse{Query: "SELECT 1, 2"}, &pgproto3.Bind{ResultFormatCodes: []int16{0, 1}}, &pgproto3.Execute{}, &pgproto3.Sync{})
	expect(t, "2 result formats for 2 columns", rc.recv(nil), "ParseComplete", "BindComplete", "D 1", "C SELECT 1", "ReadyForQuery")
	rc.send(&pgproto3.Parse{Query: "SET lock_timeout = 0"}, &pgproto3.Bind{ResultFormatCodes: []int16{0, 1}}, &pgproto3.Execute{}, &pgproto3.Sync{})
	expect(t, "result formats for no columns", rc.recv(nil), "ParseComplete", "BindComplete", "C SET", "ReadyForQuery")
}

// TestWideSelectList: a result is at most 1664 columns wide; a wider one
// is 54011 and the wire never writes a truncated column count (a select
// list of 65,536 items once hung the client).
func TestWideSelectList(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	ctx := context.Background()
	list := func(n int) string { return "SELECT " + strings.TrimSuffix(strings.Repeat("1,", n), ",") }
	rows, err := c.Query(ctx, list(maxTargetList), pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		if n := len(rows.RawValues()); n != maxTargetList {
			t.Fatalf("%d columns", n)
		}
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	for _, tc := range []struct {
		n     int
		modes []pgx.QueryExecMode
	}{
		{maxTargetList + 1, []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec}},
		{65536, []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol}},
	} {
		for _, mode := range tc.modes {
			_, err := c.Exec(ctx, list(tc.n), mode)
			if pe := pgErr(t, err, "54011"); pe.Message != "target lists can have at most 1664 entries" {
				t.Fatal(pe.Message)
			}
		}
	}
	exec(t, c, "SELECT 1")
}

// TestDiskFullOnTheWire: an engine error with SQLSTATE 53100 reaches the
// client as it is, and a bare ENOSPC is 53100, not XX000.
func TestDiskFullOnTheWire(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code string
	}{
		{&pgerror.Error{Code: codeDiskFull, Message: "could not write: No space left on device"}, codeDiskFull},
		{fmt.Errorf("wal: write: %w", syscall.ENOSPC), codeDiskFull},
		{fmt.Errorf("wal: write: %w", syscall.EDQUOT), codeDiskFull},
		{fmt.Errorf("wal: %w", tupled.ErrClosed), "57P01"},
		{errors.New("something else"), pgerror.CodeInternal},
	} {
		if got := wireError(tc.err); got.Code != tc.code {
			t.Errorf("%v: %s, want %s", tc.err, got.Code, tc.code)
		}
	}
}

// TestTagWithCount pins the tag rewriting of the last batch.
func TestTagWithCount(t *testing.T) {
	for tag, want := range map[string]string{"SELECT 10": "SELECT 2", "INSERT 0 10": "INSERT 0 2", "UPDATE 5": "UPDATE 2", "SET": "SET", "CREATE TABLE": "CREATE TABLE"} {
		if got := tagWithCount(tag, 2); got != want {
			t.Errorf("%q: %q, want %q", tag, got, want)
		}
	}
}
