package eval

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// The date and time functions' bodies beside extract and date_trunc
// (sql/types' datetime.go) and the formatting ones (formatting.go):
// date_part, make_date, make_timestamp, to_timestamp(double precision),
// age, and date's arithmetic with integers. sqlfe's datefuncs.go and
// dateops.go resolve their arguments.

// DatePart is date_part(field, v) of a non-NULL timestamp, timestamptz,
// date (as timestamptz), interval or time: extract's value as double
// precision, as PostgreSQL 15's date_part returns it.
func DatePart(field string, v types.Value) (types.Value, error) {
	unit := strings.ToLower(field)
	var s string
	var err error
	switch v.T {
	case types.TInterval:
		s, err = types.ExtractInterval(unit, types.IntervalOf(v))
	case types.TTime:
		s, err = types.ExtractTimeOfDay(unit, types.TimeOf(v))
	default:
		var x types.Value
		x, err = types.ExtractField(unit, v)
		s = x.S
	}
	if err != nil {
		return types.Value{}, err
	}
	fv, perr := strconv.ParseFloat(s, 64)
	if perr != nil {
		return types.Value{}, pgerror.Errorf(pgerror.CodeInternal, "date_part: %v", perr)
	}
	return types.FloatValue(fv, types.TFloat8), nil
}

// MakeDate is make_date(y, m, d): 22008 for a date that does not exist
// (February 30), as PostgreSQL's.
func MakeDate(y, m, d int64) (types.Value, error) {
	t, err := civilDate(y, m, d)
	if err != nil {
		return types.Value{}, err
	}
	return types.DateValue(t), nil
}

// civilDate is the date y-m-d (a negative year BC: -44 is 44 BC), or
// PostgreSQL's error for one that is not.
func civilDate(y, m, d int64) (time.Time, error) {
	ay := y // astronomical: 1 BC is 0
	if y < 0 {
		ay = y + 1
	}
	t := time.Date(int(ay), time.Month(m), int(d), 0, 0, 0, 0, time.UTC)
	if y == 0 || m < 1 || m > 12 || d < 1 || int64(t.Day()) != d || y > 5874897 || y < -1e6 {
		return time.Time{}, pgerror.Errorf(pgerror.CodeDatetimeRange, "date field value out of range: %d-%02d-%02d", y, m, d)
	}
	if t.Before(types.MinDateTime) {
		return time.Time{}, pgerror.Errorf(pgerror.CodeDatetimeRange, "date out of range: %d-%02d-%02d", ay, m, d)
	}
	return t, nil
}

// MakeTimestamp is make_timestamp(y, m, d, h, mi, sec): sec a double
// precision (fractions to the microsecond).
func MakeTimestamp(year, month, day, h, mi int64, sec float64) (types.Value, error) {
	d, err := civilDate(year, month, day)
	if err != nil {
		return types.Value{}, err
	}
	if h < 0 || h > 24 || mi < 0 || mi > 59 || sec < 0 || sec > 60 || h == 24 && (mi != 0 || sec != 0) {
		return types.Value{}, pgerror.Errorf(pgerror.CodeDatetimeRange, "time field value out of range: %d:%02d:%s", h, mi, strconv.FormatFloat(sec, 'f', -1, 64))
	}
	us := (h*60+mi)*60*1_000_000 + int64(math.RoundToEven(sec*1e6))
	return TimestampResult(d.Add(time.Duration(us)*time.Microsecond), types.TTimestamp)
}

// ToTimestampEpoch is to_timestamp(s), s seconds since the Unix epoch: a
// timestamptz.
func ToTimestampEpoch(s float64) (types.Value, error) {
	if math.IsNaN(s) || math.IsInf(s, 0) || s < -210866803200 || s > 9224318016000 {
		return types.Value{}, pgerror.Errorf(pgerror.CodeDatetimeRange, "timestamp out of range: %q", strconv.FormatFloat(s, 'g', -1, 64))
	}
	us := int64(math.RoundToEven(s * 1e6))
	return TimestampResult(time.UnixMicro(us).UTC(), types.TTimestamptz)
}

// Age is age(a, b) (timestamp_age's symbolic difference) and age(a), the
// age at the current date's midnight (the transaction's: ctx.TxStart).
func Age(ctx Context, a []types.Value) (types.Value, error) {
	for _, v := range a {
		if v.Null {
			return types.Null(types.TInterval), nil
		}
	}
	from := types.Instant(a[0])
	var to time.Time
	if len(a) == 2 {
		to = types.Instant(a[1])
	} else {
		y, m, d := ctx.TxStart().UTC().Date()
		to = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		from, to = to, from
	}
	return IntervalResult(types.Age(from, to))
}

// DateArith is date + integer, integer + date, date - integer (t a date)
// or date - date (t integer: the days between) of non-NULL a and b.
func DateArith(op byte, a, b types.Value, t types.Type) (types.Value, error) {
	if t == types.TInt4 {
		return types.Int4(int32(types.Instant(a).Sub(types.Instant(b)).Hours() / 24)), nil
	}
	if a.T != types.TDate {
		a, b = b, a // integer + date
	}
	n := b.I
	if op == '-' {
		n = -n
	}
	r := types.Instant(a).AddDate(0, 0, int(n))
	if r.Year() > 5874897 || r.Before(types.MinDateTime) {
		return types.Value{}, pgerror.Errorf(pgerror.CodeDatetimeRange, "date out of range")
	}
	return types.DateValue(r), nil
}

// ExtractIntervalTime is extract(field FROM x) of an interval or a time.
func ExtractIntervalTime(a []types.Value) (types.Value, error) {
	var s string
	var err error
	if a[1].T == types.TInterval {
		s, err = types.ExtractInterval(a[0].S, types.IntervalOf(a[1]))
	} else {
		s, err = types.ExtractTimeOfDay(a[0].S, types.TimeOf(a[1]))
	}
	if err != nil {
		return types.Value{}, err
	}
	return types.Value{T: types.TNumeric, S: s}, nil
}

// Extract is extract(field FROM x) of a date, timestamp or timestamptz.
func Extract(a []types.Value) (types.Value, error) {
	return types.ExtractField(strings.ToLower(a[0].S), a[1])
}

// DateTruncInterval is date_trunc(unit, x) of an interval.
func DateTruncInterval(a []types.Value) (types.Value, error) {
	return IntervalResult(types.TruncInterval(a[0].S, types.IntervalOf(a[1])))
}

// DateTrunc is date_trunc(unit, x) of a timestamp or timestamptz x, of its
// type.
func DateTrunc(a []types.Value, t types.Type) (types.Value, error) {
	u := strings.ToLower(a[0].S)
	r, ok := types.TruncTime(types.Instant(a[1]), u)
	if !ok {
		if _, known := types.TruncUnits[u]; !known {
			return types.Value{}, pgerror.Errorf(pgerror.CodeInvalidParamValue, "unit %q not recognized for type %s", u, t)
		}
	}
	if t == types.TTimestamp {
		return types.TimestampValue(r), nil
	}
	return types.TimestamptzValue(r), nil
}
