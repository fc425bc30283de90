package types

import (
	"math"
	"math/big"
	"strings"

	"github.com/tupled/tupled/sql/pgerror"
)

// The transcendental functions of numeric: sqrt, exp, ln, log(b, x) and
// power with a non-integer exponent, at the result scales PostgreSQL 15's
// numeric.c picks (numeric_sqrt, numeric_exp, numeric_ln, log_var,
// power_var: at least 16 significant digits by an estimate of the
// result's weight, never fewer than the inputs' display scales, at most
// 1000). The value is computed in binary floating point (math/big) with
// enough guard bits for every digit of that scale, then rounded half away
// from zero, as PostgreSQL's results are correctly rounded to their scale.

const (
	numericMinSigDigits = 16   // NUMERIC_MIN_SIG_DIGITS
	numericMaxResult    = 2000 // NUMERIC_MAX_RESULT_SCALE
)

// clampScale is PostgreSQL's Max(rscale, 0) and Min(rscale, 1000).
func clampScale(s int) int { return min(max(s, 0), MaxNumericScale) }

// bigOf is d at prec bits.
func (d decimal) bigOf(prec uint) *big.Float {
	f := new(big.Float).SetPrec(prec).SetInt(d.Unscaled)
	if d.Scale > 0 {
		f.Quo(f, new(big.Float).SetPrec(prec).SetInt(pow10(d.Scale)))
	}
	return f
}

// roundBig is f rounded half away from zero to s digits after the point.
func roundBig(f *big.Float, s int) decimal {
	x := new(big.Float).SetPrec(f.Prec()+uint(float64(s)*3.33)+64).Mul(f, new(big.Float).SetInt(pow10(s)))
	if x.Sign() < 0 {
		x.Sub(x, big.NewFloat(0.5))
	} else {
		x.Add(x, big.NewFloat(0.5))
	}
	i, _ := x.Int(nil)
	return decimal{i, s}
}

// precFor is the bits that carry digits digits and guard digits.
func precFor(digits int) uint { return uint(max(digits, 0)+24)*10/3 + 64 }

// bigAtanhSum is 2·atanh(z) = ln((1+z)/(1-z)) by its series, at prec bits.
func bigAtanhSum(z *big.Float, prec uint) *big.Float {
	sum := new(big.Float).SetPrec(prec).Set(z)
	if z.Sign() == 0 {
		return sum
	}
	z2 := new(big.Float).SetPrec(prec).Mul(z, z)
	pw := new(big.Float).SetPrec(prec).Set(z)
	term := new(big.Float).SetPrec(prec)
	for k := int64(3); ; k += 2 {
		pw.Mul(pw, z2)
		term.Quo(pw, new(big.Float).SetInt64(k))
		if term.Sign() == 0 || term.MantExp(nil) < sum.MantExp(nil)-int(prec) {
			break
		}
		sum.Add(sum, term)
	}
	return sum.Mul(sum, big.NewFloat(2))
}

// bigLn is ln(x) for x > 0 at prec bits: x = m·2^e with m in [1/√2, √2),
// ln(m) by the atanh series and ln 2 = 2·atanh(1/3).
func bigLn(x *big.Float, prec uint) *big.Float {
	wp := prec + 64
	m := new(big.Float).SetPrec(wp)
	e := x.MantExp(m)
	if m.Cmp(big.NewFloat(math.Sqrt2/2)) < 0 {
		m.SetMantExp(m, 1)
		e--
	}
	one := new(big.Float).SetPrec(wp).SetInt64(1)
	z := new(big.Float).SetPrec(wp).Sub(m, one)
	z.Quo(z, new(big.Float).SetPrec(wp).Add(m, one))
	r := bigAtanhSum(z, wp)
	if e != 0 {
		third := new(big.Float).SetPrec(wp).Quo(one, new(big.Float).SetPrec(wp).SetInt64(3))
		ln2 := bigAtanhSum(third, wp)
		r.Add(r, ln2.Mul(ln2, new(big.Float).SetInt64(int64(e))))
	}
	return r
}

// bigExp is e^y at prec bits of relative precision: the Taylor series of
// y/2^k, squared k times.
func bigExp(y *big.Float, prec uint) *big.Float {
	k := 0
	if y.Sign() != 0 {
		k = max(y.MantExp(nil)+8, 0)
	}
	wp := prec + uint(k) + 64
	r := new(big.Float).SetPrec(wp).SetMantExp(y, -k)
	sum := new(big.Float).SetPrec(wp).SetInt64(1)
	term := new(big.Float).SetPrec(wp).SetInt64(1)
	for i := int64(1); ; i++ {
		term.Mul(term, r)
		term.Quo(term, new(big.Float).SetInt64(i))
		if term.Sign() == 0 || term.MantExp(nil) < sum.MantExp(nil)-int(wp) {
			break
		}
		sum.Add(sum, term)
	}
	for ; k > 0; k-- {
		sum.Mul(sum, sum)
	}
	return sum
}

