package types

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tupled/tupled/sql/pgerror"
)

// Cast converts v to type t as an explicit CAST without a modifier does
// (PostgreSQL's cast functions and I/O conversion through text): NULL stays
// NULL of type t; an impossible or failing conversion is an error with
// PostgreSQL's SQLSTATE (22P02, 22003, 42846, ...).
func Cast(v Value, t Type) (Value, error) {
	if v.Null {
		return Null(t), nil
	}
	if v.T == t {
		return v, nil
	}
	if r, ok := castDateTime(v, t); ok { // datetime.go
		return r, nil
	}
	if r, ok := castTimeOfDay(v, t); ok { // timeofday.go
		return r, nil
	}
	if r, ok, err := castFloat(v, t); ok { // float.go
		return r, err
	}
	if IsJSON(v.T) && IsJSON(t) { // json.go
		return castJSON(v, t)
	}
	switch {
	case t == TText && v.T == TBpchar:
		return Text(BpcharTrim(v.S)), nil // PostgreSQL's rtrim1
	case IsString(t) && !IsString(v.T) && v.T != TUnknown:
		return Value{T: t, S: TextOut(v)}, nil
	case IsString(t) && IsString(v.T), v.T == TUnknown:
		return ParseText(t, v.S)
	case v.T == TText || v.T == TBpchar:
		return ParseText(t, v.S)
	case IsIntArray(v.T) && IsIntArray(t) && v.S == "":
		if t == TInt4Array {
			for _, x := range v.A {
				if x < math.MinInt32 || x > math.MaxInt32 {
					return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "integer out of range")
				}
			}
		}
		return Value{T: t, A: v.A}, nil
	case IsArray(v.T) && IsArray(t) && CanCast(ElemType(v.T), Mod{}, ElemType(t), Mod{}):
		return castArray(v, t) // array.go
	case IsInt(v.T) && IsInt(t):
		return intResult(v.I, t)
	case v.T == TInt4 && t == TBool:
		return Bool(v.I != 0), nil
	case v.T == TBool && t == TInt4:
		return Int4(int32(v.I)), nil
	case IsInt(v.T) && t == TNumeric:
		return Value{T: TNumeric, S: strconv.FormatInt(v.I, 10)}, nil
	case v.T == TNumeric && IsInt(t):
		return numericToInt(v, t)
	}
	return Value{}, pgerror.Errorf(pgerror.CodeCannotCoerce, "cannot cast type %s to %s", v.T, t)
}

// CanCast reports whether PostgreSQL has a cast from a to b among our types
// (bool to and from integer, not bigint or smallint; anything to and from
// text).
func CanCast(a Type, am Mod, b Type, bm Mod) bool {
	switch {
	case a == b && a != TBool && !IsInt(a):
		return true
	case a == TUnknown || IsString(a) || IsString(b):
		return true
	case IsArray(a) && IsArray(b):
		return CanCast(ElemType(a), Mod{}, ElemType(b), Mod{})
	case (IsNumber(a) || IsFloat(a)) && (IsNumber(b) || IsFloat(b)):
		return true
	case a == TBool && b == TBool:
		return true
	case IsDateTime(a) && IsDateTime(b), IsIntArray(a) && IsIntArray(b), IsJSON(a) && IsJSON(b):
		return true
	case b == TTime && (a == TTimestamp || a == TTimestamptz || a == TInterval), a == TTime && b == TInterval:
		return true
	case a == TBool && b == TInt4:
		return !bm.Int2
	case a == TInt4 && b == TBool:
		return !am.Int2
	}
	return false
}

// TextOut is the text a value converts to in a cast to text or in ||:
// booleans give "true" and "false" (PostgreSQL's booltext), unlike their
// output format "t" and "f".
func TextOut(v Value) string {
	if v.T == TBool {
		if v.I != 0 {
			return "true"
		}
		return "false"
	}
	return v.String()
}

// Mod narrows a Type: smallint is an integer checked to 16 bits,
// varchar(n) a text of at most n characters, character(n) (a TBpchar) one of
// exactly n, blank-padded.
type Mod struct {
	Int2   bool
	MaxLen int
	// Varchar marks character varying (with or without a length): a text
	// that clients see as varchar (OID 1043)
	Varchar bool
	// Prec > 0: numeric(Prec, Scale): values are rounded to Scale digits
	// after the point (before it when negative) and must have at most
	// Prec - Scale before it (22003); of an interval, Prec is its typmod
	// (interval_typmod.go: interval hour, interval(0))
	Prec, Scale int
}

// Name is format_type's name of t with modifier m: "character varying(10)",
// "numeric(10,2)", "smallint".
func (m Mod) Name(t Type) string {
	switch {
	case m.Int2:
		return "smallint"
	case m.MaxLen > 0 && t == TBpchar:
		return fmt.Sprintf("character(%d)", m.MaxLen)
	case m.MaxLen > 0:
		return fmt.Sprintf("character varying(%d)", m.MaxLen)
	case m.Varchar && t == TText:
		return "character varying"
	case m.Varchar && t == TTextArray:
		return "character varying[]"
	case m.Prec > 0 && t == TInterval:
		return IntervalTypmodName(m.Prec) // interval_typmod.go
	case m.Prec > 0:
		return fmt.Sprintf("numeric(%d,%d)", m.Prec, m.Scale)
	}
	return t.String()
}

