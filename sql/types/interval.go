package types

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tupled/tupled/sql/pgerror"
)

// Interval is PostgreSQL's interval datum: months, days and microseconds
// kept apart, as interval's on-disk and binary forms keep them, because a
// month is not a fixed number of days (28 to 31) and a day is not a fixed
// number of hours across a daylight-saving change. '1 mon' added to
// 2024-01-31 is 2024-02-29; '30 days' added to it is 2024-03-01; yet the
// two compare equal, since comparison (and hashing, and a key's order)
// reads an interval as one span with PostgreSQL's conventions: a month is
// 30 days and a day 24 hours (interval_cmp_value).
//
// Invariants:
//   - No normalisation happens behind the caller's back: '36 hours' stays
//     36 hours and '1 day 12:00:00' stays that (they compare equal); only
//     justify_hours/days/interval and timestamp subtraction move units, as
//     in PostgreSQL. Fractional input units spill downwards the way
//     PostgreSQL 15's DecodeInterval does ('1.5 mons' is 1 mon 15 days,
//     '1.5 days' 1 day 12:00:00), never upwards.
//   - Months and Days are int32 and Micros int64, PostgreSQL's ranges: an
//     input or a result beyond them is an error (22015 for a field out of
//     range on input, 22008 "interval out of range" for the months of a
//     whole input and for arithmetic), not a wrapped value.
//   - A Value of type interval holds FormatInterval's text in S (types.go's
//     rule for text-held types); IntervalOf reads it back. That text does
//     not sort as the intervals do, so an interval is no key (NoKeyType),
//     and Compare orders intervals with CompareIntervals. GROUP BY,
//     DISTINCT and hash joins key an interval by its span
//     (IntervalHashKey), so '1 mon' and '30 days' are one group, as in
//     PostgreSQL.
//   - The text form is PostgreSQL's IntervalStyle "postgres" (the
//     default), which is what FormatInterval prints and ParseInterval reads
//     back; the binary form is interval_send's: int64 microseconds, int32
//     days, int32 months.
type Interval struct {
	Months int32
	Days   int32
	Micros int64
}

// Units PostgreSQL's interval arithmetic is written in.
const (
	usecsPerSec    = int64(1_000_000)
	usecsPerMinute = 60 * usecsPerSec
	usecsPerHour   = 60 * usecsPerMinute
	usecsPerDay    = 24 * usecsPerHour
	daysPerMonth   = 30
	monthsPerYear  = 12
	secsPerDay     = 86400
)

// OIDs of the types of this file and timeofday.go.
const (
	OIDInterval = 1186
	OIDTime     = 1083
)

func init() {
	ExtTypes[TInterval] = &extType{Name: "interval", Typname: "interval", OID: OIDInterval, Size: 16, MinMax: true,
		parse: func(s string) (Value, error) {
			iv, err := ParseInterval(s)
			if err != nil {
				return Value{}, err
			}
			return IntervalValue(iv), nil
		},
		appendBin: func(dst []byte, v Value) []byte { return AppendIntervalBinary(dst, IntervalOf(v)) },
		parseBin: func(b []byte) (Value, error) {
			iv, err := ParseIntervalBinary(b)
			if err != nil {
				return Value{}, err
			}
			return IntervalValue(iv), nil
		},
	}
}

// IntervalValue is the Value of an interval: S its text in IntervalStyle
// postgres, which reads back to the same fields.
func IntervalValue(iv Interval) Value { return Value{T: TInterval, S: FormatInterval(iv)} }

// IntervalOf reads the interval of a non-NULL Value of type interval.
func IntervalOf(v Value) Interval {
	iv, err := ParseInterval(v.S)
	if err != nil {
		return Interval{} // cannot happen: S is FormatInterval's output
	}
	return iv
}

func ivErr(code, format string, args ...any) error { return pgerror.Errorf(code, format, args...) }

func errIntervalRange() error { return ivErr(pgerror.CodeDatetimeRange, "interval out of range") }

// ---- input ----

// intervalUnit is a unit word of interval input: what one of it adds, and
// the field bit that refuses the same unit twice ('1 day 2 days').
type intervalUnit struct {
	kind  unitKind
	scale int64 // microseconds (kindMicros), days (kindDays) or years/months (kindMonths)
	bit   uint32
}

type unitKind uint8

const (
	kindMicros unitKind = iota
	kindDays
	kindMonths
)

// Field bits of the units, after PostgreSQL's DTK_M(): a time field
// hh:mm:ss sets hour, minute and second.
const (
	bitMicrosecond uint32 = 1 << iota
	bitMillisecond
	bitSecond
	bitMinute
	bitHour
	bitDay
	bitWeek
	bitMonth
	bitYear
	bitDecade
	bitCentury
	bitMillennium
	bitTime = bitHour | bitMinute | bitSecond
)

