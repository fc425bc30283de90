package sqlfe

import (
	"math"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// Date and time functions beside extract and date_trunc (strfuncs.go):
// date_part (extract as double precision), make_date, make_timestamp,
// to_timestamp(double precision), age, pg_sleep, and to_char, to_date and
// to_timestamp(text, text). Each checks its arguments as PostgreSQL
// resolves them among our types, and is strict; what each computes is
// sql/eval's (date.go; formatting.go for to_char, to_date and
// to_timestamp(text, text)), but pg_sleep's wait, which honours the
// statement's context.

func init() {
	for name, f := range map[string]polyFunc{
		"date_part":      datePartFunc,
		"make_date":      makeDateFunc,
		"make_timestamp": makeTimestampFunc,
		"to_timestamp":   toTimestampFunc,
		"age":            ageFunc,
		"pg_sleep":       pgSleepFunc,
		"to_char":        toCharFunc,
		"to_date":        strictText("to_date", types.TDate, 2, eval.ToDate),
	} {
		polyFuncs[name] = f
	}
}

// datePartFunc is date_part(field, x): extract's value as double
// precision, as PostgreSQL 15's date_part returns it.
func datePartFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) != 2 {
		return nil, noSuchFunc(f, args)
	}
	field, err := c.coerce(args[0], types.TText)
	if err != nil {
		return nil, err
	}
	x := args[1]
	if t := x.typ(); t != types.TInterval && t != types.TTime {
		if x, err = c.coerce(x, types.TTimestamptz); err != nil {
			return nil, err
		}
	}
	if t := x.typ(); !types.IsString(field.typ()) || !types.IsDateTime(t) && t != types.TInterval && t != types.TTime {
		return nil, noSuchFunc(f, args)
	}
	return strict("date_part", types.TFloat8, []expr{field, x}, func(a []types.Value) (types.Value, error) {
		return eval.DatePart(a[0].S, a[1])
	}), nil
}

// makeDateFunc is make_date(year, month, day): 22008 for a date that does
// not exist (February 30), as PostgreSQL's.
func makeDateFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	xs, err := wantTypes(c, f, args, types.TInt4, types.TInt4, types.TInt4)
	if err != nil {
		return nil, err
	}
	return strict("make_date", types.TDate, xs, func(a []types.Value) (types.Value, error) {
		return eval.MakeDate(a[0].I, a[1].I, a[2].I)
	}), nil
}

// makeTimestampFunc is make_timestamp(year, month, day, hour, min, sec):
// sec a double precision (fractions to the microsecond).
func makeTimestampFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) != 6 {
		return nil, noSuchFunc(f, args)
	}
	xs, err := wantTypes(c, f, args, types.TInt4, types.TInt4, types.TInt4, types.TInt4, types.TInt4, types.TFloat8)
	if err != nil {
		return nil, err
	}
	return strict("make_timestamp", types.TTimestamp, xs, func(a []types.Value) (types.Value, error) {
		return eval.MakeTimestamp(a[0].I, a[1].I, a[2].I, a[3].I, a[4].I, types.FloatOf(a[5]))
	}), nil
}

// toTimestampFunc is to_timestamp(seconds since the Unix epoch): a
// timestamptz; to_timestamp(text, format) is toTimestampText.
func toTimestampFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) == 2 {
		return toTimestampText(c, f, args)
	}
	xs, err := wantTypes(c, f, args, types.TFloat8)
	if err != nil {
		return nil, err
	}
	return strict("to_timestamp", types.TTimestamptz, xs, func(a []types.Value) (types.Value, error) {
		return eval.ToTimestampEpoch(types.FloatOf(a[0]))
	}), nil
}

// ageFunc is age(a, b) (timestamp_age's symbolic difference) and age(a),
// the age at the current date's midnight.
func ageFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) != 1 && len(args) != 2 {
		return nil, noSuchFunc(f, args)
	}
	t := types.TTimestamp
	for _, a := range args {
		if a.typ() == types.TTimestamptz {
			t = types.TTimestamptz
		}
	}
	var xs []expr
	for _, a := range args {
		x, err := c.coerce(a, t)
		if err != nil {
			return nil, err
		}
		if !types.IsDateTime(x.typ()) {
			return nil, noSuchFunc(f, args)
		}
		xs = append(xs, x)
	}
	return &funcExpr{name: "age", t: types.TInterval, args: xs, fn: func(e *env, a []types.Value) (types.Value, error) {
		return eval.Age(e, a)
	}}, nil
}

// pgSleepFunc is pg_sleep(seconds): it waits, or ends at the statement's
// cancellation (57014), as every wait here honours the context.
func pgSleepFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	xs, err := wantTypes(c, f, args, types.TFloat8)
	if err != nil {
		return nil, err
	}
	return &funcExpr{name: "pg_sleep", t: types.TVoid, args: xs, fn: func(e *env, a []types.Value) (types.Value, error) {
		if !a[0].Null {
			if s := types.FloatOf(a[0]); s > 0 {
				tm := time.NewTimer(time.Duration(math.Min(s, 1e9) * float64(time.Second)))
				defer tm.Stop()
				select {
				case <-tm.C:
				case <-e.ctx.Done():
					return types.Value{}, e.ctx.Err() // ToError words it: a cancel, or statement_timeout
				}
			}
		}
		return types.Value{T: types.TVoid}, nil
	}}, nil
}

// toCharFunc is to_char(timestamp | timestamptz | date | number, text).
func toCharFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) != 2 {
		return nil, noSuchFunc(f, args)
	}
	fm, err := c.coerce(args[1], types.TText)
	if err != nil {
		return nil, err
	}
	if fm.typ() == types.TBpchar {
		fm = &castExpr{arg: fm, t: types.TText}
	}
	x := args[0]
	switch t := x.typ(); {
	case t == types.TUnknown:
		return nil, &pgerror.Error{Code: "42725", Message: "function to_char(unknown, unknown) is not unique",
			Hint: "Could not choose a best candidate function. You might need to add explicit type casts.", Position: f.Location + 1}
	case fm.typ() != types.TText:
		return nil, noSuchFunc(f, args)
	case t == types.TDate:
		x = &castExpr{arg: x, t: types.TTimestamptz}
	case eval.IsTimestamp(t), eval.IsNumeric(t), t == types.TInterval:
	default:
		return nil, noSuchFunc(f, args)
	}
	return &funcExpr{name: "to_char", t: types.TText, args: []expr{x, fm}, fn: func(_ *env, a []types.Value) (types.Value, error) {
		return eval.ToChar(a[0], a[1])
	}}, nil
}

// toTimestampText is to_timestamp(text, text).
var toTimestampText = strictText("to_timestamp", types.TTimestamptz, 2, eval.ToTimestamp)
