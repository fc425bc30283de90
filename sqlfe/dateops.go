package sqlfe

import (
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// date and timestamp with time zone, beside timestamp.go's timestamp.
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
// them. BC dates, infinities and the named forms (now, today, epoch) are
// not implemented (0A000).

// ---- timestamptz ----

// ---- date ----

// ---- binary forms ----

// ---- casts among the date/time types ----

// ---- functions and arithmetic ----

// dateArith is date + integer, date - integer (a date) and date - date
// (an integer: the days between).
type dateArith struct {
	op   byte
	l, r expr
	t    types.Type
}

func (d *dateArith) typ() types.Type { return d.t }
func (d *dateArith) kids() []expr    { return []expr{d.l, d.r} }
func (d *dateArith) eval(e *env) (types.Value, error) {
	a, err := d.l.eval(e)
	if err != nil {
		return a, err
	}
	b, err := d.r.eval(e)
	if err != nil {
		return b, err
	}
	if a.Null || b.Null {
		return types.Null(d.t), nil
	}
	if d.t == types.TInt4 {
		return types.Int4(int32(types.Instant(a).Sub(types.Instant(b)).Hours() / 24)), nil
	}
	if a.T != types.TDate {
		a, b = b, a // integer + date
	}
	n := b.I
	if d.op == '-' {
		n = -n
	}
	r := types.Instant(a).AddDate(0, 0, int(n))
	if r.Year() > 5874897 || r.Year() < 1 {
		return types.Value{}, pgerror.Errorf(pgerror.CodeDatetimeRange, "date out of range")
	}
	return types.DateValue(r), nil
}

// dateOp compiles + and - with a date; ok is false when neither side is
// one.
func dateOp(op string, l, r expr) (expr, bool, error) {
	lt, rt := l.typ(), r.typ()
	switch {
	case op == "-" && lt == types.TDate && rt == types.TDate:
		return &dateArith{op: '-', l: l, r: r, t: types.TInt4}, true, nil
	case (op == "+" || op == "-") && lt == types.TDate && types.IsInt(rt):
		return &dateArith{op: op[0], l: l, r: &castExpr{arg: r, t: types.TInt4}, t: types.TDate}, true, nil
	case op == "+" && types.IsInt(lt) && rt == types.TDate:
		return &dateArith{op: '+', l: &castExpr{arg: l, t: types.TInt4}, r: r, t: types.TDate}, true, nil
	}
	return nil, false, nil
}
