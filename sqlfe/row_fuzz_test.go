package sqlfe

import (
	"bytes"
	"errors"
	"testing"
)

// fuzzTables are the column layouts FuzzDecodeRow decodes stored rows with:
// every key type in both key formats, a composite key, and non-key columns
// of every storable type.
var fuzzTables = []*Table{
	{Name: "i", KeyFormat: keyFormatTuple, Cols: []Column{{Name: "k", Type: TInt4}, {Name: "a", Type: TText}, {Name: "b", Type: TInt8}, {Name: "c", Type: TBool}}},
	{Name: "l", Cols: []Column{{Name: "a", Type: TBool}, {Name: "k", Type: TInt8}, {Name: "b", Type: TInt4}}, Key: 1},
	{Name: "t", KeyFormat: keyFormatTuple, Cols: []Column{{Name: "k", Type: TText}, {Name: "a", Type: TText}, {Name: "b", Type: TText}, {Name: "c", Type: TInt4}, {Name: "d", Type: TInt4}, {Name: "e", Type: TInt4}, {Name: "f", Type: TInt4}, {Name: "g", Type: TInt4}, {Name: "h", Type: TInt4}, {Name: "j", Type: TInt4}}},
	{Name: "b", Cols: []Column{{Name: "k", Type: TBool}}},
	// a composite key (compositekey.go) with an unpadded bpchar column
	{Name: "c", KeyFormat: keyFormatTuple, Cols: []Column{{Name: "a", Type: TInt4}, {Name: "v", Type: TText}, {Name: "b", Type: TBpchar}, {Name: "c", Type: TBool}, {Name: "w", Type: TInt8}}, Key: 2, KeyCols: []int{2, 0, 4}},
}

// FuzzDecodeRow is the row decoder under damage the checksums did not
// catch (or a row written by a different column layout): whatever the
// stored key and value bytes, decodeRow never panics, fails only with the
// data-corrupted error, and what it accepts encodes back to a row that
// decodes to the same values.
func FuzzDecodeRow(f *testing.F) {
	for ti, t := range fuzzTables {
		row := make([]Value, len(t.Cols))
		for i, c := range t.Cols {
			switch c.Type {
			case TInt4:
				row[i] = Int4(int32(-7 * i))
			case TInt8:
				row[i] = Int8(int64(1) << 40)
			case TBool:
				row[i] = Bool(i%2 == 0)
			default:
				row[i] = Text("value")
			}
		}
		key := rowKey(nil, t, row)
		f.Add(uint8(ti), key, encodeRow(t, row))
		row[(t.Key+1)%len(row)] = Null(t.Cols[(t.Key+1)%len(row)].Type) // a non-key column
		f.Add(uint8(ti), key, encodeRow(t, row))
	}
	f.Add(uint8(2), []byte("k"), []byte{0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}) // a text length past 2^63
	f.Add(uint8(0), []byte{1, 2, 3}, []byte{})
	f.Fuzz(func(t *testing.T, which uint8, key, val []byte) {
		tbl := fuzzTables[int(which)%len(fuzzTables)]
		dst := make([]Value, len(tbl.Cols))
		if err := decodeRow(tbl, key, val, dst); err != nil {
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("decodeRow failed with %v, not the data-corrupted error", err)
			}
			return
		}
		key2, val2 := rowKey(nil, tbl, dst), encodeRow(tbl, dst)
		again := make([]Value, len(tbl.Cols))
		if err := decodeRow(tbl, key2, val2, again); err != nil {
			t.Fatalf("a decoded row re-encodes to one that does not decode: %v", err)
		}
		for i := range dst {
			if dst[i].debug() != again[i].debug() || dst[i].Null != again[i].Null {
				t.Fatalf("column %d: %s, after a round trip %s", i, dst[i].debug(), again[i].debug())
			}
		}
		if !bytes.Equal(encodeRow(tbl, again), val2) {
			t.Fatal("the encoding of a decoded row is not stable")
		}
	})
}
