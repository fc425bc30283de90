package sqlfe

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// Row comparisons: ROW(a, b) op ROW(c, d) (or (a, b) op (c, d)),
// (a, b) [NOT] IN ((1, 2), (3, 4)) and (a, b) [NOT] IN / op ANY / op ALL
// (SELECT x, y …), as PostgreSQL's row-wise comparison
// (make_row_comparison_op): = and <> pair by pair; <, <=, > and >=
// lexicographic, deciding at the first pair that is not equal — so
// keyset pagination's WHERE (created, id) > ($1, $2) reads as users
// expect. NULLs: = is false if a pair is unequal, else NULL if a pair has
// a NULL; <> the reverse; an ordering comparison is NULL when it reaches a
// pair with a NULL before deciding.

// rowCmpExpr compares two rows of the same arity.
type rowCmpExpr struct {
	op   string // = <> < <= > >=
	l, r []expr
}

func (x *rowCmpExpr) typ() types.Type { return types.TBool }
func (x *rowCmpExpr) kids() []expr    { return append(append([]expr{}, x.l...), x.r...) }

func (x *rowCmpExpr) eval(e *env) (types.Value, error) {
	var st eval.RowCmp
	for i := range x.l {
		a, err := x.l[i].eval(e)
		if err != nil {
			return a, err
		}
		b, err := x.r[i].eval(e)
		if err != nil {
			return b, err
		}
		if st.Pair(x.op, a, b) {
			break
		}
	}
	ok, null := st.Result(x.op)
	if null {
		return types.Null(types.TBool), nil
	}
	return types.Bool(ok), nil
}

// rowItems is the expressions of a row constructor (ROW(...) or a
// parenthesised list of two or more); nil if n is not one.
func rowItems(n *pg.Node) []*pg.Node {
	if r := n.GetRowExpr(); r != nil {
		return r.Args
	}
	return nil
}

// rowCompare compiles l op r for two row constructors.
func (c *compiler) rowCompare(ln, rn *pg.Node, op string, loc int32) (expr, error) {
	li, ri := rowItems(ln), rowItems(rn)
	if li == nil || ri == nil {
		return nil, pgerror.NotSupported("comparing a row constructor with something other than a row constructor is not supported").At(loc)
	}
	if len(li) != len(ri) {
		return nil, pgerror.Errorf(pgerror.CodeSyntax, "unequal number of entries in row expressions").At(loc)
	}
	switch op {
	case "=", "<>", "<", "<=", ">", ">=":
	case "!=":
		op = "<>"
	default:
		return nil, pgerror.NotSupported("operator %s on rows is not supported", op).At(loc)
	}
	x := &rowCmpExpr{op: op}
	for i := range li {
		l, r, err := c.binary(li[i], ri[i])
		if err != nil {
			return nil, err
		}
		if !comparable(l.typ(), r.typ()) || types.IsIntArray(l.typ()) {
			return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %s %s", l.typ(), op, r.typ()).At(loc)
		}
		x.l, x.r = append(x.l, l), append(x.r, r)
	}
	return x, nil
}

// rowIn compiles (a, b) [NOT] IN ((1, 2), ...): an OR of row equalities
// (NOT IN: an AND of row inequalities), as PostgreSQL expands it.
func (c *compiler) rowIn(a *pg.A_Expr, list []*pg.Node, not bool) (expr, error) {
	op, join := "=", pg.BoolExprType_OR_EXPR
	if not {
		op, join = "<>", pg.BoolExprType_AND_EXPR
	}
	var args []expr
	for _, it := range list {
		x, err := c.rowCompare(a.Lexpr, it, op, a.Location)
		if err != nil {
			return nil, err
		}
		args = append(args, x)
	}
	if len(args) == 1 {
		return args[0], nil
	}
	return &boolExpr{op: join, args: args}, nil
}

// rowSubLink compiles (a, b, …) op ANY/ALL (subquery), IN and NOT IN
// included: as many items as the subquery has columns, each comparable
// with its column.
func (c *compiler) rowSubLink(sl *pg.SubLink, q *subqueryExpr, items []*pg.Node, cols []catalog.Column, op string) (expr, error) {
	switch {
	case len(items) < len(cols):
		return nil, pgerror.Errorf(pgerror.CodeSyntax, "subquery has too many columns").At(sl.Location)
	case len(items) > len(cols):
		return nil, pgerror.Errorf(pgerror.CodeSyntax, "subquery has too few columns").At(sl.Location)
	}
	for i, it := range items {
		x, err := c.compile(it, cols[i].Type)
		if err != nil {
			return nil, err
		}
		if !comparable(x.typ(), cols[i].Type) || types.IsIntArray(x.typ()) {
			return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %s %s", x.typ(), op, cols[i].Type).At(sl.Location)
		}
		q.rowTest = append(q.rowTest, x)
	}
	q.op, q.t = op, types.TBool
	return q, nil
}
