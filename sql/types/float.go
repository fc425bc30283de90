package types

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tupled/tupled/sql/pgerror"
)

// double precision (float8) and real (float4). A Value holds its text form
// in S as PostgreSQL 15 prints it with extra_float_digits = 1 (the
// default): the shortest digits that read back as the same value, in
// fixed notation when the decimal exponent is in [-4, 15) (float4: [-4,
// 6)), else as 1.5e+16; NaN, Infinity and -Infinity by name. Arithmetic
// is IEEE's with PostgreSQL's checks: an infinite result of finite inputs
// is 22003 "value out of range: overflow", a zero of non-zero inputs to *
// and / "underflow", / 0 is 22012. A float4 with a float4 gives a float4,
// any other mix with a number a float8, as PostgreSQL resolves them.
// Comparisons put NaN above every number and equal to itself. Floats are
// not keys (0A000).

// IsFloat reports whether t is real or double precision.
func IsFloat(t Type) bool { return t == TFloat8 || t == TFloat4 }

// FloatOf reads a float, integer or numeric value as a float64.
func FloatOf(v Value) float64 {
	switch {
	case IsInt(v.T):
		return float64(v.I)
	case v.T == TFloat4:
		f, _ := strconv.ParseFloat(v.S, 32)
		return f
	}
	f, err := parseFloatText(v.S, 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

func parseFloatText(s string, bits int) (float64, error) {
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "nan":
		return math.NaN(), nil
	case "infinity", "inf", "+infinity", "+inf":
		return math.Inf(1), nil
	case "-infinity", "-inf":
		return math.Inf(-1), nil
	}
	f, err := strconv.ParseFloat(t, bits)
	if err != nil || strings.ContainsAny(t, "xXpP_") {
		name := "double precision"
		if bits == 32 {
			name = "real"
		}
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, pgerror.Errorf(pgerror.CodeNumericRange, "%q is out of range for type %s", t, name)
		}
		return 0, pgerror.Errorf(pgerror.CodeInvalidText, "invalid input syntax for type %s: %q", name, s)
	}
	return f, nil
}

// formatFloat is float8out / float4out's shortest form.
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0"
		}
		return "0"
	}
	e := strconv.FormatFloat(f, 'e', -1, bits) // d.ddde±XX
	mant, expS, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expS)
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	digits := strings.Replace(mant, ".", "", 1)
	limit := 15
	if bits == 32 {
		limit = 6
	}
	var out string
	if exp < -4 || exp >= limit {
		out = digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		out += fmt.Sprintf("e%s%02d", sign, exp)
	} else if exp < 0 {
		out = "0." + strings.Repeat("0", -exp-1) + digits
	} else if len(digits) <= exp+1 {
		out = digits + strings.Repeat("0", exp+1-len(digits))
	} else {
		out = digits[:exp+1] + "." + digits[exp+1:]
	}
	if neg {
		return "-" + out
	}
	return out
}

// FloatValue is f as a value of type t (real or double precision), rounded
// to float32 for real.
func FloatValue(f float64, t Type) Value {
	if t == TFloat4 {
		return Value{T: TFloat4, S: formatFloat(float64(float32(f)), 32)}
	}
	return Value{T: TFloat8, S: formatFloat(f, 64)}
}

func parseFloatValue(t Type, s string) (Value, error) {
	bits := 64
	if t == TFloat4 {
		bits = 32
	}
	f, err := parseFloatText(s, bits)
	if err != nil {
		return Value{}, err
	}
	return FloatValue(f, t), nil
}

