package sqlfe

import (
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/types"
)

// The operators of interval and time (sql/types/interval.go and
// timeofday.go hold the datums and their arithmetic; sql/eval's
// interval.go computes them), as PostgreSQL's operator catalog has them:
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
	return eval.IntervalArith(x.op, a, b, x.t)
}

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
		case eval.IsTimestamp(lt) && rt == iv:
			return mk(lt)
		case lt == iv && eval.IsTimestamp(rt):
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
		case eval.IsTimestamp(lt) && rt == iv:
			return mk(lt)
		case lt == types.TDate && rt == iv:
			return mk(types.TTimestamp)
		case lt == types.TTime && rt == iv:
			return mk(types.TTime)
		case lt == types.TTime && rt == types.TTime:
			return mk(iv)
		case eval.IsTimestamp(lt) && eval.IsTimestamp(rt), eval.IsTimestamp(lt) && rt == types.TDate, lt == types.TDate && eval.IsTimestamp(rt):
			return mk(iv)
		}
	case "*":
		if lt == iv && eval.IsNumeric(rt) || eval.IsNumeric(lt) && rt == iv {
			return mk(iv)
		}
	case "/":
		if lt == iv && eval.IsNumeric(rt) {
			return mk(iv)
		}
	}
	return nil, false, nil
}