var intervalUnits = func() map[string]intervalUnit {
	m := map[string]intervalUnit{}
	add := func(u intervalUnit, names ...string) {
		for _, n := range names {
			m[n] = u
		}
	}
	add(intervalUnit{kindMicros, 1, bitMicrosecond}, "microsecond", "microseconds", "microsecon", "us", "usec", "usecs", "useconds")
	add(intervalUnit{kindMicros, 1000, bitMillisecond}, "millisecond", "milliseconds", "millisecon", "ms", "msec", "msecs", "mseconds")
	add(intervalUnit{kindMicros, usecsPerSec, bitSecond}, "second", "seconds", "s", "sec", "secs")
	add(intervalUnit{kindMicros, usecsPerMinute, bitMinute}, "minute", "minutes", "m", "min", "mins")
	add(intervalUnit{kindMicros, usecsPerHour, bitHour}, "hour", "hours", "h", "hr", "hrs")
	add(intervalUnit{kindDays, 1, bitDay}, "day", "days", "d")
	add(intervalUnit{kindDays, 7, bitWeek}, "week", "weeks", "w")
	add(intervalUnit{kindMonths, 1, bitMonth}, "month", "months", "mon", "mons")
	add(intervalUnit{kindMonths, 12, bitYear}, "year", "years", "y", "yr", "yrs")
	add(intervalUnit{kindMonths, 120, bitDecade}, "decade", "decades", "dec", "decs")
	add(intervalUnit{kindMonths, 1200, bitCentury}, "century", "centuries", "c", "cent")
	add(intervalUnit{kindMonths, 12000, bitMillennium}, "millennium", "millennia", "mil", "mils", "millenniums")
	return m
}()

// ivAcc accumulates input fields in wide integers; ParseInterval checks
// the ranges once at the end.
type ivAcc struct {
	years, months, days, micros int64
	fmask                       uint32
	bad                         bool // a field overflowed int64 on the way
	rng                         int  // the typmod's range of fields (interval_typmod.go), 0 for none
}

func (a *ivAcc) addMicros(v int64) {
	s := a.micros + v
	if (v > 0 && s < a.micros) || (v < 0 && s > a.micros) {
		a.bad = true
	}
	a.micros = s
}

func mulOK(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	if c/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return c, true
}

// addFracMicros is PostgreSQL 15's AdjustFractMicroseconds: frac of scale
// microseconds, rounded to the nearest, an exact half toward zero.
func (a *ivAcc) addFracMicros(frac float64, scale int64) {
	if frac == 0 {
		return
	}
	f := frac * float64(scale)
	if math.Abs(f) >= 9.2e18 {
		a.bad = true
		return
	}
	us := int64(f)
	if r := f - float64(us); r > 0.5 {
		us++
	} else if r < -0.5 {
		us--
	}
	a.addMicros(us)
}

// addFracDays is AdjustFractDays: whole days of frac*scale, the rest as
// microseconds of a 24-hour day.
func (a *ivAcc) addFracDays(frac float64, scale int64) {
	if frac == 0 {
		return
	}
	f := frac * float64(scale)
	d := int64(f)
	a.days += d
	a.addFracMicros(f-float64(d), usecsPerDay)
}

// field adds the number num of unit u, refusing a unit given twice ('1
// day 2 days').
func (a *ivAcc) field(u intervalUnit, num string) error {
	whole, frac, err := splitNumber(num)
	if err != nil {
		return err
	}
	if a.fmask&u.bit != 0 {
		return errSyntax
	}
	a.fmask |= u.bit
	a.add(u, whole, frac)
	return nil
}

func (a *ivAcc) add(u intervalUnit, whole int64, frac float64) {
	switch u.kind {
	case kindMicros:
		v, ok := mulOK(whole, u.scale)
		if !ok {
			a.bad = true
		}
		a.addMicros(v)
		a.addFracMicros(frac, u.scale)
	case kindDays:
		v, ok := mulOK(whole, u.scale)
		if !ok {
			a.bad = true
		}
		a.days += v
		if u.scale == 1 {
			a.addFracMicros(frac, usecsPerDay)
		} else {
			a.addFracDays(frac, u.scale)
		}
	case kindMonths:
		if u.scale == 1 {
			a.months += whole
			a.addFracDays(frac, daysPerMonth)
		} else {
			// AdjustYears, then AdjustFractYears: whole months, rounded.
			v, ok := mulOK(whole, u.scale/monthsPerYear)
			if !ok {
				a.bad = true
			}
			a.years += v
			a.months += int64(math.Round(frac * float64(u.scale)))
		}
	}
}

// ParseInterval reads interval input as PostgreSQL 15's interval_in does
// with IntervalStyle postgres: unit words after numbers ('1 year 2 mons',
// '3d', '1.5 hours'), an optional '@' and a trailing 'ago', a time field
// ('04:05:06.5', '-1:30'; a bare number before it is days), a SQL-standard
// year-month field ('1-2'), a bare number (seconds), and ISO 8601
// ('P1Y2M3DT4H5M6S', 'P0001-02-03T04:05:06').
func ParseInterval(s string) (Interval, error) { return parseIntervalRange(s, 0) }

// parseIntervalRange is ParseInterval under a typmod's range of fields
// (0: none), which picks the unit of the rightmost bare number
// (interval '5' hour is 5 hours) and makes MINUTE TO SECOND's 'mm:ss'.
func parseIntervalRange(s string, rng int) (Interval, error) {
	in := strings.ToLower(strings.TrimSpace(s))
	syntax := func() error {
		return ivErr(pgerror.CodeDatetimeFormat, "invalid input syntax for type interval: %q", s)
	}
	if in == "" {
		return Interval{}, syntax()
	}
	acc := ivAcc{rng: rng}
	var err error
	if in[0] == 'p' {
		err = parseISOInterval(in[1:], &acc)
	} else {
		err = parsePostgresInterval(in, &acc)
	}
	if err != nil {
		if err == errFieldOverflow {
			return Interval{}, errFieldRange(s)
		}
		return Interval{}, syntax()
	}
	// Each field must fit its int32 (or the time its int64) on the way
	// in, as PostgreSQL's pg_itm_in fields do (22015); the months the
	// years and months make must fit the interval's int32 (22008).
	in32 := func(v int64) bool { return v >= math.MinInt32 && v <= math.MaxInt32 }
	if acc.bad || !in32(acc.years) || !in32(acc.months) || !in32(acc.days) {
		return Interval{}, errFieldRange(s)
	}
	months := acc.years*monthsPerYear + acc.months
	if !in32(months) {
		return Interval{}, errIntervalRange()
	}
	return Interval{Months: int32(months), Days: int32(acc.days), Micros: acc.micros}, nil
}

