package types

import (
	"encoding/binary"
	"strconv"
	"strings"
	"time"

	"github.com/tupled/tupled/sql/pgerror"
)

func init() {
	ExtTypes[TTime] = &extType{Name: "time without time zone", Typname: "time", OID: OIDTime, Size: 8, key: true, MinMax: true,
		parse: func(s string) (Value, error) {
			t, err := ParseTimeOfDay(s)
			if err != nil {
				return Value{}, err
			}
			return TimeValue(t), nil
		},
		appendBin: func(dst []byte, v Value) []byte { return AppendTimeOfDayBinary(dst, TimeOf(v)) },
		parseBin: func(b []byte) (Value, error) {
			t, err := ParseTimeOfDayBinary(b)
			if err != nil {
				return Value{}, err
			}
			return TimeValue(t), nil
		},
	}
}

// TimeValue is the Value of a time of day: S its text, hh:mm:ss[.f],
// which sorts as the times do (two-digit fields, '.' below the digits), so
// a time can be a key.
func TimeValue(t TimeOfDay) Value { return Value{T: TTime, S: FormatTimeOfDay(t)} }

// TimeOf reads the time of day of a non-NULL Value of type time.
func TimeOf(v Value) TimeOfDay {
	t, err := ParseTimeOfDay(v.S)
	if err != nil {
		return 0 // cannot happen: S is FormatTimeOfDay's output
	}
	return t
}

// TimeOfDay is PostgreSQL's time (without time zone): microseconds since
// midnight, 0 through 24:00:00 inclusive (PostgreSQL keeps 24:00:00 apart
// from the next day's 00:00:00). Text output is "hh:mm:ss[.ffffff]"
// without trailing zeros; the binary form is time_send's int64.
type TimeOfDay int64

// maxTimeOfDay is 24:00:00.
const maxTimeOfDay = TimeOfDay(usecsPerDay)

func errTimeSyntax(s string) error {
	return ivErr(pgerror.CodeDatetimeFormat, "invalid input syntax for type time: %q", s)
}

func errTimeRange(s string) error {
	return ivErr(pgerror.CodeDatetimeRange, "date/time field value out of range: %q", s)
}

// ParseTimeOfDay reads time input as time_in does for the forms clients
// send: hh:mm, hh:mm:ss[.f] (fractions past the microsecond rounded, so
// 23:59:59.9999999 is 24:00:00), hhmmss, with AM/PM, after a date (which
// is read past; not after a T, which time_in refuses), before a time zone (ignored, as for time without time
// zone), and 'allballs' (00:00:00).
func ParseTimeOfDay(s string) (TimeOfDay, error) {
	in := strings.ToLower(strings.TrimSpace(s))
	if in == "allballs" {
		return 0, nil
	}
	// A date before the time: read past it.
	if i := strings.IndexByte(in, ' '); i > 0 && strings.Count(in[:i], "-") == 2 {
		in = strings.TrimSpace(in[i+1:])
	}
	// AM / PM.
	ampm := ""
	for _, m := range []string{"am", "pm"} {
		if strings.HasSuffix(in, m) {
			ampm = m
			in = strings.TrimSpace(strings.TrimSuffix(in, m))
			break
		}
	}
	// A zone after the time (+hh[:mm], -hh, z, or a name): ignored.
	if i := strings.IndexAny(in, "+-"); i > 0 {
		if !isNumericZone(in[i+1:]) {
			return 0, errTimeSyntax(s)
		}
		in = in[:i]
	} else if i := strings.IndexByte(in, ' '); i > 0 {
		in = in[:i]
	} else if strings.HasSuffix(in, "z") {
		in = strings.TrimSuffix(in, "z")
	}
	if in == "" {
		return 0, errTimeSyntax(s)
	}
	var h, m, sec int64
	var frac string
	body := in
	if b, f, ok := strings.Cut(body, "."); ok {
		body, frac = b, f
	}
	num := func(p string) (int64, bool) {
		if p == "" || len(p) > 9 {
			return 0, false
		}
		for i := 0; i < len(p); i++ {
			if !isDigit(p[i]) {
				return 0, false
			}
		}
		v, _ := strconv.ParseInt(p, 10, 64)
		return v, true
	}
	parts := strings.Split(body, ":")
	ok := true
	switch len(parts) {
	case 1:
		// hhmmss or hhmm (ISO's basic format)
		p := parts[0]
		switch len(p) {
		case 6:
			h, ok = num(p[:2])
			m, _ = num(p[2:4])
			sec, _ = num(p[4:])
		case 4:
			h, ok = num(p[:2])
			m, _ = num(p[2:])
		default:
			ok = false
		}
		if ok {
			_, ok = num(p)
		}
	case 2, 3:
		var ok1, ok2, ok3 = true, true, true
		h, ok1 = num(parts[0])
		m, ok2 = num(parts[1])
		if len(parts) == 3 {
			sec, ok3 = num(parts[2])
		}
		ok = ok1 && ok2 && ok3
	default:
		ok = false
	}
	if !ok {
		return 0, errTimeSyntax(s)
	}
	fsec, err := fracMicros(frac)
	if err != nil {
		return 0, errTimeSyntax(s)
	}
	switch ampm {
	case "am":
		if h > 12 {
			return 0, errTimeRange(s)
		}
		if h == 12 {
			h = 0
		}
	case "pm":
		if h > 12 {
			return 0, errTimeRange(s)
		}
		if h != 12 {
			h += 12
		}
	}
	if h > 24 || m > 59 || sec > 60 {
		return 0, errTimeRange(s)
	}
	v := TimeOfDay(((h*60+m)*60+sec)*usecsPerSec + fsec)
	if v > maxTimeOfDay {
		return 0, errTimeRange(s)
	}
	return v, nil
}

