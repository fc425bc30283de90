package sqlfe

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/syscat"
	"github.com/tupled/tupled/sql/types"
)

// ---- scope: the names a query's FROM puts in reach ----

// scopeRel is one FROM item (a table, a subquery, a function) in a scope.
type scopeRel struct {
	name     string
	cols     []catalog.Column
	off      int            // its first column's index in the scope's row
	t        *catalog.Table // a table, for pushdown and primary-key dependencies
	scan     *tableScan     // its scan, while conjuncts may still be pushed into it
	rows     *rowsScan
	use      *colUse // a table scan's: the columns the query reads (nil: all)
	nullable bool    // on the NULL-extended side of an outer join
	// lockedInside: a subquery the query's locking clause was pushed into
	// (lateral.go pushLocks); its rows are locked there
	lockedInside bool
}

// colUse is which columns of a table scan's row the query reads, marked
// as column references resolve to them (scope.resolve, colAt, star: every
// column a compiled expression reads comes through one of them), so that
// the scan decodes only those (column pruning, tableScan.run). A scope
// rel's copies (scope.merge, the pushed-down WHERE's own scope) share
// their table scan's colUse. A locking query has none: its LockRows node
// compares and locks whole rows.
type colUse struct{ read []bool }

// mark records that the query reads column i (nil u: every column is read
// anyway).
func (u *colUse) mark(i int) {
	if u != nil {
		u.read[i] = true
	}
}

// usingCol is a column that JOIN … USING (or NATURAL JOIN) merged: one
// name for the two sides' columns l and r.
type usingCol struct {
	name string
	l, r int
	kind joinKind
	t    types.Type
}

type scope struct {
	rels  []*scopeRel
	using []usingCol
	width int
}

// merge puts o's items beside sc's; two items of one name are 42712, as
// in PostgreSQL.
func (sc *scope) merge(o *scope) (*scope, error) {
	for _, r := range o.rels {
		for _, l := range sc.rels {
			if l.name == r.name {
				return nil, pgerror.Errorf(pgerror.CodeDuplicateAlias, "table name %q specified more than once", r.name)
			}
		}
	}
	out := &scope{width: sc.width + o.width}
	out.rels = append(out.rels, sc.rels...)
	out.using = append(out.using, sc.using...)
	for _, r := range o.rels {
		c := *r
		c.off += sc.width
		out.rels = append(out.rels, &c)
	}
	for _, u := range o.using {
		u.l += sc.width
		u.r += sc.width
		out.using = append(out.using, u)
	}
	return out, nil
}

// hiddenByUsing reports whether row index i is the right side of a USING
// column (reached unqualified through the merged name only).
func (sc *scope) hiddenByUsing(i int) bool {
	for _, u := range sc.using {
		if u.r == i || u.l == i {
			return true
		}
	}
	return false
}

// resolve finds a column reference's row index (or, for a FULL JOIN's
// USING column, its COALESCE).
func (sc *scope) resolve(f []string, loc int32) (expr, error) {
	name := f[len(f)-1]
	if len(f) == 2 {
		for _, r := range sc.rels {
			if r.name != f[0] {
				continue
			}
			for i, col := range r.cols {
				if col.Name == name && !col.Hidden {
					r.use.mark(i)
					return &colExpr{idx: r.off + i, t: col.Type, m: col.Mod()}, nil
				}
			}
			return nil, pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %s.%s does not exist", f[0], name).At(loc)
		}
		return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "missing FROM-clause entry for table %q", f[0]).At(loc)
	}
	for _, u := range sc.using {
		if u.name != name {
			continue
		}
		l := sc.colAt(u.l)
		r := sc.colAt(u.r)
		switch u.kind {
		case joinRight:
			return r, nil
		case joinFull:
			return &coalesceExpr{args: []expr{l, r}, t: u.t}, nil
		}
		return l, nil
	}
	var found *colExpr
	var use func()
	for _, r := range sc.rels {
		for i, col := range r.cols {
			if col.Name != name || col.Hidden || sc.hiddenByUsing(r.off+i) {
				continue
			}
			if found != nil {
				return nil, pgerror.Errorf(pgerror.CodeAmbiguousColumn, "column reference %q is ambiguous", name).At(loc)
			}
			found, use = &colExpr{idx: r.off + i, t: col.Type, m: col.Mod()}, func() { r.use.mark(i) }
		}
	}
	if found == nil {
		return nil, pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %q does not exist", name).At(loc)
	}
	use()
	return found, nil
}

func (sc *scope) colAt(i int) *colExpr {
	for _, r := range sc.rels {
		if i >= r.off && i < r.off+len(r.cols) {
			col := r.cols[i-r.off]
			r.use.mark(i - r.off)
			return &colExpr{idx: i, t: col.Type, m: col.Mod()}
		}
	}
	panic("sqlfe: column index out of scope")
}

// relOf names the FROM item an unqualified column belongs to ("" if none
// or several).
func (sc *scope) relOf(name string) string {
	out := ""
	for _, r := range sc.rels {
		for _, col := range r.cols {
			if col.Name == name && !col.Hidden {
				if out != "" {
					return ""
				}
				out = r.name
			}
		}
	}
	return out
}

// relAt is the FROM item holding row index i.
func (sc *scope) relAt(i int) *scopeRel {
	for _, r := range sc.rels {
		if i >= r.off && i < r.off+len(r.cols) {
			return r
		}
	}
	return nil
}