// BpcharPad blank-pads s to n characters (n = 0: unlimited, s unchanged).
func BpcharPad(s string, n int) string {
	if n == 0 || len(s) >= 4*n {
		return s
	}
	c := utf8.RuneCountInString(s)
	if c >= n {
		return s
	}
	if s == "" && n <= len(blanks) {
		return blanks[:n] // shared: an empty character(n) allocates nothing
	}
	var b strings.Builder
	b.Grow(len(s) + n - c)
	b.WriteString(s)
	for ; c < n; c++ {
		b.WriteByte(' ')
	}
	return b.String()
}

// blanks is the padding of an empty character(n) up to 256.
var blanks = strings.Repeat(" ", 256)

// CastMod converts v to type t with modifier m: explicit for a cast (which
// truncates a varchar silently), else an assignment (which refuses to cut
// anything but spaces: 22001).
func CastMod(v Value, t Type, m Mod, explicit bool) (Value, error) {
	if v.Null {
		return Null(t), nil
	}
	if m.Int2 && (IsString(v.T) || v.T == TUnknown) {
		i, err := strconv.ParseInt(strings.TrimSpace(v.S), 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "value %q is out of range for type smallint", v.S)
			}
			return Value{}, pgerror.Errorf(pgerror.CodeInvalidText, "invalid input syntax for type smallint: %q", v.S)
		}
		if i < math.MinInt16 || i > math.MaxInt16 {
			return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "value %q is out of range for type smallint", v.S)
		}
		return Int4(int32(i)), nil
	}
	if m.Int2 && IsNumericSpecial(v) {
		return Value{}, numericSpecialToInt(v, "smallint")
	}
	if t == TInterval && m.Prec > 0 && v.T == TUnknown { // interval_in with the typmod
		iv, err := ParseIntervalTypmod(v.S, m.Prec)
		if err != nil {
			return Value{}, err
		}
		return IntervalValue(iv), nil
	}
	v, err := Cast(v, t)
	if err != nil {
		return v, err
	}
	return ApplyMod(v, m, explicit)
}

// ApplyMod checks (or, for a varchar or character, truncates) a value of
// the right type against modifier m, and blank-pads a character(n), as
// PostgreSQL's varchar() and bpchar() length coercions do.
func ApplyMod(v Value, m Mod, explicit bool) (Value, error) {
	if v.Null {
		return v, nil
	}
	if m.Int2 && (v.I < math.MinInt16 || v.I > math.MaxInt16) {
		return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "smallint out of range")
	}
	if m.Prec > 0 && v.T == TNumeric {
		return numericTypmod(v, m.Prec, m.Scale)
	}
	if m.Prec > 0 && v.T == TInterval {
		return IntervalValue(AdjustInterval(IntervalOf(v), m.Prec)), nil
	}
	if m.MaxLen > 0 && len(v.S) > m.MaxLen && utf8.RuneCountInString(v.S) > m.MaxLen {
		cut, n := 0, 0
		for cut = range v.S {
			if n == m.MaxLen {
				break
			}
			n++
		}
		if !explicit && strings.TrimRight(v.S[cut:], " ") != "" {
			return Value{}, pgerror.Errorf(pgerror.CodeStringTooLong, "value too long for type %s", m.Name(v.T))
		}
		v.S = v.S[:cut]
	}
	if v.T == TBpchar {
		v.S = BpcharPad(v.S, m.MaxLen)
	}
	return v, nil
}

func intResult(i int64, t Type) (Value, error) {
	if t == TInt4 && (i < math.MinInt32 || i > math.MaxInt32) {
		return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "integer out of range")
	}
	return Value{T: t, I: i}, nil
}

// Compare compares two non-NULL values of comparable types.
func Compare(a, b Value) int {
	switch {
	case IsArray(a.T) && IsArray(b.T):
		return compareArrays(a, b) // array.go
	case IsFloat(a.T) || IsFloat(b.T):
		return floatCmp(a, b)
	case a.T == TNumeric || b.T == TNumeric:
		return numericCmp(a, b)
	case IsDateTime(a.T) && IsDateTime(b.T):
		return Instant(a).Compare(Instant(b))
	case a.T == TJSONB:
		return JSONBCompare(a, b) // json.go
	case a.T == TInterval && b.T == TInterval:
		return CompareIntervals(IntervalOf(a), IntervalOf(b)) // interval.go
	case IsInt(a.T) || a.T == TBool || IsEnum(a.T): // an enum's I is its sort position (enum.go)
		switch {
		case a.I < b.I:
			return -1
		case a.I > b.I:
			return 1
		}
		return 0
	case a.T == TBpchar || b.T == TBpchar:
		return strings.Compare(BpcharTrim(a.S), BpcharTrim(b.S)) // bpcharcmp
	}
	return strings.Compare(a.S, b.S)
}
