package sqlfe

// WITH queries that are SELECTs — WITH [RECURSIVE] name [(cols)] AS
// (query) [, ...] main-query — in the general query path.
//
// The design, as PostgreSQL's: a WITH query is planned once, before the
// main query, and its name is a FROM item of every query planned after it
// in the same statement (the later WITH queries, the main query and their
// subqueries: Session.ctes, a stack while planning). A scan of it runs the
// query and keeps its rows for the rest of the statement's execution
// (cteDef.rows, per execRun, like an uncorrelated subquery's), so it is
// evaluated once however often it is read.
//
// A query of WITH RECURSIVE that names itself is non-recursive-term UNION
// [ALL] recursive-term, run as PostgreSQL's RecursiveUnion: the
// non-recursive term's rows are the result so far and the working table;
// then, while the working table is not empty, the recursive term runs with
// its self-reference reading the working table, and what it returns
// (under UNION, only rows not produced before) is added to the result and
// becomes the next working table. The forms PostgreSQL refuses are 42P19
// (a self-reference in the non-recursive term, in a subquery, in an outer
// join's nullable side, more than once; aggregates in the recursive term;
// not of the UNION form), ORDER BY / LIMIT / OFFSET in the recursive query
// 0A000, and a recursive term whose column types differ from the
// non-recursive term's 42804. The iteration stops with the statement's
// context (statement_timeout, cancel), as PostgreSQL's only stops when the
// working table is empty.

import (
	"fmt"
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
	"google.golang.org/protobuf/proto"
)

// cteDef is a WITH query of the statement being planned.
type cteDef struct {
	name string
	cols []catalog.Column
	root relNode // the query (a recursive one: the non-recursive term)
	// a recursive query: its recursive term, UNION ALL or UNION, and the
	// working table its self-reference reads while it runs
	step relNode
	all  bool
	work [][]types.Value
	// owner: set on the entry a recursive term's self-reference resolves
	// to, the query whose working table it reads
	owner *cteDef

	correlated bool // planned inside a subquery: run at each scan
	mu         sync.Mutex
	exec       *execRun
	cache      [][]types.Value
}

// lookupCTE finds the WITH query an unqualified name names, innermost
// first.
func (s *Session) lookupCTE(name string) *cteDef {
	for i := len(s.ctes) - 1; i >= 0; i-- {
		if s.ctes[i].name == name {
			return s.ctes[i]
		}
	}
	return nil
}

// cteFromItem is fromItem's case for a WITH query's name.
func (s *Session) cteFromItem(rv *pg.RangeVar, name string, alias *pg.Alias) (relNode, *scope, bool, error) {
	if rv.Schemaname != "" || rv.Catalogname != "" {
		return nil, nil, false, nil
	}
	d := s.lookupCTE(rv.Relname)
	if d == nil {
		return nil, nil, false, nil
	}
	cols, err := aliasCols(d.cols, alias)
	if err != nil {
		return nil, nil, true, err
	}
	rs := &rowsScan{what: "CTE Scan on " + rv.Relname, rows: d.rows}
	if w := d.owner; w != nil {
		rs = &rowsScan{what: "WorkTable Scan on " + rv.Relname, rows: func(*qctx) ([][]types.Value, error) { return w.work, nil }}
	}
	return rs, &scope{rels: []*scopeRel{{name: name, cols: cols, rows: rs}}, width: len(cols)}, true, nil
}

