package keys

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// typeRank is the order of element types (see the package documentation).
func typeRank(e any) int {
	switch e.(type) {
	case nil:
		return 0
	case []byte:
		return 1
	case string:
		return 2
	case int64, uint64:
		return 3
	case float64:
		return 4
	case bool:
		return 5
	}
	panic(e)
}

// floatKey is the float order the encoding promises: numbers in order,
// -0 before +0, negative-signed NaNs first and the others last.
func floatKey(f float64) (int, float64, bool) {
	switch {
	case math.IsNaN(f) && math.Signbit(f):
		return 0, 0, false
	case math.IsNaN(f):
		return 2, 0, false
	}
	return 1, f, !math.Signbit(f)
}

// compareElem is the model of element order.
func compareElem(a, b any) int {
	if c := cmp.Compare(typeRank(a), typeRank(b)); c != 0 {
		return c
	}
	switch a := a.(type) {
	case []byte:
		return bytes.Compare(a, b.([]byte))
	case string:
		return strings.Compare(a, b.(string))
	case int64, uint64:
		return compareInts(a, b)
	case float64:
		ra, fa, pa := floatKey(a)
		rb, fb, pb := floatKey(b.(float64))
		if c := cmp.Compare(ra, rb); c != 0 || ra != 1 {
			return c
		}
		if fa == 0 && fb == 0 { // -0 < +0
			return cmp.Compare(b2i(pa), b2i(pb))
		}
		return cmp.Compare(fa, fb)
	case bool:
		return cmp.Compare(b2i(a), b2i(b.(bool)))
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func compareInts(a, b any) int {
	neg := func(x any) bool { v, ok := x.(int64); return ok && v < 0 }
	switch na, nb := neg(a), neg(b); {
	case na && !nb:
		return -1
	case !na && nb:
		return 1
	case na && nb:
		return cmp.Compare(a.(int64), b.(int64))
	}
	u := func(x any) uint64 {
		if v, ok := x.(int64); ok {
			return uint64(v)
		}
		return x.(uint64)
	}
	return cmp.Compare(u(a), u(b))
}

func compareTuples(a, b Tuple) int {
	for i := range min(len(a), len(b)) {
		if c := compareElem(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// normal is what Unpack returns for an element Append was given.
func normal(e any) any {
	if u, ok := e.(uint64); ok && u <= math.MaxInt64 {
		return int64(u)
	}
	return e
}

var elemGen = rapid.OneOf(
	rapid.Just[any](nil),
	rapid.Map(rapid.SliceOf(rapid.SampledFrom([]byte{0x00, 0x01, 0x7F, 0xFE, 0xFF, 'a'})), func(b []byte) any { return b }),
	rapid.Map(rapid.String(), func(s string) any { return s }),
	rapid.Map(rapid.StringOf(rapid.SampledFrom([]rune{0, 'a', 'b', 0xFF})), func(s string) any { return s }),
	rapid.Map(rapid.Int64(), func(v int64) any { return v }),
	rapid.Map(rapid.SampledFrom([]int64{math.MinInt64, math.MinInt64 + 1, -1 << 56, -256, -255, -1, 0, 1, 255, 256, math.MaxInt64}), func(v int64) any { return v }),
	rapid.Map(rapid.Uint64Min(math.MaxInt64), func(v uint64) any { return v }),
	rapid.Map(rapid.Float64(), func(f float64) any { return f }),
	rapid.Map(rapid.SampledFrom([]float64{math.Inf(-1), math.Inf(1), math.Copysign(0, -1), 0, math.NaN(), math.Copysign(math.NaN(), -1), math.SmallestNonzeroFloat64, -math.MaxFloat64}), func(f float64) any { return f }),
	rapid.Map(rapid.Bool(), func(b bool) any { return b }),
)

var tupleGen = rapid.Map(rapid.SliceOfN(elemGen, 0, 5), func(es []any) Tuple { return Tuple(es) })

// TestOrder: bytes.Compare of two packed tuples is the element-wise order
// of the tuples.
func TestOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := tupleGen.Draw(t, "a"), tupleGen.Draw(t, "b")
		if got, want := bytes.Compare(MustPack(a...), MustPack(b...)), compareTuples(a, b); got != want {
			t.Fatalf("bytes order %d, tuple order %d: %#v vs %#v", got, want, a, b)
		}
	})
}

// TestRoundTrip: Unpack(Pack(t)) is t (uint64s that fit come back int64),
// and Pack of that gives the same bytes.
func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tup := tupleGen.Draw(t, "t")
		b := MustPack(tup...)
		got, err := Unpack(b)
		if err != nil {
			t.Fatalf("Unpack(%x): %v", b, err)
		}
		if len(got) != len(tup) {
			t.Fatalf("%d elements back, %d in", len(got), len(tup))
		}
		for i := range tup {
			w, g := normal(tup[i]), got[i]
			if f, ok := w.(float64); ok {
				if math.Float64bits(f) != math.Float64bits(g.(float64)) {
					t.Fatalf("element %d: %v back as %v", i, f, g)
				}
				continue
			}
			if !reflect.DeepEqual(w, g) {
				t.Fatalf("element %d: %#v back as %#v", i, w, g)
			}
		}
		if !bytes.Equal(MustPack(got...), b) {
			t.Fatal("repacking changes the bytes")
		}
	})
}