func errFieldRange(s string) error {
	return ivErr(pgerror.CodeIntervalFieldOverflow, "interval field value out of range: %q", s)
}

var (
	errSyntax        = fmt.Errorf("syntax")
	errFieldOverflow = fmt.Errorf("field overflow")
)

type ivToken struct {
	text string
	kind byte // 'n' number, 't' time (has ':'), 'y' year-month (n-n), 'w' word
}

// tokenizeInterval splits input into fields the way PostgreSQL's
// ParseDateTime does for an interval: a number glued to a unit word
// ("3days") is two fields; signs belong to the number after them.
func tokenizeInterval(s string) ([]ivToken, error) {
	var toks []ivToken
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == ',':
			i++
		case c == '@':
			i++
		case isDigit(c) || c == '.' || ((c == '+' || c == '-') && i+1 < len(s) && (isDigit(s[i+1]) || s[i+1] == '.')):
			j := i + 1
			for j < len(s) && (isDigit(s[j]) || s[j] == '.' || s[j] == ':' || (s[j] == '-' && j+1 < len(s) && isDigit(s[j+1]))) {
				j++
			}
			t := s[i:j]
			kind := byte('n')
			switch {
			case strings.Contains(t, ":"):
				kind = 't'
			case strings.Contains(t[1:], "-"):
				kind = 'y'
			}
			toks = append(toks, ivToken{t, kind})
			i = j
		case isLetter(c):
			j := i + 1
			for j < len(s) && isLetter(s[j]) {
				j++
			}
			toks = append(toks, ivToken{s[i:j], 'w'})
			i = j
		default:
			return nil, errSyntax
		}
	}
	return toks, nil
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' }

// splitNumber reads a signed decimal into its whole part and its signed
// fraction ("-1.5" is -1 and -0.5), as DecodeInterval's ParseISO8601Number.
func splitNumber(t string) (int64, float64, error) {
	neg := strings.HasPrefix(t, "-")
	body := strings.TrimLeft(t, "+-")
	if len(t)-len(body) > 1 || body == "" || body == "." {
		return 0, 0, errSyntax
	}
	ip, fp, hasFrac := strings.Cut(body, ".")
	if strings.Contains(fp, ".") {
		return 0, 0, errSyntax
	}
	var whole int64
	if ip != "" {
		w, err := strconv.ParseInt(ip, 10, 64)
		if err != nil {
			return 0, 0, errFieldOverflow
		}
		whole = w
	}
	var frac float64
	if hasFrac && fp != "" {
		for _, c := range fp {
			if c < '0' || c > '9' {
				return 0, 0, errSyntax
			}
		}
		f, err := strconv.ParseFloat("0."+fp, 64)
		if err != nil {
			return 0, 0, errSyntax
		}
		frac = f
	}
	if neg {
		whole, frac = -whole, -frac
	}
	return whole, frac, nil
}

func parsePostgresInterval(s string, acc *ivAcc) error {
	toks, err := tokenizeInterval(s)
	if err != nil {
		return err
	}
	ago := false
	// DecodeInterval reads the fields from the last: a unit word names
	// the field of the number before it, and that unit stays for the
	// numbers before (so a second one is a repeated field), but an hour
	// is followed by days; the rightmost bare number is in the typmod's
	// unit (seconds without one), a number before a time field days.
	pending := false // a unit word not yet used (parsing_unit_val)
	var cur *intervalUnit
	defUnit := rangeUnit(acc.rng) // interval_typmod.go
	for i := len(toks) - 1; i >= 0; i-- {
		t := toks[i]
		switch t.kind {
		case 'w':
			if t.text == "ago" {
				if ago || i != len(toks)-1 {
					return errSyntax
				}
				ago = true
				continue
			}
			u, ok := intervalUnits[t.text]
			if !ok || pending {
				return errSyntax
			}
			cur, pending = &u, true
		case 't':
			if pending {
				return errSyntax
			}
			us, err := parseTimeField(t.text, acc.rng == rangeMinuteToSecond)
			if err != nil {
				return err
			}
			if acc.fmask&bitTime != 0 {
				return errSyntax
			}
			acc.fmask |= bitTime
			acc.addMicros(us)
			day := intervalUnits["day"]
			cur = &day
		case 'y':
			if pending {
				return errSyntax
			}
			neg := strings.HasPrefix(t.text, "-")
			y, m, ok := strings.Cut(strings.TrimLeft(t.text, "+-"), "-")
			if !ok || strings.Contains(m, "-") || strings.Contains(y, ".") || strings.Contains(m, ".") {
				return errSyntax
			}
			yv, err1 := strconv.ParseInt(y, 10, 64)
			mv, err2 := strconv.ParseInt(m, 10, 64)
			if err1 != nil || err2 != nil {
				return errFieldOverflow
			}
			if mv >= monthsPerYear {
				return errFieldOverflow
			}
			if acc.fmask&(bitYear|bitMonth) != 0 {
				return errSyntax
			}
			acc.fmask |= bitYear | bitMonth
			if neg {
				yv, mv = -yv, -mv
			}
			acc.years += yv
			acc.months += mv
			day := intervalUnits["day"]
			cur = &day
		case 'n':
			u := defUnit
			if cur != nil {
				u = *cur
			}
			pending = false
			if err := acc.field(u, t.text); err != nil {
				return err
			}
			if u.bit == bitHour {
				u = intervalUnits["day"] // "set for next field"
			}
			cur = &u
		}
	}
	if pending || acc.fmask == 0 {
		return errSyntax
	}
	if ago {
		acc.years, acc.months, acc.days, acc.micros = -acc.years, -acc.months, -acc.days, -acc.micros
	}
	return nil
}

