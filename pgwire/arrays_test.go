package pgwire

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestWireTextArrays: text[] (OID 1009) and varchar[] (1015) columns
// through pgx, which sends []string in binary and scans binary results, and
// through the simple protocol (text); = ANY($1) with an undeclared
// parameter is described as text[] (sqlc's queries), ANY($1::text[]) too;
// NULL elements and the elements array_out must quote.
func TestWireTextArrays(t *testing.T) {
	ts := startServer(t, nil)
	defer ts.stop(t)
	c := ts.connect(t)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE ta (id int PRIMARY KEY, tags text[], v varchar[], f boolean[])")
	odd := []string{"a b", "x,y", "{z}", `q"q`, `b\s`, "", "NULL"}
	exec(t, c, "INSERT INTO ta VALUES ($1, $2, $3, $4)", 1, []string{"red", "green"}, []string{"w"}, []bool{true, false})
	exec(t, c, "INSERT INTO ta VALUES ($1, $2, $3, NULL)", 2, odd, []string{})
	exec(t, c, "INSERT INTO ta VALUES ($1, $2, NULL, NULL)", 3, pgtype.FlatArray[pgtype.Text]{{String: "n", Valid: true}, {}})

	sd, err := c.Prepare(ctx, "any", "SELECT id FROM ta WHERE $1 = ANY(tags) OR tags && $2 ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sd.ParamOIDs, []uint32{25, 1009}) {
		t.Fatalf("ParameterDescription %v, want [25 1009]", sd.ParamOIDs)
	}
	if f := sd.Fields; len(f) != 1 {
		t.Fatalf("fields %v", f)
	}
	sd, err = c.Prepare(ctx, "cols", "SELECT tags, v, f FROM ta WHERE id = $1")
	if err != nil {
		t.Fatal(err)
	}
	if got := []uint32{sd.Fields[0].DataTypeOID, sd.Fields[1].DataTypeOID, sd.Fields[2].DataTypeOID}; !slices.Equal(got, []uint32{1009, 1015, 1000}) {
		t.Fatalf("column OIDs %v, want [1009 1015 1000]", got)
	}

	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		ids := func(sql string, args ...any) []int32 {
			t.Helper()
			rows, err := c.Query(ctx, sql, append([]any{mode}, args...)...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := pgx.CollectRows(rows, pgx.RowTo[int32])
			if err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
			return got
		}
		if got := ids("SELECT id FROM ta WHERE 'green' = ANY(tags) OR tags @> $1 ORDER BY id", []string{"b\\s", "{z}"}); !slices.Equal(got, []int32{1, 2}) {
			t.Errorf("%v: @> gave %v", mode, got)
		}
		if got := ids("SELECT id FROM ta WHERE $1 = ANY(tags)", "x,y"); !slices.Equal(got, []int32{2}) {
			t.Errorf("%v: = ANY($1) gave %v", mode, got)
		}
		if got := ids("SELECT id FROM ta WHERE tags[1] = ANY($1::text[]) ORDER BY id", []string{"red", "n"}); !slices.Equal(got, []int32{1, 3}) {
			t.Errorf("%v: = ANY($1::text[]) gave %v", mode, got)
		}
		var tags, v []string
		var f []bool
		if err := c.QueryRow(ctx, "SELECT tags, v, f FROM ta WHERE id = 1", mode).Scan(&tags, &v, &f); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(tags, []string{"red", "green"}) || !slices.Equal(v, []string{"w"}) || !slices.Equal(f, []bool{true, false}) {
			t.Errorf("%v: row 1 is %q %q %v", mode, tags, v, f)
		}
		if err := c.QueryRow(ctx, "SELECT tags, v FROM ta WHERE id = 2", mode).Scan(&tags, &v); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(tags, odd) || v == nil || len(v) != 0 {
			t.Errorf("%v: row 2 is %q %q, want %q and empty", mode, tags, v, odd)
		}
		var withNull pgtype.FlatArray[pgtype.Text]
		if err := c.QueryRow(ctx, "SELECT tags FROM ta WHERE id = 3", mode).Scan(&withNull); err != nil {
			t.Fatal(err)
		}
		if len(withNull) != 2 || withNull[0].String != "n" || withNull[1].Valid {
			t.Errorf("%v: row 3 is %v", mode, withNull)
		}
		var agg []string
		if err := c.QueryRow(ctx, "SELECT array_agg(u ORDER BY u) FROM ta, unnest(ARRAY['b', 'a']) u WHERE id = 1", mode).Scan(&agg); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(agg, []string{"a", "b"}) {
			t.Errorf("%v: array_agg gave %q", mode, agg)
		}
	}

	// the text form a text-format client (lib/pq's pq.Array) reads and sends
	pc := c.PgConn()
	rr := pc.ExecParams(ctx, "SELECT tags FROM ta WHERE id = 2", nil, nil, nil, []int16{0}).Read()
	if rr.Err != nil {
		t.Fatal(rr.Err)
	}
	if got, want := string(rr.Rows[0][0]), `{"a b","x,y","{z}","q\"q","b\\s","","NULL"}`; got != want {
		t.Errorf("text form %s, want %s", got, want)
	}
	res := pc.ExecParams(ctx, "SELECT cardinality($1::text[]), ($1::text[])[3]", [][]byte{[]byte(`{a,"b c",NULL}`)}, nil, []int16{0}, nil).Read()
	if res.Err != nil || string(res.Rows[0][0]) != "3" || res.Rows[0][1] != nil {
		t.Errorf("text parameter: %v %q", res.Err, res.Rows)
	}
	res = pc.ExecParams(ctx, "SELECT $1::text[]", [][]byte{[]byte(`{a,`)}, nil, []int16{0}, nil).Read()
	pgErr(t, res.Err, "22P02")

	// COPY: pgx's CopyFrom sends binary rows; COPY TO writes the text form
	n, err := c.CopyFrom(ctx, pgx.Identifier{"ta"}, []string{"id", "tags"}, pgx.CopyFromRows([][]any{{int32(10), []string{"c 1", "c2"}}, {int32(11), []string{}}}))
	if err != nil || n != 2 {
		t.Fatalf("CopyFrom: %d %v", n, err)
	}
	var buf strings.Builder
	if _, err := pc.CopyTo(ctx, &buf, "COPY (SELECT id, tags FROM ta WHERE id >= 10 ORDER BY id) TO STDOUT"); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "10\t{\"c 1\",c2}\n11\t{}\n"; got != want {
		t.Errorf("COPY TO gave %q, want %q", got, want)
	}
}

