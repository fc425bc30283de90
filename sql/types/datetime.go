package types

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tupled/tupled/sql/pgerror"
)

// date and timestamp with time zone, beside timestamp.go's timestamp; their arithmetic in
// expressions is sqlfe's (dateops.go).
//
// A date is held in S as PostgreSQL prints it with DateStyle ISO
// (2024-01-15); a timestamptz as the instant printed in UTC with its
// offset (2024-01-15 10:00:00+00). PostgreSQL prints a timestamptz in the
// session's TimeZone; this layer prints it in UTC whatever TimeZone says
// (the default here, and the same instant either way: clients parse the
// offset). Input takes the ISO forms with the date's fields separated by -
// or / and one-digit months, days and hours (2024-1-5 7:05), and for a
// timestamptz an offset (+02, -05:30, Z, UTC) — without one, UTC. On the
// wire in binary: a date is days since 2000-01-01 (int4), a timestamptz
// microseconds since 2000-01-01 00:00 UTC (int8), as PostgreSQL sends
// them. BC dates read and print with a trailing BC (cutEra, formatEra);
// infinities and the named forms (now, today, epoch) are not implemented
// (0A000).

var (
	dateLayouts = []string{"2006-1-2"}
	timeLayouts = []string{"15:04", "15:04:05.999999999"}
	// a trailing time zone: Z, UTC, GMT, or ±hh[[:]mm[[:]ss]]
	zoneRE = regexp.MustCompile(`(?i)\s*(z|utc|gmt|[+-]\d{1,2}(:?\d{2}(:?\d{2})?)?)$`)
)

// splitDateTime normalises ISO date-time input: the date's separators
// become -, a T between date and time a space.
func normDateTime(s string) string {
	t := strings.TrimSpace(s)
	if len(t) >= 5 && t[4] == '/' {
		t = strings.ReplaceAll(t, "/", "-")
	}
	if i := strings.IndexAny(t, "Tt"); i == 10 || (i > 0 && i < 11 && strings.Count(t[:i], "-") == 2) {
		t = t[:i] + " " + t[i+1:]
	}
	return t
}

// cutEra removes a trailing era, BC or AD ("0044-03-15 BC"): bc reports
// BC.
func cutEra(s string) (rest string, bc bool) {
	t := strings.TrimRight(s, " \t\n\r")
	if n := len(t); n > 3 && (t[n-3] == ' ' || t[n-3] == '\t') {
		switch strings.ToLower(t[n-2:]) {
		case "bc":
			return t[:n-3], true
		case "ad":
			return t[:n-3], false
		}
	}
	return s, false
}

// withEra puts back the era cutEra took off.
func withEra(s string, bc bool) string {
	if bc {
		return s + " BC"
	}
	return s
}

// BC dates: time.Time's years are astronomical (0 is 1 BC, -1 2 BC), as
// PostgreSQL's are inside; text shows them as the year before Christ
// with BC after (0044-03-15 BC, 0001-01-01 10:30:00+00 BC). The earliest
// date and timestamp is 4714-11-24 BC (Julian day 0).
// MinDateTime is the earliest date and timestamp, 4714-11-24 BC.
var MinDateTime = time.Date(-4713, 11, 24, 0, 0, 0, 0, time.UTC)

// formatEra is layout's text of v, with a year before 1 as BC.
func formatEra(v time.Time, layout, zone string) string {
	y := v.Year()
	if y > 0 {
		return v.Format(layout) + zone
	}
	// the year's digits by hand: Go prints year 0 as 0000 and -1 as -001
	return fmt.Sprintf("%04d", 1-y) + v.Format(strings.TrimPrefix(layout, "2006")) + zone + " BC"
}