// parseTimeField reads [-+]hh:mm[:ss[.f]] (or mm:ss.f, and mm:ss when
// mmss: a MINUTE TO SECOND interval) as microseconds, as
// DecodeTimeForInterval does.
func parseTimeField(t string, mmss bool) (int64, error) {
	neg := strings.HasPrefix(t, "-")
	body := strings.TrimLeft(t, "+-")
	parts := strings.Split(body, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, errSyntax
	}
	num := func(p string) (int64, error) {
		if p == "" {
			return 0, errSyntax
		}
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return 0, errFieldOverflow
		}
		return v, nil
	}
	var h, m, sec, fsec int64
	var err error
	last := parts[len(parts)-1]
	whole, frac, hasFrac := strings.Cut(last, ".")
	if hasFrac {
		if fsec, err = fracMicros(frac); err != nil {
			return 0, err
		}
		parts[len(parts)-1] = whole
	}
	if h, err = num(parts[0]); err != nil {
		return 0, err
	}
	if m, err = num(parts[1]); err != nil {
		return 0, err
	}
	if len(parts) == 3 {
		if sec, err = num(parts[2]); err != nil {
			return 0, err
		}
	} else if hasFrac || mmss {
		// mm:ss.fff
		h, m, sec = 0, h, m
	}
	if m > 59 || sec > 60 || fsec > usecsPerSec {
		return 0, errFieldOverflow
	}
	hu, ok := mulOK(h, usecsPerHour)
	if !ok {
		return 0, errFieldOverflow
	}
	us := hu + m*usecsPerMinute + sec*usecsPerSec + fsec
	if us < 0 {
		return 0, errFieldOverflow
	}
	if neg {
		us = -us
	}
	return us, nil
}

// fracMicros reads the digits after a decimal point as microseconds,
// rounded (ParseFractionalSecond).
func fracMicros(digits string) (int64, error) {
	if digits == "" {
		return 0, nil
	}
	for i := 0; i < len(digits); i++ {
		if !isDigit(digits[i]) {
			return 0, errSyntax
		}
	}
	f, err := strconv.ParseFloat("0."+digits, 64)
	if err != nil {
		return 0, errSyntax
	}
	return int64(math.RoundToEven(f * 1e6)), nil
}

// parseISOInterval reads what follows the P of ISO 8601's format with
// designators (1Y2M3DT4H5M6S, a W for weeks) or its alternative format
// (0001-02-03T04:05:06).
func parseISOInterval(s string, acc *ivAcc) error {
	if s == "" {
		return errSyntax
	}
	datePart, timePart, hasT := strings.Cut(s, "t")
	if hasT && timePart == "" {
		return errSyntax
	}
	if strings.Contains(datePart, "-") || strings.Contains(timePart, ":") {
		return parseISOAlternative(datePart, timePart, hasT, acc)
	}
	read := func(part string, units map[byte]intervalUnit) error {
		for part != "" {
			j := 0
			for j < len(part) && (isDigit(part[j]) || part[j] == '.' || part[j] == '-' || part[j] == '+') {
				j++
			}
			if j == 0 || j == len(part) {
				return errSyntax
			}
			u, ok := units[part[j]]
			if !ok {
				return errSyntax
			}
			if err := acc.field(u, part[:j]); err != nil {
				return err
			}
			part = part[j+1:]
		}
		return nil
	}
	if err := read(datePart, map[byte]intervalUnit{
		'y': intervalUnits["year"], 'm': intervalUnits["month"], 'w': intervalUnits["week"], 'd': intervalUnits["day"],
	}); err != nil {
		return err
	}
	if hasT {
		if err := read(timePart, map[byte]intervalUnit{
			'h': intervalUnits["hour"], 'm': intervalUnits["minute"], 's': intervalUnits["second"],
		}); err != nil {
			return err
		}
	}
	if acc.fmask == 0 && datePart == "" && !hasT {
		return errSyntax
	}
	return nil
}

func parseISOAlternative(datePart, timePart string, hasT bool, acc *ivAcc) error {
	// fields reads up to three sep-separated numbers as units, in order.
	fields := func(part, sep string, units ...string) error {
		f := strings.Split(part, sep)
		if len(f) > len(units) {
			return errSyntax
		}
		for i, p := range f {
			if err := acc.field(intervalUnits[units[i]], p); err != nil {
				return err
			}
		}
		return nil
	}
	if datePart != "" {
		if err := fields(datePart, "-", "year", "month", "day"); err != nil {
			return err
		}
	}
	if hasT {
		if err := fields(timePart, ":", "hour", "minute", "second"); err != nil {
			return err
		}
	}
	acc.fmask |= bitDay
	return nil
}

