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
	// a composite key of every typed key type (KeyFormatTyped), whose
	// lossy columns' text is in the value
	{Name: "y", KeyFormat: KeyFormatTyped, Cols: []Column{{Name: "d", Type: types.TDate}, {Name: "n", Type: types.TNumeric}, {Name: "v", Type: types.TText}, {Name: "f", Type: types.TFloat8}, {Name: "t", Type: types.TTimestamptz}, {Name: "i", Type: types.TInterval}, {Name: "r", Type: types.TFloat4}, {Name: "s", Type: types.TTimestamp}},
		Key: 0, KeyCols: []int{0, 1, 3, 4, 5, 6, 7}},
	{Name: "n", KeyFormat: KeyFormatTyped, Cols: []Column{{Name: "k", Type: types.TNumeric}, {Name: "v", Type: types.TInt4}}},
	// array columns: a text[] held as its text, integer arrays decoded
	// from theirs
	{Name: "a", KeyFormat: KeyFormatTuple, Cols: []Column{{Name: "k", Type: types.TInt4}, {Name: "t", Type: types.TTextArray}, {Name: "i", Type: types.TInt4Array}, {Name: "j", Type: types.TInt8Array}}},
}

// typedSeed is a value of each typed key type for the seeds.
var typedSeed = map[types.Type]string{
	types.TDate: "1900-02-28", types.TNumeric: "-12.3400", types.TFloat8: "-0", types.TTimestamptz: "2020-01-01 10:00:00.5+00",
	types.TInterval: "1 mon 02:00:00", types.TFloat4: "1.5", types.TTimestamp: "1999-12-31 23:59:59.999999",
}

// arraySeed is a value of each array type in fuzzTables.
var arraySeed = map[types.Type]string{
	types.TTextArray: `{a,"b c",NULL,""}`, types.TInt4Array: "{1,-2}", types.TInt8Array: "{9223372036854775807}",
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
			txt, ok := typedSeed[c.Type] // a typed key type: a value of its own
			if a, isArr := arraySeed[c.Type]; isArr {
				txt, ok = a, true
			}
			if ok {
				v, err := types.ParseText(c.Type, txt)
				if err != nil {
					panic(err)
				}
				row[i] = v
			}
		}
	}
	return row
}

// FuzzDecodeRow is the row decoder under damage the checksums did not
// catch (or a row written by a different column layout): whatever the
// stored key and value bytes, DecodeRow never panics, fails only with the
// data-corrupted error, and what it accepts encodes back to a row that
// decodes to the same values; DecodeRowCols agrees with it.
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
		err := DecodeRow(tbl, key, val, dst)
		// DecodeRowCols, reading the columns which's bits pick, accepts
		// exactly what DecodeRow does and agrees on the columns read
		// (the key's always); the others are NULL.
		read := make([]bool, len(tbl.Cols))
		for i := range read {
			read[i] = which&(1<<(i%8)) != 0
		}
		some := make([]types.Value, len(tbl.Cols))
		if serr := DecodeRowCols(tbl, key, val, some, read); (serr == nil) != (err == nil) {
			t.Fatalf("DecodeRowCols: %v, DecodeRow: %v", serr, err)
		} else if err == nil {
			for i := range some {
				switch {
				case read[i] || tbl.IsKeyCol(i):
					if some[i].Debug() != dst[i].Debug() || some[i].Null != dst[i].Null {
						t.Fatalf("column %d read: %s, DecodeRow's %s", i, some[i].Debug(), dst[i].Debug())
					}
				case !some[i].Null:
					t.Fatalf("column %d not read: %s, not NULL", i, some[i].Debug())
				}
			}
		}
		if err != nil {
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
