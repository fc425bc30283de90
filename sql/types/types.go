package types

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/tupled/tupled/sql/pgerror"
)

// MaxCharLength is PostgreSQL's MaxAttrSize in characters: the largest n of
// varchar(n) and character(n).
const MaxCharLength = 10485760

// Type is a SQL type the front end knows.
type Type uint16

const (
	TUnknown   Type = iota // an untyped literal ('5') or NULL: resolved by context
	TBool                  // boolean
	TInt4                  // integer
	TInt8                  // bigint
	TText                  // text
	TInt4Array             // integer[] (only as a function argument)
	// TBpchar is character(n) (PostgreSQL's bpchar): a text blank-padded to
	// n characters whose trailing spaces are insignificant in comparisons
	// and keys. The values of this enumeration are stored in the catalog:
	// new types go at the end.
	TBpchar
	// TVoid is void: only the result of a function (pg_advisory_lock),
	// output as an empty string.
	TVoid
	TNumeric     // numeric without a modifier (see numeric.go)
	TTimestamp   // timestamp without time zone (see timestamp.go)
	TDate        // date (see datetime.go)
	TTimestamptz // timestamp with time zone (see datetime.go)
	TFloat8      // double precision (see float.go)
	TFloat4      // real (see float.go)
	TInt8Array   // bigint[] (a parameter or cast for = ANY: sqlc's queries)
	TUUID        // uuid (see uuid.go)
	TBytea       // bytea (see bytea.go)
	TJSON        // json (see json.go)
	TJSONB       // jsonb (see json.go)
	TInterval    // interval (see interval.go)
	TTime        // time without time zone (see timeofday.go)
	// The arrays of array.go, held in S as their canonical text.
	TTextArray        // text[] (and varchar[]: a text[] with Mod.Varchar)
	TBoolArray        // boolean[]
	TNumericArray     // numeric[]
	TFloat8Array      // double precision[]
	TUUIDArray        // uuid[]
	TDateArray        // date[]
	TTimestamptzArray // timestamp with time zone[]
)

// extType describes a type whose I/O lives in its own file (uuid.go,
// bytea.go, json.go): each registers one in ExtTypes from an init, and the
// switches below fall back to it. Its value is held in Value.S in the
// canonical form parse returns.
type extType struct {
	Name    string // format_type's name (and information_schema's data_type)
	Typname string // pg_type.typname
	OID     uint32
	Size    int16 // wire width in binary, -1: variable
	// key: S's byte order is the type's order, so it can be a key
	key       bool
	MinMax    bool                             // min and max aggregate it (uuid, bytea, json[b] have none in PostgreSQL 15)
	parse     func(s string) (Value, error)    // text input
	out       func(v Value) string             // text output (nil: S)
	appendBin func(dst []byte, v Value) []byte // binary output
	parseBin  func(b []byte) (Value, error)    // binary input
}

// ExtTypes is the registry of extType descriptions by Type, filled by the
// init functions of uuid.go, bytea.go and json.go; read-only after init.
var ExtTypes = map[Type]*extType{}

// IsIntArray reports whether t is an integer array (its elements in
// Value.A, or its text in S when one is NULL: array.go).
func IsIntArray(t Type) bool { return t == TInt4Array || t == TInt8Array }

// NoKeyType reports whether t, held as text in canonical form, cannot be a
// primary key or an index lookup's value (its text does not sort as its
// values).
func NoKeyType(t Type) bool {
	return t == TNumeric || t == TTimestamp || t == TDate || t == TTimestamptz || IsFloat(t) || IsArray(t) || IsEnum(t) ||
		(ExtTypes[t] != nil && !ExtTypes[t].key)
}

// OIDs of the types, as PostgreSQL numbers them.
const (
	OIDBool        = 16
	OIDInt2        = 21
	OIDVarchar     = 1043
	OIDInt8        = 20
	OIDInt4        = 23
	OIDText        = 25
	OIDUnknown     = 705
	OIDInt4Array   = 1007
	OIDBpchar      = 1042
	OIDVoid        = 2278
	OIDNumeric     = 1700
	OIDTimestamp   = 1114
	OIDDate        = 1082
	OIDTimestamptz = 1184
	OIDFloat8      = 701
	OIDFloat4      = 700
	OIDInt8Array   = 1016
)

