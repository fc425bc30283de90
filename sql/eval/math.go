package eval

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// The math functions' and the integer operators' bodies: sqlfe's
// strfuncs.go resolves the functions' arguments (numeric, an integer,
// double precision) and expr.go compiles the operators; these compute on
// non-NULL values.

// Abs is abs of an integer or numeric (of a float: floatFunc); 22003 for
// the smallest integer.
func Abs(a []types.Value) (types.Value, error) {
	v := a[0]
	if v.T == types.TNumeric {
		if strings.HasPrefix(v.S, "-") {
			return types.Value{T: types.TNumeric, S: v.S[1:]}, nil
		}
		return v, nil
	}
	if v.I < 0 {
		return Negate(v)
	}
	return v, nil
}

// NumericSign is sign of a numeric: -1, 0 or 1 as a numeric, NaN for NaN.
func NumericSign(a []types.Value) (types.Value, error) {
	switch a[0].S {
	case "NaN":
		return a[0], nil
	case "Infinity":
		return types.Value{T: types.TNumeric, S: "1"}, nil
	case "-Infinity":
		return types.Value{T: types.TNumeric, S: "-1"}, nil
	}
	d, err := types.NumericOf(a[0])
	if err != nil {
		return types.Value{}, err
	}
	return types.Value{T: types.TNumeric, S: strconv.Itoa(d.Unscaled.Sign())}, nil
}

// Round is round (half away from zero) or trunc of a numeric to a number
// of places (0 by default).
func Round(a []types.Value) (types.Value, error) { return round(a, false) }

// Trunc is trunc of a numeric to a number of places (0 by default).
func Trunc(a []types.Value) (types.Value, error) { return round(a, true) }

func round(a []types.Value, trunc bool) (types.Value, error) {
	if types.IsNumericSpecial(a[0]) {
		return a[0], nil // NaN and the infinities round to themselves
	}
	d, err := types.NumericOf(a[0])
	if err != nil {
		return types.Value{}, err
	}
	places := 0
	if len(a) == 2 {
		places = int(max(min(a[1].I, types.MaxNumericScale), -types.MaxNumericScale))
	}
	return types.RoundDecimal(d, places, trunc).Value(), nil
}

// Ceil is ceil (ceiling) of a numeric: a numeric of scale 0.
func Ceil(a []types.Value) (types.Value, error) { return ceilFloor(a, true) }

// Floor is floor of a numeric: a numeric of scale 0.
func Floor(a []types.Value) (types.Value, error) { return ceilFloor(a, false) }

func ceilFloor(a []types.Value, ceil bool) (types.Value, error) {
	if types.IsNumericSpecial(a[0]) {
		return a[0], nil
	}
	d, err := types.NumericOf(a[0])
	if err != nil {
		return types.Value{}, err
	}
	t := types.RoundDecimal(d, 0, true)
	if t.Rescale(d.Scale).Unscaled.Cmp(d.Unscaled) != 0 {
		if ceil && d.Unscaled.Sign() > 0 {
			t.Unscaled.Add(t.Unscaled, big.NewInt(1))
		} else if !ceil && d.Unscaled.Sign() < 0 {
			t.Unscaled.Sub(t.Unscaled, big.NewInt(1))
		}
	}
	return t.Value(), nil
}

// NumericLog is log(b, x) of numerics.
func NumericLog(a []types.Value) (types.Value, error) {
	return types.NumericLog(a[0], a[1])
}

// Float1 is a function fn of one double precision argument (sqrt, exp, ln,
// log10), with check refusing what PostgreSQL refuses.
func Float1(a []types.Value, fn func(float64) float64, check func(float64) error) (types.Value, error) {
	v := types.FloatOf(a[0])
	if check != nil {
		if err := check(v); err != nil {
			return types.Value{}, err
		}
	}
	r := fn(v)
	if math.IsInf(r, 0) && !math.IsInf(v, 0) {
		return types.Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "value out of range: overflow")
	}
	return types.FloatValue(r, types.TFloat8), nil
}

