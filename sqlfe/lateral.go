package sqlfe

import (
	"errors"
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
	"google.golang.org/protobuf/proto"
)

// LATERAL: a FROM item that reads the FROM items to its left — a
// subquery marked LATERAL, or a set-returning function (always lateral in
// PostgreSQL) — is planned with those items' scope as its outer query
// (their names resolve as a correlated subquery's do, conditional.go
// subLink, marking the columns read in their colUse), and its join with
// them is a nested loop that runs it again for each left row, with that
// row as the outer env its outerExprs read (nestedLoop.runLateral). A
// lateral item that reads nothing to its left is an ordinary one.
//
// What a FROM item may reach is lateralCtx, set while the item is
// planned (selectBlock for the FROM list, joinItem for a JOIN's sides):
// the errors for what it may not are PostgreSQL's, made from the
// 42P01 "missing FROM-clause entry" its planning met (lateralError).

// lateralCtx is what the FROM item being planned may read to its left.
type lateralCtx struct {
	// left is the scope of the items whose row the join running this
	// item has (nil: none)
	left *scope
	// beyond names items further left, outside the JOIN this item is in
	// (PostgreSQL lets a LATERAL item read them; tupled does not)
	beyond []string
	// rightFull names the left side of the RIGHT or FULL JOIN whose right
	// side this item is (42P10 for a LATERAL reference to them)
	rightFull []string
}

// names is every name of a FROM item to the left.
func (lc *lateralCtx) names() []string {
	if lc == nil {
		return nil
	}
	out := append([]string(nil), lc.beyond...)
	out = append(out, lc.rightFull...)
	if lc.left != nil {
		for _, r := range lc.left.rels {
			out = append(out, r.name)
		}
	}
	return out
}

// relNames is the names of sc's FROM items.
func relNames(sc *scope) []string {
	var out []string
	for _, r := range sc.rels {
		out = append(out, r.name)
	}
	return out
}

// lateralError turns a 42P01 "missing FROM-clause entry" for an item to
// the left into PostgreSQL's error for it: 42P10 on the right side of a
// RIGHT or FULL JOIN, 0A000 for an item outside the item's JOIN (LATERAL
// planned), else (no LATERAL) 42P01 "invalid reference" with its hint.
func lateralError(err error, lc *lateralCtx, lateral bool) error {
	var fe *pgerror.Error
	if lc == nil || !errors.As(err, &fe) || fe.Code != pgerror.CodeUndefinedTable {
		return err
	}
	missing := func(names []string) string {
		for _, n := range names {
			if fe.Message == fmt.Sprintf("missing FROM-clause entry for table %q", n) {
				return n
			}
		}
		return ""
	}
	if n := missing(lc.rightFull); n != "" && lateral {
		e := pgerror.Errorf(pgerror.CodeInvalidColumnRef, "invalid reference to FROM-clause entry for table %q", n)
		e.Detail, e.Position = "The combining JOIN type must be INNER or LEFT for a LATERAL reference.", fe.Position
		return e
	}
	if n := missing(lc.beyond); n != "" && lateral {
		return pgerror.NotSupported("a LATERAL reference to %q, outside the JOIN the LATERAL item is in, is not supported", n)
	}
	if n := missing(lc.names()); n != "" {
		e := pgerror.Errorf(pgerror.CodeUndefinedTable, "invalid reference to FROM-clause entry for table %q", n)
		e.Hint = fmt.Sprintf("There is an entry for table %q, but it cannot be referenced from this part of the query.", n)
		e.Position = fe.Position
		return e
	}
	return err
}

// planLateral runs plan with the items to the left (lc.left) as the
// outer query: refs is how many references it made to them (or to a
// query further out).
func (s *Session) planLateral(lc *lateralCtx, params *[]types.Type, plan func(outer *compiler) error) (refs int, err error) {
	prevOuter, prevRefs := s.planOuter, s.outerRefs
	outer := s.planOuter
	if lc != nil && lc.left != nil {
		outer = &compiler{s: s, outer: s.planOuter, params: params, scope: lc.left, fromLateral: true}
	}
	s.planOuter, s.outerRefs = outer, 0
	err = plan(outer)
	refs = s.outerRefs
	s.planOuter, s.outerRefs = prevOuter, prevRefs+refs
	return refs, err
}

