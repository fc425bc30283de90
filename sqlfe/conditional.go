package sqlfe

import (
	"context"
	"strings"
	"sync"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// Conditional expressions (CASE, COALESCE, NULLIF, GREATEST, LEAST),
// pattern matching (LIKE, ILIKE, the POSIX regular expression operators
// ~ ~* !~ !~*), COLLATE, the SQL-standard value functions (CURRENT_USER,
// CURRENT_TIMESTAMP, ...) and subqueries in expressions.

// commonType resolves the type of a CASE's results or of COALESCE's,
// GREATEST's, LEAST's arguments, as PostgreSQL's select_common_type does
// among our types (all unknown: text).
func (c *compiler) commonType(xs []expr, what string) (types.Type, error) {
	t := types.TUnknown
	for _, x := range xs {
		var err error
		if t, err = unifyTypes(t, x.typ(), what); err != nil {
			return 0, err
		}
	}
	if t == types.TUnknown {
		t = types.TText
	}
	return t, nil
}

// coerceAll makes each of xs of type t (an unknown by resolving it, a
// typed one by a cast).
func (c *compiler) coerceAll(xs []expr, t types.Type) ([]expr, error) {
	for i, x := range xs {
		y, err := c.coerce(x, t)
		if err != nil {
			return nil, err
		}
		if y.typ() != t {
			y = &castExpr{arg: y, t: t}
		}
		xs[i] = y
	}
	return xs, nil
}

type caseExpr struct {
	arg   expr // CASE arg WHEN v ...: compared with each when; nil: WHEN conditions
	whens []expr
	thens []expr
	els   expr
	t     types.Type
}

func (c *caseExpr) typ() types.Type { return c.t }
func (c *caseExpr) kids() []expr {
	out := append(append([]expr{}, c.whens...), c.thens...)
	if c.arg != nil {
		out = append(out, c.arg)
	}
	return append(out, c.els)
}
func (c *caseExpr) eval(e *env) (types.Value, error) {
	var a types.Value
	if c.arg != nil {
		var err error
		if a, err = c.arg.eval(e); err != nil {
			return a, err
		}
	}
	for i, w := range c.whens {
		if c.arg != nil {
			v, err := w.eval(e)
			if err != nil {
				return v, err
			}
			if a.Null || v.Null || types.Compare(a, v) != 0 {
				continue
			}
		} else if ok, err := truthy(w, e); err != nil {
			return types.Value{}, err
		} else if !ok {
			continue
		}
		return c.thens[i].eval(e)
	}
	return c.els.eval(e)
}

func (c *compiler) caseExpr(n *pg.CaseExpr) (expr, error) {
	out := &caseExpr{}
	if n.Arg != nil {
		a, err := c.compile(n.Arg, types.TUnknown)
		if err != nil {
			return nil, err
		}
		out.arg = a
	}
	var results []expr
	for _, w := range n.Args {
		cw := w.GetCaseWhen()
		if out.arg != nil {
			v, err := c.compile(cw.Expr, out.arg.typ())
			if err != nil {
				return nil, err
			}
			if !comparable(out.arg.typ(), v.typ()) && out.arg.typ() != types.TUnknown {
				return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "operator does not exist: %s = %s", out.arg.typ(), v.typ()).At(cw.Location)
			}
			out.whens = append(out.whens, v)
		} else {
			cond, err := c.compile(cw.Expr, types.TBool)
			if err != nil {
				return nil, err
			}
			if cond.typ() != types.TBool {
				return nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "argument of CASE/WHEN must be type boolean, not type %s", cond.typ()).At(cw.Location)
			}
			out.whens = append(out.whens, cond)
		}
		r, err := c.compile(cw.Result, types.TUnknown)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	if n.Defresult != nil {
		d, err := c.compile(n.Defresult, types.TUnknown)
		if err != nil {
			return nil, err
		}
		results = append(results, d)
	} else {
		results = append(results, &constExpr{types.Null(types.TUnknown)})
	}
	t, err := c.commonType(results, "CASE")
	if err != nil {
		return nil, err
	}
	if results, err = c.coerceAll(results, t); err != nil {
		return nil, err
	}
	out.t, out.thens, out.els = t, results[:len(results)-1], results[len(results)-1]
	return out, nil
}

