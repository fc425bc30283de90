package pgwire

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestBpcharRowDescription: a character(n) column or cast is described as
// PostgreSQL 15.18 describes it — type OID 1042 (bpchar) with type
// modifier n+4, -1 for a bpchar without a length — and its values come
// blank-padded; || gives text.
func TestBpcharRowDescription(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	exec(t, c, "CREATE TABLE t (k char(3) PRIMARY KEY, c char(5), f bpchar)")
	exec(t, c, "INSERT INTO t VALUES ($1, 'ab', 'z  ')", "a")
	rr := c.PgConn().Exec(context.Background(), "SELECT k, c, c || 'x', f, 'ab'::char(5), 'ab'::bpchar, 'ab'::char(5)::char(7) FROM t")
	res, err := rr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, f := range res[0].FieldDescriptions {
		got = append(got, fmt.Sprintf("%s:%d:%d:%q", f.Name, f.DataTypeOID, f.TypeModifier, res[0].Rows[0][i]))
	}
	want := `k:1042:7:"a  " c:1042:9:"ab   " ?column?:25:-1:"abx" f:1042:-1:"z  " bpchar:1042:9:"ab   " bpchar:1042:-1:"ab" bpchar:1042:11:"ab     "`
	if g := strings.Join(got, " "); g != want {
		t.Fatalf("got  %s\nwant %s", g, want)
	}
}