// pkGrouped reports whether row index i is a column of a table whose
// primary key columns are all grouped (so i is functionally dependent on
// the grouping, as PostgreSQL allows).
func (sc *scope) pkGrouped(i int, grouped map[int]int) bool {
	r := sc.relAt(i)
	if r == nil || r.t == nil || !r.t.HasPKey() {
		return false
	}
	for _, k := range r.t.KeyColumns() {
		if _, ok := grouped[r.off+k]; !ok {
			return false
		}
	}
	return true
}

// star is the select list of * (rel == "") or rel.*.
func (sc *scope) star(rel string, loc int32) ([]string, []expr, error) {
	var names []string
	var xs []expr
	if rel == "" {
		for _, u := range sc.using {
			x, _ := sc.resolve([]string{u.name}, loc)
			names, xs = append(names, u.name), append(xs, x)
		}
	}
	found := false
	for _, r := range sc.rels {
		if rel != "" && r.name != rel {
			continue
		}
		found = true
		for i, col := range r.cols {
			if col.Hidden || (rel == "" && sc.hiddenByUsing(r.off+i)) {
				continue
			}
			names = append(names, col.Name)
			r.use.mark(i)
			xs = append(xs, &colExpr{idx: r.off + i, t: col.Type, m: col.Mod()})
		}
	}
	if rel != "" && !found {
		return nil, nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "missing FROM-clause entry for table %q", rel).At(loc)
	}
	return names, xs, nil
}

// coalesceExpr is COALESCE(args...): the first non-NULL.
type coalesceExpr struct {
	args []expr
	t    types.Type
}

func (c *coalesceExpr) typ() types.Type { return c.t }
func (c *coalesceExpr) kids() []expr    { return c.args }
func (c *coalesceExpr) eval(e *env) (types.Value, error) {
	for _, a := range c.args {
		v, err := a.eval(e)
		if err != nil || !v.Null {
			if err == nil && v.T != c.t && c.t != types.TUnknown {
				return types.Cast(v, c.t)
			}
			return v, err
		}
	}
	return types.Null(c.t), nil
}

// ---- FROM ----

// fromItem plans one FROM item: its node, its scope.
func (s *Session) fromItem(n *pg.Node, params *[]types.Type) (relNode, *scope, error) {
	switch {
	case n.GetRangeVar() != nil:
		rv := n.GetRangeVar()
		name := rv.Relname
		var alias *pg.Alias
		if rv.Alias != nil {
			name, alias = rv.Alias.Aliasname, rv.Alias
		}
		if node, sc, ok, err := s.cteFromItem(rv, name, alias); ok { // recursive.go
			return node, sc, err
		}
		if node, sc, ok, err := s.catalogFromItem(rv, name, alias); ok { // syscat.go
			return node, sc, err
		}
		if v := s.viewOf(rv); v != nil {
			return s.viewFromItem(v, name, alias, params) // views.go
		}
		if (rv.Schemaname == "" || rv.Schemaname == "pg_catalog") && rv.Relname == "pg_locks" && s.lookupTable("pg_locks") == nil {
			rs := &rowsScan{what: "Function Scan on pg_locks", rows: func(q *qctx) ([][]types.Value, error) { return pgLocks(q.ctx, q.s) }}
			cols, err := aliasCols(syscat.PgLocksCols, alias)
			if err != nil {
				return nil, nil, err
			}
			return rs, &scope{rels: []*scopeRel{{name: name, cols: cols, rows: rs}}, width: len(cols)}, nil
		}
		t, err := s.table(rv)
		if err != nil {
			return nil, nil, err
		}
		cols, err := aliasCols(t.Cols, alias)
		if err != nil {
			return nil, nil, err
		}
		ts := &tableScan{t: t, alias: name}
		var node relNode = ts
		if s.lockPins != nil { // lockjoin.go
			p := &pinScan{ts: ts}
			*s.lockPins = append(*s.lockPins, p)
			node = p
		} else {
			ts.use = &colUse{read: make([]bool, len(t.Cols))}
		}
		return node, &scope{rels: []*scopeRel{{name: name, cols: cols, t: t, scan: ts, use: ts.use}}, width: len(cols)}, nil
	case n.GetRangeFunction() != nil:
		rf := n.GetRangeFunction()
		if node, sc, ok, err := s.srfFromItem(rf, s.lateral, params); ok { // lateral.go
			return node, sc, err
		}
		virt, cols, rel, err := s.rangeFunction(rf, &compiler{s: s, outer: s.planOuter, params: params})
		if err != nil {
			return nil, nil, err
		}
		rs := &rowsScan{what: "Function Scan on " + rel, rows: func(q *qctx) ([][]types.Value, error) { return virt(q.env(nil)) }}
		return rs, &scope{rels: []*scopeRel{{name: rel, cols: cols, rows: rs}}, width: len(cols)}, nil
	case n.GetRangeSubselect() != nil:
		rs := n.GetRangeSubselect()
		sub := rs.Subquery.GetSelectStmt()
		if sub == nil {
			return nil, nil, pgerror.NotSupported("this subquery in FROM is not supported")
		}
		if rs.Alias == nil {
			return nil, nil, pgerror.Errorf(pgerror.CodeSyntax, "subquery in FROM must have an alias")
		}
		lc, locks := s.lateral, s.fromLocks
		s.lateral, s.fromLocks = nil, nil
		defer func() { s.lateral, s.fromLocks = lc, locks }()
		sub, pushed := pushLocks(sub, rs.Alias.Aliasname, locks) // lateral.go
		if s.planOuter != nil || (rs.Lateral && lc != nil && lc.left != nil) {
			if node, sc, ok, err := s.correlatedSubquery(rs, sub, lc, params); ok { // lateral.go
				return node, lockedInside(sc, pushed), err
			}
		}
		p, err := s.planSelectAs(sub, params, false)
		if err != nil {
			return nil, nil, lateralError(err, lc, rs.Lateral)
		}
		cols, err := aliasCols(p.cols, rs.Alias)
		if err != nil {
			return nil, nil, err
		}
		scan := &rowsScan{what: "Subquery Scan on " + rs.Alias.Aliasname, rows: func(q *qctx) ([][]types.Value, error) {
			res, err := p.run(q.ctx, q.s, q.params)
			if err != nil {
				return nil, err
			}
			return res.Rows, nil
		}}
		return scan, lockedInside(&scope{rels: []*scopeRel{{name: rs.Alias.Aliasname, cols: cols, rows: scan}}, width: len(cols)}, pushed), nil
	case n.GetJoinExpr() != nil:
		return s.joinItem(n.GetJoinExpr(), params)
	}
	return nil, nil, pgerror.NotSupported("%s is not supported in FROM", nodeName(n))
}

