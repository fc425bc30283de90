package pgwire

import (
	"context"
	"slices"
	"strings"
	"testing"

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
