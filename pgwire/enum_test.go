package pgwire

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestEnumWire: an enum column's values carry the enum type's OID (its
// pg_type.oid, with typlen 4 as PostgreSQL's RowDescription has it), the
// binary format of a value is its label's bytes, and a parameter declared
// with that OID is read as the enum's label, in text and in binary; so
// for the enum's array type.
func TestEnumWire(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	ctx := context.Background()
	pc := c.PgConn()
	exec(t, c, "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')")
	exec(t, c, "CREATE TABLE p (id int PRIMARY KEY, m mood)")
	exec(t, c, "INSERT INTO p VALUES (1, 'happy'), (2, 'sad')")
	var oid uint32
	if err := c.QueryRow(ctx, "SELECT oid FROM pg_type WHERE typname = 'mood'").Scan(&oid); err != nil || oid == 0 {
		t.Fatalf("pg_type's oid of mood: %d %v", oid, err)
	}
	var aoid uint32
	if err := c.QueryRow(ctx, "SELECT typarray FROM pg_type WHERE oid = $1", oid).Scan(&aoid); err != nil || aoid == 0 {
		t.Fatalf("typarray of mood: %d %v", aoid, err)
	}
	rr := pc.ExecParams(ctx, "SELECT m, m::text, 'ok'::mood FROM p ORDER BY m", nil, nil, nil, []int16{1, 1, 1}).Read()
	if rr.Err != nil {
		t.Fatal(rr.Err)
	}
	var got []string
	for _, f := range rr.FieldDescriptions {
		got = append(got, fmt.Sprintf("%s:%d:%d", f.Name, f.DataTypeOID, f.DataTypeSize))
	}
	if g, want := strings.Join(got, " "), fmt.Sprintf("m:%d:4 m:25:-1 mood:%d:4", oid, oid); g != want {
		t.Fatalf("RowDescription:\ngot  %s\nwant %s", g, want)
	}
	if len(rr.Rows) != 2 || string(rr.Rows[0][0]) != "sad" || string(rr.Rows[1][0]) != "happy" || string(rr.Rows[0][2]) != "ok" {
		t.Fatalf("binary enum values: %q", rr.Rows)
	}
	// a parameter declared as the enum: text and binary (its label's bytes)
	prepare(t, pc, "q", "SELECT id FROM p WHERE m = $1", []uint32{oid}, []uint32{oid})
	for _, f := range []int16{0, 1} {
		res := pc.ExecPrepared(ctx, "q", [][]byte{[]byte("happy")}, []int16{f}, nil).Read()
		if res.Err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "1" {
			t.Fatalf("format %d: %v %q", f, res.Err, res.Rows)
		}
		res = pc.ExecPrepared(ctx, "q", [][]byte{[]byte("angry")}, []int16{f}, nil).Read()
		pgErr(t, res.Err, "22P02")
	}
	// an array of the enum: a parameter of its array OID (an ORM's list),
	// and a result of that type
	prepare(t, pc, "a", "SELECT count(*) FROM p WHERE m = ANY ($1)", []uint32{aoid}, []uint32{aoid})
	if res := pc.ExecPrepared(ctx, "a", [][]byte{[]byte("{happy,ok}")}, nil, nil).Read(); res.Err != nil || string(res.Rows[0][0]) != "1" {
		t.Fatalf("= ANY of a mood[] parameter: %v %q", res.Err, res.Rows)
	}
	rr = pc.ExecParams(ctx, "SELECT enum_range(NULL::mood)", nil, nil, nil, []int16{1}).Read()
	if rr.Err != nil || rr.FieldDescriptions[0].DataTypeOID != aoid {
		t.Fatalf("enum_range: %v %+v", rr.Err, rr.FieldDescriptions)
	}
	if b := rr.Rows[0][0]; len(b) < 12 || uint32(b[8])<<24|uint32(b[9])<<16|uint32(b[10])<<8|uint32(b[11]) != oid {
		t.Fatalf("array_send's element type: %v", b)
	}
	// an untyped parameter compared with an enum column takes its type
	prepare(t, pc, "r", "INSERT INTO p VALUES ($1, $2)", nil, []uint32{23, oid})
	if res := pc.ExecPrepared(ctx, "r", [][]byte{[]byte("3"), []byte("ok")}, nil, nil).Read(); res.Err != nil {
		t.Fatal(res.Err)
	}
	var id int32
	if err := c.QueryRow(ctx, "SELECT id FROM p WHERE m > $1 ORDER BY m LIMIT 1", "sad").Scan(&id); err != nil || id != 3 {
		t.Fatalf("%d %v", id, err)
	}
}

// TestEnumCopy: COPY FROM STDIN into an enum column in text and csv (a
// label that is not the enum's is 22P02), COPY TO, and binary both ways.
func TestEnumCopy(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	exec(t, c, "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')")
	exec(t, c, "CREATE TABLE p (id int PRIMARY KEY, m mood NOT NULL, prev mood)")
	if tag, err := copyIn(t, c, "COPY p FROM STDIN", "1\thappy\t\\N\n2\tsad\tok\n"); err != nil || tag.String() != "COPY 2" {
		t.Fatalf("%v %v", tag, err)
	}
	if tag, err := copyIn(t, c, "COPY p (id, m, prev) FROM STDIN (FORMAT csv)", "3,ok,\n4,\"happy\",sad\n"); err != nil || tag.String() != "COPY 2" {
		t.Fatalf("%v %v", tag, err)
	}
	_, err := copyIn(t, c, "COPY p FROM STDIN", "5\tok\t\\N\n6\tangry\t\\N\n")
	pgErr(t, err, "22P02")
	if !strings.Contains(err.Error(), `invalid input value for enum mood: "angry"`) {
		t.Fatalf("%v", err)
	}
	if got, want := copyOut(t, c, "COPY p TO STDOUT"), "1\thappy\t\\N\n2\tsad\tok\n3\tok\t\\N\n4\thappy\tsad\n"; got != want {
		t.Fatalf("COPY TO:\n%q\nwant\n%q", got, want)
	}
	if got, want := copyOut(t, c, "COPY (SELECT m, count(*) FROM p GROUP BY m ORDER BY m) TO STDOUT (FORMAT csv)"), "sad,1\nok,1\nhappy,2\n"; got != want {
		t.Fatalf("COPY (SELECT) TO:\n%q\nwant\n%q", got, want)
	}
	// binary: out, and back into a copy of the table (a value is its label's bytes)
	bin := copyOut(t, c, "COPY p TO STDOUT (FORMAT binary)")
	if !strings.Contains(bin, "\x00\x00\x00\x05happy") {
		t.Fatalf("binary COPY TO: %q", bin)
	}
	exec(t, c, "CREATE TABLE p2 (id int PRIMARY KEY, m mood NOT NULL, prev mood)")
	if tag, err := copyIn(t, c, "COPY p2 FROM STDIN (FORMAT binary)", bin); err != nil || tag.String() != "COPY 4" {
		t.Fatalf("binary COPY FROM: %v %v", tag, err)
	}
	if got, want := copyOut(t, c, "COPY (SELECT * FROM p2 ORDER BY m, id) TO STDOUT"), "2\tsad\tok\n3\tok\t\\N\n1\thappy\t\\N\n4\thappy\tsad\n"; got != want {
		t.Fatalf("after binary COPY FROM:\n%q\nwant\n%q", got, want)
	}
}
