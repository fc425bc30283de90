package pgwire

import (
	"context"
	"io"
	"net"
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

	db, err := tupled.Open("", &tupled.Options{VacuumInterval: -1})
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	eng, err := sqlfe.NewEngine(context.Background(), db, nil)
	if err != nil {
		f.Fatal(err)
	}
	srv := New(Config{Engine: eng, MaxMessageSize: 1 << 16, ClientCheckInterval: -1})
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