// isNumericZone reports whether z (after its sign) is hh, hhmm or hh:mm.
func isNumericZone(z string) bool {
	digits := strings.Replace(z, ":", "", 1)
	if len(digits) != 2 && len(digits) != 4 || (len(z) != len(digits) && len(z) != 5) {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if !isDigit(digits[i]) {
			return false
		}
	}
	return true
}

// AppendTimeOfDay appends time_out's text, "hh:mm:ss[.ffffff]".
func AppendTimeOfDay(dst []byte, t TimeOfDay) []byte {
	us := int64(t)
	h := us / usecsPerHour
	us -= h * usecsPerHour
	m := us / usecsPerMinute
	us -= m * usecsPerMinute
	sec := us / usecsPerSec
	dst = appendPad2(dst, h)
	dst = append(dst, ':')
	dst = appendPad2(dst, m)
	dst = append(dst, ':')
	return appendSeconds(dst, sec, us-sec*usecsPerSec)
}

// FormatTimeOfDay is AppendTimeOfDay as a string.
func FormatTimeOfDay(t TimeOfDay) string { return string(AppendTimeOfDay(nil, t)) }

// AppendTimeOfDayBinary appends time_send's form.
func AppendTimeOfDayBinary(dst []byte, t TimeOfDay) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(t))
}

// ParseTimeOfDayBinary reads time_recv's form; a value outside
// 00:00:00..24:00:00 is 22008, as time_recv refuses it.
func ParseTimeOfDayBinary(b []byte) (TimeOfDay, error) {
	if len(b) != 8 {
		return 0, ivErr(pgerror.CodeInvalidBinary, "incorrect binary data format for type time")
	}
	v := TimeOfDay(binary.BigEndian.Uint64(b))
	if v < 0 || v > maxTimeOfDay {
		return 0, ivErr(pgerror.CodeDatetimeRange, "time out of range")
	}
	return v, nil
}

// AddIntervalToTimeOfDay is time_pl_interval: the interval's time part
// added around the clock (months and days are ignored; 23:00 + 2 hours is
// 01:00:00).
func AddIntervalToTimeOfDay(t TimeOfDay, iv Interval) TimeOfDay {
	r := (int64(t) + iv.Micros%usecsPerDay) % usecsPerDay
	if r < 0 {
		r += usecsPerDay
	}
	return TimeOfDay(r)
}

// SubTimesOfDay is time_mi_time: an interval of microseconds.
func SubTimesOfDay(a, b TimeOfDay) Interval { return Interval{Micros: int64(a) - int64(b)} }

// TimeOfDayOf is the time of day of t (timestamp::time).
func TimeOfDayOf(t time.Time) TimeOfDay {
	h, m, s := t.Clock()
	return TimeOfDay((int64(h)*3600+int64(m)*60+int64(s))*usecsPerSec + int64(t.Nanosecond()/1000))
}

// AtTimeOfDay is date + time: the date's midnight plus the time.
func AtTimeOfDay(date time.Time, t TimeOfDay) time.Time {
	y, mo, d := date.Date()
	return time.Date(y, mo, d, 0, 0, 0, 0, date.Location()).Add(time.Duration(t) * time.Microsecond)
}

// ExtractTimeOfDay is extract(field FROM time) in PostgreSQL 15, as
// numeric text.
func ExtractTimeOfDay(field string, t TimeOfDay) (string, error) {
	us := int64(t)
	switch fieldUnit(field) {
	case "microsecond":
		return strconv.FormatInt(us%usecsPerMinute, 10), nil
	case "millisecond":
		return scaled(us%usecsPerMinute, 3), nil
	case "second":
		return scaled(us%usecsPerMinute, 6), nil
	case "minute":
		return strconv.FormatInt(us/usecsPerMinute%60, 10), nil
	case "hour":
		return strconv.FormatInt(us/usecsPerHour, 10), nil
	case "epoch":
		return scaled(us, 6), nil
	}
	return "", ivErr(pgerror.CodeFeatureNotSupp, "unit %q not supported for type time without time zone", strings.ToLower(field))
}

// castTimeOfDay is the casts to and from time among the date/time types:
// timestamp and timestamptz to time (the time of day, timestamptz's in
// UTC, this layer's TimeZone), interval to time (its time part around the
// clock, as interval_time) and time to interval.
func castTimeOfDay(v Value, t Type) (Value, bool) {
	switch {
	case t == TTime && (v.T == TTimestamp || v.T == TTimestamptz):
		return TimeValue(TimeOfDayOf(Instant(v).UTC())), true
	case t == TTime && v.T == TInterval:
		return TimeValue(AddIntervalToTimeOfDay(0, Interval{Micros: IntervalOf(v).Micros})), true
	case t == TInterval && v.T == TTime:
		return IntervalValue(Interval{Micros: int64(TimeOf(v))}), true
	}
	return Value{}, false
}