// aliasCols renames cols by an alias's column list.
func aliasCols(cols []catalog.Column, a *pg.Alias) ([]catalog.Column, error) {
	if a == nil || len(a.Colnames) == 0 {
		return cols, nil
	}
	names := strs(a.Colnames)
	out := append([]catalog.Column(nil), cols...)
	j := 0
	for i := range out {
		if out[i].Hidden {
			continue
		}
		if j == len(names) {
			break
		}
		out[i].Name = names[j]
		j++
	}
	if j < len(names) {
		return nil, pgerror.Errorf(pgerror.CodeInvalidColumnRef, "table %q has %d columns available but %d columns specified", a.Aliasname, j, len(names))
	}
	return out, nil
}

func (s *Session) joinItem(j *pg.JoinExpr, params *[]types.Type) (relNode, *scope, error) {
	if j.Alias != nil || j.JoinUsingAlias != nil {
		return nil, nil, pgerror.NotSupported("an alias on a JOIN is not supported")
	}
	var kind joinKind
	switch j.Jointype {
	case pg.JoinType_JOIN_INNER:
		kind = joinInner
	case pg.JoinType_JOIN_LEFT:
		kind = joinLeft
	case pg.JoinType_JOIN_RIGHT:
		kind = joinRight
	case pg.JoinType_JOIN_FULL:
		kind = joinFull
	default:
		return nil, nil, pgerror.NotSupported("this kind of JOIN is not supported")
	}
	// what each side may read to its left (lateral.go): the left side
	// nothing, the right side the left's items, unless RIGHT or FULL
	saved := s.lateral
	defer func() { s.lateral = saved }()
	s.lateral = &lateralCtx{beyond: saved.names()}
	ln, lsc, err := s.fromItem(j.Larg, params)
	if err != nil {
		return nil, nil, err
	}
	if kind == joinRight || kind == joinFull {
		s.lateral = &lateralCtx{beyond: saved.names(), rightFull: relNames(lsc)}
	} else {
		s.lateral = &lateralCtx{left: lsc, beyond: saved.names()}
	}
	rn, rsc, err := s.fromItem(j.Rarg, params)
	if err != nil {
		return nil, nil, err
	}
	s.lateral = saved
	if kind == joinRight || kind == joinFull {
		for _, r := range lsc.rels {
			r.nullable = true
		}
	}
	sc, err := lsc.merge(rsc)
	if err != nil {
		return nil, nil, err
	}
	if kind == joinLeft || kind == joinFull {
		for _, r := range sc.rels[len(lsc.rels):] {
			r.nullable = true
		}
	}
	nl := &nestedLoop{kind: kind, left: ln, right: rn, lw: lsc.width, rw: rsc.width, rrels: rsc.rels, lateral: isLateral(rn)}
	c := &compiler{s: s, outer: s.planOuter, params: params, scope: sc, clause: "JOIN conditions"}
	using := strs(j.UsingClause)
	if j.IsNatural {
		for _, r := range lsc.rels {
			for _, col := range r.cols {
				if !col.Hidden && rsc.relOf(col.Name) != "" && !containsStr(using, col.Name) {
					using = append(using, col.Name)
				}
			}
		}
	}
	var conds []expr
	for _, name := range using {
		lx, err := lsc.resolve([]string{name}, -1)
		if err != nil {
			return nil, nil, pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %q specified in USING clause does not exist in left table", name)
		}
		rx, err := rsc.resolve([]string{name}, -1)
		if err != nil {
			return nil, nil, pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %q specified in USING clause does not exist in right table", name)
		}
		l, ok1 := lx.(*colExpr)
		r, ok2 := rx.(*colExpr)
		if !ok1 || !ok2 {
			return nil, nil, pgerror.NotSupported("USING over a merged column is not supported")
		}
		t := l.t
		if !comparable(l.t, r.t) {
			return nil, nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "operator does not exist: %s = %s", l.t, r.t)
		}
		if l.t != r.t && (r.t == types.TInt8 || r.t == types.TNumeric) {
			t = r.t
		}
		rr := &colExpr{idx: r.idx + lsc.width, t: r.t, m: r.m}
		sc.using = append(sc.using, usingCol{name: name, l: l.idx, r: rr.idx, kind: kind, t: t})
		conds = append(conds, &cmpExpr{op: "=", l: l, r: rr})
	}
	if j.Quals != nil {
		q, err := c.compile(j.Quals, types.TBool)
		if err != nil {
			return nil, nil, err
		}
		if q.typ() != types.TBool {
			return nil, nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "argument of JOIN/ON must be type boolean, not type %s", q.typ())
		}
		conds = append(conds, conjuncts(q)...)
	}
	nl.setCond(conds)
	return nl, sc, nil
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// colRange is the smallest and largest row index x reads (lo > hi: none).
func colRange(x expr) (lo, hi int) {
	lo, hi = 1<<30, -1
	var walk func(x expr)
	walk = func(x expr) {
		if c, ok := x.(*colExpr); ok {
			lo, hi = min(lo, c.idx), max(hi, c.idx)
		}
		for _, k := range x.kids() {
			walk(k)
		}
	}
	walk(x)
	return lo, hi
}

