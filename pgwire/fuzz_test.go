package pgwire

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sqlfe"
)

func frontendBytes(msgs ...pgproto3.FrontendMessage) []byte {
	var b []byte
	for _, m := range msgs {
		b, _ = m.Encode(b)
	}
	return b
}

// FuzzMessageReader feeds arbitrary bytes after a valid startup message to a
// session: whatever arrives, the connection answers or closes; it never
// panics or hangs.
func FuzzMessageReader(f *testing.F) {
	f.Add(frontendBytes(&pgproto3.Query{String: "SELECT 1"}, &pgproto3.Terminate{}))
	f.Add(frontendBytes(&pgproto3.Parse{Query: "SELECT $1::int"}, &pgproto3.Bind{Parameters: [][]byte{[]byte("5")}}, &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{}))
	f.Add(frontendBytes(&pgproto3.Parse{Name: "s", Query: "SELECT 1/0"}, &pgproto3.Bind{PreparedStatement: "s"}, &pgproto3.Execute{}, &pgproto3.Flush{}, &pgproto3.Sync{}))
	f.Add(frontendBytes(&pgproto3.Bind{PreparedStatement: "nope", ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{1, 2}}}, &pgproto3.Sync{}))
	f.Add(frontendBytes(&pgproto3.Query{String: "BEGIN; CREATE TABLE t (k int PRIMARY KEY); INSERT INTO t VALUES (1); SELECT * FROM t FOR UPDATE"}))
	f.Add([]byte{'Q', 0, 0, 0, 3})
	f.Add([]byte{'X', 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte("P\x00\x00\x00\x10\x00SELECT $1\x00\x00\x01"))
	// malformed and unknown messages (08P01), small-message limits,
	// ignored COPY messages, fastpath calls, row limits and format codes
	f.Add([]byte{'Z', 0, 0, 0, 4})
	f.Add([]byte{'S', 0, 0, 0, 6, 1, 1, 'Q', 0, 0, 0, 9, 'S', 'E', 'L', 'E', 'C', 'T', 0})
	f.Add([]byte{'S', 0, 0, 0x30, 0})
	f.Add([]byte{'Q', 0x80, 0, 0, 0})
	f.Add([]byte{'B', 0, 0, 0, 6, 0, 0, 'S', 0, 0, 0, 4})
	f.Add(frontendBytes(&pgproto3.CopyData{Data: []byte("x")}, &pgproto3.CopyDone{}, &pgproto3.CopyFail{Message: "m"}, &pgproto3.FunctionCall{Function: 1}, &pgproto3.Sync{}))
	f.Add(frontendBytes(&pgproto3.Parse{Query: "SELECT 1, 2"}, &pgproto3.Bind{ResultFormatCodes: []int16{7}}, &pgproto3.Execute{MaxRows: 1}, &pgproto3.Execute{MaxRows: 1}, &pgproto3.Sync{}))
	f.Add(frontendBytes(&pgproto3.Parse{Query: "SELECT $1::int"}, &pgproto3.Bind{ParameterFormatCodes: []int16{1, 0}, Parameters: [][]byte{{0, 0, 0, 1}}}, &pgproto3.Describe{ObjectType: 'X'}, &pgproto3.Sync{}))
	f.Add(frontendBytes(&pgproto3.Query{String: "SELECT " + strings.TrimSuffix(strings.Repeat("1,", maxTargetList+1), ",")}))

	db, err := tupled.Open("", &tupled.Options{VacuumInterval: -1})
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	eng, err := sqlfe.NewExecutor(context.Background(), db, nil)
	if err != nil {
		f.Fatal(err)
	}
	srv := New(Config{Executor: eng, MaxMessageSize: 1 << 16, ClientCheckInterval: -1})
	startup := frontendBytes(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "fuzz"}})
	f.Fuzz(func(t *testing.T, data []byte) {
		client, server := net.Pipe()
		c := &conn{srv: srv, nc: server}
		srv.mu.Lock()
		srv.conns[c] = struct{}{}
		srv.wg.Add(1)
		srv.mu.Unlock()
		done := make(chan struct{})
		go func() { c.serve(); close(done) }()
		go io.Copy(io.Discard, client)
		client.SetWriteDeadline(time.Now().Add(5 * time.Second))
		client.Write(startup)
		client.Write(data)
		client.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("connection did not end")
		}
	})
}