// TestPrefix: a packed tuple is a byte prefix of exactly the packed tuples
// that extend it, and Range covers exactly those.
func TestPrefix(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p, rest, other := tupleGen.Draw(t, "p"), tupleGen.Draw(t, "rest"), tupleGen.Draw(t, "other")
		pb := MustPack(p...)
		start, end, err := Range(p...)
		if err != nil {
			t.Fatal(err)
		}
		ext := MustPack(append(append(Tuple{}, p...), rest...)...)
		if !bytes.HasPrefix(ext, pb) || bytes.Compare(ext, start) < 0 || bytes.Compare(ext, end) >= 0 {
			t.Fatalf("extension %x outside prefix %x / range [%x, %x)", ext, pb, start, end)
		}
		ob := MustPack(other...)
		extends := len(other) >= len(p) && compareTuples(other[:len(p)], p) == 0
		if bytes.HasPrefix(ob, pb) != extends {
			t.Fatalf("%#v extends %#v: %v, byte prefix: %v", other, p, extends, !extends)
		}
		if inRange := bytes.Compare(ob, start) >= 0 && bytes.Compare(ob, end) < 0; inRange != extends {
			t.Fatalf("%#v in Range(%#v): %v, extends: %v", other, p, inRange, extends)
		}
	})
}