// OID returns the PostgreSQL type OID of t.
func (t Type) OID() uint32 {
	switch t {
	case TBool:
		return OIDBool
	case TInt4:
		return OIDInt4
	case TInt8:
		return OIDInt8
	case TText:
		return OIDText
	case TInt4Array:
		return OIDInt4Array
	case TBpchar:
		return OIDBpchar
	case TVoid:
		return OIDVoid
	case TNumeric:
		return OIDNumeric
	case TTimestamp:
		return OIDTimestamp
	case TDate:
		return OIDDate
	case TTimestamptz:
		return OIDTimestamptz
	case TFloat8:
		return OIDFloat8
	case TFloat4:
		return OIDFloat4
	case TInt8Array:
		return OIDInt8Array
	}
	if a, ok := arrayTypes[t]; ok {
		return a.oid
	}
	if isEnumArray(t) {
		return enumArrayOID(t) // enum.go
	}
	if x := ExtTypes[t]; x != nil {
		return x.OID
	}
	if e := EnumOf(t); e != nil {
		return e.OID
	}
	return OIDText // unknown results are sent as text, as PostgreSQL does for unknown literals
}

// TypeForOID maps a parameter type OID sent by a client to a Type; 0 or an
// unsupported OID gives TUnknown (the type is then inferred from context).
func TypeForOID(oid uint32) Type {
	switch oid {
	case OIDBool:
		return TBool
	case OIDInt4, 21 /* int2 */ :
		return TInt4
	case OIDInt8:
		return TInt8
	case OIDText, 1043 /* varchar */, 18 /* char */, 19 /* name */ :
		return TText
	case OIDInt4Array:
		return TInt4Array
	case OIDBpchar:
		return TBpchar
	case OIDNumeric:
		return TNumeric
	case OIDTimestamp:
		return TTimestamp
	case OIDDate:
		return TDate
	case OIDTimestamptz:
		return TTimestamptz
	case OIDFloat8:
		return TFloat8
	case OIDFloat4:
		return TFloat4
	case OIDInt8Array:
		return TInt8Array
	case OIDVarcharArray, 1014 /* bpchar[] */ :
		return TTextArray
	}
	for t, a := range arrayTypes {
		if a.oid == oid {
			return t
		}
	}
	for t, x := range ExtTypes {
		if x.OID == oid {
			return t
		}
	}
	if oid >= 16384 {
		return enumByOID(oid) // enum.go
	}
	return TUnknown
}

// Size is the fixed width of t on the wire (binary format), -1 if variable.
func (t Type) Size() int16 {
	switch t {
	case TBool:
		return 1
	case TInt4:
		return 4
	case TInt8, TTimestamp, TTimestamptz, TFloat8:
		return 8
	case TDate, TFloat4:
		return 4
	}
	if x := ExtTypes[t]; x != nil {
		return x.Size
	}
	return -1
}

// String is format_type's name of t ("integer", "character varying").
func (t Type) String() string {
	switch t {
	case TBool:
		return "boolean"
	case TInt4:
		return "integer"
	case TInt8:
		return "bigint"
	case TText:
		return "text"
	case TInt4Array:
		return "integer[]"
	case TBpchar:
		return "character"
	case TVoid:
		return "void"
	case TNumeric:
		return "numeric"
	case TTimestamp:
		return "timestamp without time zone"
	case TDate:
		return "date"
	case TTimestamptz:
		return "timestamp with time zone"
	case TFloat8:
		return "double precision"
	case TFloat4:
		return "real"
	case TInt8Array:
		return "bigint[]"
	}
	if IsArray(t) {
		return ElemType(t).String() + "[]"
	}
	if x := ExtTypes[t]; x != nil {
		return x.Name
	}
	if IsEnum(t) {
		return enumName(t)
	}
	return "unknown"
}

// IsInt reports whether t is integer or bigint (smallint is integer with
// a Mod).
func IsInt(t Type) bool { return t == TInt4 || t == TInt8 }