// nbaseTop is d's leading base-10000 digits as PostgreSQL holds them: the
// weight of the first non-zero group, that group, the next one, and
// whether any non-zero group follows the first.
func nbaseTop(d decimal) (weight, d0, d1 int, more bool) {
	digits := new(big.Int).Abs(d.Unscaled).String()
	if digits == "0" {
		return 0, 0, 0, false
	}
	// digit i of digits has decimal weight len-1-i-scale; align groups at the point
	top := len(digits) - 1 - d.Scale // decimal weight of the first digit
	weight = floorDiv(top, 4)
	pad := top - weight*4 // digits before the first in its group: 3 - pad zeros lead
	s := strings.Repeat("0", 3-pad) + digits
	if r := len(s) % 4; r != 0 {
		s += strings.Repeat("0", 4-r)
	}
	g := func(i int) int {
		n := 0
		for _, c := range s[i*4 : i*4+4] {
			n = n*10 + int(c-'0')
		}
		return n
	}
	d0 = g(0)
	if len(s) > 4 {
		d1 = g(1)
		more = strings.Trim(s[4:], "0") != ""
	}
	return weight, d0, d1, more
}

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// estimateLnDweight is PostgreSQL's estimate_ln_dweight: the decimal
// weight of ln(d), from ln(1+x) ≈ x near 1, else from d's leading digits.
func estimateLnDweight(d decimal) int {
	if d.Unscaled.Sign() <= 0 {
		return 0
	}
	lo, hi := decimal{big.NewInt(9), 1}, decimal{big.NewInt(11), 1}
	if cmpDecimal(d, lo) >= 0 && cmpDecimal(d, hi) <= 0 {
		x := decimal{new(big.Int).Sub(d.Unscaled, pow10(d.Scale)), d.Scale}
		if x.Unscaled.Sign() == 0 {
			return 0
		}
		w, d0, _, _ := nbaseTop(x)
		return w*4 + int(math.Log10(float64(d0)))
	}
	w, d0, d1, more := nbaseTop(d)
	digits, dweight := d0, w*4
	if more {
		digits = digits*10000 + d1
		dweight -= 4
	}
	lnv := math.Log(float64(digits)) + float64(dweight)*2.302585092994046
	return int(math.Log10(math.Abs(lnv)))
}

func cmpDecimal(x, y decimal) int {
	s := max(x.Scale, y.Scale)
	return x.Rescale(s).Unscaled.Cmp(y.Rescale(s).Unscaled)
}

// NumericSqrt is numeric_sqrt: 2201F for a negative argument; the scale
// gives 16 significant digits by the argument's base-10000 weight.
func NumericSqrt(v Value) (Value, error) {
	switch v.S {
	case numericNaN, numericPosInf:
		return v, nil
	}
	if v.S == numericNegInf || strings.HasPrefix(v.S, "-") && numericClass(v) != 0 {
		return Value{}, pgerror.Errorf(pgerror.CodeInvalidPower, "cannot take square root of a negative number")
	}
	d, err := NumericOf(v)
	if err != nil {
		return Value{}, err
	}
	w, _, _, _ := nbaseTop(d)
	sweight := (w+1)*4/2 - 1
	rscale := clampScale(max(numericMinSigDigits-sweight, d.Scale))
	return sqrtDecimal(new0(d), rscale).Value(), nil
}

// new0 is d with -0's sign dropped (sqrt(-0.0) is 0).
func new0(d decimal) decimal {
	if d.Unscaled.Sign() == 0 {
		return decimal{new(big.Int), d.Scale}
	}
	return d
}

// NumericExp is numeric_exp: 22003 past e^6000, 0 below e^-6000.
func NumericExp(v Value) (Value, error) {
	switch v.S {
	case numericNaN, numericPosInf:
		return v, nil
	case numericNegInf:
		return Value{T: TNumeric, S: "0"}, nil
	}
	d, err := NumericOf(v)
	if err != nil {
		return Value{}, err
	}
	x := FloatOf(v)
	val := min(max(x*0.434294481903252, -numericMaxResult), numericMaxResult)
	rscale := clampScale(max(numericMinSigDigits-int(val), d.Scale))
	return expResult(d.bigOf(precFor(rscale+int(max(val, 0))+8)), x, rscale)
}

// expResult is e^y (y about yf) at rscale, with exp_var's limits.
func expResult(y *big.Float, yf float64, rscale int) (Value, error) {
	if math.Abs(yf) >= numericMaxResult*3 {
		if yf > 0 {
			return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "value overflows numeric format")
		}
		return decimal{new(big.Int), rscale}.Value(), nil
	}
	dweight := int(max(yf*0.434294481903252, 0))
	r := bigExp(y, precFor(rscale+dweight))
	return roundBig(r, rscale).Value(), nil
}

// lnArg checks ln's argument (2201E for zero and the negatives).
func lnArg(d decimal) error {
	switch d.Unscaled.Sign() {
	case 0:
		return pgerror.Errorf(pgerror.CodeInvalidLog, "cannot take logarithm of zero")
	case -1:
		return pgerror.Errorf(pgerror.CodeInvalidLog, "cannot take logarithm of a negative number")
	}
	return nil
}

