package sqlfe

import (
	"context"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// env is what an expression sees when evaluated: the current row (nil when
// there is no FROM), the statement's parameters, the session.
type env struct {
	ctx    context.Context
	s      *Session
	row    []types.Value
	params []types.Value
	// exec identifies one execution of a statement: what is computed once
	// per execution (an uncorrelated subquery's rows) is kept under it;
	// nil: nothing is kept
	exec *execRun
	// outer is the enclosing query's env while a correlated subquery
	// runs: what its outerExprs read
	outer *env
	// srf holds the current values of a select list's set-returning
	// calls while a projectSetNode evaluates it (srf.go)
	srf []types.Value
}

// TxStart is the statement's transaction's start: env is the
// eval.Context of the functions it runs.
func (e *env) TxStart() time.Time { return e.s.txStart(e.ctx) }

// outerExpr reads x, a column of an enclosing query, from the outer env.
// It has no kids: to the subquery it is a value fixed while it runs (so a
// key lookup may be bounded by it).
type outerExpr struct{ x expr }

func (o *outerExpr) typ() types.Type { return o.x.typ() }
func (o *outerExpr) kids() []expr    { return nil }
func (o *outerExpr) eval(e *env) (types.Value, error) {
	if e.outer == nil {
		return types.Value{}, pgerror.Errorf(pgerror.CodeInternal, "an outer reference evaluated outside its subquery")
	}
	return o.x.eval(e.outer)
}

// execRun is one execution of a statement (see env.exec).
type execRun struct{ _ byte }

// expr is a compiled, typed expression.
type expr interface {
	eval(e *env) (types.Value, error)
	typ() types.Type
	kids() []expr
}

// usesRow reports whether x reads a column (so it cannot be a key bound).
func usesRow(x expr) bool {
	if _, ok := x.(*colExpr); ok {
		return true
	}
	for _, k := range x.kids() {
		if usesRow(k) {
			return true
		}
	}
	return false
}

type constExpr struct{ v types.Value }

func (c *constExpr) eval(*env) (types.Value, error) { return c.v, nil }
func (c *constExpr) typ() types.Type                { return c.v.T }
func (c *constExpr) kids() []expr                   { return nil }

type colExpr struct {
	idx int
	t   types.Type
	m   types.Mod // the column's declared modifier
}

// exprMod is the type modifier x's values are known to have: a column's
// declared one, a cast's.
func exprMod(x expr) types.Mod {
	switch y := x.(type) {
	case *colExpr:
		return y.m
	case *modExpr:
		return y.m
	case *aggColumn:
		return y.m
	case *outerExpr:
		return exprMod(y.x)
	}
	return types.Mod{}
}

func (c *colExpr) eval(e *env) (types.Value, error) { return e.row[c.idx], nil }
func (c *colExpr) typ() types.Type                  { return c.t }
func (c *colExpr) kids() []expr                     { return nil }

type paramExpr struct {
	n     int // 0-based
	types *[]types.Type
}

func (p *paramExpr) eval(e *env) (types.Value, error) {
	if p.n >= len(e.params) {
		return types.Value{}, pgerror.Errorf(pgerror.CodeProtocolViolation, "there is no parameter $%d", p.n+1)
	}
	v := e.params[p.n]
	t := p.typ()
	if v.T != t && t != types.TUnknown {
		return types.Cast(v, t)
	}
	return v, nil
}
func (p *paramExpr) typ() types.Type { return (*p.types)[p.n] }
func (p *paramExpr) kids() []expr    { return nil }

// castExpr converts its argument to t at run time.
type castExpr struct {
	arg expr
	t   types.Type
}

func (c *castExpr) eval(e *env) (types.Value, error) {
	v, err := c.arg.eval(e)
	if err != nil {
		return v, err
	}
	return types.Cast(v, c.t)
}
func (c *castExpr) typ() types.Type { return c.t }
func (c *castExpr) kids() []expr    { return []expr{c.arg} }

// modExpr is a cast to a type with a modifier (smallint, varchar(n)).
type modExpr struct {
	arg      expr
	t        types.Type
	m        types.Mod
	explicit bool
}

func (c *modExpr) eval(e *env) (types.Value, error) {
	v, err := c.arg.eval(e)
	if err != nil {
		return v, err
	}
	return types.CastMod(v, c.t, c.m, c.explicit)
}
func (c *modExpr) typ() types.Type { return c.t }
func (c *modExpr) kids() []expr    { return []expr{c.arg} }

type cmpExpr struct {
	op   string // = <> < <= > >=
	l, r expr
}

func (c *cmpExpr) typ() types.Type { return types.TBool }
func (c *cmpExpr) kids() []expr    { return []expr{c.l, c.r} }
func (c *cmpExpr) eval(e *env) (types.Value, error) {
	a, err := c.l.eval(e)
	if err != nil {
		return a, err
	}
	b, err := c.r.eval(e)
	if err != nil {
		return b, err
	}
	if a.Null || b.Null {
		return types.Null(types.TBool), nil
	}
	return types.Bool(eval.CmpOp(c.op, types.Compare(a, b))), nil
}

type distinctExpr struct {
	not  bool // IS NOT DISTINCT FROM
	l, r expr
}

func (c *distinctExpr) typ() types.Type { return types.TBool }
func (c *distinctExpr) kids() []expr    { return []expr{c.l, c.r} }
func (c *distinctExpr) eval(e *env) (types.Value, error) {
	a, err := c.l.eval(e)
	if err != nil {
		return a, err
	}
	b, err := c.r.eval(e)
	if err != nil {
		return b, err
	}
	var distinct bool
	switch {
	case a.Null && b.Null:
		distinct = false
	case a.Null || b.Null:
		distinct = true
	default:
		distinct = types.Compare(a, b) != 0
	}
	return types.Bool(distinct != c.not), nil
}

type arithExpr struct {
	op   byte // + - * / %
	l, r expr
	t    types.Type
}

func (a *arithExpr) typ() types.Type { return a.t }
func (a *arithExpr) kids() []expr    { return []expr{a.l, a.r} }
func (a *arithExpr) eval(e *env) (types.Value, error) {
	x, err := a.l.eval(e)
	if err != nil {
		return x, err
	}
	y, err := a.r.eval(e)
	if err != nil {
		return y, err
	}
	if x.Null || y.Null {
		return types.Null(a.t), nil
	}
	return eval.Arith(a.op, x, y, a.t)
}

type negExpr struct{ arg expr }

func (n *negExpr) typ() types.Type { return n.arg.typ() }
func (n *negExpr) kids() []expr    { return []expr{n.arg} }
func (n *negExpr) eval(e *env) (types.Value, error) {
	v, err := n.arg.eval(e)
	if err != nil || v.Null {
		return v, err
	}
	return eval.Negate(v)
}

type concatExpr struct{ l, r expr }

func (c *concatExpr) typ() types.Type { return types.TText }
func (c *concatExpr) kids() []expr    { return []expr{c.l, c.r} }
func (c *concatExpr) eval(e *env) (types.Value, error) {
	a, err := c.l.eval(e)
	if err != nil {
		return a, err
	}
	b, err := c.r.eval(e)
	if err != nil {
		return b, err
	}
	if a.Null || b.Null {
		return types.Null(types.TText), nil
	}
	return types.Text(types.TextOut(a) + types.TextOut(b)), nil
}

type boolExpr struct {
	op   pg.BoolExprType
	args []expr
}

func (b *boolExpr) typ() types.Type { return types.TBool }
func (b *boolExpr) kids() []expr    { return b.args }
func (b *boolExpr) eval(e *env) (types.Value, error) {
	switch b.op {
	case pg.BoolExprType_NOT_EXPR:
		v, err := b.args[0].eval(e)
		if err != nil || v.Null {
			return v, err
		}
		return types.Bool(v.I == 0), nil
	case pg.BoolExprType_AND_EXPR:
		sawNull := false
		for _, a := range b.args {
			v, err := a.eval(e)
			if err != nil {
				return v, err
			}
			if v.Null {
				sawNull = true
			} else if v.I == 0 {
				return types.Bool(false), nil
			}
		}
		if sawNull {
			return types.Null(types.TBool), nil
		}
		return types.Bool(true), nil
	default: // OR
		sawNull := false
		for _, a := range b.args {
			v, err := a.eval(e)
			if err != nil {
				return v, err
			}
			if v.Null {
				sawNull = true
			} else if v.I != 0 {
				return types.Bool(true), nil
			}
		}
		if sawNull {
			return types.Null(types.TBool), nil
		}
		return types.Bool(false), nil
	}
}

type inExpr struct {
	not  bool
	l    expr
	list []expr
}

func (in *inExpr) typ() types.Type { return types.TBool }
func (in *inExpr) kids() []expr    { return append([]expr{in.l}, in.list...) }
func (in *inExpr) eval(e *env) (types.Value, error) {
	a, err := in.l.eval(e)
	if err != nil {
		return a, err
	}
	if a.Null {
		return types.Null(types.TBool), nil
	}
	sawNull := false
	for _, x := range in.list {
		b, err := x.eval(e)
		if err != nil {
			return b, err
		}
		if b.Null {
			sawNull = true
			continue
		}
		if types.Compare(a, b) == 0 {
			return types.Bool(!in.not), nil
		}
	}
	if sawNull {
		return types.Null(types.TBool), nil
	}
	return types.Bool(in.not), nil
}

type nullTestExpr struct {
	not bool
	arg expr
}

func (n *nullTestExpr) typ() types.Type { return types.TBool }
func (n *nullTestExpr) kids() []expr    { return []expr{n.arg} }
func (n *nullTestExpr) eval(e *env) (types.Value, error) {
	v, err := n.arg.eval(e)
	if err != nil {
		return v, err
	}
	return types.Bool(v.Null != n.not), nil
}

type funcExpr struct {
	name string
	args []expr
	t    types.Type
	fn   func(e *env, args []types.Value) (types.Value, error)
}

func (f *funcExpr) typ() types.Type { return f.t }
func (f *funcExpr) kids() []expr    { return f.args }
func (f *funcExpr) eval(e *env) (types.Value, error) {
	vals := make([]types.Value, len(f.args))
	for i, a := range f.args {
		v, err := a.eval(e)
		if err != nil {
			return v, err
		}
		vals[i] = v
	}
	return f.fn(e, vals)
}

// truthy evaluates a WHERE condition: NULL counts as false.
func truthy(x expr, e *env) (bool, error) {
	if x == nil {
		return true, nil
	}
	v, err := x.eval(e)
	if err != nil {
		return false, err
	}
	return !v.Null && v.I != 0, nil
}