// correlatedSubquery plans a subquery in FROM that may read a query
// around it: a LATERAL one the items to its left (lc.left) too. One that
// reads no item to its left runs once per run of its scan (under the rows
// of the queries around it, if it reads them); a lateral one per left
// row (a lateralScan). ok is false when the general path cannot plan it:
// the ordinary path (fromItem) then plans it or says what is wrong.
func (s *Session) correlatedSubquery(rs *pg.RangeSubselect, sub *pg.SelectStmt, lc *lateralCtx, params *[]types.Type) (relNode, *scope, bool, error) {
	if !rs.Lateral {
		lc = nil // its siblings are not in reach
	}
	var root relNode
	var cols []catalog.Column
	refs, err := s.planLateral(lc, params, func(*compiler) error {
		var err error
		root, cols, err = s.buildQuery(sub, params, false)
		return err
	})
	if err != nil && lc != nil && lc.left != nil {
		return nil, nil, true, lateralError(err, lc, true)
	}
	if err != nil {
		return nil, nil, false, nil // the ordinary path plans it or says what is wrong
	}
	if cols, err = aliasCols(cols, rs.Alias); err != nil {
		return nil, nil, true, err
	}
	what := "Subquery Scan on " + rs.Alias.Aliasname
	// (one that reads nothing around it is an ordinary subquery, but is
	// not planned again: nested ones would be planned twice per level)
	if refs > 0 && lc != nil && lc.left != nil {
		n := &lateralScan{what: what, root: root}
		return n, &scope{rels: []*scopeRel{{name: rs.Alias.Aliasname, cols: cols}}, width: len(cols)}, true, nil
	}
	n := &rowsScan{what: what, rows: func(q *qctx) ([][]types.Value, error) { return collect(q, root) }}
	return n, &scope{rels: []*scopeRel{{name: rs.Alias.Aliasname, cols: cols, rows: n}}, width: len(cols)}, true, nil
}

// outerStar is rel.* of a query around c's (err: the one rel's absence
// from c's scope gave, returned when no query around has it either):
// each column an outerExpr, as column references to it are.
func outerStar(c *compiler, rel string, err error) ([]string, []expr, error) {
	depth := 0
	for o := c.outer; o != nil; o = o.outer {
		depth++
		if o.scope == nil {
			continue
		}
		names, xs, oerr := o.scope.star(rel, -1)
		if oerr != nil {
			continue
		}
		for i := range xs {
			for range depth {
				xs[i] = &outerExpr{x: xs[i]}
			}
		}
		if c.s != nil {
			c.s.outerRefs++
		}
		return names, xs, nil
	}
	return nil, nil, err
}

// outerAggregate reports whether an aggregate's compiled arguments read
// columns of a query around it and none of its own: PostgreSQL's
// aggregate of that outer query, which tupled does not evaluate there.
func outerAggregate(xs []expr) bool {
	outer, own := false, false
	var walk func(x expr)
	walk = func(x expr) {
		switch x.(type) {
		case *outerExpr:
			outer = true
		case *colExpr:
			own = true
		}
		for _, k := range x.kids() {
			walk(k)
		}
	}
	for _, x := range xs {
		if x != nil {
			walk(x)
		}
	}
	return outer && !own
}

// srfFromItem plans a set-returning function in FROM (srf.go's
// srfInFrom), lateral when its arguments read an item to its left; ok
// false when rf is not one.
func (s *Session) srfFromItem(rf *pg.RangeFunction, lc *lateralCtx, params *[]types.Type) (node relNode, sc *scope, ok bool, err error) {
	if rf.Ordinality || rf.IsRowsfrom || len(rf.Functions) != 1 || len(rf.Coldeflist) > 0 {
		return nil, nil, false, nil
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) == 0 || items[0].GetFuncCall() == nil {
		return nil, nil, false, nil
	}
	fc := items[0].GetFuncCall()
	if _, _, ok := srfOf(fc); !ok {
		return nil, nil, false, nil
	}
	var sp *srfSpec
	var cols []catalog.Column
	var rel string
	refs, err := s.planLateral(lc, params, func(outer *compiler) error {
		var err error
		sp, cols, rel, err = srfSpecInFrom(rf, fc, &compiler{s: s, outer: outer, params: params})
		return err
	})
	if err != nil {
		return nil, nil, true, lateralError(err, lc, true)
	}
	what := "Function Scan on " + rel
	if refs > 0 {
		node = &lateralScan{what: what, sp: sp}
		return node, &scope{rels: []*scopeRel{{name: rel, cols: cols}}, width: len(cols)}, true, nil
	}
	rs := &rowsScan{what: what, rows: func(q *qctx) ([][]types.Value, error) { return sp.rows(q.env(nil)) }}
	return rs, &scope{rels: []*scopeRel{{name: rel, cols: cols, rows: rs}}, width: len(cols)}, true, nil
}