// NumericLn is numeric_ln.
func NumericLn(v Value) (Value, error) {
	switch v.S {
	case numericNaN, numericPosInf:
		return v, nil
	case numericNegInf:
		return Value{}, pgerror.Errorf(pgerror.CodeInvalidLog, "cannot take logarithm of a negative number")
	}
	d, err := NumericOf(v)
	if err != nil {
		return Value{}, err
	}
	if err := lnArg(d); err != nil {
		return Value{}, err
	}
	dw := estimateLnDweight(d)
	rscale := clampScale(max(numericMinSigDigits-dw, d.Scale))
	prec := precFor(rscale + max(dw, 0))
	return roundBig(bigLn(d.bigOf(prec+uint(max(-dw, 0))*4), prec), rscale).Value(), nil
}

// NumericLog is log(base, num) of numerics, as log_var: 2201E for a base
// or argument not above zero, 22012 for base 1.
func NumericLog(base, num Value) (Value, error) {
	if base.S == numericNaN || num.S == numericNaN {
		return Value{T: TNumeric, S: numericNaN}, nil
	}
	if IsNumericSpecial(base) || IsNumericSpecial(num) {
		// numeric_log's infinities: not above zero fails as log_var would;
		// log(Inf, Inf) is NaN, log(Inf, x) 0, log(b, Inf) Infinity
		for _, v := range []Value{base, num} {
			switch c := numericClass(v); {
			case c < 0:
				return Value{}, pgerror.Errorf(pgerror.CodeInvalidLog, "cannot take logarithm of a negative number")
			case c == 0:
				return Value{}, pgerror.Errorf(pgerror.CodeInvalidLog, "cannot take logarithm of zero")
			}
		}
		switch {
		case base.S == numericPosInf && num.S == numericPosInf:
			return Value{T: TNumeric, S: numericNaN}, nil
		case base.S == numericPosInf:
			return Value{T: TNumeric, S: "0"}, nil
		}
		return Value{T: TNumeric, S: numericPosInf}, nil
	}
	b, x, err := numericPair(base, num)
	if err != nil {
		return Value{}, err
	}
	if err := lnArg(b); err != nil {
		return Value{}, err
	}
	if err := lnArg(x); err != nil {
		return Value{}, err
	}
	bw, xw := estimateLnDweight(b), estimateLnDweight(x)
	rscale := clampScale(max(numericMinSigDigits-(xw-bw), b.Scale, x.Scale))
	prec := precFor(rscale + max(xw-bw, 0) + max(-bw, 0) + max(-xw, 0))
	lb := bigLn(b.bigOf(prec), prec)
	if lb.Sign() == 0 {
		return Value{}, pgerror.Errorf(pgerror.CodeDivisionByZero, "division by zero")
	}
	lx := bigLn(x.bigOf(prec), prec)
	return roundBig(lx.Quo(lx, lb), rscale).Value(), nil
}

// numericPowerReal is power_var for an exponent that is not an integer of
// int32's range: e^(exp·ln(base)), at the scale its low-precision
// estimate gives; a negative base needs an integer exponent (2201F).
func numericPowerReal(b, e decimal) (Value, error) {
	if b.Unscaled.Sign() == 0 {
		if e.Unscaled.Sign() < 0 {
			return Value{}, pgerror.Errorf(pgerror.CodeInvalidPower, "zero raised to a negative power is undefined")
		}
		return decimal{new(big.Int), numericMinSigDigits}.Value(), nil
	}
	neg := false
	if b.Unscaled.Sign() < 0 {
		q, r := new(big.Int).QuoRem(e.Unscaled, pow10(e.Scale), new(big.Int))
		if r.Sign() != 0 {
			return Value{}, pgerror.Errorf(pgerror.CodeInvalidPower, "a negative number raised to a non-integer power yields a complex result")
		}
		neg = q.Bit(0) == 1
		b = decimal{new(big.Int).Neg(b.Unscaled), b.Scale}
	}
	lnLow, _ := bigLn(b.bigOf(128), 64).Float64()
	ef, _ := e.bigOf(64).Float64()
	val := lnLow * ef
	if math.Abs(val) > numericMaxResult*3.01 {
		if val > 0 {
			return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "value overflows numeric format")
		}
		return decimal{new(big.Int), MaxNumericScale}.Value(), nil
	}
	rscale := clampScale(max(numericMinSigDigits-int(val*0.434294481903252), b.Scale, e.Scale))
	dw := estimateLnDweight(b)
	prec := precFor(rscale + int(max(val*0.434294481903252, 0)) + max(-dw, 0) + 8)
	y := bigLn(b.bigOf(prec), prec)
	y.Mul(y, e.bigOf(prec))
	out, err := expResult(y, val, rscale)
	if err == nil && neg {
		out = NumericNeg(out)
	}
	return out, err
}
