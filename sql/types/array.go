package types

import (
	"encoding/binary"
	"strings"

	"github.com/tupled/tupled/sql/pgerror"
)

// Arrays of the non-integer element types (text[], varchar[] as a text[]
// with Mod.Varchar, boolean[], numeric[], double precision[], uuid[],
// date[], timestamptz[]) are held in S in their canonical text form: the
// array_out output of their elements' canonical text ({a,"b c",NULL}),
// one-dimensional with lower bound 1. The text form keeps a Value's
// datum in one field, makes equal arrays equal strings (their elements
// are canonical) and can be stored by the row codec as it is; the cost is
// a parse per use (ArrayElems), which only the array functions pay.
// Integer arrays keep their elements in A when none is NULL; one with a
// NULL element is held in S, in its text form like the other arrays (A
// nil), so each integer array still has one representation. Their I/O is
// the same array_in, array_out, array_send and array_recv.
// These arrays are NoKeyType: their text does not sort as the arrays do.
// Each enum type has its array type, the next Type number (enum.go).

// arrayType is one array type: its element type, its OID and its name.
type arrayType struct {
	elem Type
	oid  uint32
}

var arrayTypes = map[Type]arrayType{
	TInt4Array:        {TInt4, OIDInt4Array},
	TInt8Array:        {TInt8, OIDInt8Array},
	TTextArray:        {TText, OIDTextArray},
	TBoolArray:        {TBool, 1000},
	TNumericArray:     {TNumeric, 1231},
	TFloat8Array:      {TFloat8, 1022},
	TUUIDArray:        {TUUID, 2951},
	TDateArray:        {TDate, 1182},
	TTimestamptzArray: {TTimestamptz, 1185},
}

// OIDs of the array types besides the integer ones.
const (
	OIDTextArray    = 1009
	OIDVarcharArray = 1015
)

// IsArray reports whether t is an array type.
func IsArray(t Type) bool {
	if t >= FirstEnum {
		return isEnumArray(t) // enum.go
	}
	_, ok := arrayTypes[t]
	return ok
}

// ElemType is the element type of array type t (TUnknown if t is none).
func ElemType(t Type) Type {
	if isEnumArray(t) {
		return t - 1
	}
	return arrayTypes[t].elem
}

// ArrayOf is the array type of element type e, false if there is none.
// character(n) elements make a text[].
func ArrayOf(e Type) (Type, bool) {
	if e == TBpchar || e == TUnknown {
		e = TText
	}
	if IsEnum(e) {
		return e + 1, true
	}
	for t, a := range arrayTypes {
		if a.elem == e {
			return t, true
		}
	}
	return 0, false
}

// ArrayElems is array v's elements (v not NULL), each of the element type.
func ArrayElems(v Value) ([]Value, error) {
	el := ElemType(v.T)
	if IsIntArray(v.T) && v.S == "" {
		out := make([]Value, len(v.A))
		for i, x := range v.A {
			out[i] = Value{T: el, I: x}
		}
		return out, nil
	}
	return parseElems(el, v.S)
}

