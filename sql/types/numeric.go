package types

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/tupled/tupled/sql/pgerror"
)

// numeric (PostgreSQL's arbitrary-precision decimal): a Value of type TNumeric holds its text form in S, as
// PostgreSQL's numeric_out prints it (the digits, and as many after the
// point as its display scale says: '1.50' stays 1.50), which is also what
// a row stores. Arithmetic (+, -, *, unary -), comparisons and casts
// to and from the integers and text work on the decimal (unscaled, scale):
// a sum or difference has the larger of the operands' scales, a product
// their sum, as in PostgreSQL; a quotient has the scale select_div_scale
// picks (divScale), a remainder the larger scale. numeric(p, s) rounds at
// assignment and cast (numericTypmod). A numeric key is NumericKey's
// ordered form (keyenc.go). NaN and the infinities are held as their
// text too (numeric_special.go); ParseNumeric and NumericOf refuse them
// (0A000), so each operation that has them handles them first.

// decimal is unscaled × 10^-scale.
type decimal struct {
	Unscaled *big.Int
	Scale    int
}

// MaxNumericScale bounds the display scale, as PostgreSQL's NUMERIC_MAX_DISPLAY_SCALE.
const MaxNumericScale = 1000

// ParseNumeric reads numeric_in's input: [+-]digits[.digits][e[+-]digits]
// around optional spaces.
func ParseNumeric(s string) (decimal, error) {
	bad := func() (decimal, error) {
		return decimal{}, pgerror.Errorf(pgerror.CodeInvalidText, "invalid input syntax for type numeric: %q", s)
	}
	t := strings.TrimSpace(s)
	if sp, ok := parseNumericSpecial(t); ok {
		return decimal{}, pgerror.NotSupported("this operation on numeric %s is not supported", sp)
	}
	mant, exp := t, 0
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		e, err := strconv.Atoi(t[i+1:])
		if err != nil || e > MaxNumericScale || e < -MaxNumericScale {
			return bad()
		}
		mant, exp = t[:i], e
	}
	neg := false
	if mant != "" && (mant[0] == '+' || mant[0] == '-') {
		neg, mant = mant[0] == '-', mant[1:]
	}
	ip, fp, _ := strings.Cut(mant, ".")
	if ip+fp == "" || strings.Trim(ip+fp, "0123456789") != "" {
		return bad()
	}
	u, ok := new(big.Int).SetString("0"+ip+fp, 10)
	if !ok {
		return bad()
	}
	if neg {
		u.Neg(u)
	}
	d := decimal{u, len(fp)}
	d.Scale -= exp
	if d.Scale < 0 {
		d.Unscaled.Mul(d.Unscaled, pow10(-d.Scale))
		d.Scale = 0
	}
	if d.Scale > MaxNumericScale {
		return bad()
	}
	return d, nil
}

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// String is numeric_out's text.
func (d decimal) String() string {
	neg := d.Unscaled.Sign() < 0
	digits := new(big.Int).Abs(d.Unscaled).String()
	if d.Scale > 0 {
		if len(digits) <= d.Scale {
			digits = strings.Repeat("0", d.Scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-d.Scale] + "." + digits[len(digits)-d.Scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// Value is d as a numeric Value (its text form).
func (d decimal) Value() Value { return Value{T: TNumeric, S: d.String()} }

// Rescale returns d with scale s >= d.scale.
func (d decimal) Rescale(s int) decimal {
	if s == d.Scale {
		return d
	}
	return decimal{new(big.Int).Mul(d.Unscaled, pow10(s-d.Scale)), s}
}

// NumericOf reads a numeric or integer value as a decimal.
func NumericOf(v Value) (decimal, error) {
	if IsInt(v.T) {
		return decimal{big.NewInt(v.I), 0}, nil
	}
	return ParseNumeric(v.S)
}

// numericPair is NumericOf of a and of b.
func numericPair(a, b Value) (decimal, decimal, error) {
	x, err := NumericOf(a)
	if err != nil {
		return decimal{}, decimal{}, err
	}
	y, err := NumericOf(b)
	return x, y, err
}

func numericCmp(a, b Value) int {
	if x, y := numericRank(a), numericRank(b); x != 1 || y != 1 {
		return x - y // NaN = NaN, above Infinity, above the finite values
	}
	x, err1 := NumericOf(a)
	y, err2 := NumericOf(b)
	if err1 != nil || err2 != nil {
		return strings.Compare(a.S, b.S) // cannot happen: values are parsed on the way in
	}
	s := max(x.Scale, y.Scale)
	return x.Rescale(s).Unscaled.Cmp(y.Rescale(s).Unscaled)
}

// NumericArith is + - * on numerics (either side may be an integer).
func NumericArith(op byte, a, b Value) (Value, error) {
	if IsNumericSpecial(a) || IsNumericSpecial(b) {
		return numericSpecialArith(op, a, b) // numeric_special.go
	}
	x, y, err := numericPair(a, b)
	if err != nil {
		return Value{}, err
	}
	switch op {
	case '+', '-':
		s := max(x.Scale, y.Scale)
		x, y = x.Rescale(s), y.Rescale(s)
		r := new(big.Int)
		if op == '+' {
			r.Add(x.Unscaled, y.Unscaled)
		} else {
			r.Sub(x.Unscaled, y.Unscaled)
		}
		return decimal{r, s}.Value(), nil
	case '*':
		if x.Scale+y.Scale > MaxNumericScale {
			return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "value overflows numeric format")
		}
		return decimal{new(big.Int).Mul(x.Unscaled, y.Unscaled), x.Scale + y.Scale}.Value(), nil
	case '/':
		if y.Unscaled.Sign() == 0 {
			return Value{}, pgerror.Errorf(pgerror.CodeDivisionByZero, "division by zero")
		}
		return x.div(y, divScale(x, y)).Value(), nil
	case '%':
		if y.Unscaled.Sign() == 0 {
			return Value{}, pgerror.Errorf(pgerror.CodeDivisionByZero, "division by zero")
		}
		// x - trunc(x / y) * y, at the larger scale (PostgreSQL's mod_var)
		s := max(x.Scale, y.Scale)
		x, y = x.Rescale(s), y.Rescale(s)
		return decimal{new(big.Int).Rem(x.Unscaled, y.Unscaled), s}.Value(), nil
	}
	return Value{}, pgerror.NotSupported("operator %c on numeric is not supported", op)
}

// divScale is the scale of x / y as PostgreSQL's select_div_scale picks
// it: at least 16 significant digits (NUMERIC_MIN_SIG_DIGITS), and no less
// than either input's scale. PostgreSQL estimates the quotient's weight
// from the inputs' leading base-10000 digits, so the scale comes in steps
// of 4; it is reproduced here digit group for digit group.
func divScale(x, y decimal) int {
	w1, f1 := nbaseLead(x)
	w2, f2 := nbaseLead(y)
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	r := 16 - qweight*4
	r = max(r, x.Scale, y.Scale, 0)
	return min(r, MaxNumericScale)
}

// nbaseLead is d's weight and first digit in PostgreSQL's base-10000
// representation (groups of four decimal digits aligned at the point);
// 0, 0 for zero.
func nbaseLead(d decimal) (weight, first int) {
	if d.Unscaled.Sign() == 0 {
		return 0, 0
	}
	digits := new(big.Int).Abs(d.Unscaled).String()
	ip, fp := "", ""
	if d.Scale >= len(digits) {
		fp = strings.Repeat("0", d.Scale-len(digits)) + digits
	} else {
		ip, fp = digits[:len(digits)-d.Scale], digits[len(digits)-d.Scale:]
	}
	if pad := (4 - len(ip)%4) % 4; pad > 0 {
		ip = strings.Repeat("0", pad) + ip
	}
	if pad := (4 - len(fp)%4) % 4; pad > 0 {
		fp += strings.Repeat("0", pad)
	}
	all := ip + fp
	nInt := len(ip) / 4
	for i := 0; i*4 < len(all); i++ {
		g, _ := strconv.Atoi(all[i*4 : i*4+4])
		if g != 0 {
			return nInt - 1 - i, g
		}
	}
	return 0, 0
}

// div is x / y rounded half away from zero to scale s (y is not zero).
func (x decimal) div(y decimal, s int) decimal {
	n := new(big.Int).Mul(x.Unscaled, pow10(s-x.Scale+y.Scale))
	q, r := new(big.Int).QuoRem(n, y.Unscaled, new(big.Int))
	r2 := new(big.Int).Abs(r)
	r2.Lsh(r2, 1)
	if r2.Cmp(new(big.Int).Abs(y.Unscaled)) >= 0 {
		if (n.Sign() < 0) != (y.Unscaled.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return decimal{q, s}
}

// numericTypmod applies numeric(prec, scale) to v as PostgreSQL's
// apply_typmod does: round to scale, then at most prec - scale digits
// before the point.
func numericTypmod(v Value, prec, scale int) (Value, error) {
	switch v.S {
	case numericNaN:
		return v, nil
	case numericPosInf, numericNegInf:
		return Value{}, &pgerror.Error{Code: pgerror.CodeNumericRange, Message: "numeric field overflow",
			Detail: fmt.Sprintf("A field with precision %d, scale %d cannot hold an infinite value.", prec, scale)}
	}
	d, err := NumericOf(v)
	if err != nil {
		return Value{}, err
	}
	r := RoundDecimal(d, scale, false)
	if r.Unscaled.Sign() != 0 {
		// |r| must be < 10^(prec-scale): in units of 10^-r.scale,
		// 10^(prec-scale+r.scale)
		limit := pow10(max(prec-scale+r.Scale, 0))
		if prec-scale+r.Scale < 0 || new(big.Int).Abs(r.Unscaled).Cmp(limit) >= 0 {
			return Value{}, &pgerror.Error{Code: pgerror.CodeNumericRange, Message: "numeric field overflow",
				Detail: fmt.Sprintf("A field with precision %d, scale %d must round to an absolute value less than %s10^%d.", prec, scale, "", prec-scale)}
		}
	}
	return r.Value(), nil
}

// NumericNeg is -v of a numeric v (NULL stays NULL).
func NumericNeg(v Value) Value {
	switch v.S {
	case numericNaN:
		return v
	case numericPosInf:
		return Value{T: TNumeric, S: numericNegInf}
	}
	if strings.HasPrefix(v.S, "-") {
		return Value{T: TNumeric, S: v.S[1:]}
	}
	d, err := ParseNumeric(v.S)
	if err != nil || d.Unscaled.Sign() == 0 {
		return v
	}
	return Value{T: TNumeric, S: "-" + v.S}
}

// numericToInt rounds half away from zero, as numeric_int4/numeric_int8.
func numericToInt(v Value, t Type) (Value, error) {
	if IsNumericSpecial(v) {
		if t == TInt8 {
			return Value{}, numericSpecialToInt(v, "bigint")
		}
		return Value{}, numericSpecialToInt(v, "integer")
	}
	d, err := ParseNumeric(v.S)
	if err != nil {
		return Value{}, err
	}
	q := new(big.Int)
	if d.Scale > 0 {
		p := pow10(d.Scale)
		r := new(big.Int)
		q.QuoRem(d.Unscaled, p, r)
		if new(big.Int).Mul(new(big.Int).Abs(r), big.NewInt(2)).Cmp(p) >= 0 {
			q.Add(q, big.NewInt(int64(d.Unscaled.Sign())))
		}
	} else {
		q = d.Unscaled
	}
	if !q.IsInt64() || (t == TInt4 && (q.Int64() < math.MinInt32 || q.Int64() > math.MaxInt32)) {
		if t == TInt4 {
			return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "integer out of range")
		}
		return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "bigint out of range")
	}
	return Value{T: t, I: q.Int64()}, nil
}

// appendNumericBinary is numeric_send: ndigits, weight, sign, dscale, then
// base-10000 digits.
func appendNumericBinary(dst []byte, s string) []byte {
	if sign, ok := numericSpecialSign[s]; ok {
		return append(dst, 0, 0, 0, 0, byte(sign>>8), 0, 0, 0)
	}
	d, err := ParseNumeric(s)
	if err != nil {
		return dst
	}
	sign := uint16(0)
	if d.Unscaled.Sign() < 0 {
		sign = 0x4000
	}
	digits := new(big.Int).Abs(d.Unscaled).String()
	// pad the fraction to a multiple of 4 digits, the integer part too
	frac := d.Scale
	pad := (4 - frac%4) % 4
	digits += strings.Repeat("0", pad)
	intLen := len(digits) - frac - pad
	if intLen < 0 {
		digits = strings.Repeat("0", -intLen) + digits
		intLen = 0
	}
	lead := (4 - intLen%4) % 4
	digits = strings.Repeat("0", lead) + digits
	intGroups := (intLen + lead) / 4
	var groups []uint16
	for i := 0; i < len(digits); i += 4 {
		n, _ := strconv.Atoi(digits[i : i+4])
		groups = append(groups, uint16(n))
	}
	weight := intGroups - 1
	for len(groups) > 0 && groups[0] == 0 {
		groups = groups[1:]
		weight--
	}
	for len(groups) > 0 && groups[len(groups)-1] == 0 {
		groups = groups[:len(groups)-1]
	}
	if len(groups) == 0 {
		weight = 0
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(groups)))
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(weight)))
	dst = binary.BigEndian.AppendUint16(dst, sign)
	dst = binary.BigEndian.AppendUint16(dst, uint16(d.Scale))
	for _, g := range groups {
		dst = binary.BigEndian.AppendUint16(dst, g)
	}
	return dst
}