// NumericPower is power(x, y) and x ^ y of numerics (types.NumericPower).
func NumericPower(a []types.Value) (types.Value, error) {
	v, _, err := types.NumericPower(a[0], a[1])
	return v, err
}

// FloatPower is power(x, y) and x ^ y of double precision.
func FloatPower(a []types.Value) (types.Value, error) {
	x, y := types.FloatOf(a[0]), types.FloatOf(a[1])
	if x == 0 && y < 0 {
		return types.Value{}, pgerror.Errorf(pgerror.CodeInvalidPower, "zero raised to a negative power is undefined")
	}
	if x < 0 && y != math.Trunc(y) {
		return types.Value{}, pgerror.Errorf(pgerror.CodeInvalidPower, "a negative number raised to a non-integer power yields a complex result")
	}
	r := math.Pow(x, y)
	if math.IsInf(r, 0) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
		return types.Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "value out of range: overflow")
	}
	return types.FloatValue(r, types.TFloat8), nil
}

// LogCheck refuses what ln and log of double precision refuse (2201E).
func LogCheck(x float64) error {
	switch {
	case x == 0:
		return pgerror.Errorf(pgerror.CodeInvalidLog, "cannot take logarithm of zero")
	case x < 0:
		return pgerror.Errorf(pgerror.CodeInvalidLog, "cannot take logarithm of a negative number")
	}
	return nil
}

// NumericLog10 is log10 (and log) of a numeric.
func NumericLog10(v types.Value) (types.Value, error) {
	return types.NumericLog(types.Value{T: types.TNumeric, S: "10"}, v)
}

// Negate is integer negation (int4um, int8um): -(-2147483648) overflows.
func Negate(v types.Value) (types.Value, error) {
	switch {
	case v.Null:
		return v, nil
	case v.T == types.TNumeric:
		return types.NumericNeg(v), nil
	case types.IsFloat(v.T):
		return types.FloatValue(-types.FloatOf(v), v.T), nil
	case v.T == types.TInterval:
		n, err := types.NegateInterval(types.IntervalOf(v))
		if err != nil {
			return types.Value{}, err
		}
		return types.IntervalValue(n), nil
	case v.T == types.TInt8 && v.I == math.MinInt64:
		return types.Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "bigint out of range")
	case v.T == types.TInt4 && v.I == math.MinInt32:
		return types.Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "integer out of range")
	}
	v.I = -v.I
	return v, nil
}

// Arith is op (+ - * / %) of non-NULL numbers x and y of the operator's
// type t (sqlfe casts both to it): numeric, a float, or an integer,
// whose overflow is 22003 and division by zero 22012.
func Arith(op byte, x, y types.Value, t types.Type) (types.Value, error) {
	if t == types.TNumeric {
		return types.NumericArith(op, x, y)
	}
	if types.IsFloat(t) {
		return types.FloatArith(op, x, y, t) // float.go
	}
	i, j := x.I, y.I
	var r int64
	overflow := false
	switch op {
	case '+':
		r = i + j
		overflow = (j > 0 && r < i) || (j < 0 && r > i)
	case '-':
		r = i - j
		overflow = (j < 0 && r < i) || (j > 0 && r > i)
	case '*':
		r = i * j
		overflow = i != 0 && (r/i != j || (i == -1 && j == math.MinInt64))
	case '/', '%':
		if j == 0 {
			return types.Value{}, pgerror.Errorf(pgerror.CodeDivisionByZero, "division by zero")
		}
		if j == -1 {
			if op == '%' {
				return types.Value{T: t}, nil
			}
			r = -i
			overflow = i == math.MinInt64
		} else if op == '/' {
			r = i / j
		} else {
			r = i % j
		}
	}
	if overflow || (t == types.TInt4 && (r < math.MinInt32 || r > math.MaxInt32)) {
		if t == types.TInt8 {
			return types.Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "bigint out of range")
		}
		return types.Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "integer out of range")
	}
	return types.Value{T: t, I: r}, nil
}