// IsNumber reports whether t is of PostgreSQL's numeric category among our
// types (the integers and numeric).
func IsNumber(t Type) bool { return IsInt(t) || t == TNumeric }

// IsString reports whether t is of PostgreSQL's string category (text,
// character(n)): any value converts to it through its output function.
func IsString(t Type) bool { return t == TText || t == TBpchar }

// BpcharTrim is a character(n) value without its trailing spaces, the form
// in which it compares, converts to text and is encoded as a key
// (PostgreSQL's bcTruelen).
func BpcharTrim(s string) string { return strings.TrimRight(s, " ") }

// Value is one SQL datum. Bools and integers live in I, text in S.
type Value struct {
	T    Type
	Null bool
	I    int64
	S    string
	A    []int64
}

// Null returns the NULL of type t.
func Null(t Type) Value { return Value{T: t, Null: true} }

// Int4, Int8, Text and Bool build non-NULL values.
func Int4(i int32) Value { return Value{T: TInt4, I: int64(i)} }

// Int8 is the bigint i.
func Int8(i int64) Value { return Value{T: TInt8, I: i} }

// Text is the text s.
func Text(s string) Value { return Value{T: TText, S: s} }

// Bool is the boolean b.
func Bool(b bool) Value { return Value{T: TBool, I: b2i(b)} }

// Unknown is the untyped literal s ('5'), typed later by its context.
func Unknown(s string) Value { return Value{T: TUnknown, S: s} }

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// String renders v in PostgreSQL's text output format ("" for NULL).
func (v Value) String() string {
	if v.Null {
		return ""
	}
	switch v.T {
	case TBool:
		if v.I != 0 {
			return "t"
		}
		return "f"
	case TInt4, TInt8:
		return strconv.FormatInt(v.I, 10)
	case TInt4Array, TInt8Array:
		if v.S != "" {
			return v.S // a NULL element: array.go
		}
		var b strings.Builder
		b.WriteByte('{')
		for i, x := range v.A {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(x, 10))
		}
		b.WriteByte('}')
		return b.String()
	}
	if x := ExtTypes[v.T]; x != nil && x.out != nil {
		return x.out(v)
	}
	return v.S
}

// AppendText appends v's text format to dst (NULLs are the caller's business).
func (v Value) AppendText(dst []byte) []byte {
	switch v.T {
	case TInt4, TInt8:
		return strconv.AppendInt(dst, v.I, 10)
	case TText, TUnknown, TBpchar:
		return append(dst, v.S...)
	}
	return append(dst, v.String()...)
}

// AppendBinary appends v's binary format to dst.
func (v Value) AppendBinary(dst []byte) []byte {
	switch v.T {
	case TBool:
		return append(dst, byte(v.I))
	case TInt4:
		return binary.BigEndian.AppendUint32(dst, uint32(int32(v.I)))
	case TInt8:
		return binary.BigEndian.AppendUint64(dst, uint64(v.I))
	case TNumeric:
		return appendNumericBinary(dst, v.S)
	case TTimestamp:
		return appendTimestampBinary(dst, v.S)
	case TDate:
		return appendDateBinary(dst, v.S)
	case TTimestamptz:
		return appendTimestamptzBinary(dst, v.S)
	case TFloat8, TFloat4:
		return appendFloatBinary(dst, v)
	}
	if IsArray(v.T) {
		return appendArrayBinary(dst, v) // array.go
	}
	if x := ExtTypes[v.T]; x != nil {
		return x.appendBin(dst, v)
	}
	return append(dst, v.S...)
}

