package types

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/tupled/tupled/sql/pgerror"
)

// numeric's NaN and infinities, as PostgreSQL 14 and later have them: S
// holds them as numeric_out prints them (NaN, Infinity, -Infinity). NaN
// equals itself and sorts above every other value, Infinity above every
// finite one; arithmetic with them follows IEEE's rules except where
// PostgreSQL's numeric.c differs (x / 0 is 22012 unless x is NaN, a finite
// value % Infinity is itself). Every other numeric function reads its
// argument through NumericOf, which refuses the three (0A000) unless the
// function handles them first (IsNumericSpecial).

const (
	numericNaN    = "NaN"
	numericPosInf = "Infinity"
	numericNegInf = "-Infinity"
)

// IsNumericSpecial reports whether v is a numeric NaN or infinity.
func IsNumericSpecial(v Value) bool {
	return v.T == TNumeric && isNumericSpecialText(v.S)
}

func isNumericSpecialText(s string) bool {
	return s == numericNaN || s == numericPosInf || s == numericNegInf
}

// parseNumericSpecial reads numeric_in's NaN, inf and infinity (any case,
// the infinities with an optional sign, around white space).
func parseNumericSpecial(s string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "nan":
		return numericNaN, true
	case "inf", "+inf", "infinity", "+infinity":
		return numericPosInf, true
	case "-inf", "-infinity":
		return numericNegInf, true
	}
	return "", false
}

// numericClass is v (an integer or a numeric) for the special values'
// rules: NaN, an infinity, or the sign of a finite value.
func numericClass(v Value) float64 {
	if IsInt(v.T) {
		return float64(sign64(v.I))
	}
	switch v.S {
	case numericNaN:
		return math.NaN()
	case numericPosInf:
		return math.Inf(1)
	case numericNegInf:
		return math.Inf(-1)
	}
	switch {
	case strings.Trim(v.S, "-0.") == "":
		return 0
	case strings.HasPrefix(v.S, "-"):
		return -1
	}
	return 1
}

func sign64(i int64) int {
	switch {
	case i < 0:
		return -1
	case i > 0:
		return 1
	}
	return 0
}

// numericSpecialValue is NaN or an infinity for f; a finite f is 0.
func numericSpecialValue(f float64) Value {
	switch {
	case math.IsNaN(f):
		return Value{T: TNumeric, S: numericNaN}
	case math.IsInf(f, 1):
		return Value{T: TNumeric, S: numericPosInf}
	case math.IsInf(f, -1):
		return Value{T: TNumeric, S: numericNegInf}
	}
	return Value{T: TNumeric, S: "0"}
}

// numericSpecialArith is a op b with a or b NaN or an infinity, as
// numeric_add, numeric_sub, numeric_mul, numeric_div and numeric_mod.
func numericSpecialArith(op byte, a, b Value) (Value, error) {
	x, y := numericClass(a), numericClass(b)
	nan := math.IsNaN(x) || math.IsNaN(y)
	switch op {
	case '+':
		return numericSpecialValue(x + y), nil
	case '-':
		return numericSpecialValue(x - y), nil
	case '*':
		return numericSpecialValue(x * y), nil
	case '/', '%':
		switch {
		case nan:
			return numericSpecialValue(math.NaN()), nil
		case y == 0:
			return Value{}, pgerror.Errorf(pgerror.CodeDivisionByZero, "division by zero")
		case math.IsInf(x, 0) && (op == '%' || math.IsInf(y, 0)):
			return numericSpecialValue(math.NaN()), nil
		case op == '/' && math.IsInf(x, 0):
			return numericSpecialValue(x * y), nil // ±Infinity / a finite value
		case op == '/':
			return Value{T: TNumeric, S: "0"}, nil // a finite value / ±Infinity
		}
		if IsInt(a.T) { // a finite value % ±Infinity: itself
			return Cast(a, TNumeric)
		}
		return a, nil
	}
	return Value{}, pgerror.NotSupported("operator %c on numeric is not supported", op)
}

// numericRank orders the classes: -Infinity, finite, Infinity, NaN.
func numericRank(v Value) int {
	if v.T != TNumeric {
		return 1
	}
	switch v.S {
	case numericNegInf:
		return 0
	case numericPosInf:
		return 2
	case numericNaN:
		return 3
	}
	return 1
}

// numericSpecialToInt is the error of casting NaN or an infinity to an
// integer type (numeric_int4 and its kind: 0A000).
func numericSpecialToInt(v Value, name string) error {
	what := "infinity"
	if v.S == numericNaN {
		what = "NaN"
	}
	return pgerror.NotSupported("cannot convert %s to %s", what, name)
}

// numericPowerInf is power(base, exp) with an infinity among them (and no
// NaN), as numeric_power: POSIX pow's answers (0, 1 or an infinity), but
// 2201F for zero to -Infinity and -Infinity to a non-integer. Each side
// counts only by its class, so each is replaced by a float of the same
// one: a finite base by ±0, ±0.5, ±1 or ±2 (its magnitude against 1), a
// finite exponent by 0, ±0.5 (not an integer), ±2 (even) or ±3 (odd).
func numericPowerInf(base, exp Value) (Value, error) {
	class := func(v Value, isExp bool) float64 {
		c := numericClass(v)
		if math.IsInf(c, 0) || c == 0 {
			return c
		}
		d, err := NumericOf(v)
		if err != nil {
			return math.NaN()
		}
		abs := new(big.Int).Abs(d.Unscaled)
		if !isExp {
			switch abs.Cmp(pow10(d.Scale)) {
			case -1:
				return c * 0.5
			case 0:
				return c
			}
			return c * 2
		}
		q, r := new(big.Int).QuoRem(abs, pow10(d.Scale), new(big.Int))
		switch {
		case r.Sign() != 0:
			return c * 0.5
		case q.Bit(0) == 1:
			return c * 3
		}
		return c * 2
	}
	x, y := class(base, false), class(exp, true)
	switch {
	case x == 0 && math.IsInf(y, -1):
		return Value{}, pgerror.Errorf(pgerror.CodeInvalidPower, "zero raised to a negative power is undefined")
	case math.IsInf(x, -1) && !math.IsInf(y, 0) && math.Abs(y) == 0.5:
		return Value{}, pgerror.Errorf(pgerror.CodeInvalidPower, "a negative number raised to a non-integer power yields a complex result")
	}
	r := math.Pow(x, y)
	switch {
	case math.IsInf(r, 0):
		return numericSpecialValue(r), nil
	case r == 0:
		return Value{T: TNumeric, S: "0"}, nil
	}
	return Value{T: TNumeric, S: strconv.FormatFloat(r, 'f', -1, 64)}, nil // 1 or -1
}