// TestEdges pins bytes at the edges of each type.
func TestEdges(t *testing.T) {
	for _, c := range []struct {
		in   any
		want []byte
	}{
		{nil, []byte{0x00}},
		{"", []byte{0x02, 0x00}},
		{"a\x00b", []byte{0x02, 'a', 0x00, 0xFF, 'b', 0x00}},
		{[]byte{0xFF}, []byte{0x01, 0xFF, 0x00}},
		{0, []byte{0x14}},
		{1, []byte{0x15, 0x01}},
		{-1, []byte{0x13, 0xFE}},
		{255, []byte{0x15, 0xFF}},
		{256, []byte{0x16, 0x01, 0x00}},
		{-256, []byte{0x12, 0xFE, 0xFF}},
		{int64(math.MinInt64), []byte{0x0C, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
		{int64(math.MaxInt64), []byte{0x1C, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
		{uint64(math.MaxUint64), []byte{0x1C, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
		{uint8(7), []byte{0x15, 0x07}},
		{false, []byte{0x26}},
		{true, []byte{0x27}},
		{1.0, []byte{0x21, 0xBF, 0xF0, 0, 0, 0, 0, 0, 0}},
	} {
		if got := MustPack(c.in); !bytes.Equal(got, c.want) {
			t.Errorf("Pack(%#v) = %x, want %x", c.in, got, c.want)
		}
	}
	long := strings.Repeat("\x00\xff", 1<<16)
	r := NewReader(MustPack(long, "after"))
	if s, err := r.String(); err != nil || s != long {
		t.Fatalf("a 128 KiB string of 0x00 and 0xFF: %v", err)
	}
	if s, err := r.String(); err != nil || s != "after" || !r.Done() {
		t.Fatalf("the element after it: %q, %v", s, err)
	}
}

// TestBadInput: Pack refuses types without an encoding; Unpack and Reader
// refuse damaged or mistyped bytes with ErrCorrupt.
func TestBadInput(t *testing.T) {
	if _, err := Pack("ok", struct{}{}); err == nil || !strings.Contains(err.Error(), "element 1 is a struct {}") {
		t.Errorf("Pack of a struct: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("MustPack of a map did not panic")
		}
	}()
	for _, b := range [][]byte{
		{0x02, 'a'},                    // unterminated
		{0x01},                         // unterminated, empty
		{0x15},                         // integer cut short
		{0x16, 0x00, 0x01},             // 1 in two bytes
		{0x15, 0x00},                   // 0 in one byte
		{0x13, 0xFF},                   // -0 in one byte
		{0x0C, 0, 0, 0, 0, 0, 0, 0, 0}, // -(2^64-1)
		{0x21, 1, 2},                   // float cut short
		{0x03},                         // unknown code
		{0xFF},                         // unknown code
	} {
		if tup, err := Unpack(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Unpack(%x) = %#v, %v; want ErrCorrupt", b, tup, err)
		}
	}
	r := NewReader(MustPack("s", uint64(math.MaxUint64)))
	if _, err := r.Int(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Int of a string: %v", err)
	}
	if _, err := r.String(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Int(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Int of 2^64-1: %v", err)
	}
	if u, err := r.Uint(); err != nil || u != math.MaxUint64 || !r.Done() {
		t.Errorf("Uint after a refused Int: %d, %v", u, err)
	}
	if _, err := r.Bool(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("reading past the end: %v", err)
	}
	MustPack(map[int]int{})
}

// FuzzUnpack: whatever the bytes, Unpack never panics; what it accepts
// repacks to the same bytes (the encoding is canonical).
func FuzzUnpack(f *testing.F) {
	f.Add(MustPack("orders", int64(-42), uint64(math.MaxUint64), 1.5, true, nil, []byte{0, 0xff}))
	f.Add([]byte{0x02, 'a', 0x00, 0x00})
	f.Add([]byte{0x0C, 0x80, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		tup, err := Unpack(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		if again := MustPack(tup...); !bytes.Equal(again, b) {
			t.Fatalf("%x unpacks to %#v, which packs to %x", b, tup, again)
		}
	})
}

func BenchmarkPack(b *testing.B) {
	b.Run("int64/keys", func(b *testing.B) {
		var dst []byte
		for i := range b.N {
			dst = AppendInt(dst[:0], int64(i))
		}
	})
	b.Run("int64/bigendian", func(b *testing.B) {
		var dst []byte
		for i := range b.N {
			dst = binary.BigEndian.AppendUint64(dst[:0], uint64(i)^1<<63)
		}
	})
	b.Run("string,int64/keys", func(b *testing.B) {
		var dst []byte
		for i := range b.N {
			dst = AppendInt(AppendString(dst[:0], "customer-00042"), int64(i))
		}
	})
	b.Run("string,int64/bigendian", func(b *testing.B) {
		var dst []byte
		for i := range b.N {
			dst = binary.BigEndian.AppendUint64(append(append(dst[:0], "customer-00042"...), 0), uint64(i)^1<<63)
		}
	})
	b.Run("string,int64/Pack", func(b *testing.B) {
		for i := range b.N {
			_ = MustPack("customer-00042", int64(i))
		}
	})
}