// numericSpecialSign is numeric_send's sign word of NaN and the infinities.
var numericSpecialSign = map[string]uint16{numericNaN: 0xC000, numericPosInf: 0xD000, numericNegInf: 0xF000}

// parseNumericBinary is numeric_recv.
func parseNumericBinary(b []byte) (Value, error) {
	bad := pgerror.Errorf(pgerror.CodeInvalidBinary, "invalid external \"numeric\" value")
	if len(b) < 8 {
		return Value{}, bad
	}
	n := int(binary.BigEndian.Uint16(b))
	weight := int(int16(binary.BigEndian.Uint16(b[2:])))
	sign := binary.BigEndian.Uint16(b[4:])
	scale := int(binary.BigEndian.Uint16(b[6:]))
	if len(b) != 8+2*n || (sign != 0 && sign != 0x4000) || scale > MaxNumericScale {
		for s, w := range numericSpecialSign {
			if sign == w {
				return Value{T: TNumeric, S: s}, nil
			}
		}
		return Value{}, bad
	}
	u := new(big.Int)
	for i := 0; i < n; i++ {
		g := binary.BigEndian.Uint16(b[8+2*i:])
		if g >= 10000 {
			return Value{}, bad
		}
		u.Mul(u, big.NewInt(10000)).Add(u, big.NewInt(int64(g)))
	}
	// u is digits × 10000^(weight-n+1); bring it to scale
	e := 4 * (weight - n + 1) // power of ten of u's last digit
	if e >= 0 {
		u.Mul(u, pow10(e))
		e = 0
	}
	d := decimal{u, -e}
	if d.Scale > scale {
		d.Unscaled.Quo(d.Unscaled, pow10(d.Scale-scale))
		d.Scale = scale
	}
	d = d.Rescale(scale)
	if sign == 0x4000 {
		d.Unscaled.Neg(d.Unscaled)
	}
	return d.Value(), nil
}

