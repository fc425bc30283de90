package types

import (
	"fmt"
	"strings"

	"github.com/tupled/tupled/sql/pgerror"
)

// interval's type modifier, as PostgreSQL's: a range of fields (interval
// hour, interval day to second) and a precision of the seconds
// (interval(0), interval second(3)), packed as INTERVAL_TYPMOD does
// (range << 16 | precision, 0xFFFF for none). A Mod holds it in Prec (an
// interval's Prec > 0 is that typmod), so a Column stores it as a
// numeric's precision is. Input under it reads a bare number in the
// range's last field (interval '5' hour, parseIntervalRange), and
// AdjustInterval truncates the fields below the range and rounds the
// seconds, as AdjustIntervalForTypmod.

// The field bits of a range (INTERVAL_MASK of datetime.h's MONTH, YEAR,
// DAY, HOUR, MINUTE, SECOND).
const (
	IntervalMonth  = 1 << 1
	IntervalYear   = 1 << 2
	IntervalDay    = 1 << 3
	IntervalHour   = 1 << 10
	IntervalMinute = 1 << 11
	IntervalSecond = 1 << 12
	// IntervalFullRange is INTERVAL_FULL_RANGE: every field.
	IntervalFullRange = 0x7FFF
	// IntervalFullPrecision is INTERVAL_FULL_PRECISION: no precision.
	IntervalFullPrecision = 0xFFFF
	// MaxIntervalPrecision is MAX_INTERVAL_PRECISION.
	MaxIntervalPrecision = 6

	rangeMinuteToSecond = IntervalMinute | IntervalSecond
)

// intervalRangeNames is intervaltypmodout's name of each valid range.
var intervalRangeNames = map[int]string{
	IntervalYear: " year", IntervalMonth: " month", IntervalDay: " day", IntervalHour: " hour",
	IntervalMinute: " minute", IntervalSecond: " second",
	IntervalYear | IntervalMonth:                                 " year to month",
	IntervalDay | IntervalHour:                                   " day to hour",
	IntervalDay | IntervalHour | IntervalMinute:                  " day to minute",
	IntervalDay | IntervalHour | IntervalMinute | IntervalSecond: " day to second",
	IntervalHour | IntervalMinute:                                " hour to minute",
	IntervalHour | IntervalMinute | IntervalSecond:               " hour to second",
	IntervalMinute | IntervalSecond:                              " minute to second",
	IntervalFullRange:                                            "",
}

// IntervalTypmod is intervaltypmodin: the typmod of range rng with
// precision prec (-1: none), 0 for none at all (a full range without a
// precision); 22023 for a negative precision or a range that is none of
// the grammar's, a precision above 6 reduced to 6.
func IntervalTypmod(rng, prec int) (int, error) {
	if _, ok := intervalRangeNames[rng]; !ok {
		return 0, pgerror.Errorf(pgerror.CodeInvalidParamValue, "invalid INTERVAL type modifier")
	}
	switch {
	case prec == -1 && rng == IntervalFullRange:
		return 0, nil
	case prec == -1:
		prec = IntervalFullPrecision
	case prec < 0:
		return 0, pgerror.Errorf(pgerror.CodeInvalidParamValue, "INTERVAL(%d) precision must not be negative", prec)
	case prec > MaxIntervalPrecision:
		prec = MaxIntervalPrecision // PostgreSQL warns: precision reduced to maximum allowed
	}
	return rng<<16 | prec, nil
}

func typmodRange(typmod int) int { return typmod >> 16 & 0x7FFF }
func typmodPrec(typmod int) int  { return typmod & 0xFFFF }

// IntervalTypmodName is format_type's name of interval with typmod
// typmod: interval hour to minute, interval(0), interval second(3).
func IntervalTypmodName(typmod int) string {
	s := "interval" + intervalRangeNames[typmodRange(typmod)]
	if p := typmodPrec(typmod); p != IntervalFullPrecision {
		s += fmt.Sprintf("(%d)", p)
	}
	return s
}

// IntervalFields is information_schema's interval_type of typmod: its
// fields and precision in capitals (HOUR TO MINUTE, SECOND(2)), "" for a
// full range.
func IntervalFields(typmod int) string {
	if typmod <= 0 || typmodRange(typmod) == IntervalFullRange {
		return ""
	}
	return strings.ToUpper(strings.TrimPrefix(IntervalTypmodName(typmod), "interval "))
}

// rangeUnit is the unit of a bare number under range rng (DecodeInterval's
// "use typmod to decide what rightmost field is").
func rangeUnit(rng int) intervalUnit {
	switch rng {
	case IntervalYear:
		return intervalUnits["year"]
	case IntervalMonth, IntervalYear | IntervalMonth:
		return intervalUnits["month"]
	case IntervalDay:
		return intervalUnits["day"]
	case IntervalHour, IntervalDay | IntervalHour:
		return intervalUnits["hour"]
	case IntervalMinute, IntervalHour | IntervalMinute, IntervalDay | IntervalHour | IntervalMinute:
		return intervalUnits["minute"]
	}
	return intervalUnits["second"]
}

// ParseIntervalTypmod is interval_in under typmod (0: none): the input
// read in the typmod's range, then adjusted to it.
func ParseIntervalTypmod(s string, typmod int) (Interval, error) {
	rng := 0
	if typmod > 0 {
		rng = typmodRange(typmod)
	}
	iv, err := parseIntervalRange(s, rng)
	if err != nil || typmod <= 0 {
		return iv, err
	}
	return AdjustInterval(iv, typmod), nil
}

// AdjustInterval is AdjustIntervalForTypmod: the fields below the range
// truncated (interval '1 day 02:03' hour is 1 day 02:00), the seconds
// rounded to the precision, half away from zero.
func AdjustInterval(iv Interval, typmod int) Interval {
	if typmod <= 0 {
		return iv
	}
	trunc := func(unit int64) { iv.Micros = iv.Micros / unit * unit }
	switch typmodRange(typmod) {
	case IntervalYear:
		iv.Months = iv.Months / 12 * 12
		iv.Days, iv.Micros = 0, 0
	case IntervalMonth, IntervalYear | IntervalMonth:
		iv.Days, iv.Micros = 0, 0
	case IntervalDay:
		iv.Micros = 0
	case IntervalHour, IntervalDay | IntervalHour:
		trunc(usecsPerHour)
	case IntervalMinute, IntervalDay | IntervalHour | IntervalMinute, IntervalHour | IntervalMinute:
		trunc(usecsPerMinute)
	}
	if p := typmodPrec(typmod); p != IntervalFullPrecision {
		scale := int64(1)
		for i := p; i < MaxIntervalPrecision; i++ {
			scale *= 10
		}
		if iv.Micros >= 0 {
			iv.Micros = (iv.Micros + scale/2) / scale * scale
		} else {
			iv.Micros = -((-iv.Micros + scale/2) / scale * scale)
		}
	}
	return iv
}