// ParseText converts the text form s to a value of type t (TUnknown keeps s
// as an unknown literal).
//
// The text must be valid UTF-8 without NUL bytes (22021), as PostgreSQL
// checks every text-format parameter.
func ParseText(t Type, s string) (Value, error) {
	if err := CheckEncoding(s); err != nil {
		return Value{}, err
	}
	switch t {
	case TUnknown:
		return Unknown(s), nil
	case TText:
		return Text(s), nil
	case TBpchar:
		return Value{T: TBpchar, S: s}, nil
	case TBool:
		b, ok := ParseBool(s)
		if !ok {
			return Value{}, pgerror.Errorf(pgerror.CodeInvalidText, "invalid input syntax for type boolean: %q", s)
		}
		return Bool(b), nil
	case TInt4, TInt8:
		bits, name := 32, "integer"
		if t == TInt8 {
			bits, name = 64, "bigint"
		}
		ts := strings.TrimSpace(s)
		i, err := strconv.ParseInt(ts, 10, bits)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "value %q is out of range for type %s", s, name)
			}
			return Value{}, pgerror.Errorf(pgerror.CodeInvalidText, "invalid input syntax for type %s: %q", name, s)
		}
		return Value{T: t, I: i}, nil
	case TNumeric:
		if sp, ok := parseNumericSpecial(s); ok {
			return Value{T: TNumeric, S: sp}, nil // numeric_special.go
		}
		d, err := ParseNumeric(s)
		if err != nil {
			return Value{}, err
		}
		return d.Value(), nil
	case TTimestamp:
		v, err := parseTimestamp(s)
		if err != nil {
			return Value{}, err
		}
		return TimestampValue(v), nil
	case TDate:
		v, err := parseDate(s)
		if err != nil {
			return Value{}, err
		}
		return DateValue(v), nil
	case TTimestamptz:
		v, err := parseTimestamptz(s)
		if err != nil {
			return Value{}, err
		}
		return TimestamptzValue(v), nil
	case TFloat8, TFloat4:
		return parseFloatValue(t, s)
	}
	if IsArray(t) {
		return parseArrayText(t, s) // array.go
	}
	if x := ExtTypes[t]; x != nil {
		return x.parse(s)
	}
	if IsEnum(t) {
		return parseEnum(t, s) // enum.go
	}
	return Value{}, pgerror.Errorf(pgerror.CodeInternal, "unknown type %d", t)
}

// ParseBool parses boolean input as PostgreSQL's boolin does (t, true, yes,
// on, 1 and their opposites, any case, unique prefixes); false if s is none.
func ParseBool(s string) (bool, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return false, false
	}
	for _, w := range []string{"true", "yes"} {
		if strings.HasPrefix(w, s) {
			return true, true
		}
	}
	for _, w := range []string{"false", "no"} {
		if strings.HasPrefix(w, s) {
			return false, true
		}
	}
	switch s {
	case "on", "1":
		return true, true
	case "off", "of", "0":
		return false, true
	}
	return false, false
}

// ParseBinary converts the binary form b to a value of type t.
func ParseBinary(t Type, b []byte) (Value, error) {
	bad := func() (Value, error) {
		return Value{}, pgerror.Errorf(pgerror.CodeInvalidBinary, "incorrect binary data format for type %s", t)
	}
	switch t {
	case TBool:
		if len(b) != 1 {
			return bad()
		}
		return Bool(b[0] != 0), nil
	case TInt4:
		if len(b) != 4 {
			return bad()
		}
		return Int4(int32(binary.BigEndian.Uint32(b))), nil
	case TInt8:
		if len(b) != 8 {
			return bad()
		}
		return Int8(int64(binary.BigEndian.Uint64(b))), nil
	case TNumeric:
		return parseNumericBinary(b)
	case TTimestamp:
		return parseTimestampBinary(b)
	case TDate:
		return parseDateBinary(b)
	case TTimestamptz:
		return parseTimestamptzBinary(b)
	case TFloat8, TFloat4:
		return parseFloatBinary(t, b)
	case TText, TUnknown, TBpchar:
		if err := CheckEncoding(string(b)); err != nil {
			return Value{}, err
		}
		if t == TBpchar {
			return Value{T: TBpchar, S: string(b)}, nil
		}
		return Text(string(b)), nil
	}
	if IsArray(t) {
		return parseArrayBinary(t, b) // array.go
	}
	if x := ExtTypes[t]; x != nil {
		return x.parseBin(b)
	}
	if IsEnum(t) { // enum_recv: the label's bytes
		return ParseText(t, string(b))
	}
	return bad()
}

// Debug is v as type:text, for test failures.
func (v Value) Debug() string { return fmt.Sprintf("%s:%s", v.T, v.String()) }