// RoundDecimal rounds d to places digits after the point (before it when
// negative), half away from zero, or truncates; the result's scale is
// max(places, 0).
func RoundDecimal(d decimal, places int, trunc bool) decimal {
	if places >= d.Scale {
		return d.Rescale(places)
	}
	drop := d.Scale - places // digits to drop
	div := pow10(drop)
	q, r := new(big.Int).QuoRem(d.Unscaled, div, new(big.Int))
	if !trunc {
		r2 := new(big.Int).Abs(r)
		r2.Lsh(r2, 1)
		if r2.Cmp(div) >= 0 {
			if d.Unscaled.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
	}
	if places < 0 {
		return decimal{q.Mul(q, pow10(-places)), 0}
	}
	return decimal{q, places}
}

func bigInt(i int64) *big.Int { return big.NewInt(i) }

// NumericVariance is PostgreSQL's numeric_stddev_internal: the sample
// (sample) or population variance, or its square root (stddev), of n
// values whose sum is sumX and sum of squares sumX2 (numeric or integer
// values): NULL for no values, or one for a sample. The numerator n·sumX2 − sumX² is exact; the quotient has the
// scale select_div_scale picks, the square root that same scale, both
// rounded half away from zero; a numerator that is not positive is 0.
func NumericVariance(n int64, sumX, sumX2 Value, sample, stddev bool) (Value, error) {
	if n == 0 || (sample && n <= 1) {
		return Null(TNumeric), nil
	}
	if IsNumericSpecial(sumX) || IsNumericSpecial(sumX2) {
		return Value{T: TNumeric, S: numericNaN}, nil // numeric_stddev_internal: NaN for any NaN or infinity
	}
	sx, err := NumericOf(sumX)
	if err != nil {
		return Value{}, err
	}
	sxx, err := NumericOf(sumX2)
	if err != nil {
		return Value{}, err
	}
	sq := decimal{new(big.Int).Mul(sx.Unscaled, sx.Unscaled), sx.Scale * 2}
	nsxx := decimal{new(big.Int).Mul(big.NewInt(n), sxx.Unscaled), sxx.Scale}
	s := max(sq.Scale, nsxx.Scale)
	num := decimal{new(big.Int).Sub(nsxx.Rescale(s).Unscaled, sq.Rescale(s).Unscaled), s}
	if num.Unscaled.Sign() <= 0 {
		return Value{T: TNumeric, S: "0"}, nil
	}
	den := n * n
	if sample {
		den = n * (n - 1)
	}
	dd := decimal{big.NewInt(den), 0}
	scale := divScale(num, dd)
	q := num.div(dd, scale)
	if stddev {
		q = sqrtDecimal(q, scale)
	}
	return q.Value(), nil
}

// sqrtDecimal is the square root of d (d >= 0) rounded half away from
// zero to s digits after the point.
func sqrtDecimal(d decimal, s int) decimal {
	// floor(sqrt(d)·10^(s+1)) = floor(sqrt(U·10^(2(s+1)−scale)))
	e := 2*(s+1) - d.Scale
	u := new(big.Int).Set(d.Unscaled)
	if e >= 0 {
		u.Mul(u, pow10(e))
	} else {
		u.Quo(u, pow10(-e)) // floor(sqrt(floor(x))) = floor(sqrt(x))
	}
	r := new(big.Int).Sqrt(u)
	last := new(big.Int)
	r.QuoRem(r, big.NewInt(10), last)
	if last.Int64() >= 5 {
		r.Add(r, big.NewInt(1))
	}
	return decimal{r, s}
}

// NumericPower is power(base, exp) of numerics, as PostgreSQL's
// numeric_power: for an exponent that is an integer of int32's range,
// power_var_int, at PostgreSQL 15's scale for it: 16, or the base's
// display scale if larger (at most 1000), rounded half away from zero;
// for another, e^(exp·ln(base)) (numeric_math.go). With a NaN, 1 if the
// base is 1 or the exponent 0, else NaN; with an infinity, POSIX pow's
// answers (numericPowerInf). ok is always true (kept for the callers).
func NumericPower(base, exp Value) (v Value, ok bool, err error) {
	if base.S == numericNaN || exp.S == numericNaN {
		one := Value{T: TNumeric, S: "1"}
		if Compare(base, one) == 0 && base.S != numericNaN || exp.S != numericNaN && numericClass(exp) == 0 {
			return Value{T: TNumeric, S: "1"}, true, nil
		}
		return Value{T: TNumeric, S: numericNaN}, true, nil
	}
	if IsNumericSpecial(base) || IsNumericSpecial(exp) {
		v, err := numericPowerInf(base, exp) // numeric_special.go
		return v, true, err
	}
	b, e, err := numericPair(base, exp)
	if err != nil {
		return Value{}, false, err
	}
	// the exponent: an integer (trailing fractional zeros allowed)
	q, r := new(big.Int).QuoRem(e.Unscaled, pow10(e.Scale), new(big.Int))
	if r.Sign() != 0 || !q.IsInt64() || q.Int64() < math.MinInt32 || q.Int64() > math.MaxInt32 {
		v, err := numericPowerReal(b, e) // numeric_math.go
		return v, true, err
	}
	n := q.Int64()
	if b.Unscaled.Sign() == 0 && n < 0 {
		return Value{}, true, pgerror.Errorf(pgerror.CodeInvalidPower, "zero raised to a negative power is undefined")
	}
	rscale := min(max(16, b.Scale), MaxNumericScale)
	// the result's decimal weight, estimated in double precision as
	// PostgreSQL does, for its overflow and underflow tests
	f := 0.0
	if b.Unscaled.Sign() != 0 {
		bf, _ := new(big.Float).SetInt(new(big.Int).Abs(b.Unscaled)).Float64()
		f = float64(n) * (math.Log10(bf) - float64(b.Scale))
	}
	if f > 3*32767*4 {
		return Value{}, true, pgerror.Errorf(pgerror.CodeNumericRange, "value overflows numeric format")
	}
	if n == 0 {
		return decimal{pow10(rscale), rscale}.Value(), true, nil
	}
	// exact when the digits stay few; else by squaring, each product
	// rounded to the result's digits and guard digits, as power_var_int
	// does
	abs := n
	if abs < 0 {
		abs = -abs
	}
	digits := len(new(big.Int).Abs(b.Unscaled).String())
	var p decimal
	if f+1 < -float64(rscale) {
		return decimal{new(big.Int), rscale}.Value(), true, nil // underflows to zero
	}
	if int64(digits)*abs <= 20000 {
		p = decimal{new(big.Int).Exp(b.Unscaled, big.NewInt(abs), nil), b.Scale * int(abs)}
	} else {
		guard := rscale + int(math.Max(f, 0)) + int(math.Log10(float64(abs))) + 8
		p = decimal{big.NewInt(1), 0}
		sq := b
		for k := abs; k > 0; k >>= 1 {
			if k&1 == 1 {
				p = RoundDecimal(decimal{new(big.Int).Mul(p.Unscaled, sq.Unscaled), p.Scale + sq.Scale}, guard, false)
			}
			if k > 1 {
				sq = RoundDecimal(decimal{new(big.Int).Mul(sq.Unscaled, sq.Unscaled), 2 * sq.Scale}, guard, false)
			}
		}
	}
	if n < 0 {
		return decimal{big.NewInt(1), 0}.div(p, rscale).Value(), true, nil
	}
	out := RoundDecimal(p, rscale, false)
	if len(new(big.Int).Abs(out.Unscaled).String())-out.Scale > maxNumericWeightDigits {
		return Value{}, true, pgerror.Errorf(pgerror.CodeNumericRange, "value overflows numeric format")
	}
	return out.Value(), true, nil
}

// maxNumericWeightDigits is how many digits a numeric may have before its
// point (PostgreSQL's 131072).
const maxNumericWeightDigits = 131072
