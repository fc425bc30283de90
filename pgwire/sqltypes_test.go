package pgwire

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// prepare Parses sql as the statement name with the declared parameter
// types and requires the ParameterDescription to be want.
func prepare(t *testing.T, pc *pgconn.PgConn, name, sql string, declared, want []uint32) {
	t.Helper()
	sd, err := pc.Prepare(context.Background(), name, sql, declared)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sd.ParamOIDs, want) {
		t.Fatalf("ParameterDescription %v, want %v", sd.ParamOIDs, want)
	}
}

// describe is "name:oid:size:typmod" of each column of rr.
func describe(rr *pgconn.Result) string {
	var got []string
	for _, f := range rr.FieldDescriptions {
		got = append(got, fmt.Sprintf("%s:%d:%d:%d", f.Name, f.DataTypeOID, f.DataTypeSize, f.TypeModifier))
	}
	return strings.Join(got, " ")
}

// TestWireUUIDJSON: uuid (OID 2950, 16 bytes), json (114) and jsonb (3802)
// columns in RowDescription, their binary results (uuid's 16 bytes,
// json's text, jsonb's version byte 1 and its text), parameters sent in
// binary, ParameterDescription of declared parameter types, and pgx's own
// scanning (which asks for binary), as PostgreSQL 15 answers the same.
func TestWireUUIDJSON(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	ctx := context.Background()
	pc := c.PgConn()
	exec(t, c, "CREATE TABLE t (id uuid PRIMARY KEY, j json, b jsonb)")
	exec(t, c, `INSERT INTO t VALUES ('A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '{"b":1, "a":2}', '{"b":1, "a":2}')`)
	rr := pc.ExecParams(ctx, "SELECT id, j, b, b -> 'a', j ->> 'b', gen_random_uuid() FROM t", nil, nil, nil, []int16{1}).Read()
	if rr.Err != nil {
		t.Fatal(rr.Err)
	}
	want := "id:2950:16:-1 j:114:-1:-1 b:3802:-1:-1 ?column?:3802:-1:-1 ?column?:25:-1:-1 gen_random_uuid:2950:16:-1"
	if g := describe(rr); g != want {
		t.Fatalf("RowDescription:\ngot  %s\nwant %s", g, want)
	}
	row := rr.Rows[0]
	wantID := []byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}
	if !slices.Equal(row[0], wantID) {
		t.Fatalf("binary uuid %x", row[0])
	}
	if string(row[1]) != `{"b":1, "a":2}` || string(row[2]) != "\x01"+`{"a": 2, "b": 1}` || string(row[3]) != "\x012" || string(row[4]) != "1" {
		t.Fatalf("binary json / jsonb: %q %q %q %q", row[1], row[2], row[3], row[4])
	}
	if len(row[5]) != 16 || row[5][6]>>4 != 4 {
		t.Fatalf("gen_random_uuid in binary: %x", row[5])
	}

	prepare(t, pc, "p", "SELECT id, b FROM t WHERE id = $1 AND b @> $2", []uint32{2950, 3802}, []uint32{2950, 3802})
	res := pc.ExecPrepared(ctx, "p", [][]byte{wantID, []byte("\x01" + `{"a": 2}`)}, []int16{1, 1}, []int16{0}).Read()
	if res.Err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11" || string(res.Rows[0][1]) != `{"a": 2, "b": 1}` {
		t.Fatalf("binary uuid and jsonb parameters: %v %q", res.Err, res.Rows)
	}
	res = pc.ExecPrepared(ctx, "p", [][]byte{wantID[:15], []byte("\x01{}")}, []int16{1, 1}, nil).Read()
	pgErr(t, res.Err, "22P03") // a uuid is 16 bytes
	res = pc.ExecPrepared(ctx, "p", [][]byte{wantID, []byte("\x02{}")}, []int16{1, 1}, nil).Read()
	pgErr(t, res.Err, "22P03") // jsonb's version is 1
	res = pc.ExecPrepared(ctx, "p", [][]byte{wantID, []byte("\x01{")}, []int16{1, 1}, nil).Read()
	pgErr(t, res.Err, "22P02")

	// pgx's own codecs: binary both ways
	var id [16]byte
	var m map[string]any
	var raw string
	if err := c.QueryRow(ctx, "SELECT id, b, j FROM t WHERE id = $1", id).Scan(&id, &m, &raw); err == nil {
		t.Fatal("found a row for the zero uuid")
	}
	copy(id[:], wantID)
	if err := c.QueryRow(ctx, "SELECT id, b, j::text FROM t WHERE id = $1", id).Scan(&id, &m, &raw); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(id[:], wantID) || m["a"] != float64(2) || raw != `{"b":1, "a":2}` {
		t.Fatalf("pgx scan: %x %v %q", id, m, raw)
	}
	exec(t, c, "INSERT INTO t VALUES ($1, $2, $3)", [16]byte{1}, map[string]any{"z": []int{1}}, map[string]any{"k": "v", "kk": nil})
	if err := c.QueryRow(ctx, "SELECT b::text FROM t WHERE id = $1", [16]byte{1}).Scan(&raw); err != nil || raw != `{"k": "v", "kk": null}` {
		t.Fatalf("jsonb inserted by pgx: %q %v", raw, err)
	}
}