// floatCmp orders floats as PostgreSQL's float8_cmp: NaN above all.
func floatCmp(a, b Value) int {
	x, y := FloatOf(a), FloatOf(b)
	switch {
	case math.IsNaN(x) && math.IsNaN(y):
		return 0
	case math.IsNaN(x):
		return 1
	case math.IsNaN(y):
		return -1
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// FloatArith is + - * / on floats (either side may be any number).
func FloatArith(op byte, a, b Value, t Type) (Value, error) {
	x, y := FloatOf(a), FloatOf(b)
	var r float64
	switch op {
	case '+':
		r = x + y
	case '-':
		r = x - y
	case '*':
		r = x * y
	case '/':
		if y == 0 {
			return Value{}, pgerror.Errorf(pgerror.CodeDivisionByZero, "division by zero")
		}
		r = x / y
	default:
		return Value{}, pgerror.Errorf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %c %s", t, op, t)
	}
	if t == TFloat4 {
		r = float64(float32(r))
	}
	if math.IsInf(r, 0) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
		return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "value out of range: overflow")
	}
	if r == 0 && (op == '*' || op == '/') && x != 0 && !math.IsInf(y, 0) && (op == '/' || y != 0) {
		return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "value out of range: underflow")
	}
	return FloatValue(r, t), nil
}

// FloatResult is the type of an arithmetic of a and b when one is a float.
func FloatResult(a, b Type) Type {
	if a == TFloat4 && b == TFloat4 {
		return TFloat4
	}
	return TFloat8
}

// castFloat converts to and from the floats; ok is false for other pairs.
func castFloat(v Value, t Type) (Value, bool, error) {
	switch {
	case IsFloat(t) && (IsNumber(v.T) || IsFloat(v.T)):
		return FloatValue(FloatOf(v), t), true, nil
	case IsFloat(v.T) && IsInt(t):
		f := math.RoundToEven(FloatOf(v)) // rint
		lo, hi := float64(math.MinInt32), float64(math.MaxInt32)
		name := "integer"
		if t == TInt8 {
			lo, hi, name = math.MinInt64, math.MaxInt64, "bigint"
		}
		if math.IsNaN(f) || f < lo || f >= hi+1 {
			return Value{}, true, pgerror.Errorf(pgerror.CodeNumericRange, "%s out of range", name)
		}
		return Value{T: t, I: int64(f)}, true, nil
	case IsFloat(v.T) && t == TNumeric:
		f := FloatOf(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return numericSpecialValue(f), true, nil // numeric_special.go
		}
		prec := 15 // float8_numeric prints DBL_DIG digits
		if v.T == TFloat4 {
			prec = 6
		}
		d, err := ParseNumeric(strconv.FormatFloat(f, 'g', prec, 64))
		if err != nil {
			return Value{}, true, err
		}
		// %g's form has no trailing zeros after the point
		return trimNumeric(d).Value(), true, nil
	}
	return Value{}, false, nil
}

// trimNumeric drops trailing fractional zeros.
func trimNumeric(d decimal) decimal {
	s := d.String()
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	out, _ := ParseNumeric(s)
	return out
}

func appendFloatBinary(dst []byte, v Value) []byte {
	if v.T == TFloat4 {
		return binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(FloatOf(v))))
	}
	return binary.BigEndian.AppendUint64(dst, math.Float64bits(FloatOf(v)))
}

func parseFloatBinary(t Type, b []byte) (Value, error) {
	switch {
	case t == TFloat4 && len(b) == 4:
		return FloatValue(float64(math.Float32frombits(binary.BigEndian.Uint32(b))), t), nil
	case t == TFloat8 && len(b) == 8:
		return FloatValue(math.Float64frombits(binary.BigEndian.Uint64(b)), t), nil
	}
	return Value{}, pgerror.Errorf(pgerror.CodeInvalidBinary, "incorrect binary data format for type %s", t)
}

// FloatHashKey is a float's identity for hashing: -0 is 0, every NaN one.
func FloatHashKey(dst []byte, v Value) []byte {
	f := FloatOf(v)
	if f == 0 {
		f = 0
	}
	if math.IsNaN(f) {
		f = math.NaN()
	}
	dst = append(dst, 5)
	return binary.BigEndian.AppendUint64(dst, math.Float64bits(f))
}