// parseDateTime reads a date, optionally followed by a time, as UTC; a
// trailing BC makes the year one before Christ (year 0 is 22008, before
// 4714-11-24 BC 22008 out of range).
func parseDateTime(s, typeName string) (time.Time, error) {
	s0 := s
	s, bc := cutEra(s)
	t := normDateTime(s)
	switch strings.ToLower(t) {
	case "infinity", "-infinity", "epoch", "now", "today", "tomorrow", "yesterday", "allballs":
		return time.Time{}, pgerror.NotSupported("%s %q is not supported", typeName, t)
	}
	datePart, timePart, _ := strings.Cut(t, " ")
	timePart = strings.TrimSpace(timePart)
	year := -1 // the year as written, when BC or 0
	if y, rest, ok := strings.Cut(datePart, "-"); ok && len(y) >= 4 && (bc || strings.Trim(y, "0") == "") && strings.Trim(y, "0123456789") == "" {
		if n, err := strconv.Atoi(y); err == nil { // BC, or year 0
			if n == 0 {
				return time.Time{}, &pgerror.Error{Code: "22008", Message: fmt.Sprintf("date/time field value out of range: %q", s0)}
			}
			// parse in a year of the same leap-ness (1 BC is a leap year), then move
			year = n
			stand := "2001"
			if a := 1 - n; a%4 == 0 && (a%100 != 0 || a%400 == 0) {
				stand = "2000"
			}
			datePart = stand + "-" + rest
		}
	}
	era := func(d time.Time) (time.Time, error) {
		if year < 0 {
			return d, nil
		}
		d = d.AddDate(1-year-d.Year(), 0, 0)
		if d.Before(MinDateTime) {
			what := "timestamp"
			if typeName == "date" {
				what = "date"
			}
			return time.Time{}, &pgerror.Error{Code: "22008", Message: fmt.Sprintf("%s out of range: %q", what, s0)}
		}
		return d, nil
	}
	for _, dl := range dateLayouts {
		d, err := time.Parse(dl, datePart)
		if err != nil {
			if pe, ok := err.(*time.ParseError); ok && strings.Contains(pe.Message, "out of range") {
				return time.Time{}, rangeError(s)
			}
			continue
		}
		if timePart == "" {
			return era(d)
		}
		for _, tl := range timeLayouts {
			c, err := time.Parse(tl, timePart)
			if err != nil {
				if pe, ok := err.(*time.ParseError); ok && strings.Contains(pe.Message, "out of range") {
					return time.Time{}, rangeError(s)
				}
				continue
			}
			return era(d.Add(time.Duration(c.Hour())*time.Hour + time.Duration(c.Minute())*time.Minute +
				time.Duration(c.Second())*time.Second + time.Duration(c.Nanosecond())).Round(time.Microsecond))
		}
	}
	return time.Time{}, pgerror.Errorf(pgerror.CodeDatetimeFormat, "invalid input syntax for type %s: %q", typeName, s)
}

func rangeError(s string) error {
	return &pgerror.Error{Code: "22008", Message: fmt.Sprintf("date/time field value out of range: %q", s),
		Hint: `Perhaps you need a different "datestyle" setting.`}
}

func parseTimestamptz(s string) (time.Time, error) {
	t, bc := cutEra(strings.TrimSpace(s))
	t = strings.TrimSpace(t)
	off := 0
	if m := zoneRE.FindStringSubmatchIndex(t); m != nil && m[0] > 0 {
		z := strings.TrimSpace(t[m[0]:])
		rest := t[:m[0]]
		// a "-05" right after the date's digits is the zone only when a
		// time precedes it
		if strings.Contains(rest, ":") || !strings.HasPrefix(z, "-") && !strings.HasPrefix(z, "+") {
			switch lz := strings.ToLower(z); lz {
			case "z", "utc", "gmt":
			default:
				sign := 1
				if z[0] == '-' {
					sign = -1
				}
				digits := strings.ReplaceAll(z[1:], ":", "")
				h, m, sec := 0, 0, 0
				switch len(digits) {
				case 1, 2:
					h, _ = strconv.Atoi(digits)
				case 3:
					h, _ = strconv.Atoi(digits[:1])
					m, _ = strconv.Atoi(digits[1:])
				case 4:
					h, _ = strconv.Atoi(digits[:2])
					m, _ = strconv.Atoi(digits[2:])
				case 6:
					h, _ = strconv.Atoi(digits[:2])
					m, _ = strconv.Atoi(digits[2:4])
					sec, _ = strconv.Atoi(digits[4:])
				default:
					return time.Time{}, pgerror.Errorf(pgerror.CodeDatetimeFormat, "invalid input syntax for type timestamp with time zone: %q", s)
				}
				if h > 15 || m > 59 || sec > 59 {
					return time.Time{}, &pgerror.Error{Code: "22009", Message: fmt.Sprintf("time zone displacement out of range: %q", s)}
				}
				off = sign * (h*3600 + m*60 + sec)
			}
			t = rest
		}
	}
	v, err := parseDateTime(withEra(t, bc), "timestamp with time zone")
	if err != nil {
		if e, ok := err.(*pgerror.Error); ok && e.Code == pgerror.CodeDatetimeFormat {
			return time.Time{}, pgerror.Errorf(pgerror.CodeDatetimeFormat, "invalid input syntax for type timestamp with time zone: %q", s)
		}
		return time.Time{}, err
	}
	v = v.Add(-time.Duration(off) * time.Second).UTC()
	if bc && v.Before(MinDateTime) {
		return time.Time{}, &pgerror.Error{Code: "22008", Message: fmt.Sprintf("timestamp out of range: %q", s)}
	}
	return v, nil
}