// minMaxExpr is GREATEST / LEAST: NULLs are ignored, NULL only if all are.
type minMaxExpr struct {
	least bool
	args  []expr
	t     types.Type
}

func (m *minMaxExpr) typ() types.Type { return m.t }
func (m *minMaxExpr) kids() []expr    { return m.args }
func (m *minMaxExpr) eval(e *env) (types.Value, error) {
	best := types.Null(m.t)
	for _, a := range m.args {
		v, err := a.eval(e)
		if err != nil {
			return v, err
		}
		if v.Null {
			continue
		}
		if best.Null {
			best = v
			continue
		}
		d := types.Compare(v, best)
		if (m.least && d < 0) || (!m.least && d > 0) {
			best = v
		}
	}
	return best, nil
}

// nullifExpr is NULLIF(a, b): NULL when a = b, else a.
type nullifExpr struct{ l, r expr }

func (n *nullifExpr) typ() types.Type { return n.l.typ() }
func (n *nullifExpr) kids() []expr    { return []expr{n.l, n.r} }
func (n *nullifExpr) eval(e *env) (types.Value, error) {
	a, err := n.l.eval(e)
	if err != nil {
		return a, err
	}
	b, err := n.r.eval(e)
	if err != nil {
		return b, err
	}
	if !a.Null && !b.Null && types.Compare(a, b) == 0 {
		return types.Null(a.T), nil
	}
	return a, nil
}

func (c *compiler) variadic(args []*pg.Node, what string) ([]expr, types.Type, error) {
	var xs []expr
	for _, a := range args {
		x, err := c.compile(a, types.TUnknown)
		if err != nil {
			return nil, 0, err
		}
		xs = append(xs, x)
	}
	t, err := c.commonType(xs, what)
	if err != nil {
		return nil, 0, err
	}
	xs, err = c.coerceAll(xs, t)
	return xs, t, err
}

// ---- patterns ----

// patternExpr is LIKE / ILIKE (as a regular expression), SIMILAR TO or a
// POSIX regular expression match; m (sql/eval's Pattern) translates and
// matches, compiling a constant pattern once and another per distinct
// pattern value met.
type patternExpr struct {
	l, pat expr
	// esc is LIKE's ESCAPE or SIMILAR TO's escape (nil: the default \\;
	// an empty one: none)
	esc expr
	not bool
	m   eval.Pattern
}