// setCond makes conds the join's condition, taking the equalities of a
// left-side and a right-side expression of one hashable kind as hash keys.
func (n *nestedLoop) setCond(conds []expr) {
	var rest []expr
	for _, x := range conds {
		if c, ok := x.(*cmpExpr); ok && c.op == "=" && hashable(c.l.typ(), c.r.typ()) && !n.lateral {
			llo, lhi := colRange(c.l)
			rlo, rhi := colRange(c.r)
			switch {
			case lhi >= 0 && lhi < n.lw && rlo >= n.lw && rhi >= 0:
				n.lkeys, n.rkeys = append(n.lkeys, c.l), append(n.rkeys, c.r)
				continue
			case rhi >= 0 && rhi < n.lw && llo >= n.lw && lhi >= 0:
				n.lkeys, n.rkeys = append(n.lkeys, c.r), append(n.rkeys, c.l)
				continue
			}
		}
		rest = append(rest, x)
	}
	n.cond = andAll(rest)
}

// hashable reports whether equality of a and b is equality of their hash
// keys (appendHashKey).
func hashable(a, b types.Type) bool {
	switch {
	case types.IsInt(a) && types.IsInt(b):
		return true
	case a == types.TBpchar || b == types.TBpchar:
		return false // text = character(n) compares as text, with its spaces
	}
	return a == b && a != types.TUnknown
}

// andWith is x AND y, x nil meaning true.
func andWith(x, y expr) expr {
	if x == nil {
		return y
	}
	return andAll(append(conjuncts(x), y))
}

func andAll(xs []expr) expr {
	switch len(xs) {
	case 0:
		return nil
	case 1:
		return xs[0]
	}
	return &boolExpr{op: pg.BoolExprType_AND_EXPR, args: xs}
}

// ---- SELECT ----

// buildQuery plans a SELECT (or a set operation, or VALUES).
func (s *Session) buildQuery(st *pg.SelectStmt, params *[]types.Type, keepUnknown bool) (relNode, []catalog.Column, error) {
	if st.WithClause != nil {
		if !allSelectCTEs(st.WithClause) {
			return nil, nil, pgerror.NotSupported("WITH in this query is not supported")
		}
		return s.buildWith(st, params, keepUnknown) // recursive.go
	}
	if st.IntoClause != nil {
		return nil, nil, pgerror.NotSupported("SELECT INTO is not supported")
	}
	if len(st.LockingClause) > 0 {
		switch {
		case st.Op != pg.SetOperation_SETOP_NONE:
			return nil, nil, pgerror.NotSupported("FOR UPDATE is not allowed with UNION/INTERSECT/EXCEPT")
		case len(st.DistinctClause) > 0:
			return nil, nil, pgerror.NotSupported("FOR UPDATE is not allowed with DISTINCT clause")
		case len(st.GroupClause) > 0:
			return nil, nil, pgerror.NotSupported("FOR UPDATE is not allowed with GROUP BY clause")
		case st.HavingClause != nil:
			return nil, nil, pgerror.NotSupported("FOR UPDATE is not allowed with HAVING clause")
		case needsAgg(st):
			return nil, nil, pgerror.NotSupported("FOR UPDATE is not allowed with aggregate functions")
		case len(st.ValuesLists) > 0:
			return nil, nil, pgerror.NotSupported("FOR UPDATE cannot be applied to VALUES")
		}
		for _, n := range st.TargetList {
			if hasWindow(n.ProtoReflect()) {
				return nil, nil, pgerror.NotSupported("FOR UPDATE is not allowed with window functions")
			}
		}
	}
	if st.LimitOption == pg.LimitOption_LIMIT_OPTION_WITH_TIES {
		return nil, nil, pgerror.NotSupported("FETCH ... WITH TIES is not supported")
	}
	var node relNode
	var cols []catalog.Column
	var err error
	switch {
	case st.Op != pg.SetOperation_SETOP_NONE:
		node, cols, err = s.setOp(st, params)
	case len(st.ValuesLists) > 0:
		node, cols, err = s.valuesList(st, params, keepUnknown)
	default:
		return s.selectBlock(st, params, keepUnknown)
	}
	if err != nil {
		return nil, nil, err
	}
	// ORDER BY / LIMIT of a set operation or VALUES: over its output
	// columns, by name or position
	var keys []sortCol
	for _, n := range st.SortClause {
		sb := n.GetSortBy()
		idx := -1
		if k := sb.Node.GetAConst(); k != nil {
			if iv, ok := k.Val.(*pg.A_Const_Ival); ok {
				idx = int(iv.Ival.Ival) - 1
				if idx < 0 || idx >= len(cols) {
					return nil, nil, pgerror.Errorf(pgerror.CodeInvalidColumnRef, "ORDER BY position %d is not in select list", iv.Ival.Ival).At(k.Location)
				}
			}
		} else if cr := sb.Node.GetColumnRef(); cr != nil {
			if f := strs(cr.Fields); len(f) == 1 {
				for i, c := range cols {
					if c.Name == f[0] {
						idx = i
						break
					}
				}
			}
		}
		if idx < 0 {
			return nil, nil, pgerror.NotSupported("ORDER BY of a UNION/INTERSECT/EXCEPT or VALUES must name a result column")
		}
		keys = append(keys, sortColOf(sb, idx))
	}
	if len(keys) > 0 {
		node = &sortNode{in: node, keys: keys}
	}
	if node, err = limitOver(node, st, params); err != nil {
		return nil, nil, err
	}
	return node, cols, nil
}

