package sqlfe

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/keys"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/types"
)

// TestKeyFormatTuple: a table made by CREATE TABLE stores its primary keys
// as package keys tuples (KeyFormatTyped, which is KeyFormatTuple with
// ordered forms for the types whose text is not), so a program reading the
// engine table with the embedded API decodes them with keys.Unpack, in SQL
// order.
func TestKeyFormatTuple(t *testing.T) {
	eng, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE n (id bigint PRIMARY KEY, v text)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO n VALUES (5, 'a'), (-3, 'b'), (9223372036854775807, 'c'), (-9223372036854775808, 'd'), (0, 'e')", "INSERT 0 5")
	tbl, _ := eng.cat.Get("n")
	if tbl.KeyFormat != catalog.KeyFormatTyped {
		t.Fatalf("a new table's key format is %d", tbl.KeyFormat)
	}
	var got []int64
	err := eng.db.RunTx(context.Background(), nil, func(tx *tupled.Tx) error {
		got = got[:0]
		return tx.Scan(context.Background(), tbl.Engine, tupled.ScanOptions{}, func(k, _ []byte) error {
			r := keys.NewReader(k)
			n, err := r.Int()
			if err != nil || !r.Done() {
				t.Fatalf("engine key %x is not a one-integer tuple: %v", k, err)
			}
			got = append(got, n)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{math.MinInt64, -3, 0, 5, math.MaxInt64}
	if len(got) != len(want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("keys %v, want %v", got, want)
		}
	}
	mustRun(t, s, "SELECT id FROM n WHERE id > -3 AND id <= 5 ORDER BY id", "0\n5\nSELECT 2")
}

// TestKeyFormats: in both formats, the encoding of keys orders them as SQL
// does and decodes back; a catalog entry written before key formats
// existed (no key_format) is read as the raw format it was written in.
func TestKeyFormats(t *testing.T) {
	cases := []struct {
		col  catalog.Column
		vals []types.Value // in SQL order
	}{
		{catalog.Column{Type: types.TInt4}, []types.Value{types.Int4(math.MinInt32), types.Int4(-1), types.Int4(0), types.Int4(1), types.Int4(math.MaxInt32)}},
		{catalog.Column{Type: types.TInt8}, []types.Value{types.Int8(math.MinInt64), types.Int8(-256), types.Int8(-255), types.Int8(0), types.Int8(255), types.Int8(256), types.Int8(math.MaxInt64)}},
		{catalog.Column{Type: types.TBool}, []types.Value{types.Bool(false), types.Bool(true)}},
		{catalog.Column{Type: types.TText}, []types.Value{types.Text(""), types.Text("a"), types.Text("a\u0001"), types.Text("ab"), types.Text("b"), types.Text("é")}},
		{catalog.Column{Type: types.TBpchar, MaxLen: 3}, []types.Value{{T: types.TBpchar, S: "   "}, {T: types.TBpchar, S: "a  "}, {T: types.TBpchar, S: "ab "}, {T: types.TBpchar, S: "b  "}}},
	}
	for _, f := range []catalog.KeyFormat{catalog.KeyFormatRaw, catalog.KeyFormatTuple} {
		for _, c := range cases {
			tbl := &catalog.Table{Cols: []catalog.Column{c.col}, KeyFormat: f}
			var prev []byte
			for i, v := range c.vals {
				k := catalog.AppendKey(nil, tbl, v)
				if i > 0 && bytes.Compare(prev, k) >= 0 {
					t.Errorf("format %d, %s: %s encodes at or below the value before it", f, c.col.Type, v.Debug())
				}
				back, err := catalog.DecodeKey(tbl, k)
				if err != nil || back.Debug() != v.Debug() {
					t.Errorf("format %d: %s decodes to %s, %v", f, v.Debug(), back.Debug(), err)
				}
				prev = k
			}
		}
	}
	var old catalog.Table
	if err := json.Unmarshal([]byte(`{"name":"t","engine":"sql_t","cols":[{"name":"k","type":1}],"key":0}`), &old); err != nil || old.KeyFormat != catalog.KeyFormatRaw {
		t.Fatalf("an old catalog entry: format %d, %v", old.KeyFormat, err)
	}
	if _, err := catalog.DecodeKey(&catalog.Table{Cols: []catalog.Column{{Type: types.TInt4}}, KeyFormat: catalog.KeyFormatTuple}, keys.MustPack(int64(math.MaxInt32)+1)); err == nil {
		t.Error("an int4 key past its range decoded")
	}
}
