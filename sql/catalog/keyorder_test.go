package catalog

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/tupled/tupled/sql/types"
	"pgregory.net/rapid"
)

// typedValue draws a value of type t as its text, parsed: numerics of any
// sign, scale and exponent; floats with -0, the infinities and NaN; dates
// and timestamps across five centuries; intervals mixing months, days and
// microseconds of either sign.
func typedValue(t types.Type) *rapid.Generator[types.Value] {
	return rapid.Custom(func(rt *rapid.T) types.Value {
		var s string
		switch t {
		case types.TNumeric:
			digits := rapid.StringMatching(`[0-9]{1,25}`).Draw(rt, "digits")
			scale := rapid.IntRange(0, len(digits)+3).Draw(rt, "scale")
			sign := rapid.SampledFrom([]string{"", "-"}).Draw(rt, "sign")
			s = sign + digits + "e-" + fmt.Sprint(scale)
			if rapid.Bool().Draw(rt, "trailing zeros") {
				s = sign + digits + ".000"
			}
		case types.TFloat8, types.TFloat4:
			s = rapid.SampledFrom([]string{"-0", "0", "NaN", "Infinity", "-Infinity", "1e-300", "-1.5"}).Draw(rt, "special")
			if rapid.Bool().Draw(rt, "ordinary") {
				f := rapid.Float64Range(-1e30, 1e30).Draw(rt, "f")
				if t == types.TFloat4 {
					f = float64(float32(f))
				}
				s = fmt.Sprint(f)
			}
		case types.TDate:
			s = fmt.Sprintf("%04d-%02d-%02d", rapid.IntRange(1600, 2100).Draw(rt, "y"), rapid.IntRange(1, 12).Draw(rt, "m"), rapid.IntRange(1, 28).Draw(rt, "d"))
		case types.TTimestamp, types.TTimestamptz:
			s = fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d.%06d", rapid.IntRange(1600, 2100).Draw(rt, "y"), rapid.IntRange(1, 12).Draw(rt, "m"), rapid.IntRange(1, 28).Draw(rt, "d"),
				rapid.IntRange(0, 23).Draw(rt, "h"), rapid.IntRange(0, 59).Draw(rt, "mi"), rapid.IntRange(0, 59).Draw(rt, "s"), rapid.IntRange(0, 999999).Draw(rt, "us"))
			if t == types.TTimestamptz {
				s += "+00"
			}
		case types.TInterval:
			s = fmt.Sprintf("%d mons %d days %d microseconds", rapid.IntRange(-50, 50).Draw(rt, "mons"), rapid.IntRange(-100, 100).Draw(rt, "days"),
				rapid.Int64Range(-3*86400e6, 3*86400e6).Draw(rt, "us"))
		}
		v, err := types.ParseText(t, s)
		if err != nil {
			rt.Fatalf("%s %q: %v", t, s, err)
		}
		return v
	})
}

// TestTypedKeyOrder: in KeyFormatTyped, the byte order of two keys is the
// SQL order of their values (types.Compare), equal values have one key,
// and a row of each typed type reads back with the text it was written
// with, alone and in a composite key.
func TestTypedKeyOrder(t *testing.T) {
	for _, ty := range []types.Type{types.TNumeric, types.TFloat8, types.TFloat4, types.TDate, types.TTimestamp, types.TTimestamptz, types.TInterval} {
		t.Run(ty.String(), func(t *testing.T) {
			one := &Table{KeyFormat: KeyFormatTyped, Cols: []Column{{Name: "k", Type: ty}, {Name: "v", Type: types.TInt4}}}
			two := &Table{KeyFormat: KeyFormatTyped, Cols: []Column{{Name: "a", Type: ty}, {Name: "b", Type: ty}}, KeyCols: []int{0, 1}}
			rapid.Check(t, func(rt *rapid.T) {
				a, b := typedValue(ty).Draw(rt, "a"), typedValue(ty).Draw(rt, "b")
				ka, kb := AppendKey(nil, one, a), AppendKey(nil, one, b)
				if got, want := bytes.Compare(ka, kb), sign(types.Compare(a, b)); got != want {
					rt.Fatalf("%s vs %s: keys compare %d, values %d", a.S, b.S, got, want)
				}
				for _, tbl := range []*Table{one, two} {
					row := []types.Value{a, types.Int4(7)}
					if tbl == two {
						row[1] = b
					}
					key, val := RowKey(nil, tbl, row), EncodeRow(tbl, row)
					got := make([]types.Value, 2)
					if err := DecodeRow(tbl, key, val, got); err != nil {
						rt.Fatalf("%v: %v", row, err)
					}
					for i := range row {
						if got[i].Debug() != row[i].Debug() {
							rt.Fatalf("column %d: wrote %s, read %s", i, row[i].Debug(), got[i].Debug())
						}
					}
					// the key alone gives a value equal to the one written
					back := make([]types.Value, 2)
					if err := DecodeRowKey(tbl, key, back); err != nil {
						rt.Fatal(err)
					}
					if types.Compare(back[0], a) != 0 {
						rt.Fatalf("key of %s reads back as %s", a.S, back[0].S)
					}
				}
			})
		})
	}
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// A damaged value whose text for a lossy key column is not the key's
// value (or not a value's canonical text) is corrupt, not a row that
// shows one number and is stored under another.
func TestTypedKeyTextMustMatch(t *testing.T) {
	tbl := &Table{KeyFormat: KeyFormatTyped, Cols: []Column{{Name: "k", Type: types.TNumeric}, {Name: "v", Type: types.TInt4}}}
	key := AppendKey(nil, tbl, types.Value{T: types.TNumeric, S: "1.50"})
	for _, text := range []string{"1.50", "1.5", "1.500", "2", "1.50 ", "x", "+1.5"} {
		val := EncodeRow(tbl, []types.Value{{T: types.TNumeric, S: text}, types.Int4(1)})
		got := make([]types.Value, 2)
		err := DecodeRow(tbl, key, val, got)
		wantOK := text == "1.50" || text == "1.5" || text == "1.500"
		if (err == nil) != wantOK {
			t.Errorf("text %q under key 1.50: %v", text, err)
		}
		if err == nil && got[0].S != text {
			t.Errorf("text %q read back as %q", text, got[0].S)
		}
	}
	if math.Signbit(types.KeyFloat(types.Value{T: types.TFloat8, S: "-0"})) {
		t.Error("-0's key is not 0's")
	}
}