func (p *patternExpr) typ() types.Type { return types.TBool }
func (p *patternExpr) kids() []expr {
	if p.esc != nil {
		return []expr{p.l, p.pat, p.esc}
	}
	return []expr{p.l, p.pat}
}
func (p *patternExpr) eval(e *env) (types.Value, error) {
	a, err := p.l.eval(e)
	if err != nil {
		return a, err
	}
	b, err := p.pat.eval(e)
	if err != nil {
		return b, err
	}
	esc := types.Text(`\`)
	if p.esc != nil {
		if esc, err = p.esc.eval(e); err != nil {
			return esc, err
		}
	}
	if a.Null || b.Null || esc.Null {
		return types.Null(types.TBool), nil
	}
	return p.m.Match(a, b.S, esc.S, p.not)
}

// substringPattern is substring(text FROM pattern), the part of the text
// the POSIX regular expression matches (its first parenthesised
// subexpression's, if it has one; NULL without a match), and
// substring(text FROM pattern FOR escape) — also written SIMILAR pattern
// ESCAPE escape —, the part of a whole-string SIMILAR TO match between the
// pattern's two escape-double-quote separators (all of it without them).
func substringPattern(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) == 3 && !types.IsString(args[2].typ()) && args[2].typ() != types.TUnknown {
		return nil, noSuchFunc(f, args)
	}
	xs, err := wantTypes(c, f, args, []types.Type{types.TText, types.TText, types.TText}[:len(args)]...)
	if err != nil {
		return nil, err
	}
	p := &patternExpr{m: eval.Pattern{Similar: len(xs) == 3}}
	return strict("substring", types.TText, xs, p.m.Substring), nil
}

// patternOp compiles LIKE / ILIKE / ~ and their negations, with LIKE's
// ESCAPE (the parser's pg_catalog.like_escape(pattern, escape)); ok is
// false when op is none of them.
func (c *compiler) patternOp(a *pg.A_Expr, op string) (expr, bool, error) {
	p := &patternExpr{}
	switch op {
	case "~~", "!~~":
		p.m.Like = true
	case "~~*", "!~~*":
		p.m.Like, p.m.Fold = true, true
	case "~", "!~":
	case "~*", "!~*":
		p.m.Fold = true
	default:
		return nil, false, nil
	}
	p.not = strings.HasPrefix(op, "!")
	x, err := c.pattern(a, p, "like_escape")
	return x, true, err
}

// similarTo compiles [NOT] SIMILAR TO pattern [ESCAPE esc], which the
// parser gives as ~ (or !~) of pg_catalog.similar_to_escape(pattern[, esc]).
func (c *compiler) similarTo(a *pg.A_Expr, op string) (expr, error) {
	if op != "~" && op != "!~" {
		return nil, pgerror.NotSupported("SIMILAR TO with operator %s is not supported", op).At(a.Location)
	}
	return c.pattern(a, &patternExpr{m: eval.Pattern{Similar: true}, not: op == "!~"}, "similar_to_escape")
}

// pattern compiles the operands of p: the left side, and the pattern,
// unwrapped from the parser's call of escapeFunc(pattern[, escape]) if it
// is one.
func (c *compiler) pattern(a *pg.A_Expr, p *patternExpr, escapeFunc string) (expr, error) {
	l, err := c.compile(a.Lexpr, types.TText)
	if err != nil {
		return nil, err
	}
	patNode, escNode := a.Rexpr, (*pg.Node)(nil)
	if fc := a.Rexpr.GetFuncCall(); fc != nil {
		if name := strs(fc.Funcname); len(name) == 2 && name[0] == "pg_catalog" && name[1] == escapeFunc && len(fc.Args) >= 1 && len(fc.Args) <= 2 {
			patNode = fc.Args[0]
			if len(fc.Args) == 2 {
				escNode = fc.Args[1]
			}
		}
	}
	r, err := c.compile(patNode, types.TText)
	if err != nil {
		return nil, err
	}
	if !types.IsString(l.typ()) || !types.IsString(r.typ()) {
		op := strs(a.Name)
		return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %s %s", l.typ(), op[len(op)-1], r.typ()).At(a.Location)
	}
	p.l, p.pat = l, r
	if escNode != nil {
		if p.esc, err = c.compile(escNode, types.TText); err != nil {
			return nil, err
		}
		if !types.IsString(p.esc.typ()) {
			return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "function %s(text, %s) does not exist", escapeFunc, p.esc.typ()).At(a.Location)
		}
	}
	// a constant pattern (and escape) is checked at compile time
	esc := `\`
	constEsc := true
	if p.esc != nil {
		k, ok := p.esc.(*constExpr)
		constEsc = ok && !k.v.Null
		if constEsc {
			esc = k.v.S
		}
	}
	if k, ok := r.(*constExpr); ok && !k.v.Null && constEsc {
		if _, _, err := p.m.Regexp(k.v.S, esc); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// ---- SQL value functions ----

func (c *compiler) sqlValueFunction(f *pg.SQLValueFunction) (expr, error) {
	switch f.Op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE,
		pg.SQLValueFunctionOp_SVFOP_USER, pg.SQLValueFunctionOp_SVFOP_SESSION_USER:
		return &funcExpr{name: "current_user", t: types.TText, fn: func(e *env, _ []types.Value) (types.Value, error) {
			return types.Text(e.s.user), nil
		}}, nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
		return &funcExpr{name: "current_catalog", t: types.TText, fn: func(e *env, _ []types.Value) (types.Value, error) {
			return types.Text(e.s.database()), nil
		}}, nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
		return &constExpr{types.Text("public")}, nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		return &funcExpr{name: "current_timestamp", t: types.TTimestamptz, fn: func(e *env, _ []types.Value) (types.Value, error) {
			return types.TimestamptzValue(e.s.txStart(e.ctx)), nil
		}}, nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		return &funcExpr{name: "current_date", t: types.TDate, fn: func(e *env, _ []types.Value) (types.Value, error) {
			return types.DateValue(e.s.txStart(e.ctx)), nil
		}}, nil
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP:
		// timestamp without time zone in the session's time zone, UTC
		return &funcExpr{name: "current_timestamp", t: types.TTimestamp, fn: func(e *env, _ []types.Value) (types.Value, error) {
			return types.TimestampValue(e.s.txStart(e.ctx)), nil
		}}, nil
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIME, pg.SQLValueFunctionOp_SVFOP_LOCALTIME_N:
		// time without time zone in the session's time zone, UTC
		return &funcExpr{name: "localtime", t: types.TTime, fn: func(e *env, _ []types.Value) (types.Value, error) {
			return types.TimeValue(types.TimeOfDayOf(e.s.txStart(e.ctx).UTC())), nil
		}}, nil
	}
	return nil, pgerror.NotSupported("%s is not supported (time with time zone is not implemented)", strings.ToUpper(sqlValueFunctionNames[f.Op])).At(f.Location)
}

// sqlValueFunctionNames are the SQL value functions' result column names.
var sqlValueFunctionNames = map[pg.SQLValueFunctionOp]string{
	pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE: "current_date", pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME: "current_time",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N: "current_time", pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP: "current_timestamp",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N: "current_timestamp", pg.SQLValueFunctionOp_SVFOP_LOCALTIME: "localtime",
	pg.SQLValueFunctionOp_SVFOP_LOCALTIME_N: "localtime", pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP: "localtimestamp",
	pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N: "localtimestamp", pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE: "current_role",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_USER: "current_user", pg.SQLValueFunctionOp_SVFOP_USER: "current_user",
	pg.SQLValueFunctionOp_SVFOP_SESSION_USER: "session_user", pg.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG: "current_catalog",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA: "current_schema",
}

// txStart is the time the session's transaction began (now()): one value
// for the whole transaction, as in PostgreSQL.
func (s *Session) txStart(ctx context.Context) time.Time {
	if s.tx == nil {
		if _, err := s.ensureTx(ctx); err != nil {
			return time.Now().UTC().Truncate(time.Microsecond)
		}
	}
	return s.txTime
}

// database is the database name the client connected to.
func (s *Session) database() string {
	if s.dbname != "" {
		return s.dbname
	}
	return "tupled"
}

// ---- subqueries ----

// subqueryExpr is a subquery in an expression. An uncorrelated one runs
// once per execution of its statement (its first evaluation) and its rows
// are kept for the rest; a correlated one runs for each row of the query
// around it, its outerExprs reading that row.
type subqueryExpr struct {
	kind       pg.SubLinkType
	root       relNode
	correlated bool
	test       expr   // ANY/ALL: the left side
	rowTest    []expr // ANY/ALL of a row constructor: its items (test is nil)
	op         string // ANY/ALL: the comparison
	t          types.Type
	mu         sync.Mutex
	exec       *execRun // the execution whose rows are cached
	cache      [][]types.Value
}

func (q *subqueryExpr) typ() types.Type { return q.t }
func (q *subqueryExpr) kids() []expr {
	if q.test != nil {
		return []expr{q.test}
	}
	return q.rowTest
}

func (q *subqueryExpr) rows(e *env) ([][]types.Value, error) {
	qc := &qctx{ctx: e.ctx, s: e.s, params: e.params, exec: e.exec, outer: e}
	if q.correlated {
		return collect(qc, q.root)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if e.exec != nil && q.exec == e.exec {
		return q.cache, nil
	}
	rows, err := collect(qc, q.root)
	if err != nil {
		return nil, err
	}
	q.exec, q.cache = e.exec, rows
	return rows, nil
}

func (q *subqueryExpr) eval(e *env) (types.Value, error) {
	rows, err := q.rows(e)
	if err != nil {
		return types.Value{}, err
	}
	switch q.kind {
	case pg.SubLinkType_EXISTS_SUBLINK:
		return types.Bool(len(rows) > 0), nil
	case pg.SubLinkType_EXPR_SUBLINK:
		switch len(rows) {
		case 0:
			return types.Null(q.t), nil
		case 1:
			return rows[0][0], nil
		}
		return types.Value{}, pgerror.Errorf(pgerror.CodeCardinality, "more than one row returned by a subquery used as an expression")
	}
	// ANY / ALL (IN is = ANY, NOT IN is NOT (= ANY))
	all := q.kind == pg.SubLinkType_ALL_SUBLINK
	if q.rowTest != nil {
		return q.rowAnyAll(e, rows, all)
	}
	a, err := q.test.eval(e)
	if err != nil {
		return a, err
	}
	sawNull := false
	for _, r := range rows {
		b := r[0]
		if a.Null || b.Null {
			sawNull = true
			continue
		}
		ok := eval.CmpOp(q.op, types.Compare(a, b))
		if ok && !all {
			return types.Bool(true), nil
		}
		if !ok && all {
			return types.Bool(false), nil
		}
	}
	if sawNull {
		return types.Null(types.TBool), nil
	}
	return types.Bool(all), nil
}

// rowAnyAll is (a, b, …) op ANY/ALL (subquery): each row of the subquery
// compared as a row comparison (rowcmp.go), true, false or NULL, and the
// results combined as ANY's OR or ALL's AND.
func (q *subqueryExpr) rowAnyAll(e *env, rows [][]types.Value, all bool) (types.Value, error) {
	left := make([]types.Value, len(q.rowTest))
	for i, x := range q.rowTest {
		v, err := x.eval(e)
		if err != nil {
			return v, err
		}
		left[i] = v
	}
	sawNull := false
	for _, r := range rows {
		ok, null := eval.CompareRows(q.op, left, r)
		switch {
		case null:
			sawNull = true
		case ok && !all:
			return types.Bool(true), nil
		case !ok && all:
			return types.Bool(false), nil
		}
	}
	if sawNull {
		return types.Null(types.TBool), nil
	}
	return types.Bool(all), nil
}

func (c *compiler) subLink(sl *pg.SubLink) (expr, error) {
	sel := sl.Subselect.GetSelectStmt()
	if sel == nil || c.s == nil {
		return nil, pgerror.NotSupported("this subquery is not supported")
	}
	prevOuter, prevRefs := c.s.planOuter, c.s.outerRefs
	c.s.planOuter, c.s.outerRefs = c, 0
	root, cols, err := c.s.buildQuery(sel, c.params, false)
	refs := c.s.outerRefs
	// references beyond c's query count for it too (it is then correlated)
	c.s.planOuter, c.s.outerRefs = prevOuter, prevRefs+refs
	if err != nil {
		return nil, err
	}
	q := &subqueryExpr{kind: sl.SubLinkType, root: root, correlated: refs > 0}
	p := &plan{cols: cols}
	switch sl.SubLinkType {
	case pg.SubLinkType_EXISTS_SUBLINK:
		q.t = types.TBool
		return q, nil
	case pg.SubLinkType_EXPR_SUBLINK:
		if len(p.cols) != 1 {
			return nil, pgerror.Errorf(pgerror.CodeSyntax, "subquery must return only one column").At(sl.Location)
		}
		q.t = p.cols[0].Type
		return q, nil
	case pg.SubLinkType_ANY_SUBLINK, pg.SubLinkType_ALL_SUBLINK:
		op := "="
		if names := strs(sl.OperName); len(names) > 0 {
			op = names[len(names)-1]
		}
		if op == "!=" {
			op = "<>"
		}
		switch op {
		case "=", "<>", "<", "<=", ">", ">=":
		default:
			return nil, pgerror.NotSupported("operator %s with ANY/ALL is not supported", op)
		}
		if items := rowItems(sl.Testexpr); items != nil {
			return c.rowSubLink(sl, q, items, p.cols, op)
		}
		if len(p.cols) != 1 {
			return nil, pgerror.Errorf(pgerror.CodeSyntax, "subquery has too many columns").At(sl.Location)
		}
		test, err := c.compile(sl.Testexpr, p.cols[0].Type)
		if err != nil {
			return nil, err
		}
		if !comparable(test.typ(), p.cols[0].Type) {
			return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %s %s", test.typ(), op, p.cols[0].Type).At(sl.Location)
		}
		q.test, q.op, q.t = test, op, types.TBool
		return q, nil
	}
	return nil, pgerror.NotSupported("this kind of subquery is not supported").At(sl.Location)
}