// TestWireIntArraysNull: integer and bigint arrays with NULL elements in
// binary results (array_send: the has-null flag set, -1 for a NULL's
// length), binary and text parameters, pgx's scans, COPY FROM in binary
// (pgx's CopyFrom), text and csv, and COPY TO in text and csv (PostgreSQL
// 15's bytes for the same rows).
func TestWireIntArraysNull(t *testing.T) {
	ts := startServer(t, nil)
	defer ts.stop(t)
	c := ts.connect(t)
	ctx := context.Background()
	pc := c.PgConn()
	be := func(xs ...int32) []byte {
		var b []byte
		for _, x := range xs {
			b = append(b, byte(x>>24), byte(x>>16), byte(x>>8), byte(x))
		}
		return b
	}
	// ndim 1, has-null 1, int4, 3 elements from 1: 1, NULL, 3
	want := be(1, 1, 23, 3, 1, 4, 1, -1, 4, 3)
	rr := pc.ExecParams(ctx, "SELECT ARRAY[1, NULL, 3], ARRAY[NULL, 7]::bigint[], ARRAY[1, 2]", nil, nil, nil, []int16{1}).Read()
	if rr.Err != nil {
		t.Fatal(rr.Err)
	}
	if got := rr.Rows[0][0]; !bytes.Equal(got, want) {
		t.Errorf("int[] binary %x, want %x", got, want)
	}
	if got, want := rr.Rows[0][1], append(be(1, 1, 20, 2, 1, -1, 8), 0, 0, 0, 0, 0, 0, 0, 7); !bytes.Equal(got, want) {
		t.Errorf("bigint[] binary %x, want %x", got, want)
	}
	if got, want := rr.Rows[0][2], be(1, 0, 23, 2, 1, 4, 1, 4, 2); !bytes.Equal(got, want) {
		t.Errorf("int[] without NULLs %x, want %x", got, want)
	}
	res := pc.ExecParams(ctx, "SELECT $1::int[]::text, cardinality($1::int[]), ($1::int[])[2] IS NULL", [][]byte{want}, []uint32{1007}, []int16{1}, []int16{0}).Read()
	if res.Err != nil || string(res.Rows[0][0]) != "{1,NULL,3}" || string(res.Rows[0][1]) != "3" || string(res.Rows[0][2]) != "t" {
		t.Errorf("binary parameter: %v %q", res.Err, res.Rows)
	}
	res = pc.ExecParams(ctx, "SELECT $1::bigint[]", [][]byte{[]byte("{NULL,5}")}, nil, []int16{0}, []int16{0}).Read()
	if res.Err != nil || string(res.Rows[0][0]) != "{NULL,5}" {
		t.Errorf("text parameter: %v %q", res.Err, res.Rows)
	}

	exec(t, c, "CREATE TABLE ca (id int PRIMARY KEY, a int[], b bigint[], t text[])")
	var a pgtype.FlatArray[pgtype.Int4]
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		if err := c.QueryRow(ctx, "SELECT ARRAY[NULL, 2]", mode).Scan(&a); err != nil {
			t.Fatal(err)
		}
		if len(a) != 2 || a[0].Valid || a[1].Int32 != 2 {
			t.Errorf("%v: scanned %v", mode, a)
		}
	}
	n, err := c.CopyFrom(ctx, pgx.Identifier{"ca"}, []string{"id", "a", "b"}, pgx.CopyFromRows([][]any{
		{int32(1), pgtype.FlatArray[pgtype.Int4]{{Int32: 1, Valid: true}, {}, {Int32: 3, Valid: true}}, pgtype.FlatArray[pgtype.Int8]{{}}},
	}))
	if err != nil || n != 1 {
		t.Fatalf("CopyFrom: %d %v", n, err)
	}
	exec(t, c, "UPDATE ca SET t = ARRAY['a b', NULL] WHERE id = 1")
	if _, err := pc.CopyFrom(ctx, strings.NewReader("2\t{}\t\\N\t{NULL,\"NULL\"}\n"), "COPY ca FROM STDIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.CopyFrom(ctx, strings.NewReader("3,\"{NULL,4}\",{5},\"{x,NULL}\"\n"), "COPY ca FROM STDIN (FORMAT csv)"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ sql, want string }{
		{"COPY ca TO STDOUT", "1\t{1,NULL,3}\t{NULL}\t{\"a b\",NULL}\n2\t{}\t\\N\t{NULL,\"NULL\"}\n3\t{NULL,4}\t{5}\t{x,NULL}\n"},
		{"COPY ca TO STDOUT (FORMAT csv)", "1,\"{1,NULL,3}\",{NULL},\"{\"\"a b\"\",NULL}\"\n2,{},,\"{NULL,\"\"NULL\"\"}\"\n3,\"{NULL,4}\",{5},\"{x,NULL}\"\n"},
	} {
		var buf strings.Builder
		if _, err := pc.CopyTo(ctx, &buf, tc.sql); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tc.want {
			t.Errorf("%s gave %q, want %q", tc.sql, buf.String(), tc.want)
		}
	}
}

