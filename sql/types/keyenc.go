package types

import (
	"encoding/binary"
	"math"
	"strings"
	"time"
)

// Key forms of the types held as text whose text does not sort as their
// values (NoKeyType): the numbers that do, for the catalog's typed key
// format (catalog.KeyFormatTyped), which makes them primary keys.
//
//   - date: the days since 2000-01-01 (date_send's integer);
//   - timestamp and timestamptz: the microseconds since 2000-01-01 00:00
//     UTC (timestamp_send's);
//   - real and double precision: the float64 (the caller encodes it with
//     an order-preserving float encoding), -0 as 0 and every NaN as one,
//     which is the btree order PostgreSQL's float8 opclass has (NaN above
//     every number, -0 = 0);
//   - numeric: NumericKey, an order-preserving byte string of the value, the
//     same for 1.5 and 1.50 (numeric's btree equality);
//   - interval: IntervalKey, its span (CompareIntervals' order, so '1 day'
//     and '24 hours' are one key).
//
// The first three read back exactly (KeyDate, KeyTimestamp, FloatValue);
// a float key reads back without the sign of -0, a numeric key without
// its display scale and an interval key as days and microseconds, so a row
// keeps those columns' text beside the key (catalog.EncodeRow).

// KeyInt is the integer of a date, timestamp or timestamptz that orders it
// as its type does; ok is false for another type.
func KeyInt(v Value) (n int64, ok bool) {
	switch v.T {
	case TDate:
		t, err := parseDateTime(v.S, "date")
		if err != nil {
			return 0, true // cannot happen: S was parsed on the way in
		}
		return dateDays(t), true
	case TTimestamp, TTimestamptz:
		return Instant(v).UnixMicro() - pgEpoch.UnixMicro(), true
	}
	return 0, false
}

// KeyIntValue is KeyInt's inverse for type t (date, timestamp or
// timestamptz).
func KeyIntValue(t Type, n int64) Value {
	switch t {
	case TDate:
		return DateValue(pgEpoch.AddDate(0, 0, int(n)))
	case TTimestamptz:
		return TimestamptzValue(time.UnixMicro(n + pgEpoch.UnixMicro()))
	}
	return TimestampValue(time.UnixMicro(n + pgEpoch.UnixMicro()).UTC())
}

// KeyFloat is a float value's key: -0 is 0, every NaN one NaN.
func KeyFloat(v Value) float64 {
	f := FloatOf(v)
	if f == 0 {
		return 0
	}
	if math.IsNaN(f) {
		return math.NaN()
	}
	return f
}

// NumericKey appends the order-preserving form of numeric text s
// (numeric_out's): a class byte (0 -Infinity, 1 negative, 2 zero, 3
// positive, 4 Infinity, 5 NaN, which is all of those three), then for
// a non-zero value its decimal exponent (the position of its first
// significant digit, as a big-endian int64 with the sign bit flipped) and
// its significant digits without trailing zeros; a negative value has the
// exponent and digits complemented and a 0xFF after them, so that a longer
// run of digits sorts first, as -0.123 < -0.12 does. Byte order of the
// results is numeric order, and equal values (1.5, 1.50) have one form.
func NumericKey(dst []byte, s string) []byte {
	for i, sp := range numericKeySpecial {
		if s == sp {
			return append(dst, byte(i))
		}
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	intPart = strings.TrimLeft(intPart, "0")
	var exp int64
	digits := intPart + frac
	if intPart != "" {
		exp = int64(len(intPart))
	} else {
		lead := len(frac) - len(strings.TrimLeft(frac, "0"))
		exp = -int64(lead)
		digits = frac[lead:]
	}
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		return append(dst, 2)
	}
	if !neg {
		dst = append(dst, 3)
		dst = binary.BigEndian.AppendUint64(dst, uint64(exp)^(1<<63))
		return append(dst, digits...)
	}
	dst = append(dst, 1)
	dst = binary.BigEndian.AppendUint64(dst, ^(uint64(exp) ^ (1 << 63)))
	for i := 0; i < len(digits); i++ {
		dst = append(dst, ^digits[i])
	}
	return append(dst, 0xFF)
}

