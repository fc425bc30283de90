package sqlfe

import (
	"math"
	"strconv"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// Date and time functions beside extract and date_trunc (strfuncs.go):
// date_part (extract as double precision), make_date, make_timestamp,
// to_timestamp(double precision), age, and pg_sleep (to_char, to_date and
// to_timestamp(text, text): formatting.go). Each checks its
// arguments as PostgreSQL resolves them among our types, and is strict.

func init() {
	for name, f := range map[string]polyFunc{
		"date_part":      datePartFunc,
		"make_date":      makeDateFunc,
		"make_timestamp": makeTimestampFunc,
		"to_timestamp":   toTimestampFunc,
		"age":            ageFunc,
		"pg_sleep":       pgSleepFunc,
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
		unit := strings.ToLower(a[0].S)
		var s string
		switch a[1].T {
		case types.TInterval:
			s, err = types.ExtractInterval(unit, types.IntervalOf(a[1]))
		case types.TTime:
			s, err = types.ExtractTimeOfDay(unit, types.TimeOf(a[1]))
		default:
			var v types.Value
			v, err = types.ExtractField(unit, a[1])
			s = v.S
		}
		if err != nil {
			return types.Value{}, err
		}
		fv, perr := strconv.ParseFloat(s, 64)
		if perr != nil {
			return types.Value{}, pgerror.Errorf(pgerror.CodeInternal, "date_part: %v", perr)
		}
		return types.FloatValue(fv, types.TFloat8), nil
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
		t, err := civilDate(a[0].I, a[1].I, a[2].I)
		if err != nil {
			return types.Value{}, err
		}
		return types.DateValue(t), nil
	}), nil
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
		d, err := civilDate(a[0].I, a[1].I, a[2].I)
		if err != nil {
			return types.Value{}, err
		}
		h, mi, sec := a[3].I, a[4].I, types.FloatOf(a[5])
		if h < 0 || h > 24 || mi < 0 || mi > 59 || sec < 0 || sec > 60 || h == 24 && (mi != 0 || sec != 0) {
			return types.Value{}, pgerror.Errorf(pgerror.CodeDatetimeRange, "time field value out of range: %d:%02d:%s", h, mi, strconv.FormatFloat(sec, 'f', -1, 64))
		}
		us := (h*60+mi)*60*1_000_000 + int64(math.RoundToEven(sec*1e6))
		return timestampResult(d.Add(time.Duration(us)*time.Microsecond), types.TTimestamp)
	}), nil
}

// toTimestampFunc is to_timestamp(seconds since the Unix epoch): a
// timestamptz; to_timestamp(text, format) is formatting.go's.
func toTimestampFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) == 2 {
		return toTimestampText(c, f, args)
	}
	xs, err := wantTypes(c, f, args, types.TFloat8)
	if err != nil {
		return nil, err
	}
	return strict("to_timestamp", types.TTimestamptz, xs, func(a []types.Value) (types.Value, error) {
		s := types.FloatOf(a[0])
		if math.IsNaN(s) || math.IsInf(s, 0) || s < -210866803200 || s > 9224318016000 {
			return types.Value{}, pgerror.Errorf(pgerror.CodeDatetimeRange, "timestamp out of range: %q", strconv.FormatFloat(s, 'g', -1, 64))
		}
		us := int64(math.RoundToEven(s * 1e6))
		return timestampResult(time.UnixMicro(us).UTC(), types.TTimestamptz)
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
			y, m, d := e.s.txStart(e.ctx).UTC().Date()
			to = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
			from, to = to, from
		}
		return ivResult(types.Age(from, to))
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
