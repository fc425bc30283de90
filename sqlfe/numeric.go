package sqlfe

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
// assignment and cast (numericTypmod). NaN, the infinities and numeric
// keys are not implemented (0A000).

// decimal is unscaled × 10^-scale.
type decimal struct {
	u     *big.Int
	scale int
}

// maxNumericScale bounds the display scale, as PostgreSQL's NUMERIC_MAX_DISPLAY_SCALE.
const maxNumericScale = 1000

// parseNumeric reads numeric_in's input: [+-]digits[.digits][e[+-]digits]
// around optional spaces.
func parseNumeric(s string) (decimal, error) {
	bad := func() (decimal, error) {
		return decimal{}, pgerror.Errorf(pgerror.CodeInvalidText, "invalid input syntax for type numeric: %q", s)
	}
	t := strings.TrimSpace(s)
	switch strings.ToLower(strings.TrimLeft(t, "+-")) {
	case "nan", "infinity", "inf":
		return decimal{}, pgerror.NotSupported("numeric %s is not supported", t)
	}
	mant, exp := t, 0
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		e, err := strconv.Atoi(t[i+1:])
		if err != nil || e > maxNumericScale || e < -maxNumericScale {
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
	d.scale -= exp
	if d.scale < 0 {
		d.u.Mul(d.u, pow10(-d.scale))
		d.scale = 0
	}
	if d.scale > maxNumericScale {
		return bad()
	}
	return d, nil
}

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// String is numeric_out's text.
func (d decimal) String() string {
	neg := d.u.Sign() < 0
	digits := new(big.Int).Abs(d.u).String()
	if d.scale > 0 {
		if len(digits) <= d.scale {
			digits = strings.Repeat("0", d.scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-d.scale] + "." + digits[len(digits)-d.scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

func (d decimal) value() Value { return Value{T: TNumeric, S: d.String()} }

// rescale returns d with scale s >= d.scale.
func (d decimal) rescale(s int) decimal {
	if s == d.scale {
		return d
	}
	return decimal{new(big.Int).Mul(d.u, pow10(s-d.scale)), s}
}

// numericOf reads a numeric or integer value as a decimal.
func numericOf(v Value) (decimal, error) {
	if isInt(v.T) {
		return decimal{big.NewInt(v.I), 0}, nil
	}
	return parseNumeric(v.S)
}

func numericCmp(a, b Value) int {
	x, err1 := numericOf(a)
	y, err2 := numericOf(b)
	if err1 != nil || err2 != nil {
		return strings.Compare(a.S, b.S) // cannot happen: values are parsed on the way in
	}
	s := max(x.scale, y.scale)
	return x.rescale(s).u.Cmp(y.rescale(s).u)
}

// numericArith is + - * on numerics (either side may be an integer).
func numericArith(op byte, a, b Value) (Value, error) {
	x, err := numericOf(a)
	if err != nil {
		return Value{}, err
	}
	y, err := numericOf(b)
	if err != nil {
		return Value{}, err
	}
	switch op {
	case '+', '-':
		s := max(x.scale, y.scale)
		x, y = x.rescale(s), y.rescale(s)
		r := new(big.Int)
		if op == '+' {
			r.Add(x.u, y.u)
		} else {
			r.Sub(x.u, y.u)
		}
		return decimal{r, s}.value(), nil
	case '*':
		if x.scale+y.scale > maxNumericScale {
			return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "value overflows numeric format")
		}
		return decimal{new(big.Int).Mul(x.u, y.u), x.scale + y.scale}.value(), nil
	case '/':
		if y.u.Sign() == 0 {
			return Value{}, pgerror.Errorf(pgerror.CodeDivisionByZero, "division by zero")
		}
		return x.div(y, divScale(x, y)).value(), nil
	case '%':
		if y.u.Sign() == 0 {
			return Value{}, pgerror.Errorf(pgerror.CodeDivisionByZero, "division by zero")
		}
		// x - trunc(x / y) * y, at the larger scale (PostgreSQL's mod_var)
		s := max(x.scale, y.scale)
		x, y = x.rescale(s), y.rescale(s)
		return decimal{new(big.Int).Rem(x.u, y.u), s}.value(), nil
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
	r = max(r, x.scale, y.scale, 0)
	return min(r, maxNumericScale)
}

// nbaseLead is d's weight and first digit in PostgreSQL's base-10000
// representation (groups of four decimal digits aligned at the point);
// 0, 0 for zero.
func nbaseLead(d decimal) (weight, first int) {
	if d.u.Sign() == 0 {
		return 0, 0
	}
	digits := new(big.Int).Abs(d.u).String()
	ip, fp := "", ""
	if d.scale >= len(digits) {
		fp = strings.Repeat("0", d.scale-len(digits)) + digits
	} else {
		ip, fp = digits[:len(digits)-d.scale], digits[len(digits)-d.scale:]
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
	n := new(big.Int).Mul(x.u, pow10(s-x.scale+y.scale))
	q, r := new(big.Int).QuoRem(n, y.u, new(big.Int))
	r2 := new(big.Int).Abs(r)
	r2.Lsh(r2, 1)
	if r2.Cmp(new(big.Int).Abs(y.u)) >= 0 {
		if (n.Sign() < 0) != (y.u.Sign() < 0) {
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
	d, err := numericOf(v)
	if err != nil {
		return Value{}, err
	}
	r := roundDecimal(d, scale, false)
	if r.u.Sign() != 0 {
		// |r| must be < 10^(prec-scale): in units of 10^-r.scale,
		// 10^(prec-scale+r.scale)
		limit := pow10(max(prec-scale+r.scale, 0))
		if prec-scale+r.scale < 0 || new(big.Int).Abs(r.u).Cmp(limit) >= 0 {
			return Value{}, &pgerror.Error{Code: pgerror.CodeNumericRange, Message: "numeric field overflow",
				Detail: fmt.Sprintf("A field with precision %d, scale %d must round to an absolute value less than %s10^%d.", prec, scale, "", prec-scale)}
		}
	}
	return r.value(), nil
}

func numericNeg(v Value) Value {
	if strings.HasPrefix(v.S, "-") {
		return Value{T: TNumeric, S: v.S[1:]}
	}
	d, err := parseNumeric(v.S)
	if err != nil || d.u.Sign() == 0 {
		return v
	}
	return Value{T: TNumeric, S: "-" + v.S}
}

// numericToInt rounds half away from zero, as numeric_int4/numeric_int8.
func numericToInt(v Value, t Type) (Value, error) {
	d, err := parseNumeric(v.S)
	if err != nil {
		return Value{}, err
	}
	q := new(big.Int)
	if d.scale > 0 {
		p := pow10(d.scale)
		r := new(big.Int)
		q.QuoRem(d.u, p, r)
		if new(big.Int).Mul(new(big.Int).Abs(r), big.NewInt(2)).Cmp(p) >= 0 {
			q.Add(q, big.NewInt(int64(d.u.Sign())))
		}
	} else {
		q = d.u
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
	d, err := parseNumeric(s)
	if err != nil {
		return dst
	}
	sign := uint16(0)
	if d.u.Sign() < 0 {
		sign = 0x4000
	}
	digits := new(big.Int).Abs(d.u).String()
	// pad the fraction to a multiple of 4 digits, the integer part too
	frac := d.scale
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
	dst = binary.BigEndian.AppendUint16(dst, uint16(d.scale))
	for _, g := range groups {
		dst = binary.BigEndian.AppendUint16(dst, g)
	}
	return dst
}

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
	if len(b) != 8+2*n || (sign != 0 && sign != 0x4000) || scale > maxNumericScale {
		if sign == 0xC000 || sign == 0xD000 || sign == 0xF000 {
			return Value{}, pgerror.NotSupported("numeric NaN and infinities are not supported")
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
	if d.scale > scale {
		d.u.Quo(d.u, pow10(d.scale-scale))
		d.scale = scale
	}
	d = d.rescale(scale)
	if sign == 0x4000 {
		d.u.Neg(d.u)
	}
	return d.value(), nil
}