// FuzzStartupPacket feeds arbitrary bytes to a connection from its first
// byte (startup packets, SSL and cancel requests, authentication): the
// connection answers or closes, never panics or hangs; and the startup
// packet parser, given the same bytes as a packet body, either fails with
// a protocol violation or yields well-formed parameters.
func FuzzStartupPacket(f *testing.F) {
	v3 := func(params ...string) []byte { return startupBytes(protocol30, params...) }
	f.Add(v3("user", "u", "database", "d"), false)
	f.Add(v3("user", "u", "options", "-c lock_timeout=1s --statement_timeout=2s -c application_name=a\\ b"), false)
	f.Add(v3("user", "u", "options", "-c lock_timeout=abc"), false)
	f.Add(v3("user", "u", "options", "-X -c"), false)
	f.Add(v3("user", "u", "lock_timeout", "-1", "_pq_.x", "1"), false)
	f.Add(startupBytes(3<<16|1, "user", "u", "_pq_.foo", "x"), false)
	f.Add(startupBytes(2<<16, "user", "u"), false)
	f.Add(startupBytes(4<<16, "user", "u"), false)
	f.Add(append([]byte{0, 0, 0, 8, 4, 0xd2, 0x16, 0x2f}, v3("user", "u")...), false)      // SSLRequest, then startup
	f.Add([]byte{0, 0, 0, 8, 4, 0xd2, 0x16, 0x30, 0, 0, 0, 8, 4, 0xd2, 0x16, 0x30}, false) // GSSENC twice
	f.Add([]byte{0, 0, 0, 16, 4, 0xd2, 0x16, 0x2e, 0, 0, 0x27, 0x11, 1, 2, 3, 4}, false)   // CancelRequest
	f.Add([]byte{0, 0, 0, 3}, false)
	f.Add([]byte{0, 0, 0x27, 0x15, 0, 3, 0, 0}, false)
	f.Add([]byte{0, 0, 0, 10, 0, 3, 0, 0, 'u', 0}, false)
	f.Add(v3("user"), false)
	f.Add(append(v3("user", "u"), 'p', 0, 0, 0, 30, 'S', 'C', 'R', 'A', 'M', '-', 'S', 'H', 'A', '-', '2', '5', '6', 0, 0, 0, 0, 8, 'n', ',', ',', 'r', '=', 'a', 'b', 'c'), true)
	f.Add(append(v3("user", "u"), 'p', 0, 1, 0, 0), true)
	f.Add(append(v3("user", "u"), 'Q', 0, 0, 0, 5, 0), true)

	db, err := tupled.Open("", &tupled.Options{VacuumInterval: -1})
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	eng, err := sqlfe.NewExecutor(context.Background(), db, nil)
	if err != nil {
		f.Fatal(err)
	}
	trust := New(Config{Executor: eng, ClientCheckInterval: -1, AuthTimeout: 5 * time.Second})
	scram := New(Config{Executor: eng, ClientCheckInterval: -1, AuthTimeout: 5 * time.Second, Password: "pw"})
	f.Fuzz(func(t *testing.T, data []byte, password bool) {
		if len(data) >= 4 {
			if p, err := parseStartupPacket(data[4:]); err == nil && p.params != nil {
				for _, k := range p.order {
					if k == "" || strings.IndexByte(k, 0) >= 0 || strings.IndexByte(p.params[k], 0) >= 0 {
						t.Fatalf("parameter %q = %q", k, p.params[k])
					}
				}
				if opts, err := parseOptions(p.params["options"]); err == nil {
					for _, kv := range opts {
						if strings.Contains(kv[0], "=") {
							t.Fatalf("option name %q", kv[0])
						}
					}
				}
			} else if err != nil {
				if _, ok := err.(*protocolError); !ok {
					t.Fatalf("parse error %T %v", err, err)
				}
			}
		}
		srv := trust
		if password {
			srv = scram
		}
		client, server := net.Pipe()
		c := &conn{srv: srv, nc: server}
		srv.mu.Lock()
		srv.conns[c] = struct{}{}
		srv.wg.Add(1)
		srv.mu.Unlock()
		done := make(chan struct{})
		go func() { c.serve(); close(done) }()
		go io.Copy(io.Discard, client)
		client.SetWriteDeadline(time.Now().Add(5 * time.Second))
		client.Write(data)
		client.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("connection did not end")
		}
	})
}