func sortColOf(sb *pg.SortBy, idx int) sortCol {
	desc := sb.SortbyDir == pg.SortByDir_SORTBY_DESC
	nf := desc
	switch sb.SortbyNulls {
	case pg.SortByNulls_SORTBY_NULLS_FIRST:
		nf = true
	case pg.SortByNulls_SORTBY_NULLS_LAST:
		nf = false
	}
	return sortCol{idx: idx, desc: desc, nullsFirst: nf}
}

// limitOver puts st's LIMIT / OFFSET over node.
func limitOver(node relNode, st *pg.SelectStmt, params *[]types.Type) (relNode, error) {
	limit, offset, err := compileLimit(st, params)
	if err != nil {
		return nil, err
	}
	if limit == nil && offset == nil {
		return node, nil
	}
	return &limitNode{in: node, limit: limit, offset: offset}, nil
}

// compileLimit compiles LIMIT and OFFSET (nil when absent; LIMIT ALL and
// LIMIT NULL are absent).
func compileLimit(st *pg.SelectStmt, params *[]types.Type) (limit, offset expr, err error) {
	lc := &compiler{params: params}
	if st.LimitCount != nil {
		if limit, err = lc.compile(st.LimitCount, types.TInt8); err != nil {
			return nil, nil, wrapLimitErr(err, "LIMIT")
		}
		if k, ok := limit.(*constExpr); ok && k.v.Null {
			limit = nil // LIMIT ALL / NULL
		} else if limit.typ() == types.TNumeric {
			limit = &castExpr{arg: limit, t: types.TInt8} // rounded, as PostgreSQL's implicit numeric → bigint
		} else if !types.IsInt(limit.typ()) {
			return nil, nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "argument of LIMIT must be type bigint, not type %s", limit.typ())
		}
	}
	if st.LimitOffset != nil {
		if offset, err = lc.compile(st.LimitOffset, types.TInt8); err != nil {
			return nil, nil, wrapLimitErr(err, "OFFSET")
		}
		if offset.typ() == types.TNumeric {
			offset = &castExpr{arg: offset, t: types.TInt8}
		} else if !types.IsInt(offset.typ()) {
			return nil, nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "argument of OFFSET must be type bigint, not type %s", offset.typ())
		}
	}
	return limit, offset, nil
}

// unifyTypes is the type of a result column that takes values of a and b
// (UNION, VALUES rows), as PostgreSQL's select_common_type resolves it
// among our types.
func unifyTypes(a, b types.Type, what string) (types.Type, error) {
	switch {
	case a == b:
		return a, nil
	case a == types.TUnknown:
		return b, nil
	case b == types.TUnknown:
		return a, nil
	case (types.IsNumber(a) || types.IsFloat(a)) && (types.IsNumber(b) || types.IsFloat(b)):
		switch {
		case types.IsFloat(a) || types.IsFloat(b):
			return types.FloatResult(a, b), nil
		case a == types.TNumeric || b == types.TNumeric:
			return types.TNumeric, nil
		}
		return types.TInt8, nil
	case types.IsString(a) && types.IsString(b):
		return types.TText, nil
	case types.IsDateTime(a) && types.IsDateTime(b):
		if a == types.TTimestamptz || b == types.TTimestamptz {
			return types.TTimestamptz, nil
		}
		return types.TTimestamp, nil
	case types.IsEnum(a) && types.IsEnum(b):
		// one category (E): PostgreSQL takes the first and fails to coerce the second
		return 0, pgerror.Errorf(pgerror.CodeCannotCoerce, "%s could not convert type %s to %s", what, b, a)
	}
	return 0, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "%s types %s and %s cannot be matched", what, a, b)
}

func (s *Session) setOp(st *pg.SelectStmt, params *[]types.Type) (relNode, []catalog.Column, error) {
	l, lcols, err := s.buildQuery(st.Larg, params, true)
	if err != nil {
		return nil, nil, err
	}
	r, rcols, err := s.buildQuery(st.Rarg, params, true)
	if err != nil {
		return nil, nil, err
	}
	op := map[pg.SetOperation]string{pg.SetOperation_SETOP_UNION: "UNION", pg.SetOperation_SETOP_INTERSECT: "INTERSECT", pg.SetOperation_SETOP_EXCEPT: "EXCEPT"}[st.Op]
	if len(lcols) != len(rcols) {
		return nil, nil, pgerror.Errorf(pgerror.CodeSyntax, "each %s query must have the same number of columns", op)
	}
	n := &setOpNode{op: op, all: st.All, left: l, right: r}
	cols := make([]catalog.Column, len(lcols))
	for i := range lcols {
		t, err := unifyTypes(lcols[i].Type, rcols[i].Type, op)
		if err != nil {
			return nil, nil, err
		}
		if t == types.TUnknown {
			t = types.TText
		}
		cols[i] = catalog.Column{Name: lcols[i].Name, Type: t}
		if lcols[i].Type == rcols[i].Type && lcols[i].Mod() == rcols[i].Mod() {
			cols[i] = lcols[i]
			cols[i].Name = lcols[i].Name
		}
		n.types = append(n.types, t)
	}
	return n, cols, nil
}

