package sqlfe

import (
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/types"
)

// Date arithmetic in expressions (date ± integer, date - date); the date
// and time types themselves, their I/O, casts, date_trunc and extract are
// sql/types' (datetime.go, timestamp.go); sql/eval's DateArith computes
// it.

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
	return eval.DateArith(d.op, a, b, d.t)
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