// numericKeySpecial is the class bytes of NaN and the infinities.
var numericKeySpecial = [...]string{0: numericNegInf, 4: numericPosInf, 5: numericNaN}

// NumericFromKey is NumericKey's inverse: the value, in its shortest text
// (no trailing fractional zeros); ok is false for bytes NumericKey cannot
// have written.
func NumericFromKey(b []byte) (v Value, ok bool) {
	if len(b) == 1 && int(b[0]) < len(numericKeySpecial) && numericKeySpecial[b[0]] != "" {
		return Value{T: TNumeric, S: numericKeySpecial[b[0]]}, true
	}
	if len(b) == 1 && b[0] == 2 {
		return Value{T: TNumeric, S: "0"}, true
	}
	if len(b) < 10 || (b[0] != 1 && b[0] != 3) {
		return Value{}, false
	}
	neg := b[0] == 1
	e := binary.BigEndian.Uint64(b[1:9])
	ds := b[9:]
	if neg {
		if ds[len(ds)-1] != 0xFF {
			return Value{}, false
		}
		e = ^e
		ds = ds[:len(ds)-1]
	}
	exp := int64(e ^ (1 << 63))
	digits := make([]byte, len(ds))
	for i, c := range ds {
		if neg {
			c = ^c
		}
		if c < '0' || c > '9' {
			return Value{}, false
		}
		digits[i] = c
	}
	if len(digits) == 0 || digits[0] == '0' || digits[len(digits)-1] == '0' || exp > MaxNumericKeyDigits || exp < -MaxNumericKeyDigits {
		return Value{}, false
	}
	var sb strings.Builder
	if neg {
		sb.WriteByte('-')
	}
	n := int64(len(digits))
	switch {
	case exp <= 0:
		sb.WriteString("0.")
		sb.WriteString(strings.Repeat("0", int(-exp)))
		sb.Write(digits)
	case exp >= n:
		sb.Write(digits)
		sb.WriteString(strings.Repeat("0", int(exp-n)))
	default:
		sb.Write(digits[:exp])
		sb.WriteByte('.')
		sb.Write(digits[exp:])
	}
	return Value{T: TNumeric, S: sb.String()}, true
}

// MaxNumericKeyDigits bounds a numeric key's exponent when it is read back
// (PostgreSQL's numeric has at most 131072 digits before the point and
// 16383 after it).
const MaxNumericKeyDigits = 1 << 17

// IntervalKey appends the order-preserving form of an interval: its span's
// whole days (a big-endian int64, sign bit flipped) and the microseconds
// left of a day (never negative), 16 bytes.
func IntervalKey(dst []byte, v Value) []byte {
	days, rest := IntervalOf(v).span()
	dst = binary.BigEndian.AppendUint64(dst, uint64(days)^(1<<63))
	return binary.BigEndian.AppendUint64(dst, uint64(rest))
}

// IntervalFromKey is IntervalKey's inverse: an interval equal to the one
// written (its days as 30-day months past int32's range); ok is false for
// bytes IntervalKey cannot have written.
func IntervalFromKey(b []byte) (v Value, ok bool) {
	if len(b) != 16 {
		return Value{}, false
	}
	days := int64(binary.BigEndian.Uint64(b) ^ (1 << 63))
	rest := int64(binary.BigEndian.Uint64(b[8:]))
	if rest < 0 || rest >= usecsPerDay {
		return Value{}, false
	}
	var iv Interval
	if days >= math.MinInt32 && days <= math.MaxInt32 {
		iv.Days = int32(days)
	} else {
		m, d := days/daysPerMonth, days%daysPerMonth
		if m < math.MinInt32 || m > math.MaxInt32 {
			return Value{}, false
		}
		iv.Months, iv.Days = int32(m), int32(d)
	}
	iv.Micros = rest
	return IntervalValue(iv), true
}