func formatTimestamptz(v time.Time) string {
	return formatEra(v.UTC(), "2006-01-02 15:04:05.999999", "+00")
}

// TimestamptzValue is the timestamptz of instant v.
func TimestamptzValue(v time.Time) Value { return Value{T: TTimestamptz, S: formatTimestamptz(v)} }

// Instant reads a timestamp or timestamptz value (a timestamp as UTC, the
// session's zone here).
func Instant(v Value) time.Time {
	var t time.Time
	var err error
	switch v.T {
	case TTimestamptz:
		t, err = parseTimestamptz(v.S)
	case TDate:
		t, err = parseDateTime(v.S, "date")
	default:
		t, err = parseTimestamp(v.S)
	}
	if err != nil {
		return time.Time{} // cannot happen: values are parsed on the way in
	}
	return t
}

func parseDate(s string) (time.Time, error) {
	t, bc := cutEra(s)
	t = normDateTime(t)
	if d, rest, ok := strings.Cut(t, " "); ok && strings.TrimSpace(rest) != "" {
		// a date with a time: PostgreSQL's date_in takes the date part
		if _, err := parseDateTime(withEra(t, bc), "date"); err != nil {
			return time.Time{}, dateError(err, s)
		}
		t = d
	}
	v, err := parseDateTime(withEra(t, bc), "date")
	if err != nil {
		return time.Time{}, dateError(err, s)
	}
	return v, nil
}

func dateError(err error, s string) error {
	if e, ok := err.(*pgerror.Error); ok && e.Code == pgerror.CodeDatetimeFormat {
		return pgerror.Errorf(pgerror.CodeDatetimeFormat, "invalid input syntax for type date: %q", s)
	}
	return err
}

// DateValue is the date of v's calendar day.
func DateValue(v time.Time) Value { return Value{T: TDate, S: formatEra(v, "2006-01-02", "")} }

func appendDateBinary(dst []byte, s string) []byte {
	v, err := parseDateTime(s, "date")
	if err != nil {
		return dst
	}
	return binary.BigEndian.AppendUint32(dst, uint32(int32(dateDays(v))))
}

// dateDays is the days from 2000-01-01 to the midnight t (by seconds: a
// time.Duration spans only 292 years).
func dateDays(t time.Time) int64 { return (t.Unix() - pgEpoch.Unix()) / 86400 }

func parseDateBinary(b []byte) (Value, error) {
	if len(b) != 4 {
		return Value{}, pgerror.Errorf(pgerror.CodeInvalidBinary, "incorrect binary data format for type date")
	}
	days := int32(binary.BigEndian.Uint32(b))
	return DateValue(pgEpoch.AddDate(0, 0, int(days))), nil
}

func appendTimestamptzBinary(dst []byte, s string) []byte {
	v, err := parseTimestamptz(s)
	if err != nil {
		return dst
	}
	return binary.BigEndian.AppendUint64(dst, uint64(v.UnixMicro()-pgEpoch.UnixMicro()))
}

func parseTimestamptzBinary(b []byte) (Value, error) {
	if len(b) != 8 {
		return Value{}, pgerror.Errorf(pgerror.CodeInvalidBinary, "incorrect binary data format for type timestamp with time zone")
	}
	us := int64(binary.BigEndian.Uint64(b))
	return TimestamptzValue(time.UnixMicro(us + pgEpoch.UnixMicro())), nil
}

// castDateTime converts between date, timestamp and timestamptz (the
// session's zone being UTC); ok is false for other pairs.
func castDateTime(v Value, t Type) (Value, bool) {
	if !IsDateTime(v.T) || !IsDateTime(t) {
		return Value{}, false
	}
	x := Instant(v)
	switch t {
	case TDate:
		return DateValue(x), true
	case TTimestamp:
		return TimestampValue(x), true
	}
	return TimestamptzValue(x), true
}

// IsDateTime reports whether t is date, timestamp or timestamptz.
func IsDateTime(t Type) bool { return t == TDate || t == TTimestamp || t == TTimestamptz }

