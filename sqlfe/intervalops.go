package sqlfe

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
// always 24 hours here). An untyped literal on the right of a timestamp's
// + or - is read as the timestamp's type, not as an interval as
// PostgreSQL's operator resolution would: write interval '1 day'.

// intervalArith is one of the operators above.
type intervalArith struct {
	op   byte
	l, r expr
	t    types.Type
}

func (x *intervalArith) typ() types.Type { return x.t }
func (x *intervalArith) kids() []expr    { return []expr{x.l, x.r} }

func (x *intervalArith) eval(e *env) (types.Value, error) {
	a, err := x.l.eval(e)
	if err != nil {
		return a, err
	}
	b, err := x.r.eval(e)
	if err != nil {
		return b, err
	}
	if a.Null || b.Null {
		return types.Null(x.t), nil
	}
	return intervalOpValues(x.op, a, b, x.t)
}

func intervalOpValues(op byte, a, b types.Value, t types.Type) (types.Value, error) {
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
			return ivResult(types.MulInterval(types.IntervalOf(iv), f))
		}
		return ivResult(types.DivInterval(types.IntervalOf(iv), f))
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
		return ivResult(v, err)
	case a.T == types.TTime && b.T == types.TTime:
		return types.IntervalValue(types.SubTimesOfDay(types.TimeOf(a), types.TimeOf(b))), nil
	case a.T == types.TTime:
		iv := types.IntervalOf(b)
		if op == '-' {
			iv.Micros = -iv.Micros
		}
		return types.TimeValue(types.AddIntervalToTimeOfDay(types.TimeOf(a), iv)), nil
	case a.T == types.TDate && b.T == types.TTime:
		return timestampResult(types.AtTimeOfDay(types.Instant(a), types.TimeOf(b)), types.TTimestamp)
	case b.T == types.TInterval:
		iv := types.IntervalOf(b)
		if op == '-' {
			n, err := types.NegateInterval(iv)
			if err != nil {
				return types.Value{}, err
			}
			iv = n
		}
		return timestampResult(types.AddIntervalToTime(types.Instant(a), iv), t)
	}
	// timestamp - timestamp
	return ivResult(types.SubTimes(types.Instant(a), types.Instant(b)))
}

func ivResult(v types.Interval, err error) (types.Value, error) {
	if err != nil {
		return types.Value{}, err
	}
	return types.IntervalValue(v), nil
}

// timestampResult is a timestamp or timestamptz, within PostgreSQL's
// range (4714-11-24 BC to the year 294276).
func timestampResult(r time.Time, t types.Type) (types.Value, error) {
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

func isNumeric(t types.Type) bool { return types.IsNumber(t) || types.IsFloat(t) }

func isTimestamp(t types.Type) bool { return t == types.TTimestamp || t == types.TTimestamptz }

// intervalOp compiles the operators above; ok is false for other operand
// types.
func intervalOp(op string, l, r expr) (expr, bool, error) {
	lt, rt := l.typ(), r.typ()
	mk := func(t types.Type) (expr, bool, error) {
		return &intervalArith{op: op[0], l: l, r: r, t: t}, true, nil
	}
	iv := types.TInterval
	switch op {
	case "+":
		switch {
		case lt == iv && rt == iv:
			return mk(iv)
		case isTimestamp(lt) && rt == iv:
			return mk(lt)
		case lt == iv && isTimestamp(rt):
			return mk(rt)
		case lt == types.TDate && rt == iv, lt == iv && rt == types.TDate,
			lt == types.TDate && rt == types.TTime, lt == types.TTime && rt == types.TDate:
			return mk(types.TTimestamp)
		case lt == types.TTime && rt == iv, lt == iv && rt == types.TTime:
			return mk(types.TTime)
		}
	case "-":
		switch {
		case lt == iv && rt == iv:
			return mk(iv)
		case isTimestamp(lt) && rt == iv:
			return mk(lt)
		case lt == types.TDate && rt == iv:
			return mk(types.TTimestamp)
		case lt == types.TTime && rt == iv:
			return mk(types.TTime)
		case lt == types.TTime && rt == types.TTime:
			return mk(iv)
		case isTimestamp(lt) && isTimestamp(rt), isTimestamp(lt) && rt == types.TDate, lt == types.TDate && isTimestamp(rt):
			return mk(iv)
		}
	case "*":
		if lt == iv && isNumeric(rt) || isNumeric(lt) && rt == iv {
			return mk(iv)
		}
	case "/":
		if lt == iv && isNumeric(rt) {
			return mk(iv)
		}
	}
	return nil, false, nil
}

func init() {
	for name, fn := range map[string]func(types.Interval) (types.Interval, error){
		"justify_hours":    types.JustifyHours,
		"justify_days":     types.JustifyDays,
		"justify_interval": types.JustifyInterval,
	} {
		fn := fn
		builtins[name] = builtin{[]types.Type{types.TInterval}, types.TInterval, func(_ *env, a []types.Value) (types.Value, error) {
			if a[0].Null {
				return types.Null(types.TInterval), nil
			}
			return ivResult(fn(types.IntervalOf(a[0])))
		}}
	}
}