func (s *Session) valuesList(st *pg.SelectStmt, params *[]types.Type, keepUnknown bool) (relNode, []catalog.Column, error) {
	c := &compiler{s: s, outer: s.planOuter, params: params, clause: "VALUES"}
	var rows [][]expr
	var colTypes []types.Type
	for _, n := range st.ValuesLists {
		items := n.GetList().GetItems()
		if rows != nil && len(items) != len(colTypes) {
			return nil, nil, pgerror.Errorf(pgerror.CodeSyntax, "VALUES lists must all be the same length")
		}
		var row []expr
		for i, it := range items {
			x, err := c.compile(it, types.TUnknown)
			if err != nil {
				return nil, nil, err
			}
			if rows == nil {
				colTypes = append(colTypes, x.typ())
			} else if colTypes[i], err = unifyTypes(colTypes[i], x.typ(), "VALUES"); err != nil {
				return nil, nil, err
			}
			row = append(row, x)
		}
		rows = append(rows, row)
	}
	cols := make([]catalog.Column, len(colTypes))
	for i, t := range colTypes {
		if t == types.TUnknown && !keepUnknown {
			t = types.TText
		}
		colTypes[i] = t
		cols[i] = catalog.Column{Name: fmt.Sprintf("column%d", i+1), Type: t}
	}
	for _, row := range rows {
		for i, x := range row {
			if x.typ() != colTypes[i] {
				var err error
				if row[i], err = c.coerce(x, colTypes[i]); err != nil {
					return nil, nil, err
				}
				if row[i].typ() != colTypes[i] {
					row[i] = &castExpr{arg: row[i], t: colTypes[i]}
				}
			}
		}
	}
	scan := &rowsScan{what: "Values Scan", rows: func(q *qctx) ([][]types.Value, error) {
		e := q.env(nil)
		out := make([][]types.Value, len(rows))
		for i, row := range rows {
			vals, err := project(row, e)
			if err != nil {
				return nil, err
			}
			out[i] = vals
		}
		return out, nil
	}}
	return scan, cols, nil
}