// ---- output ----

// AppendInterval appends the interval's text in IntervalStyle postgres,
// PostgreSQL's EncodeInterval: "1 year 2 mons -3 days +04:05:06.5".
func AppendInterval(dst []byte, iv Interval) []byte {
	year := int64(iv.Months) / monthsPerYear
	mon := int64(iv.Months) % monthsPerYear
	mday := int64(iv.Days)
	t := iv.Micros
	hour := t / usecsPerHour
	t -= hour * usecsPerHour
	min := t / usecsPerMinute
	t -= min * usecsPerMinute
	sec := t / usecsPerSec
	fsec := t - sec*usecsPerSec

	isZero, isBefore := true, false
	part := func(v int64, unit string) {
		if v == 0 {
			return
		}
		if !isZero {
			dst = append(dst, ' ')
		}
		if isBefore && v > 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, v, 10)
		dst = append(dst, ' ')
		dst = append(dst, unit...)
		if v != 1 {
			dst = append(dst, 's')
		}
		isBefore = v < 0
		isZero = false
	}
	part(year, "year")
	part(mon, "mon")
	part(mday, "day")
	if isZero || hour != 0 || min != 0 || sec != 0 || fsec != 0 {
		minus := hour < 0 || min < 0 || sec < 0 || fsec < 0
		if !isZero {
			dst = append(dst, ' ')
		}
		if minus {
			dst = append(dst, '-')
		} else if isBefore {
			dst = append(dst, '+')
		}
		dst = appendPad2(dst, abs64(hour))
		dst = append(dst, ':')
		dst = appendPad2(dst, abs64(min))
		dst = append(dst, ':')
		dst = appendSeconds(dst, abs64(sec), abs64(fsec))
	}
	return dst
}

// FormatInterval is AppendInterval as a string.
func FormatInterval(iv Interval) string { return string(AppendInterval(nil, iv)) }

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func appendPad2(dst []byte, v int64) []byte {
	if v < 10 {
		dst = append(dst, '0')
	}
	return strconv.AppendInt(dst, v, 10)
}

// appendSeconds prints ss[.ffffff] without trailing zeros (AppendSeconds).
func appendSeconds(dst []byte, sec, fsec int64) []byte {
	dst = appendPad2(dst, sec)
	if fsec == 0 {
		return dst
	}
	var f [6]byte
	for i := 5; i >= 0; i-- {
		f[i] = byte('0' + fsec%10)
		fsec /= 10
	}
	n := 6
	for n > 0 && f[n-1] == '0' {
		n--
	}
	dst = append(dst, '.')
	return append(dst, f[:n]...)
}

// AppendIntervalBinary appends interval_send's form.
func AppendIntervalBinary(dst []byte, iv Interval) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(iv.Micros))
	dst = binary.BigEndian.AppendUint32(dst, uint32(iv.Days))
	return binary.BigEndian.AppendUint32(dst, uint32(iv.Months))
}

// ParseIntervalBinary reads interval_recv's form.
func ParseIntervalBinary(b []byte) (Interval, error) {
	if len(b) != 16 {
		return Interval{}, ivErr(pgerror.CodeInvalidBinary, "incorrect binary data format for type interval")
	}
	return Interval{
		Micros: int64(binary.BigEndian.Uint64(b)),
		Days:   int32(binary.BigEndian.Uint32(b[8:])),
		Months: int32(binary.BigEndian.Uint32(b[12:])),
	}, nil
}

// ---- comparison ----

// span is interval_cmp_value without 128-bit integers: the whole days
// (months as 30 days) and the microseconds left of a 24-hour day, so that
// (days, rest) orders intervals as PostgreSQL's 128-bit value does.
func (iv Interval) span() (days int64, rest int64) {
	days = int64(iv.Months)*daysPerMonth + int64(iv.Days)
	q := iv.Micros / usecsPerDay
	r := iv.Micros % usecsPerDay
	if r < 0 {
		q--
		r += usecsPerDay
	}
	return days + q, r
}

// IntervalHashKey is an interval's identity for hashing (GROUP BY,
// DISTINCT, hash joins, set operations): its span, so that the values
// CompareIntervals calls equal ('1 day', '24 hours') have one key, as
// PostgreSQL's interval_hash hashes interval_cmp_value.
func IntervalHashKey(dst []byte, v Value) []byte {
	days, rest := IntervalOf(v).span()
	dst = append(dst, 6)
	dst = binary.BigEndian.AppendUint64(dst, uint64(days))
	return binary.BigEndian.AppendUint64(dst, uint64(rest))
}

// CompareIntervals orders intervals as PostgreSQL does: -1, 0 or +1.
// '1 mon', '30 days' and '720 hours' are equal.
func CompareIntervals(a, b Interval) int {
	ad, ar := a.span()
	bd, br := b.span()
	switch {
	case ad < bd:
		return -1
	case ad > bd:
		return 1
	case ar < br:
		return -1
	case ar > br:
		return 1
	}
	return 0
}

// ---- arithmetic ----

func add32(a, b int32) (int32, bool) {
	s := int64(a) + int64(b)
	return int32(s), s >= math.MinInt32 && s <= math.MaxInt32
}

