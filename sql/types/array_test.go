package types

import (
	"testing"

	"github.com/tupled/tupled/sql/pgerror"
)

// PostgreSQL 15's array_in/array_out on these inputs.
func TestArrayText(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{`{}`, `{}`},
		{` { } `, `{}`},
		{`{a,b}`, `{a,b}`},
		{`{ a , b c }`, `{a,"b c"}`},
		{`{"",NULL,"NULL",null}`, `{"",NULL,"NULL",NULL}`},
		{`{"a\"b","c\\d",e\,f}`, `{"a\"b","c\\d","e,f"}`},
		{`{"{x}",é}`, `{"{x}",é}`},
		{`{\NULL}`, `{"NULL"}`},
	} {
		v, err := ParseText(TTextArray, c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if v.String() != c.out {
			t.Errorf("%s: got %s, want %s", c.in, v.String(), c.out)
		}
		b, err := ParseBinary(TTextArray, v.AppendBinary(nil))
		if err != nil || b.S != v.S {
			t.Errorf("%s: binary round trip gave %s, %v", c.in, b.S, err)
		}
	}
	for _, in := range []string{`a`, `{a`, `{a,}`, `{,a}`, `{"a"b}`, `{a}x`, `{"a}`, `{a{}`} {
		if _, err := ParseText(TTextArray, in); code(err) != pgerror.CodeInvalidText {
			t.Errorf("%s: got %v, want 22P02", in, err)
		}
	}
	if _, err := ParseText(TTextArray, `{{a},{b}}`); code(err) != pgerror.CodeFeatureNotSupp {
		t.Errorf("2-D: got %v, want 0A000", err)
	}
}

func TestArrayElementTypes(t *testing.T) {
	for _, c := range []struct {
		t       Type
		in, out string
	}{
		{TBoolArray, `{true,f,NULL}`, `{t,f,NULL}`},
		{TNumericArray, `{1.50, -2}`, `{1.50,-2}`},
		{TFloat8Array, `{1e3,0.5}`, `{1000,0.5}`},
		{TDateArray, `{2024-01-02}`, `{2024-01-02}`},
		{TUUIDArray, `{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}`, `{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}`},
	} {
		v, err := ParseText(c.t, c.in)
		if err != nil || v.String() != c.out {
			t.Errorf("%s %s: got %s, %v; want %s", c.t, c.in, v.String(), err, c.out)
			continue
		}
		b, err := ParseBinary(c.t, v.AppendBinary(nil))
		if err != nil || b.S != v.S {
			t.Errorf("%s: binary round trip gave %s, %v", c.in, b.S, err)
		}
	}
	if _, err := ParseText(TBoolArray, `{maybe}`); code(err) != pgerror.CodeInvalidText {
		t.Errorf("bad element: %v", err)
	}
	// binary text[] with an int4 element type is 42804
	b := Value{T: TInt4Array, A: []int64{1}}.AppendBinary(nil)
	if _, err := ParseBinary(TTextArray, b); code(err) != pgerror.CodeDatatypeMismatch {
		t.Errorf("wrong element type: %v", err)
	}
}

func TestArrayCompare(t *testing.T) {
	p := func(s string) Value { v, _ := ParseText(TTextArray, s); return v }
	for _, c := range []struct {
		a, b string
		want int
	}{
		{`{a}`, `{a,b}`, -1}, {`{b}`, `{a,b}`, 1}, {`{a,NULL}`, `{a,b}`, 1}, {`{}`, `{a}`, -1}, {`{a,b}`, `{a,b}`, 0},
	} {
		if got := Compare(p(c.a), p(c.b)); got != c.want {
			t.Errorf("%s vs %s: %d, want %d", c.a, c.b, got, c.want)
		}
	}
	v, err := Cast(p(`{1,NULL,3}`), TInt8Array)
	if err != nil || v.String() != "{1,NULL,3}" || v.A != nil {
		t.Errorf("NULL into bigint[]: %v %v", v.Debug(), err)
	}
	if w, err := Cast(v, TInt4Array); err != nil || w.S != v.S {
		t.Errorf("bigint[] with a NULL to int[]: %v %v", w.Debug(), err)
	}
	if w, _ := ParseText(TInt8Array, "{1,NULL,3}"); Compare(v, w) != 0 || Compare(v, Value{T: TInt8Array, A: []int64{1, 2}}) != 1 {
		t.Errorf("compare with a NULL element")
	}
	if w, _ := ParseText(TInt4Array, "{ 1 , 2 }"); w.S != "" || len(w.A) != 2 {
		t.Errorf("int[] without NULLs not in A: %v", w.Debug())
	}
	v, err = Cast(p(`{1,2}`), TInt8Array)
	if err != nil || v.String() != "{1,2}" {
		t.Errorf("text[] to bigint[]: %v %v", v.Debug(), err)
	}
}

func code(err error) string {
	if e, ok := err.(*pgerror.Error); ok {
		return e.Code
	}
	return ""
}

// FuzzArrayText: array_in never panics and fails only with 22P02, 0A000
// or an element's own error; what it accepts is canonical after one
// output (reads back to the same text) and survives array_send/array_recv.
func FuzzArrayText(f *testing.F) {
	for _, s := range []string{`{}`, `{a,"b c",NULL}`, `{"\\",\"}`, ` { x , y } `, `{{a}}`, `{1,2}`, `[1:2]={a,b}`} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, ints bool) {
		typ := TTextArray
		if ints {
			typ = TInt8Array
		}
		v, err := ParseText(typ, s)
		if err != nil {
			switch code(err) {
			case pgerror.CodeInvalidText, pgerror.CodeFeatureNotSupp, pgerror.CodeNumericRange, pgerror.CodeCharacterNotInRepertoire:
				return
			}
			t.Fatalf("%q: %v (%s)", s, err, code(err))
		}
		out := v.String()
		w, err := ParseText(typ, out)
		if err != nil || w.String() != out {
			t.Fatalf("%q gave %q, which reads back as %q, %v", s, out, w.String(), err)
		}
		b, err := ParseBinary(typ, v.AppendBinary(nil))
		if err != nil || b.String() != out {
			t.Fatalf("%q: binary round trip gave %q, %v", s, b.String(), err)
		}
	})
}

// FuzzArrayBinary: array_recv of any bytes never panics and fails only
// with 22P03, 42804 (another element type), 0A000 or 22021 (an element's
// bad UTF-8); what it accepts is sent back and received as the same array.
func FuzzArrayBinary(f *testing.F) {
	for _, s := range []string{`{}`, `{a,"b c",NULL}`, `{t,f}`} {
		typ := TTextArray
		if s == `{t,f}` {
			typ = TBoolArray
		}
		v, _ := ParseText(typ, s)
		f.Add(v.AppendBinary(nil), typ == TBoolArray)
	}
	f.Fuzz(func(t *testing.T, b []byte, bools bool) {
		typ := TTextArray
		if bools {
			typ = TBoolArray
		}
		v, err := ParseBinary(typ, b)
		if err != nil {
			switch code(err) {
			case pgerror.CodeInvalidBinary, pgerror.CodeDatatypeMismatch, pgerror.CodeFeatureNotSupp, pgerror.CodeCharacterNotInRepertoire:
				return
			}
			t.Fatalf("%x: %v (%s)", b, err, code(err))
		}
		w, err := ParseBinary(typ, v.AppendBinary(nil))
		if err != nil || w.S != v.S {
			t.Fatalf("%x: %q, sent and received %q, %v", b, v.S, w.S, err)
		}
	})
}