// datetimeFields are the fields extract and date_trunc know, in
// date_trunc's order of precision.
var TruncUnits = map[string]int{"microseconds": 0, "milliseconds": 1, "second": 2, "minute": 3, "hour": 4, "day": 5, "week": 6, "month": 7, "quarter": 8, "year": 9, "decade": 10, "century": 11, "millennium": 12}

// TruncTime is date_trunc: t truncated to unit ("hour", "month", ...);
// false for a unit PostgreSQL does not know.
func TruncTime(t time.Time, unit string) (time.Time, bool) {
	y, m, d := t.Date()
	switch unit {
	case "microseconds":
		return t.Truncate(time.Microsecond), true
	case "milliseconds":
		return t.Truncate(time.Millisecond), true
	case "second":
		return t.Truncate(time.Second), true
	case "minute":
		return t.Truncate(time.Minute), true
	case "hour":
		return t.Truncate(time.Hour), true
	case "day":
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), true
	case "week":
		wd := (int(t.Weekday()) + 6) % 7 // ISO weeks start on Monday
		return time.Date(y, m, d-wd, 0, 0, 0, 0, time.UTC), true
	case "month":
		return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC), true
	case "quarter":
		return time.Date(y, m-(m-1)%3, 1, 0, 0, 0, 0, time.UTC), true
	case "year":
		return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC), true
	case "decade", "century", "millennium": // timestamp_trunc's arithmetic, BC years too
		var ty int
		switch {
		case unit == "decade" && y > 0:
			ty = y / 10 * 10
		case unit == "decade":
			ty = -((8 - (y - 1)) / 10) * 10
		case unit == "century" && y > 0:
			ty = (y+99)/100*100 - 99
		case unit == "century":
			ty = -((99-(y-1))/100)*100 + 1
		case y > 0:
			ty = (y+999)/1000*1000 - 999
		default:
			ty = -((999-(y-1))/1000)*1000 + 1
		}
		return time.Date(ty, 1, 1, 0, 0, 0, 0, time.UTC), true
	}
	return time.Time{}, false
}

// ExtractField is extract(field FROM v) as PostgreSQL 15 computes it: a
// numeric.
func ExtractField(field string, v Value) (Value, error) {
	t := Instant(v)
	num := func(i int64) (Value, error) { return Value{T: TNumeric, S: strconv.FormatInt(i, 10)}, nil }
	y, m, d := t.Date()
	switch field {
	case "year":
		if y <= 0 {
			return num(int64(y - 1)) // there is no year 0: 1 BC is -1
		}
		return num(int64(y))
	case "month":
		return num(int64(m))
	case "day":
		return num(int64(d))
	case "hour", "minute":
		if v.T == TDate {
			break
		}
		if field == "hour" {
			return num(int64(t.Hour()))
		}
		return num(int64(t.Minute()))
	case "second":
		if v.T == TDate {
			break
		}
		us := int64(t.Second())*1e6 + int64(t.Nanosecond()/1000)
		return decimal{Unscaled: bigInt(us), Scale: 6}.Value(), nil
	case "dow":
		return num(int64(t.Weekday()))
	case "isodow":
		return num(int64((int(t.Weekday())+6)%7 + 1))
	case "doy":
		return num(int64(t.YearDay()))
	case "quarter":
		return num(int64((int(m)-1)/3 + 1))
	case "week":
		_, w := t.ISOWeek()
		return num(int64(w))
	case "isoyear":
		iy, _ := t.ISOWeek()
		if iy <= 0 {
			iy--
		}
		return num(int64(iy))
	case "decade":
		if y < 0 {
			return num(int64(-((8 - (y - 1)) / 10)))
		}
		return num(int64(y / 10))
	case "century":
		if y <= 0 {
			return num(int64(-((99 - (y - 1)) / 100)))
		}
		return num(int64((y + 99) / 100))
	case "millennium":
		if y <= 0 {
			return num(int64(-((999 - (y - 1)) / 1000)))
		}
		return num(int64((y + 999) / 1000))
	case "epoch":
		us := t.UnixMicro()
		if v.T == TDate {
			return num(us / 1e6)
		}
		return decimal{Unscaled: bigInt(us), Scale: 6}.Value(), nil
	}
	if _, known := TruncUnits[field]; known || field == "dow" || field == "doy" || field == "epoch" {
		return Value{}, pgerror.Errorf(pgerror.CodeFeatureNotSupp, "unit %q not supported for type %s", field, v.T)
	}
	return Value{}, pgerror.Errorf(pgerror.CodeInvalidParamValue, "unit %q not recognized for type %s", field, v.T)
}
