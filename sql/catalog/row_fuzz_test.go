package catalog

import (
	"bytes"
	"errors"
	"testing"

	"github.com/tupled/tupled/sql/types"
)

// fuzzTables are the column layouts FuzzDecodeRow decodes stored rows with:
// every key type in both key formats, a composite key, and non-key columns
// of every storable type.
var fuzzTables = []*Table{
	{Name: "i", KeyFormat: KeyFormatTuple, Cols: []Column{{Name: "k", Type: types.TInt4}, {Name: "a", Type: types.TText}, {Name: "b", Type: types.TInt8}, {Name: "c", Type: types.TBool}}},
	{Name: "l", Cols: []Column{{Name: "a", Type: types.TBool}, {Name: "k", Type: types.TInt8}, {Name: "b", Type: types.TInt4}}, Key: 1},
	{Name: "t", KeyFormat: KeyFormatTuple, Cols: []Column{{Name: "k", Type: types.TText}, {Name: "a", Type: types.TText}, {Name: "b", Type: types.TText}, {Name: "c", Type: types.TInt4}, {Name: "d", Type: types.TInt4}, {Name: "e", Type: types.TInt4}, {Name: "f", Type: types.TInt4}, {Name: "g", Type: types.TInt4}, {Name: "h", Type: types.TInt4}, {Name: "j", Type: types.TInt4}}},
	{Name: "b", Cols: []Column{{Name: "k", Type: types.TBool}}},
	// a composite key (compositekey.go) with an unpadded bpchar column
	{Name: "c", KeyFormat: KeyFormatTuple, Cols: []Column{{Name: "a", Type: types.TInt4}, {Name: "v", Type: types.TText}, {Name: "b", Type: types.TBpchar}, {Name: "c", Type: types.TBool}, {Name: "w", Type: types.TInt8}}, Key: 2, KeyCols: []int{2, 0, 4}},
}

// sampleRow is a row of t with a value of its type in every column, text
// the text columns'.
func sampleRow(t *Table, text string) []types.Value {
	row := make([]types.Value, len(t.Cols))
	for i, c := range t.Cols {
		switch c.Type {
		case types.TInt4:
			row[i] = types.Int4(int32(-7 * i))
		case types.TInt8:
			row[i] = types.Int8(int64(1) << 40)
		case types.TBool:
			row[i] = types.Bool(i%2 == 0)
		default:
			row[i] = types.Text(text)
		}
	}
	return row
}

// FuzzDecodeRow is the row decoder under damage the checksums did not
// catch (or a row written by a different column layout): whatever the
// stored key and value bytes, DecodeRow never panics, fails only with the
// data-corrupted error, and what it accepts encodes back to a row that
// decodes to the same values.
func FuzzDecodeRow(f *testing.F) {
	for ti, t := range fuzzTables {
		row := sampleRow(t, "value")
		key := RowKey(nil, t, row)
		f.Add(uint8(ti), key, EncodeRow(t, row))
		row[(t.Key+1)%len(row)] = types.Null(t.Cols[(t.Key+1)%len(row)].Type) // a non-key column
		f.Add(uint8(ti), key, EncodeRow(t, row))
	}
	f.Add(uint8(2), []byte("k"), []byte{0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}) // a text length past 2^63
	f.Add(uint8(0), []byte{1, 2, 3}, []byte{})
	f.Fuzz(func(t *testing.T, which uint8, key, val []byte) {
		tbl := fuzzTables[int(which)%len(fuzzTables)]
		dst := make([]types.Value, len(tbl.Cols))
		if err := DecodeRow(tbl, key, val, dst); err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decodeRow failed with %v, not the data-corrupted error", err)
			}
			return
		}
		key2, val2 := RowKey(nil, tbl, dst), EncodeRow(tbl, dst)
		again := make([]types.Value, len(tbl.Cols))
		if err := DecodeRow(tbl, key2, val2, again); err != nil {
			t.Fatalf("a decoded row re-encodes to one that does not decode: %v", err)
		}
		for i := range dst {
			if dst[i].Debug() != again[i].Debug() || dst[i].Null != again[i].Null {
				t.Fatalf("column %d: %s, after a round trip %s", i, dst[i].Debug(), again[i].Debug())
			}
		}
		if !bytes.Equal(EncodeRow(tbl, again), val2) {
			t.Fatal("the encoding of a decoded row is not stable")
		}
	})
}

// TestAppendRowAfterOtherBytes: AppendRow onto a buffer that already holds
// bytes, and has no room to grow in place, appends exactly EncodeRow's
// bytes — the NULL bitmap set in the appended part, not in the old array
// (COPY reuses one buffer for every row, which grows while a row is
// encoded).
func TestAppendRowAfterOtherBytes(t *testing.T) {
	for _, tbl := range fuzzTables {
		row := sampleRow(tbl, "a value longer than the buffer's spare room")
		for i := range row {
			if !tbl.IsKeyCol(i) && i%2 == 1 {
				row[i] = types.Null(tbl.Cols[i].Type)
			}
		}
		want := EncodeRow(tbl, row)
		prefix := []byte("old")
		got := AppendRow(prefix[:len(prefix):len(prefix)], tbl, row)
		if !bytes.Equal(got[:3], prefix) || !bytes.Equal(got[3:], want) {
			t.Fatalf("table %s: AppendRow gave %x after the prefix, EncodeRow %x", tbl.Name, got[3:], want)
		}
	}
}