func add64(a, b int64) (int64, bool) {
	s := a + b
	return s, !((b > 0 && s < a) || (b < 0 && s > a))
}

// AddIntervals is interval_pl: field by field.
func AddIntervals(a, b Interval) (Interval, error) {
	m, ok1 := add32(a.Months, b.Months)
	d, ok2 := add32(a.Days, b.Days)
	t, ok3 := add64(a.Micros, b.Micros)
	if !ok1 || !ok2 || !ok3 {
		return Interval{}, errIntervalRange()
	}
	return Interval{m, d, t}, nil
}

// NegateInterval is interval_um.
func NegateInterval(a Interval) (Interval, error) {
	if a.Months == math.MinInt32 || a.Days == math.MinInt32 || a.Micros == math.MinInt64 {
		return Interval{}, errIntervalRange()
	}
	return Interval{-a.Months, -a.Days, -a.Micros}, nil
}

// SubIntervals is interval_mi.
func SubIntervals(a, b Interval) (Interval, error) {
	m, ok1 := add32(a.Months, -b.Months)
	d, ok2 := add32(a.Days, -b.Days)
	t, ok3 := add64(a.Micros, -b.Micros)
	if !ok1 || !ok2 || !ok3 || b.Months == math.MinInt32 || b.Days == math.MinInt32 || b.Micros == math.MinInt64 {
		return Interval{}, errIntervalRange()
	}
	return Interval{m, d, t}, nil
}

// tsround is TSROUND: a float rounded to microsecond precision.
func tsround(j float64) float64 { return math.RoundToEven(j*1e6) / 1e6 }

// scaleInterval is interval_mul's cascade with the factor's two forms
// kept apart as interval_div keeps them (month*f or month/f), so results
// match PostgreSQL's to the last rounding.
func scaleInterval(a Interval, by func(float64) float64) (Interval, error) {
	mf := by(float64(a.Months))
	df := by(float64(a.Days))
	if math.IsNaN(mf) || mf > math.MaxInt32 || mf < math.MinInt32 || math.IsNaN(df) || df > math.MaxInt32 || df < math.MinInt32 {
		return Interval{}, errIntervalRange()
	}
	r := Interval{Months: int32(mf), Days: int32(df)}
	monthRemDays := tsround((mf - float64(r.Months)) * daysPerMonth)
	secRem := tsround((df - float64(r.Days) + monthRemDays - float64(int64(monthRemDays))) * secsPerDay)
	if math.Abs(secRem) >= secsPerDay {
		r.Days += int32(secRem / secsPerDay)
		secRem -= float64(int64(secRem/secsPerDay)) * secsPerDay
	}
	r.Days += int32(monthRemDays)
	t := math.RoundToEven(by(float64(a.Micros)) + secRem*float64(usecsPerSec))
	if math.IsNaN(t) || t < -9.223372036854775808e18 || t >= 9.223372036854775808e18 {
		return Interval{}, errIntervalRange()
	}
	r.Micros = int64(t)
	return r, nil
}

// MulInterval is interval_mul (interval * float8).
func MulInterval(a Interval, f float64) (Interval, error) {
	return scaleInterval(a, func(x float64) float64 { return x * f })
}

// DivInterval is interval_div (interval / float8); dividing by zero is 22012.
func DivInterval(a Interval, f float64) (Interval, error) {
	if f == 0 {
		return Interval{}, ivErr(pgerror.CodeDivisionByZero, "division by zero")
	}
	return scaleInterval(a, func(x float64) float64 { return x / f })
}

// daysFromTime moves the whole 24-hour days of the time into the days
// (PostgreSQL's TMODULO over USECS_PER_DAY).
func (r *Interval) daysFromTime() error {
	whole := r.Micros / usecsPerDay
	r.Micros -= whole * usecsPerDay
	d := int64(r.Days) + whole
	if d > math.MaxInt32 || d < math.MinInt32 {
		return errIntervalRange()
	}
	r.Days = int32(d)
	return nil
}

// monthsFromDays moves the whole 30-day periods of the days into the
// months.
func (r *Interval) monthsFromDays() error {
	whole := r.Days / daysPerMonth
	r.Days -= whole * daysPerMonth
	m, ok := add32(r.Months, whole)
	if !ok {
		return errIntervalRange()
	}
	r.Months = m
	return nil
}

// alignTime gives the time the days' sign, borrowing a day.
func (r *Interval) alignTime() {
	if r.Days > 0 && r.Micros < 0 {
		r.Micros += usecsPerDay
		r.Days--
	} else if r.Days < 0 && r.Micros > 0 {
		r.Micros -= usecsPerDay
		r.Days++
	}
}

// JustifyHours is justify_hours: whole 24-hour periods of the time become
// days, and the signs of days and time agree.
func JustifyHours(a Interval) (Interval, error) {
	r := a
	if err := r.daysFromTime(); err != nil {
		return Interval{}, err
	}
	r.alignTime()
	return r, nil
}

// JustifyDays is justify_days: whole 30-day periods become months.
func JustifyDays(a Interval) (Interval, error) {
	r := a
	if err := r.monthsFromDays(); err != nil {
		return Interval{}, err
	}
	if r.Months > 0 && r.Days < 0 {
		r.Days += daysPerMonth
		r.Months--
	} else if r.Months < 0 && r.Days > 0 {
		r.Days -= daysPerMonth
		r.Months++
	}
	return r, nil
}