// TestWireBytea: a bytea column is OID 17 in RowDescription, its binary
// form is its bytes (any bytes, NUL included) both ways, its text form the
// hex format, and pgx's []byte round-trips through it.
func TestWireBytea(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	ctx := context.Background()
	pc := c.PgConn()
	exec(t, c, "CREATE TABLE b (k bytea PRIMARY KEY, v bytea)")
	prepare(t, pc, "ins", "INSERT INTO b VALUES ($1, $2)", []uint32{17, 0}, []uint32{17, 17})
	key := []byte{0, 1, 0xff, '\\', 0}
	if res := pc.ExecPrepared(ctx, "ins", [][]byte{key, {}}, []int16{1, 1}, nil).Read(); res.Err != nil {
		t.Fatal(res.Err)
	}
	rr := pc.ExecParams(ctx, "SELECT k, v, k || v, length(k) FROM b", nil, nil, nil, []int16{1, 1, 0, 0}).Read()
	if rr.Err != nil {
		t.Fatal(rr.Err)
	}
	if g, want := describe(rr), "k:17:-1:-1 v:17:-1:-1 ?column?:17:-1:-1 length:23:4:-1"; g != want {
		t.Fatalf("RowDescription:\ngot  %s\nwant %s", g, want)
	}
	row := rr.Rows[0]
	if !slices.Equal(row[0], key) || len(row[1]) != 0 || string(row[2]) != `\x0001ff5c00` || string(row[3]) != "5" {
		t.Fatalf("bytea values: %q %q %q %q", row[0], row[1], row[2], row[3])
	}
	var got []byte
	if err := c.QueryRow(ctx, "SELECT v || k FROM b WHERE k = $1", key).Scan(&got); err != nil || !slices.Equal(got, key) {
		t.Fatalf("pgx []byte: %x %v", got, err)
	}
}

// TestWireIntervalTime: interval (OID 1186) and time (1083) columns and
// parameters in text and binary, and through pgx's own types (which read
// and send the binary forms: int64 µs, int32 days, int32 months; int64 µs).
func TestWireIntervalTime(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	ctx := context.Background()
	pc := c.PgConn()
	exec(t, c, "CREATE TABLE iv (k time PRIMARY KEY, d interval)")
	prepare(t, pc, "ins", "INSERT INTO iv VALUES ($1, $2)", nil, []uint32{1083, 1186})
	if res := pc.ExecPrepared(ctx, "ins", [][]byte{[]byte("13:14:15.5"), []byte("1 year 2 mons -3 days 04:05:06.5")}, nil, nil).Read(); res.Err != nil {
		t.Fatal(res.Err)
	}
	// pgx sends both in binary.
	if _, err := c.Exec(ctx, "INSERT INTO iv VALUES ($1, $2)",
		pgtype.Time{Microseconds: 3600_000_000, Valid: true},
		pgtype.Interval{Months: -1, Days: 2, Microseconds: -1, Valid: true}); err != nil {
		t.Fatal(err)
	}
	rr := pc.ExecParams(ctx, "SELECT k, d FROM iv ORDER BY k", nil, nil, nil, []int16{1, 1}).Read()
	if rr.Err != nil {
		t.Fatal(rr.Err)
	}
	if g, want := describe(rr), "k:1083:8:-1 d:1186:16:-1"; g != want {
		t.Fatalf("RowDescription:\ngot  %s\nwant %s", g, want)
	}
	var tm pgtype.Time
	var d pgtype.Interval
	if err := c.QueryRow(ctx, "SELECT k, d FROM iv WHERE k > '12:00'").Scan(&tm, &d); err != nil {
		t.Fatal(err)
	}
	if tm.Microseconds != 47655_500_000 || d.Months != 14 || d.Days != -3 || d.Microseconds != 14706_500_000 {
		t.Fatalf("binary: time %+v interval %+v", tm, d)
	}
	var s string
	if err := c.QueryRow(ctx, "SELECT d::text FROM iv WHERE k = '01:00'").Scan(&s); err != nil || s != "-1 mons +2 days -00:00:00.000001" {
		t.Fatalf("text of pgx's interval: %q %v", s, err)
	}
}
