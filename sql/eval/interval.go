package eval

import (
	"time"

	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// The operators of interval and time (sql/types/interval.go and
// timeofday.go hold the datums and their arithmetic), as PostgreSQL's
// operator catalog has them:
//
//	timestamp[tz] ± interval, interval + timestamp[tz]   → timestamp[tz]
//	date ± interval, interval + date                    → timestamp
//	timestamp - timestamp, timestamptz - timestamptz   → interval
//	interval ± interval, - interval                     → interval
//	interval * number, number * interval, interval / number → interval
//	time ± interval, interval + time                    → time
//	time - time                                         → interval
//	date + time, time + date                            → timestamp
//
// A timestamptz is computed in UTC, this layer's TimeZone (so a day is
// always 24 hours here). Which operand types an operator takes is
// sqlfe's intervalOp; IntervalArith computes it on non-NULL values.

// IntervalArith is op (+ - * /) of the non-NULL a and b, one of the
// operators above, whose result type is t.
func IntervalArith(op byte, a, b types.Value, t types.Type) (types.Value, error) {
	if op == '*' || op == '/' {
		// interval * number, number * interval, interval / number
		iv, n := a, b
		if iv.T != types.TInterval {
			iv, n = b, a
		}
		f, err := floatOf(n)
		if err != nil {
			return types.Value{}, err
		}
		if op == '*' {
			return IntervalResult(types.MulInterval(types.IntervalOf(iv), f))
		}
		return IntervalResult(types.DivInterval(types.IntervalOf(iv), f))
	}
	// The interval or time on the left of a commutative + goes right.
	if op == '+' && (a.T == types.TInterval && b.T != types.TInterval || a.T == types.TTime && b.T == types.TDate) {
		a, b = b, a
	}
	switch {
	case a.T == types.TInterval && b.T == types.TInterval:
		l, r := types.IntervalOf(a), types.IntervalOf(b)
		var v types.Interval
		var err error
		if op == '+' {
			v, err = types.AddIntervals(l, r)
		} else {
			v, err = types.SubIntervals(l, r)
		}
		return IntervalResult(v, err)
	case a.T == types.TTime && b.T == types.TTime:
		return types.IntervalValue(types.SubTimesOfDay(types.TimeOf(a), types.TimeOf(b))), nil
	case a.T == types.TTime:
		iv := types.IntervalOf(b)
		if op == '-' {
			iv.Micros = -iv.Micros
		}
		return types.TimeValue(types.AddIntervalToTimeOfDay(types.TimeOf(a), iv)), nil
	case a.T == types.TDate && b.T == types.TTime:
		return TimestampResult(types.AtTimeOfDay(types.Instant(a), types.TimeOf(b)), types.TTimestamp)
	case b.T == types.TInterval:
		iv := types.IntervalOf(b)
		if op == '-' {
			n, err := types.NegateInterval(iv)
			if err != nil {
				return types.Value{}, err
			}
			iv = n
		}
		return TimestampResult(types.AddIntervalToTime(types.Instant(a), iv), t)
	}
	// timestamp - timestamp
	return IntervalResult(types.SubTimes(types.Instant(a), types.Instant(b)))
}

// IntervalResult is v as a value, or err.
func IntervalResult(v types.Interval, err error) (types.Value, error) {
	if err != nil {
		return types.Value{}, err
	}
	return types.IntervalValue(v), nil
}

// TimestampResult is a timestamp or timestamptz, within PostgreSQL's
// range (4714-11-24 BC to the year 294276).
func TimestampResult(r time.Time, t types.Type) (types.Value, error) {
	if y := r.Year(); r.Before(types.MinDateTime) || y > 294276 {
		return types.Value{}, pgerror.Errorf(pgerror.CodeDatetimeRange, "timestamp out of range")
	}
	if t == types.TTimestamptz {
		return types.TimestamptzValue(r), nil
	}
	return types.TimestampValue(r), nil
}

// floatOf is a number as float8, interval_mul's factor.
func floatOf(v types.Value) (float64, error) {
	f, err := types.Cast(v, types.TFloat8)
	if err != nil {
		return 0, err
	}
	return types.FloatOf(f), nil
}

// IsNumeric reports whether t is a number: an integer, numeric or a float.
func IsNumeric(t types.Type) bool { return types.IsNumber(t) || types.IsFloat(t) }

// IsTimestamp reports whether t is timestamp or timestamptz.
func IsTimestamp(t types.Type) bool { return t == types.TTimestamp || t == types.TTimestamptz }

// justify_hours, justify_days, justify_interval.
func init() {
	for name, fn := range map[string]func(types.Interval) (types.Interval, error){
		"justify_hours":    types.JustifyHours,
		"justify_days":     types.JustifyDays,
		"justify_interval": types.JustifyInterval,
	} {
		fn := fn
		Builtins[name] = Builtin{[]types.Type{types.TInterval}, types.TInterval, func(_ Context, a []types.Value) (types.Value, error) {
			if a[0].Null {
				return types.Null(types.TInterval), nil
			}
			return IntervalResult(fn(types.IntervalOf(a[0])))
		}}
	}
}