// rows runs the WITH query (once per execution unless correlated).
func (d *cteDef) rows(q *qctx) ([][]types.Value, error) {
	if d.correlated {
		return d.run(q)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if q.exec != nil && d.exec == q.exec {
		return d.cache, nil
	}
	rows, err := d.run(q)
	if err != nil {
		return nil, err
	}
	d.exec, d.cache = q.exec, rows
	return rows, nil
}

func (d *cteDef) run(q *qctx) ([][]types.Value, error) {
	rows, err := collect(q, d.root)
	if err != nil || d.step == nil {
		return rows, err
	}
	seen := map[string]bool{}
	var kb []byte
	fresh := func(r []types.Value) bool {
		if d.all {
			return true
		}
		kb = kb[:0]
		for _, v := range r {
			kb = appendHashKey(kb, v)
		}
		if seen[string(kb)] {
			return false
		}
		seen[string(kb)] = true
		return true
	}
	var out [][]types.Value
	for _, r := range rows {
		if fresh(r) {
			out = append(out, r)
		}
	}
	work := out
	for len(work) > 0 {
		if err := q.ctx.Err(); err != nil {
			return nil, err
		}
		d.work = work
		next, err := collect(q, d.step)
		d.work = nil
		if err != nil {
			return nil, err
		}
		work = work[:0:0]
		for _, r := range next {
			if fresh(r) {
				work = append(work, r)
			}
		}
		out = append(out, work...)
	}
	return out, nil
}

// allSelectCTEs reports whether every WITH query of w is a SELECT.
func allSelectCTEs(w *pg.WithClause) bool {
	for _, n := range w.Ctes {
		if cte := n.GetCommonTableExpr(); cte == nil || cte.Ctequery.GetSelectStmt() == nil {
			return false
		}
	}
	return true
}

// buildWith plans st, whose WITH queries are SELECTs (buildQuery).
func (s *Session) buildWith(st *pg.SelectStmt, params *[]types.Type, keepUnknown bool) (relNode, []catalog.Column, error) {
	w := st.WithClause
	depth := len(s.ctes)
	defer func() { s.ctes = s.ctes[:depth] }()
	names := map[string]bool{}
	for _, n := range w.Ctes {
		cte := n.GetCommonTableExpr()
		switch {
		case cte.SearchClause != nil:
			return nil, nil, pgerror.NotSupported("SEARCH in a WITH query is not supported")
		case cte.CycleClause != nil:
			return nil, nil, pgerror.NotSupported("CYCLE in a WITH query is not supported")
		case names[cte.Ctename]:
			return nil, nil, pgerror.Errorf(pgerror.CodeDuplicateAlias, "WITH query name %q specified more than once", cte.Ctename).At(cte.Location)
		}
		names[cte.Ctename] = true
		d, err := s.planCTE(cte, w.Recursive, params)
		if err != nil {
			return nil, nil, err
		}
		s.ctes = append(s.ctes, d)
	}
	main := proto.Clone(st).(*pg.SelectStmt)
	main.WithClause = nil
	return s.buildQuery(main, params, keepUnknown)
}

// planCTE plans one WITH query.
func (s *Session) planCTE(cte *pg.CommonTableExpr, recursive bool, params *[]types.Type) (*cteDef, error) {
	q := cte.Ctequery.GetSelectStmt()
	d := &cteDef{name: cte.Ctename, correlated: s.planOuter != nil}
	self := map[string]bool{cte.Ctename: true}
	if !recursive || !readsAny(q.ProtoReflect(), self) {
		root, cols, err := s.buildQuery(q, params, false)
		if err != nil {
			return nil, err
		}
		d.root = root
		d.cols, err = cteColumns(cte, cols)
		return d, err
	}
	if err := checkRecursiveForm(cte, q); err != nil {
		return nil, err
	}
	root, cols, err := s.buildQuery(q.Larg, params, false)
	if err != nil {
		return nil, err
	}
	if d.cols, err = cteColumns(cte, cols); err != nil {
		return nil, err
	}
	// the recursive term reads the working table through its own entry
	wt := &cteDef{name: cte.Ctename, cols: d.cols, owner: d}
	s.ctes = append(s.ctes, wt)
	step, scols, err := s.buildQuery(q.Rarg, params, false)
	s.ctes = s.ctes[:len(s.ctes)-1]
	if err != nil {
		return nil, err
	}
	if len(scols) != len(cols) {
		return nil, pgerror.Errorf(pgerror.CodeSyntax, "each UNION query must have the same number of columns")
	}
	for i := range cols {
		if scols[i].Type != cols[i].Type && scols[i].Type != types.TUnknown {
			return nil, &pgerror.Error{Code: pgerror.CodeDatatypeMismatch, Message: fmt.Sprintf("recursive query %q column %d has type %s in non-recursive term but type %s overall",
				cte.Ctename, i+1, cols[i].Type, scols[i].Type), Hint: "Cast the output of the non-recursive term to the correct type."}
		}
	}
	d.root, d.step, d.all = root, step, q.All
	return d, nil
}

// cteColumns names a WITH query's columns by its column list.
func cteColumns(cte *pg.CommonTableExpr, cols []catalog.Column) ([]catalog.Column, error) {
	names := strs(cte.Aliascolnames)
	if len(names) > len(cols) {
		return nil, pgerror.Errorf(pgerror.CodeInvalidColumnRef, "WITH query %q has %d columns available but %d columns specified", cte.Ctename, len(cols), len(names)).At(cte.Location)
	}
	out := make([]catalog.Column, len(cols))
	for i, c := range cols {
		out[i] = catalog.Column{Name: c.Name, Type: c.Type, Int2: c.Int2, MaxLen: c.MaxLen, Varchar: c.Varchar, Prec: c.Prec, Scale: c.Scale}
		if i < len(names) {
			out[i].Name = names[i]
		}
	}
	return out, nil
}

// checkRecursiveForm refuses the recursive queries PostgreSQL refuses.
func checkRecursiveForm(cte *pg.CommonTableExpr, q *pg.SelectStmt) error {
	name := cte.Ctename
	self := map[string]bool{name: true}
	invalid := func(format string, args ...any) *pgerror.Error {
		return pgerror.Errorf("42P19", format, args...).At(cte.Location)
	}
	switch {
	case q.Op != pg.SetOperation_SETOP_UNION:
		return invalid("recursive query %q does not have the form non-recursive-term UNION [ALL] recursive-term", name)
	case len(q.SortClause) > 0:
		return pgerror.NotSupported("ORDER BY in a recursive query is not implemented").At(cte.Location)
	case q.LimitOffset != nil:
		return pgerror.NotSupported("OFFSET in a recursive query is not implemented").At(cte.Location)
	case q.LimitCount != nil:
		return pgerror.NotSupported("LIMIT in a recursive query is not implemented").At(cte.Location)
	case len(q.LockingClause) > 0:
		return pgerror.NotSupported("FOR UPDATE/SHARE in a recursive query is not implemented").At(cte.Location)
	case readsAny(q.Larg.ProtoReflect(), self):
		return invalid("recursive reference to query %q must not appear within its non-recursive term", name)
	}
	r := q.Rarg
	if r.Op != pg.SetOperation_SETOP_NONE {
		return invalid("recursive reference to query %q must not appear within %s", name, map[pg.SetOperation]string{
			pg.SetOperation_SETOP_UNION: "UNION", pg.SetOperation_SETOP_INTERSECT: "INTERSECT", pg.SetOperation_SETOP_EXCEPT: "EXCEPT"}[r.Op])
	}
	for _, n := range r.TargetList {
		if hasAgg(n.ProtoReflect()) {
			return invalid("aggregate functions are not allowed in a recursive query's recursive term")
		}
	}
	if hasAgg(r.ProtoReflect()) && r.HavingClause != nil {
		return invalid("aggregate functions are not allowed in a recursive query's recursive term")
	}
	// where the self-reference appears: once, in the FROM list itself
	total, direct := 0, 0
	walkNodes(&pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: r}}, func(n *pg.Node) bool { // check.go
		if rv := n.GetRangeVar(); rv != nil && rv.Schemaname == "" && rv.Relname == name {
			total++
		}
		return true
	})
	var outer bool
	var from func(n *pg.Node, nullable bool)
	from = func(n *pg.Node, nullable bool) {
		switch {
		case n.GetRangeVar() != nil:
			if rv := n.GetRangeVar(); rv.Schemaname == "" && rv.Relname == name {
				direct++
				outer = outer || nullable
			}
		case n.GetJoinExpr() != nil:
			j := n.GetJoinExpr()
			lnull := j.Jointype == pg.JoinType_JOIN_RIGHT || j.Jointype == pg.JoinType_JOIN_FULL
			rnull := j.Jointype == pg.JoinType_JOIN_LEFT || j.Jointype == pg.JoinType_JOIN_FULL
			from(j.Larg, nullable || lnull)
			from(j.Rarg, nullable || rnull)
		}
	}
	for _, f := range r.FromClause {
		from(f, false)
	}
	switch {
	case total > 1:
		return invalid("recursive reference to query %q must not appear more than once", name)
	case direct == 0:
		return invalid("recursive reference to query %q must not appear within a subquery", name)
	case outer:
		return invalid("recursive reference to query %q must not appear within an outer join", name)
	}
	return nil
}