// selectBlock plans one SELECT … FROM … WHERE … GROUP BY … HAVING ….
func (s *Session) selectBlock(st *pg.SelectStmt, params *[]types.Type, keepUnknown bool) (relNode, []catalog.Column, error) {
	// FROM: the items side by side, each a cross join of the ones before
	// (a WHERE conjunct naming two of them becomes their join's condition)
	var node relNode
	sc := &scope{}
	var chain []*nestedLoop // the FROM list's joins, innermost first
	var err error
	savedPins := s.lockPins
	s.lockPins = nil
	var pins []*pinScan
	savedLocks := s.fromLocks
	s.fromLocks = nil
	if len(st.LockingClause) > 0 {
		s.lockPins = &pins
		s.fromLocks = st.LockingClause
	}
	defer func() { s.lockPins, s.fromLocks = savedPins, savedLocks }()
	savedLateral := s.lateral
	defer func() { s.lateral = savedLateral }()
	for _, f := range st.FromClause {
		s.lateral = &lateralCtx{} // what a LATERAL item may read (lateral.go)
		if node != nil {
			s.lateral.left = sc
		}
		n, fsc, err := s.fromItem(f, params)
		if err != nil {
			return nil, nil, err
		}
		if node == nil {
			node, sc = n, fsc
			continue
		}
		nl := &nestedLoop{kind: joinInner, left: node, right: n, lw: sc.width, rw: fsc.width, rrels: fsc.rels, lateral: isLateral(n)}
		chain = append(chain, nl)
		if sc, err = sc.merge(fsc); err != nil {
			return nil, nil, err
		}
		node = nl
	}
	in := &compiler{s: s, outer: s.planOuter, params: params, scope: sc, clause: "WHERE"}
	if len(st.FromClause) == 0 {
		in.scope = nil
	}
	if st.WhereClause != nil {
		w, err := in.compile(st.WhereClause, types.TBool)
		if err != nil {
			return nil, nil, err
		}
		if w.typ() != types.TBool {
			return nil, nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "argument of WHERE must be type boolean, not type %s", w.typ())
		}
		var rest []expr
		wheres := whereConjuncts(st.WhereClause)
		xs := conjuncts(w)
		if len(wheres) != len(xs) {
			wheres = nil // the compiled form folded: push nothing
		}
		joinConds := make([][]expr, len(chain))
	next:
		for i, x := range xs {
			lo, hi := colRange(x)
			if hi < 0 || wheres == nil {
				rest = append(rest, x)
				continue
			}
			if r := sc.relAt(lo); r != nil && hi < r.off+len(r.cols) && !r.nullable && (r.scan != nil || r.rows != nil) {
				// one FROM item's: into its scan, compiled over its row
				one := &compiler{s: s, outer: s.planOuter, params: params, scope: &scope{rels: []*scopeRel{{name: r.name, cols: r.cols, use: r.use}}, width: len(r.cols)}, clause: "WHERE"}
				px, err := one.compile(wheres[i], types.TBool)
				if err == nil {
					if r.scan != nil {
						r.scan.filter = andWith(r.scan.filter, px)
					} else {
						r.rows.filter = andWith(r.rows.filter, px)
					}
					continue
				}
			}
			for k, nl := range chain {
				if hi < nl.lw+nl.rw && lo < nl.lw && hi >= nl.lw {
					joinConds[k] = append(joinConds[k], x)
					continue next
				}
			}
			rest = append(rest, x)
		}
		for k, nl := range chain {
			nl.setCond(joinConds[k])
		}
		for _, r := range sc.rels {
			if r.scan != nil {
				r.scan.acc = analyzeKeyAccess(r.scan.filter, r.t)
			}
		}
		if cond := andAll(rest); cond != nil {
			if node == nil { // no FROM: the one row a WHERE filters
				node = &rowsScan{what: "Result", rows: func(*qctx) ([][]types.Value, error) { return [][]types.Value{nil}, nil }}
			}
			node = &filterNode{in: node, cond: cond}
		}
	}
	if node == nil {
		node = &rowsScan{what: "Result", rows: func(*qctx) ([][]types.Value, error) { return [][]types.Value{nil}, nil }}
	}
	if len(st.LockingClause) > 0 { // lockjoin.go
		s.lockPins = savedPins
		if node, st, err = s.lockedFrom(st, in, sc, node, pins); err != nil {
			return nil, nil, err
		}
	}
	// GROUP BY and aggregates
	out := in // compiles the select list, HAVING and ORDER BY
	var agg *aggCtx
	grouped := len(st.GroupClause) > 0 || st.HavingClause != nil || needsAgg(st)
	if grouped {
		agg = &aggCtx{in: in, groupKeys: map[string]int{}, groupCols: map[int]int{}}
		gin := *in
		gin.clause = "GROUP BY"
		if err := groupClause(&gin, st, agg); err != nil { // groupingsets.go
			return nil, nil, err
		}
		out = &compiler{s: s, outer: s.planOuter, params: params, agg: agg}
	}
	// window calls, in the select list and ORDER BY (window.go)
	win, err := newWinCtx(st.WindowClause)
	if err != nil {
		return nil, nil, err
	}
	out.win = win
	srf := &srfCtx{} // set-returning calls, in the select list and ORDER BY (srf.go)
	out.srf = srf
	// the select list
	var names []string
	var targets []expr
	var targetNodes []*pg.Node
	for _, n := range st.TargetList {
		rt := n.GetResTarget()
		if rt == nil || len(rt.Indirection) > 0 {
			return nil, nil, pgerror.NotSupported("this select list item is not supported")
		}
		if cr := rt.Val.GetColumnRef(); cr != nil {
			if f := strs(cr.Fields); len(f) > 0 && f[len(f)-1] == "*" {
				rel := ""
				if len(f) == 2 {
					rel = f[0]
				}
				if len(st.FromClause) == 0 && rel == "" {
					return nil, nil, pgerror.Errorf(pgerror.CodeSyntax, "SELECT * with no tables specified is not valid").At(cr.Location)
				}
				ns, xs, err := sc.star(rel, cr.Location)
				if err != nil && rel != "" {
					ns, xs, err = outerStar(in, rel, err) // lateral.go
				}
				if err != nil {
					return nil, nil, err
				}
				if agg != nil {
					// each column must be grouped: compile it as a reference
					for i := range xs {
						ref := &pg.Node{Node: &pg.Node_ColumnRef{ColumnRef: &pg.ColumnRef{Fields: []*pg.Node{pg.MakeStrNode(ns[i])}, Location: cr.Location}}}
						if rel != "" {
							ref.GetColumnRef().Fields = []*pg.Node{pg.MakeStrNode(rel), pg.MakeStrNode(ns[i])}
						}
						x, err := out.compile(ref, types.TUnknown)
						if err != nil {
							return nil, nil, err
						}
						xs[i] = x
					}
				}
				for i := range xs {
					names, targets, targetNodes = append(names, ns[i]), append(targets, xs[i]), append(targetNodes, nil)
				}
				continue
			}
		}
		sel := *out
		sel.clause = ""
		x, err := sel.compile(rt.Val, types.TUnknown)
		if err != nil {
			return nil, nil, err
		}
		name := rt.Name
		if name == "" {
			name = defaultName(rt.Val)
		}
		names, targets, targetNodes = append(names, name), append(targets, x), append(targetNodes, rt.Val)
	}
	if len(targets) > maxTargetListEntries {
		return nil, nil, pgerror.Errorf(pgerror.CodeTooManyColumns, "target lists can have at most %d entries", maxTargetListEntries)
	}
	if st.HavingClause != nil {
		hc := *out
		hc.clause, hc.win, hc.srf = "HAVING", nil, nil
		h, err := hc.compile(st.HavingClause, types.TBool)
		if err != nil {
			return nil, nil, err
		}
		if h.typ() != types.TBool {
			return nil, nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "argument of HAVING must be type boolean, not type %s", h.typ())
		}
		agg.having = h
	}
	// ORDER BY: a result column by position or name, else an expression
	// computed beside the select list
	var keys []sortCol
	extra := 0
	// DISTINCT ON (exprs): the clause's items are expressions, not one
	// nil node as plain DISTINCT's
	var onExprs []*pg.Node
	for _, d := range st.DistinctClause {
		if d != nil && d.Node != nil {
			onExprs = append(onExprs, d)
		}
	}
	distinct := len(st.DistinctClause) > 0 && len(onExprs) == 0
	hidden := map[string]int{} // expressions computed beside the select list, by nodeKey
	// resolve finds the result column an ORDER BY or DISTINCT ON item
	// names: by position, by output name, as a select-list expression, or
	// as an expression computed beside the select list
	resolve := func(n *pg.Node, loc int32) (int, error) {
		idx := -1
		if k := n.GetAConst(); k != nil {
			iv, ok := k.Val.(*pg.A_Const_Ival)
			if !ok {
				return 0, pgerror.NotSupported("ORDER BY a constant is not supported").At(loc)
			}
			idx = int(iv.Ival.Ival) - 1
			if idx < 0 || idx >= len(targets)-extra {
				return 0, pgerror.Errorf(pgerror.CodeInvalidColumnRef, "ORDER BY position %d is not in select list", iv.Ival.Ival).At(k.Location)
			}
			return idx, nil
		}
		if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 {
			name := strs(cr.Fields)[0]
			for i, nm := range names {
				if nm == name {
					return i, nil
				}
			}
		}
		key := nodeKey(n)
		for i, tn := range targetNodes {
			if tn != nil && nodeKey(tn) == key {
				return i, nil
			}
		}
		if i, ok := hidden[key]; ok {
			return i, nil
		}
		if distinct {
			return 0, pgerror.Errorf(pgerror.CodeInvalidColumnRef, "for SELECT DISTINCT, ORDER BY expressions must appear in select list").At(loc)
		}
		oc := *out
		oc.clause = ""
		x, err := oc.compile(n, types.TUnknown)
		if err != nil {
			return 0, err
		}
		targets = append(targets, x)
		extra++
		hidden[key] = len(targets) - 1
		return len(targets) - 1, nil
	}
	for _, n := range st.SortClause {
		sb := n.GetSortBy()
		if sb == nil || len(sb.UseOp) > 0 {
			return nil, nil, pgerror.NotSupported("ORDER BY ... USING is not supported")
		}
		idx, err := resolve(sb.Node, sb.Location)
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, sortColOf(sb, idx))
	}
	var onIdx []int
	for _, n := range onExprs {
		idx, err := resolve(n, -1)
		if err != nil {
			return nil, nil, err
		}
		onIdx = append(onIdx, idx)
	}
	if len(onIdx) > 0 {
		// PostgreSQL: the ON expressions must be the leading ORDER BY
		// items (in any order); without ORDER BY, rows are sorted by them
		if len(keys) == 0 {
			for _, i := range onIdx {
				keys = append(keys, sortCol{idx: i})
			}
		}
		lead := map[int]bool{}
		for i := 0; i < len(keys) && i < len(onIdx); i++ {
			lead[keys[i].idx] = true
		}
		for _, i := range onIdx {
			if !lead[i] {
				return nil, nil, pgerror.Errorf("42P10", "SELECT DISTINCT ON expressions must match initial ORDER BY expressions")
			}
		}
	}
	if agg != nil {
		node = &aggNode{in: node, a: agg, scalar: len(agg.groupKeys) == 0 && len(st.GroupClause) == 0}
		if agg.having != nil {
			node = &filterNode{in: node, cond: agg.having}
		}
	}
	if len(win.specs) > 0 {
		node = &windowNode{in: node, w: win}
	}
	if len(srf.specs) > 0 {
		node = &projectSetNode{in: node, srf: srf, exprs: targets}
	} else {
		node = &projectNode{in: node, exprs: targets}
	}
	width := len(targets) - extra
	if distinct {
		node = &distinctNode{in: node, width: width}
	}
	if len(keys) > 0 {
		node = &sortNode{in: node, keys: keys}
	}
	if len(onIdx) > 0 {
		node = &distinctOnNode{in: node, on: onIdx}
	}
	if node, err = limitOver(node, st, params); err != nil {
		return nil, nil, err
	}
	if extra > 0 {
		node = &truncNode{in: node, width: width}
	}
	cols := make([]catalog.Column, width)
	for i := 0; i < width; i++ {
		t := targets[i].typ()
		if t == types.TUnknown && !keepUnknown {
			t = types.TText
		}
		cols[i] = resultColumn(names[i], t, targets[i])
		x := targets[i]
		if ac, ok := x.(*aggColumn); ok && ac.agg < 0 {
			x = ac.a.groups[ac.grp] // a grouped column is still its table's
		}
		if ce, ok := x.(*colExpr); ok && (agg == nil || x != targets[i]) && in.scope != nil {
			if r := in.scope.relAt(ce.idx); r != nil && r.t != nil {
				cols[i].Table, cols[i].AttNum = r.t.Name, syscat.AttNum(r.t, ce.idx-r.off)
			}
		}
	}
	return node, cols, nil
}

// needsAgg reports whether the select list or ORDER BY calls an aggregate.
func needsAgg(st *pg.SelectStmt) bool {
	for _, n := range st.TargetList {
		if hasAgg(n.ProtoReflect()) {
			return true
		}
	}
	for _, n := range st.SortClause {
		if hasAgg(n.ProtoReflect()) {
			return true
		}
	}
	return false
}

// whereConjuncts splits a WHERE clause's parse tree at its top-level ANDs,
// in the order conjuncts splits the compiled form.
func whereConjuncts(n *pg.Node) []*pg.Node {
	if b := n.GetBoolExpr(); b != nil && b.Boolop == pg.BoolExprType_AND_EXPR {
		var out []*pg.Node
		for _, a := range b.Args {
			out = append(out, whereConjuncts(a)...)
		}
		return out
	}
	return []*pg.Node{n}
}