// JustifyInterval is justify_interval: both, with one sign throughout.
func JustifyInterval(a Interval) (Interval, error) {
	r := a
	if (r.Days > 0 && r.Micros > 0) || (r.Days < 0 && r.Micros < 0) {
		// pre-justify the days, which may prevent an overflow
		if err := r.monthsFromDays(); err != nil {
			return Interval{}, err
		}
	}
	if err := r.daysFromTime(); err != nil {
		return Interval{}, err
	}
	if err := r.monthsFromDays(); err != nil {
		return Interval{}, err
	}
	if r.Months > 0 && (r.Days < 0 || (r.Days == 0 && r.Micros < 0)) {
		r.Days += daysPerMonth
		r.Months--
	} else if r.Months < 0 && (r.Days > 0 || (r.Days == 0 && r.Micros > 0)) {
		r.Days -= daysPerMonth
		r.Months++
	}
	r.alignTime()
	return r, nil
}

// daysIn is the number of days of a month (month 1..12).
func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// AddIntervalToTime is timestamp_pl_interval and timestamptz_pl_interval:
// the months first, on the calendar, a day past the new month's end
// clamped to its last day (2024-01-31 + 1 mon = 2024-02-29); then the
// days, on the calendar of t's location (so a day across a daylight-saving
// change is 23 or 25 hours for timestamptz, as PostgreSQL's); then the
// microseconds.
func AddIntervalToTime(t time.Time, iv Interval) time.Time {
	if iv.Months != 0 {
		y, m, d := t.Date()
		total := int64(y)*12 + int64(m-1) + int64(iv.Months)
		ny, nm := int(total/12), int(total%12)+1
		if total < 0 && total%12 != 0 {
			ny, nm = int(total/12)-1, int(total%12)+13
		}
		if last := daysIn(ny, nm); d > last {
			d = last
		}
		hh, mm, ss := t.Clock()
		t = time.Date(ny, time.Month(nm), d, hh, mm, ss, t.Nanosecond(), t.Location())
	}
	if iv.Days != 0 {
		t = t.AddDate(0, 0, int(iv.Days))
	}
	return t.Add(time.Duration(iv.Micros) * time.Microsecond)
}

// SubTimes is timestamp_mi: the difference in microseconds, whole days
// moved out of the time as justify_hours does ('60 days', never '1440:00:00').
func SubTimes(a, b time.Time) (Interval, error) {
	us, ok := add64(a.UnixMicro(), -b.UnixMicro())
	if !ok {
		return Interval{}, errIntervalRange()
	}
	return JustifyHours(Interval{Micros: us})
}

// ---- fields ----

// intervalFields is interval2itm: years, months, days, hours, minutes,
// seconds and microseconds, each with the interval's sign of its part.
type intervalFields struct {
	year, mon, mday, hour, min, sec, usec int64
}

func (iv Interval) fields() intervalFields {
	f := intervalFields{
		year: int64(iv.Months) / monthsPerYear,
		mon:  int64(iv.Months) % monthsPerYear,
		mday: int64(iv.Days),
	}
	t := iv.Micros
	f.hour = t / usecsPerHour
	t -= f.hour * usecsPerHour
	f.min = t / usecsPerMinute
	t -= f.min * usecsPerMinute
	f.sec = t / usecsPerSec
	f.usec = t - f.sec*usecsPerSec
	return f
}

// scaled prints v / 10^scale with exactly scale decimals, as
// int64_div_fast_to_numeric does (extract's numeric results).
func scaled(v int64, scale int) string {
	neg := v < 0
	u := uint64(v)
	if neg {
		u = uint64(-v)
	}
	s := strconv.FormatUint(u, 10)
	for len(s) <= scale {
		s = "0" + s
	}
	out := s[:len(s)-scale] + "." + s[len(s)-scale:]
	if scale == 0 {
		out = s
	}
	if neg {
		out = "-" + out
	}
	return out
}

// Units of extract and date_trunc, by each spelling PostgreSQL accepts
// (its deltatktbl's), as the canonical names the switches below use.
var fieldUnits = func() map[string]string {
	m := map[string]string{"epoch": "epoch"}
	for canon, names := range map[string][]string{
		"microsecond": {"microseconds", "us", "usec", "usecs"},
		"millisecond": {"milliseconds", "ms", "msec", "msecs"},
		"second":      {"seconds", "s", "sec", "secs"},
		"minute":      {"minutes", "m", "min", "mins"},
		"hour":        {"hours", "h", "hr", "hrs"},
		"day":         {"days", "d"},
		"week":        {"weeks", "w"},
		"month":       {"months", "mon", "mons"},
		"quarter":     {"qtr"},
		"year":        {"years", "y", "yr", "yrs"},
		"decade":      {"decades", "dec", "decs"},
		"century":     {"centuries", "c", "cent"},
		"millennium":  {"millennia", "mil", "mils"},
	} {
		m[canon] = canon
		for _, n := range names {
			m[n] = canon
		}
	}
	return m
}()

// fieldUnit is field's canonical unit ("" if PostgreSQL has none such).
func fieldUnit(field string) string { return fieldUnits[strings.ToLower(field)] }