// parseElems is the elements of array literal s, each read as type el.
func parseElems(el Type, s string) ([]Value, error) {
	parts, nulls, err := splitArray(s)
	if err != nil {
		return nil, err
	}
	out := make([]Value, len(parts))
	for i, p := range parts {
		if nulls[i] {
			out[i] = Null(el)
			continue
		}
		if out[i], err = ParseText(el, p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MakeArray is the array of type t with elements els (of t's element
// type). An integer array with a NULL element is held in S.
func MakeArray(t Type, els []Value) (Value, error) {
	if IsIntArray(t) {
		out := Value{T: t, A: make([]int64, 0, len(els))}
		hasNull := false
		for _, e := range els {
			if e.Null {
				hasNull = true
				continue
			}
			if t == TInt4Array && int64(int32(e.I)) != e.I {
				return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "integer out of range")
			}
			out.A = append(out.A, e.I)
		}
		if !hasNull {
			return out, nil
		}
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range els {
		if i > 0 {
			b.WriteByte(',')
		}
		if e.Null {
			b.WriteString("NULL")
			continue
		}
		QuoteArrayElem(&b, e.String())
	}
	b.WriteByte('}')
	return Value{T: t, S: b.String()}, nil
}

// QuoteArrayElem writes s as array_out writes an element: in double
// quotes, with \ before " and \, when it is empty, is NULL in any case,
// or holds a brace, a comma, a quote, a backslash or white space.
func QuoteArrayElem(b *strings.Builder, s string) {
	if s != "" && !strings.EqualFold(s, "NULL") && !strings.ContainsAny(s, "{},\"\\ \t\n\r\v\f") {
		b.WriteString(s)
		return
	}
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
}

func isArraySpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// splitArray reads a one-dimensional array literal as array_in does: its
// elements' texts (quotes and backslash escapes removed, unquoted white
// space around them dropped) and which are an unquoted NULL.
func splitArray(s string) ([]string, []bool, error) {
	bad := func(detail string) ([]string, []bool, error) {
		return nil, nil, &pgerror.Error{Code: pgerror.CodeInvalidText, Message: "malformed array literal: \"" + s + "\"", Detail: detail}
	}
	i := 0
	for i < len(s) && isArraySpace(s[i]) {
		i++
	}
	if i == len(s) || s[i] != '{' {
		if i < len(s) && s[i] == '[' {
			return nil, nil, pgerror.NotSupported("array dimension decorations are not supported")
		}
		return bad(`Array value must start with "{" or dimension information.`)
	}
	i++
	var parts []string
	var nulls []bool
	for i < len(s) && isArraySpace(s[i]) {
		i++
	}
	if i < len(s) && s[i] == '}' {
		parts, nulls = []string{}, []bool{}
		i++
	} else {
		for {
			for i < len(s) && isArraySpace(s[i]) {
				i++
			}
			if i == len(s) {
				return bad("Unexpected end of input.")
			}
			if s[i] == '{' {
				return nil, nil, pgerror.NotSupported("multidimensional arrays are not supported")
			}
			var el strings.Builder
			quoted, anyQuote, escaped := false, false, false
			keep := 0 // el's length up to its last quoted or escaped byte
			for ; i < len(s); i++ {
				c := s[i]
				if !quoted && (c == ',' || c == '}') {
					break
				}
				switch {
				case c == '\\':
					if i+1 == len(s) || anyQuote && !quoted {
						return bad("Unexpected end of input.")
					}
					i++
					el.WriteByte(s[i])
					keep, escaped = el.Len(), true
				case c == '"':
					if !quoted && (anyQuote || el.Len() > 0) {
						return bad("Unexpected array element.")
					}
					quoted, anyQuote = !quoted, true
					keep = el.Len()
				case quoted:
					el.WriteByte(c)
					keep = el.Len()
				case c == '{':
					return bad(`Unexpected "{" character.`)
				case isArraySpace(c):
					el.WriteByte(c)
				default:
					if anyQuote {
						return bad("Unexpected array element.")
					}
					el.WriteByte(c)
					keep = el.Len()
				}
			}
			if quoted || i == len(s) {
				return bad("Unexpected end of input.")
			}
			txt := el.String()[:keep]
			if txt == "" && !anyQuote {
				if s[i] == '}' && len(parts) == 0 {
					return bad("Unexpected \"}\" character.")
				}
				return bad(`Unexpected "` + string(s[i]) + `" character.`)
			}
			parts = append(parts, txt)
			nulls = append(nulls, !anyQuote && !escaped && strings.EqualFold(txt, "NULL"))
			if s[i] == '}' {
				i++
				break
			}
			i++
		}
	}
	for ; i < len(s); i++ {
		if !isArraySpace(s[i]) {
			return bad("Junk after closing right brace.")
		}
	}
	return parts, nulls, nil
}

// parseArrayText is array type t's text input: each element is read as
// the element type (its errors are the element type's) and written back
// in canonical form.
func parseArrayText(t Type, s string) (Value, error) {
	els, err := parseElems(ElemType(t), s)
	if err != nil {
		return Value{}, err
	}
	return MakeArray(t, els)
}

// appendArrayBinary is array_send: ndim, has-nulls flag, element type,
// the dimension's length and lower bound, then each element's length (-1:
// NULL) and binary form. An empty array has no dimension.
func appendArrayBinary(dst []byte, v Value) []byte {
	els, err := ArrayElems(v)
	if err != nil {
		els = nil // S is canonical: a stored array always parses
	}
	hasNull := uint32(0)
	for _, e := range els {
		if e.Null {
			hasNull = 1
		}
	}
	ndim := uint32(1)
	if len(els) == 0 {
		ndim = 0
	}
	dst = binary.BigEndian.AppendUint32(dst, ndim)
	dst = binary.BigEndian.AppendUint32(dst, hasNull)
	dst = binary.BigEndian.AppendUint32(dst, ElemType(v.T).OID())
	if ndim == 0 {
		return dst
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(els)))
	dst = binary.BigEndian.AppendUint32(dst, 1)
	for _, e := range els {
		if e.Null {
			dst = binary.BigEndian.AppendUint32(dst, 0xffffffff)
			continue
		}
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		dst = e.AppendBinary(dst)
		binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	}
	return dst
}

// parseArrayBinary is array_recv for array type t: one dimension (or
// none), elements of t's element type (varchar elements for a text[]).
func parseArrayBinary(t Type, b []byte) (Value, error) {
	bad := func(msg string) (Value, error) {
		return Value{}, pgerror.Errorf(pgerror.CodeInvalidBinary, "%s", msg)
	}
	if len(b) < 12 {
		return bad("insufficient data left in message")
	}
	ndim := binary.BigEndian.Uint32(b)
	flags := binary.BigEndian.Uint32(b[4:])
	oid := binary.BigEndian.Uint32(b[8:])
	el := ElemType(t)
	if oid != el.OID() && !(el == TText && (oid == OIDVarchar || oid == OIDBpchar)) {
		return Value{}, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "binary data has array element type %d instead of expected %d", oid, el.OID())
	}
	if flags > 1 {
		return bad("invalid array flags")
	}
	if ndim == 0 {
		return MakeArray(t, nil)
	}
	if ndim != 1 {
		return Value{}, pgerror.NotSupported("multidimensional arrays are not supported")
	}
	if len(b) < 20 {
		return bad("insufficient data left in message")
	}
	n := binary.BigEndian.Uint32(b[12:])
	p := b[20:]
	if uint64(n) > uint64(len(p))/4 {
		return bad("insufficient data left in message")
	}
	els := make([]Value, 0, n)
	for k := uint32(0); k < n; k++ {
		if len(p) < 4 {
			return bad("insufficient data left in message")
		}
		l := int32(binary.BigEndian.Uint32(p))
		p = p[4:]
		if l == -1 {
			els = append(els, Null(el))
			continue
		}
		if l < 0 || int(l) > len(p) {
			return bad("insufficient data left in message")
		}
		e, err := ParseBinary(el, p[:l])
		if err != nil {
			return Value{}, err
		}
		els = append(els, e)
		p = p[l:]
	}
	if len(p) != 0 {
		return bad("incorrect binary data format in array")
	}
	return MakeArray(t, els)
}

// compareArrays is btarraycmp: element by element (a NULL element after
// every other value), then the shorter array first.
func compareArrays(a, b Value) int {
	x, err1 := ArrayElems(a)
	y, err2 := ArrayElems(b)
	if err1 != nil || err2 != nil {
		return strings.Compare(a.S, b.S)
	}
	for i := 0; i < len(x) && i < len(y); i++ {
		switch {
		case x[i].Null && y[i].Null:
			continue
		case x[i].Null:
			return 1
		case y[i].Null:
			return -1
		}
		if c := Compare(x[i], y[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(x) < len(y):
		return -1
	case len(x) > len(y):
		return 1
	}
	return 0
}

// castArray casts array v to array type t element by element.
func castArray(v Value, t Type) (Value, error) {
	els, err := ArrayElems(v)
	if err != nil {
		return Value{}, err
	}
	for i, e := range els {
		if e.Null {
			els[i] = Null(ElemType(t))
			continue
		}
		if els[i], err = Cast(e, ElemType(t)); err != nil {
			return Value{}, err
		}
	}
	return MakeArray(t, els)
}
