package pgwire

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/tupled/tupled/internal/testcert"
)

// startTLSServer starts a server offering TLS with a fresh certificate for
// tupled.test and 127.0.0.1.
func startTLSServer(t *testing.T, required bool) (*testServer, *testcert.Cert) {
	t.Helper()
	cert := testcert.New(t, "tupled.test", "127.0.0.1")
	ts := startServer(t, func(c *Config) { c.TLS, c.TLSRequired = cert.Server, required })
	return ts, cert
}

// connectWith connects with extra connection settings (the later of two
// settings wins: "sslmode=require" replaces connString's sslmode=disable).
func (ts *testServer) connectWith(t testing.TB, extra string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), ts.connString(extra))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// tlsState returns the TLS state of c's connection, failing the test if it
// is not TLS.
func tlsState(t testing.TB, c *pgx.Conn) tls.ConnectionState {
	t.Helper()
	tc, ok := c.PgConn().Conn().(*tls.Conn)
	if !ok {
		t.Fatalf("connection is %T, not TLS", c.PgConn().Conn())
	}
	return tc.ConnectionState()
}

func selectOne(t testing.TB, c *pgx.Conn) {
	t.Helper()
	var one int
	if err := c.QueryRow(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1: %d %v", one, err)
	}
}

func TestTLS(t *testing.T) {
	ts, cert := startTLSServer(t, false)
	ctx := context.Background()

	c := ts.connectWith(t, "sslmode=require")
	selectOne(t, c)
	if st := tlsState(t, c); !st.HandshakeComplete || st.Version < tls.VersionTLS12 {
		t.Fatalf("TLS state: %+v", st)
	}

	// verify-full against the CA: by IP address (the host) ...
	caFile, _, _ := cert.WriteFiles(t, t.TempDir())
	selectOne(t, ts.connectWith(t, "sslmode=verify-full sslrootcert="+filepath.ToSlash(caFile)))
	// ... and by name, with ServerName
	cfg, err := pgx.ParseConfig(ts.connString("sslmode=verify-full"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.TLSConfig = &tls.Config{RootCAs: cert.Pool, ServerName: "tupled.test"}
	cfg.Fallbacks = nil
	named, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer named.Close(ctx)
	selectOne(t, named)
	if st := tlsState(t, named); st.ServerName != "tupled.test" || len(st.VerifiedChains) == 0 {
		t.Fatalf("ServerName %q, %d verified chains", st.ServerName, len(st.VerifiedChains))
	}
	cfg.TLSConfig = &tls.Config{RootCAs: cert.Pool, ServerName: "other.test"}
	if c, err := pgx.ConnectConfig(ctx, cfg); err == nil {
		c.Close(ctx)
		t.Fatal("verify-full accepted a certificate for another name")
	}

	// TLS is optional here: a plain client is served in plain
	plain := ts.connect(t)
	selectOne(t, plain)
	if _, ok := plain.PgConn().Conn().(*tls.Conn); ok {
		t.Fatal("sslmode=disable got TLS")
	}
	if got := testutil.ToFloat64(ts.srv.cfg.Metrics.tlsConns); got != 3 {
		t.Fatalf("%v sessions over TLS, want 3", got)
	}
}

func TestTLSRequired(t *testing.T) {
	ts, _ := startTLSServer(t, true)
	_, err := pgx.Connect(context.Background(), ts.connString(""))
	pe := pgErr(t, err, "28000")
	if want := `no pg_hba.conf entry for host "127.0.0.1", user "tester", database "tupled", no encryption`; pe.Message != want {
		t.Fatalf("message %q, want %q", pe.Message, want)
	}
	if got := testutil.ToFloat64(ts.srv.cfg.Metrics.noTLS); got != 1 {
		t.Fatalf("refusals %v", got)
	}
	c := ts.connectWith(t, "sslmode=require")
	selectOne(t, c)
	tlsState(t, c)
	if n := ts.srv.Sessions(); n != 1 {
		t.Fatalf("%d sessions", n)
	}
}

func TestTLSOffWithoutConfig(t *testing.T) {
	ts := startServer(t, nil)
	nc := dial(t, ts)
	if got := sslRequest(t, nc); got != 'N' {
		t.Fatalf("SSLRequest answered %q", got)
	}
	_, err := pgx.Connect(context.Background(), ts.connString("sslmode=require"))
	if err == nil {
		t.Fatal("sslmode=require connected to a server without TLS")
	}
}

// TestTLSRequiredWithoutTLS: a Config with TLSRequired and no TLS would
// refuse every client; Serve rejects it at once, accepting nothing.
func TestTLSRequiredWithoutTLS(t *testing.T) {
	srv := New(Config{TLSRequired: true})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second): // a guard against the bug, not a wait
		_ = srv.Shutdown(context.Background())
		<-done
		t.Fatal("Serve accepted TLSRequired without TLS")
	}
	if !errors.Is(err, errTLSRequiredWithoutTLS) {
		t.Fatalf("Serve: %v, want %v", err, errTLSRequiredWithoutTLS)
	}
	if !strings.Contains(err.Error(), "TLSRequired") {
		t.Fatalf("unclear error %q", err)
	}
	// the listener was closed: no client is left in its backlog
	if nc, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		if nc != nil {
			nc.Close()
		}
		t.Fatalf("listener still open after the rejected Config: %v", err)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func dial(t testing.TB, ts *testServer) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	// a guard against a hang, not a wait: every read below ends at EOF or
	// a message well before it
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	return nc
}