// TestWireBCDates: BC dates and timestamps in binary (days and
// microseconds from 2000-01-01, negative past it, as PostgreSQL sends
// them) both ways, through pgx's time.Time (whose years are astronomical:
// 44 BC is -43).
func TestWireBCDates(t *testing.T) {
	ts := startServer(t, nil)
	defer ts.stop(t)
	c := ts.connect(t)
	ctx := context.Background()
	want := time.Date(-43, 3, 15, 12, 0, 0, 0, time.UTC)
	var d, tz time.Time
	if err := c.QueryRow(ctx, "SELECT '0044-03-15 BC'::date, '0044-03-15 12:00 BC'::timestamptz").Scan(&d, &tz); err != nil {
		t.Fatal(err)
	}
	if !d.Equal(time.Date(-43, 3, 15, 0, 0, 0, 0, time.UTC)) || !tz.Equal(want) {
		t.Errorf("scanned %v and %v", d, tz)
	}
	var s string
	if err := c.QueryRow(ctx, "SELECT $1::timestamptz::text", want).Scan(&s); err != nil || s != "0044-03-15 12:00:00+00 BC" {
		t.Errorf("binary parameter read as %q %v", s, err)
	}
	rr := c.PgConn().ExecParams(ctx, "SELECT '0001-01-01 BC'::date", nil, nil, nil, []int16{1}).Read()
	if rr.Err != nil {
		t.Fatal(rr.Err)
	}
	// 2000-01-01 is day 0; 1 BC-01-01 is 730485 days before it (PostgreSQL's date_send)
	if got := rr.Rows[0][0]; len(got) != 4 || int32(binary.BigEndian.Uint32(got)) != -730485 {
		t.Errorf("date_send %x", got)
	}
}