// lateralScan is a lateral FROM item: its rows computed anew each time it
// runs, under the left row its nested loop set as the outer env
// (runLateral).
type lateralScan struct {
	what string
	root relNode  // a subquery's plan
	sp   *srfSpec // or a set-returning function's call
}

func (n *lateralScan) run(q *qctx, fn func(row []types.Value) error) error {
	if n.sp == nil {
		return n.root.run(q, fn)
	}
	rows, err := n.sp.rows(q.env(nil))
	if err != nil {
		return err
	}
	for _, r := range rows {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

func (n *lateralScan) explain(w *strings.Builder, depth int) {
	explainLine(w, depth, "%s", n.what)
	if n.root != nil {
		n.root.explain(w, depth+1)
	}
}

// isLateral reports whether a FROM item's node reads the items to its
// left (its join must then run it per left row).
func isLateral(n relNode) bool {
	_, ok := n.(*lateralScan)
	return ok
}

// runLateral is a nested loop whose right side is lateral: for each left
// row, the right side runs with that row as its outer env; a LEFT JOIN's
// left row that joins none comes out NULL-extended.
func (n *nestedLoop) runLateral(q *qctx, fn func(row []types.Value) error) error {
	out := make([]types.Value, n.lw+n.rw)
	e := q.env(nil)
	return n.left.run(q, func(lrow []types.Value) error {
		lq := *q
		lq.outer = q.env(lrow)
		copy(out, lrow)
		any := false
		err := n.right.run(&lq, func(rrow []types.Value) error {
			copy(out[:n.lw], lrow)
			copy(out[n.lw:], rrow)
			e.row = out
			ok, err := truthy(n.cond, e)
			if err != nil || !ok {
				return err
			}
			any = true
			return fn(out)
		})
		if err != nil || any || n.kind != joinLeft {
			return err
		}
		copy(out[:n.lw], lrow)
		for i := n.lw; i < len(out); i++ {
			out[i] = types.Value{Null: true}
		}
		return fn(out)
	})
}

func sortKeyExprs(ks []sortKey) []expr {
	var out []expr
	for _, k := range ks {
		out = append(out, k.x)
	}
	return out
}

// pushLocks is a subquery in FROM (named alias) with the locking clauses
// of the query around it that apply to it (those without OF, or whose OF
// names it) added as its own, without OF: PostgreSQL's
// transformLockingClause pushes them into the subquery so, and its rows
// are then locked by its own plan (the LockRows node above skips it:
// scopeRel.lockedInside). pushed reports whether any applied.
//
// Only into a subquery PostgreSQL's planner does not pull up into the
// join (is_simple_subquery: one with ORDER BY, LIMIT, OFFSET, WITH,
// grouping, aggregates, DISTINCT, window functions or a set operation —
// the top N per group): that one locks the rows it returns, as here. A
// simple one is flattened, and PostgreSQL locks only its rows that are
// joined and pass the WHERE; tupled cannot, and leaves it to the LockRows
// node's 0A000.
func pushLocks(sub *pg.SelectStmt, alias string, locks []*pg.Node) (out *pg.SelectStmt, pushed bool) {
	simple := len(sub.SortClause) == 0 && sub.LimitCount == nil && sub.LimitOffset == nil && sub.WithClause == nil &&
		len(sub.GroupClause) == 0 && sub.HavingClause == nil && len(sub.DistinctClause) == 0 && len(sub.WindowClause) == 0 &&
		sub.Op == pg.SetOperation_SETOP_NONE && len(sub.ValuesLists) == 0 && !needsAgg(sub) && !hasWindow(sub.ProtoReflect())
	if simple {
		return sub, false
	}
	var apply []*pg.Node
	for _, n := range locks {
		lk := n.GetLockingClause()
		named := len(lk.LockedRels) == 0
		for _, r := range lk.LockedRels {
			if rv := r.GetRangeVar(); rv != nil && rv.Schemaname == "" && rv.Relname == alias {
				named = true
			}
		}
		if named {
			c := proto.Clone(n).(*pg.Node)
			c.GetLockingClause().LockedRels = nil
			apply = append(apply, c)
		}
	}
	if len(apply) == 0 {
		return sub, false
	}
	out = proto.Clone(sub).(*pg.SelectStmt)
	out.LockingClause = append(out.LockingClause, apply...)
	return out, true
}

// lockedInside marks sc's item as a subquery locking its own rows.
func lockedInside(sc *scope, pushed bool) *scope {
	if sc != nil && pushed {
		for _, r := range sc.rels {
			r.lockedInside = true
		}
	}
	return sc
}