// sslRequest sends an SSLRequest and returns the one-byte answer.
func sslRequest(t testing.TB, nc net.Conn) byte {
	t.Helper()
	if _, err := nc.Write(frontendBytes(&pgproto3.SSLRequest{})); err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	if _, err := io.ReadFull(nc, b[:]); err != nil {
		t.Fatal(err)
	}
	return b[0]
}

// TestTLSBadClients: a failed handshake or a broken negotiation closes
// that connection (with PostgreSQL's error where it has one); the server
// keeps serving.
func TestTLSBadClients(t *testing.T) {
	ts, cert := startTLSServer(t, false)

	t.Run("garbage handshake", func(t *testing.T) {
		nc := dial(t, ts)
		if got := sslRequest(t, nc); got != 'S' {
			t.Fatalf("SSLRequest answered %q", got)
		}
		if _, err := nc.Write([]byte("GET / HTTP/1.1\r\nHost: tupled\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(nc); err != nil { // whatever alert, then EOF
			t.Fatalf("reading until the server closes: %v", err)
		}
		if got := testutil.ToFloat64(ts.srv.cfg.Metrics.tlsErrors); got != 1 {
			t.Fatalf("%v handshake errors", got)
		}
	})

	t.Run("gone after S", func(t *testing.T) {
		nc := dial(t, ts)
		if got := sslRequest(t, nc); got != 'S' {
			t.Fatalf("SSLRequest answered %q", got)
		}
		nc.(*net.TCPConn).CloseWrite()
		if _, err := io.ReadAll(nc); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("unencrypted data after SSLRequest", func(t *testing.T) {
		nc := dial(t, ts)
		// one write: the startup message arrives with the SSLRequest
		if _, err := nc.Write(frontendBytes(&pgproto3.SSLRequest{}, &pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "mallory"}})); err != nil {
			t.Fatal(err)
		}
		msg, err := pgproto3.NewFrontend(nc, nc).Receive()
		if e, ok := msg.(*pgproto3.ErrorResponse); err != nil || !ok || e.Code != "08P01" || e.Message != "received unencrypted data after SSL request" {
			t.Fatalf("got %#v, %v", msg, err)
		}
	})

	t.Run("SSLRequest over TLS", func(t *testing.T) {
		nc := dial(t, ts)
		if got := sslRequest(t, nc); got != 'S' {
			t.Fatalf("SSLRequest answered %q", got)
		}
		tc := tls.Client(nc, &tls.Config{RootCAs: cert.Pool, ServerName: "tupled.test"})
		if got := sslRequest(t, tc); got != 'E' {
			t.Fatalf("second SSLRequest answered %q", got)
		}
	})

	t.Run("GSSENCRequest", func(t *testing.T) {
		nc := dial(t, ts)
		if _, err := nc.Write(frontendBytes(&pgproto3.GSSEncRequest{})); err != nil {
			t.Fatal(err)
		}
		var b [1]byte
		if _, err := io.ReadFull(nc, b[:]); err != nil || b[0] != 'N' {
			t.Fatalf("GSSENCRequest answered %q, %v", b[0], err)
		}
		// then SSL, as libpq does with gssencmode=prefer
		if got := sslRequest(t, nc); got != 'S' {
			t.Fatalf("SSLRequest answered %q", got)
		}
	})

	selectOne(t, ts.connectWith(t, "sslmode=require"))
	if n := ts.srv.Sessions(); n != 1 {
		t.Fatalf("%d sessions", n)
	}
}

// TestTLSCancelWaitingLock: with TLS required, a lock wait of a TLS session
// is cancelled by pgx's CancelRequest, by one over plain TCP (as libpq
// before PostgreSQL 17 sends it) and by one over TLS.
func TestTLSCancelWaitingLock(t *testing.T) {
	ts, cert := startTLSServer(t, true)
	c1, c2 := ts.connectWith(t, "sslmode=require"), ts.connectWith(t, "sslmode=require")
	lockRow(t, c1, 1)
	pid, secret := c2.PgConn().PID(), c2.PgConn().SecretKey()
	for _, how := range []struct {
		name   string
		cancel func() error
	}{
		{"pgx", func() error { return c2.PgConn().CancelRequest(context.Background()) }},
		{"plain", func() error { return sendCancel(t, dial(t, ts), pid, secret) }},
		{"TLS", func() error {
			nc := dial(t, ts)
			if got := sslRequest(t, nc); got != 'S' {
				t.Fatalf("SSLRequest answered %q", got)
			}
			return sendCancel(t, tls.Client(nc, &tls.Config{RootCAs: cert.Pool, ServerName: "tupled.test"}), pid, secret)
		}},
	} {
		errc := ts.execBlocked(t, c2, "UPDATE t SET v = 2 WHERE k = 1")
		if err := how.cancel(); err != nil {
			t.Fatalf("%s: %v", how.name, err)
		}
		if pe := pgErr(t, <-errc, "57014"); pe.Message != "canceling statement due to user request" {
			t.Fatalf("%s: %s", how.name, pe.Message)
		}
		waitFor(t, "the wait to end", func() bool { return waiters(ts.db) == 0 })
	}
	exec(t, c1, "COMMIT")
	selectOne(t, c2)
}

// sendCancel sends a CancelRequest on nc and reads until the server closes
// it (then the request has been handled).
func sendCancel(t testing.TB, nc net.Conn, pid uint32, secret []byte) error {
	t.Helper()
	defer nc.Close()
	if _, err := nc.Write(frontendBytes(&pgproto3.CancelRequest{ProcessID: pid, SecretKey: secret})); err != nil {
		return err
	}
	_, err := io.ReadAll(nc)
	return err
}
