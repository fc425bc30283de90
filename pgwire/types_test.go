package pgwire

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestWireTypes: smallint and character varying are their own types on the
// wire, as in PostgreSQL 15 (the expectations are its answers to the same
// statements): RowDescription reports int2 (21, two bytes) and varchar
// (1043, typmod n+4), binary results of a smallint are two bytes,
// ParameterDescription gives back the types a client declared in Parse
// (JDBC resolves varchar parameters by it), and a smallint parameter a
// client declares comes in two bytes (psycopg 3 sends Python ints so).
func TestWireTypes(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	ctx := context.Background()
	pc := c.PgConn()
	exec(t, c, "CREATE TABLE t (k int PRIMARY KEY, s smallint, v varchar(10), w varchar, x text)")
	exec(t, c, "INSERT INTO t VALUES (1, 7, 'a', 'b', 'c')")
	rr := pc.ExecParams(ctx, "SELECT s, v, w, x, s + s, v || 'z', max(v), s::int, 'q'::varchar(3), 5::smallint FROM t GROUP BY s, v, w, x", nil, nil, nil, []int16{1}).Read()
	if rr.Err != nil {
		t.Fatal(rr.Err)
	}
	var got []string
	for _, f := range rr.FieldDescriptions {
		got = append(got, fmt.Sprintf("%s:%d:%d:%d", f.Name, f.DataTypeOID, f.DataTypeSize, f.TypeModifier))
	}
	want := "s:21:2:-1 v:1043:-1:14 w:1043:-1:-1 x:25:-1:-1 ?column?:21:2:-1 ?column?:25:-1:-1 max:25:-1:-1 s:23:4:-1 varchar:1043:-1:7 int2:21:2:-1"
	if g := strings.Join(got, " "); g != want {
		t.Fatalf("RowDescription:\ngot  %s\nwant %s", g, want)
	}
	// a table's column carries the table's OID and its attribute number
	// (pgjdbc finds a serial column's default so), an expression none
	if f := rr.FieldDescriptions; f[0].TableOID == 0 || f[0].TableAttributeNumber != 2 || f[1].TableAttributeNumber != 3 || f[4].TableOID != 0 || f[4].TableAttributeNumber != 0 {
		t.Fatalf("table OIDs and attribute numbers: %+v", f)
	}
	var oid uint32
	if err := c.QueryRow(ctx, "SELECT oid FROM pg_class WHERE relname = 't'").Scan(&oid); err != nil || oid != rr.FieldDescriptions[0].TableOID {
		t.Fatalf("pg_class's oid of t: %d (%v), RowDescription's %d", oid, err, rr.FieldDescriptions[0].TableOID)
	}
	if row := rr.Rows[0]; !slices.Equal(row[0], []byte{0, 7}) || !slices.Equal(row[4], []byte{0, 14}) || !slices.Equal(row[7], []byte{0, 0, 0, 7}) {
		t.Fatalf("binary smallint / integer values: %v %v %v", row[0], row[4], row[7])
	}
	prepare(t, pc, "p", "SELECT $1::text, $2 + 1 FROM t WHERE v = $3", []uint32{1043, 21, 1043}, []uint32{1043, 21, 1043})
	res := pc.ExecPrepared(ctx, "p", [][]byte{[]byte("x"), {0xff, 0xfe}, []byte("a")}, []int16{0, 1, 0}, nil).Read()
	if res.Err != nil || len(res.Rows) != 1 || string(res.Rows[0][1]) != "-1" {
		t.Fatalf("a two-byte smallint parameter: %v %q", res.Err, res.Rows)
	}
	res = pc.ExecPrepared(ctx, "p", [][]byte{[]byte("x"), {0, 0, 0, 1}, []byte("a")}, []int16{0, 1, 0}, nil).Read()
	pgErr(t, res.Err, "22P03") // four bytes for a declared smallint
	// numeric(p, s): typmod ((p << 16) | s) + 4, an expression of it none
	exec(t, c, "CREATE TABLE price (k int PRIMARY KEY, p numeric(10,2))")
	exec(t, c, "INSERT INTO price VALUES (1, 12.345)")
	rr = pc.ExecParams(ctx, "SELECT p, p * 2, 1.5::numeric(4,1) FROM price", nil, nil, nil, nil).Read()
	if rr.Err != nil {
		t.Fatal(rr.Err)
	}
	got = got[:0]
	for i, f := range rr.FieldDescriptions {
		got = append(got, fmt.Sprintf("%s:%d:%d:%s", f.Name, f.DataTypeOID, f.TypeModifier, rr.Rows[0][i]))
	}
	if g, want := strings.Join(got, " "), "p:1700:655366:12.35 ?column?:1700:-1:24.70 numeric:1700:262149:1.5"; g != want {
		t.Fatalf("numeric RowDescription:\ngot  %s\nwant %s", g, want)
	}
	// smallint arithmetic stays smallint: past its range is 22003
	_, err := c.Exec(ctx, "SELECT s * 10000::smallint FROM t")
	pgErr(t, err, "22003")
}