// ExtractInterval is extract(field FROM interval) in PostgreSQL 15: the
// result as numeric text (second, millisecond and epoch with their
// fractional digits, as PostgreSQL's numeric result prints them).
func ExtractInterval(field string, iv Interval) (string, error) {
	f := iv.fields()
	n := func(v int64) (string, error) { return strconv.FormatInt(v, 10), nil }
	switch fieldUnit(field) {
	case "microsecond":
		return n(f.sec*usecsPerSec + f.usec)
	case "millisecond":
		return scaled(f.sec*usecsPerSec+f.usec, 3), nil
	case "second":
		return scaled(f.sec*usecsPerSec+f.usec, 6), nil
	case "minute":
		return n(f.min)
	case "hour":
		return n(f.hour)
	case "day":
		return n(f.mday)
	case "month":
		return n(f.mon)
	case "quarter":
		return n(f.mon/3 + 1)
	case "year":
		return n(f.year)
	case "decade":
		return n(f.year / 10)
	case "century":
		return n(f.year / 100)
	case "millennium":
		return n(f.year / 1000)
	case "epoch":
		// 365.25-day years and 30-day months, in quarters of a day to
		// stay in integers, as PostgreSQL 15 computes it.
		m := int64(iv.Months)
		secs := (1461*(m/monthsPerYear) + 120*(m%monthsPerYear) + 4*int64(iv.Days)) * (secsPerDay / 4)
		v, ok := mulOK(secs, usecsPerSec)
		if ok {
			v, ok = add64(v, iv.Micros)
		}
		if !ok {
			return "", errIntervalRange()
		}
		return scaled(v, 6), nil
	}
	return "", ivErr(pgerror.CodeInvalidParamValue, "unit %q not recognized for type interval", strings.ToLower(field))
}

// truncLevel orders date_trunc's units from the largest: a field below
// the unit's level is set to zero.
var truncLevel = map[string]int{
	"millennium": 0, "century": 1, "decade": 2, "year": 3, "quarter": 4, "month": 5,
	"day": 6, "hour": 7, "minute": 8, "second": 9, "millisecond": 10, "microsecond": 11,
}

// TruncInterval is date_trunc(field, interval): the fields below field set
// to zero.
func TruncInterval(field string, iv Interval) (Interval, error) {
	unit := fieldUnit(field)
	lvl, ok := truncLevel[unit]
	switch {
	case unit == "week":
		return Interval{}, ivErr(pgerror.CodeFeatureNotSupp, "interval units %q not supported because months usually have fractional weeks", "week")
	case !ok:
		return Interval{}, ivErr(pgerror.CodeInvalidParamValue, "interval units %q not recognized", strings.ToLower(field))
	}
	f := iv.fields()
	switch lvl {
	case 0:
		f.year = f.year / 1000 * 1000
	case 1:
		f.year = f.year / 100 * 100
	case 2:
		f.year = f.year / 10 * 10
	case 4:
		f.mon = 3 * (f.mon / 3)
	case 10:
		f.usec = f.usec / 1000 * 1000
	}
	for _, z := range []struct {
		below int
		field *int64
	}{{3, &f.mon}, {5, &f.mday}, {6, &f.hour}, {7, &f.min}, {8, &f.sec}, {9, &f.usec}} {
		if lvl <= z.below {
			*z.field = 0
		}
	}
	return Interval{
		Months: int32(f.year*monthsPerYear + f.mon),
		Days:   int32(f.mday),
		Micros: ((f.hour*60+f.min)*60+f.sec)*usecsPerSec + f.usec,
	}, nil
}

// Age is age(a, b), PostgreSQL's timestamp_age: the symbolic difference
// a - b in years, months and days (then the time), each field of a minus
// b's, negative fields borrowed from the next one up, a borrowed month
// being the days of b's month (of a's when a < b, where the fields are
// negated first): age('2024-03-01', '2024-01-31') is 1 mon 1 day.
func Age(a, b time.Time) (Interval, error) {
	type tm struct{ year, mon, mday, hour, min, sec, usec int64 }
	split := func(t time.Time) tm {
		y, m, d := t.Date()
		h, mi, s := t.Clock()
		return tm{int64(y), int64(m), int64(d), int64(h), int64(mi), int64(s), int64(t.Nanosecond() / 1000)}
	}
	t1, t2 := split(a), split(b)
	r := tm{t1.year - t2.year, t1.mon - t2.mon, t1.mday - t2.mday, t1.hour - t2.hour, t1.min - t2.min, t1.sec - t2.sec, t1.usec - t2.usec}
	neg := a.Before(b)
	flip := func() {
		r = tm{-r.year, -r.mon, -r.mday, -r.hour, -r.min, -r.sec, -r.usec}
	}
	if neg {
		flip()
	}
	for r.usec < 0 {
		r.usec += usecsPerSec
		r.sec--
	}
	for r.sec < 0 {
		r.sec += 60
		r.min--
	}
	for r.min < 0 {
		r.min += 60
		r.hour--
	}
	for r.hour < 0 {
		r.hour += 24
		r.mday--
	}
	for r.mday < 0 {
		from := t2
		if neg {
			from = t1
		}
		r.mday += int64(daysIn(int(from.year), int(from.mon)))
		r.mon--
	}
	for r.mon < 0 {
		r.mon += monthsPerYear
		r.year--
	}
	if neg {
		flip()
	}
	months := r.year*monthsPerYear + r.mon
	if months > math.MaxInt32 || months < math.MinInt32 {
		return Interval{}, errIntervalRange()
	}
	return Interval{Months: int32(months), Days: int32(r.mday),
		Micros: ((r.hour*60+r.min)*60+r.sec)*usecsPerSec + r.usec}, nil
}
