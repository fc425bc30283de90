package sqlfe

import (
	"context"
	"fmt"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The general query path.
//
// A SELECT over one table (or a virtual relation, or no FROM) with no
// grouping, aggregates, DISTINCT or set operation keeps the single-table
// plan of dml.go, which owns row locking (FOR UPDATE and its kin, with the
// engine's EvalPlanQual recheck) and the early stop of a LIMIT over a key
// scan. Everything else is planned here into a tree of relNodes
// (query_exec.go), in PostgreSQL's order of evaluation:
//
//	FROM (scans; joins: hash when ON has an equality of the two sides,
//	      else nested loop)
//	  → WHERE (each conjunct that names one table is pushed into that
//	      table's scan, where scanRows turns it into a point, range or
//	      index access; a conjunct joining two FROM-list items becomes
//	      their join's condition)
//	  → GROUP BY / aggregates (agg.go) → HAVING
//	  → window functions (window.go)
//	  → the select list (and ORDER BY keys not in it); with set-returning
//	      calls a ProjectSet (srf.go)
//	  → DISTINCT → ORDER BY → LIMIT / OFFSET
//
// and UNION / INTERSECT / EXCEPT [ALL] and VALUES lists as their own
// nodes. Names resolve through a scope: the FROM items' columns side by
// side in one row, each item under its name or alias; an unqualified name
// two items have is 42702, a USING column is one column.
//
// Invariants:
//   - Every expression is compiled against the row of the node that
//     evaluates it: scan filters against their table's row alone, the rest
//     against the scope's whole row (a join's right-side columns follow
//     its left side's), above an aggregation against the aggregation's row
//     (group values, then aggregate results).
//   - A conjunct is pushed down only into a scan whose rows are never
//     NULL-extended (not the nullable side of an outer join), so pushing
//     it cannot change the result.
//   - A locking clause on a join (or on a subquery in FROM) is a LockRows
//     node between the FROM/WHERE subtree and the select list, with its
//     EvalPlanQual recheck (lockjoin.go); with GROUP BY, DISTINCT,
//     aggregates, window functions and set operations it is 0A000, as in
//     PostgreSQL.

// needsQueryPath reports whether st is planned by the general path.
func needsQueryPath(st *pg.SelectStmt) bool {
	if st.Op != pg.SetOperation_SETOP_NONE || len(st.ValuesLists) > 0 || len(st.DistinctClause) > 0 ||
		len(st.GroupClause) > 0 || st.HavingClause != nil || len(st.FromClause) > 1 || len(st.WindowClause) > 0 {
		return true
	}
	for _, f := range st.FromClause {
		if f.GetJoinExpr() != nil || f.GetRangeSubselect() != nil {
			return true
		}
	}
	for _, n := range st.TargetList {
		if hasAgg(n.ProtoReflect()) || hasWindow(n.ProtoReflect()) || hasSRF(n.ProtoReflect()) {
			return true
		}
	}
	for _, n := range st.SortClause {
		if hasAgg(n.ProtoReflect()) || hasWindow(n.ProtoReflect()) {
			return true
		}
	}
	// the one-table path evaluates sort keys apart from the select list:
	// nextval there would run twice (sequence.go)
	return len(st.SortClause) > 0 && hasSeqCall(st)
}

// inTree reports whether m, or a message below it outside a subquery,
// satisfies is.
func inTree(m protoreflect.Message, is func(protoreflect.Message) bool) bool {
	if is(m) {
		return true
	}
	if _, ok := m.Interface().(*pg.SubLink); ok {
		return false
	}
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len() && !found; i++ {
				found = inTree(l.Get(i).Message(), is)
			}
		case fd.Message() != nil && !fd.IsMap():
			found = inTree(v.Message(), is)
		}
		return !found
	})
	return found
}

// hasWindow reports whether m holds a window function call outside a
// subquery.
func hasWindow(m protoreflect.Message) bool {
	return inTree(m, func(m protoreflect.Message) bool {
		f, ok := m.Interface().(*pg.FuncCall)
		return ok && f.Over != nil
	})
}

// hasAgg reports whether m holds an aggregate call outside a subquery.
func hasAgg(m protoreflect.Message) bool {
	return inTree(m, func(m protoreflect.Message) bool {
		n, ok := m.Interface().(*pg.Node)
		return ok && (isAggCall(n) || n.GetGroupingFunc() != nil)
	})
}

// nodeKey is a parse tree's identity regardless of where in the text it
// stands: GROUP BY a + 1 and the select list's a + 1 are one expression.
func nodeKey(n *pg.Node) string {
	c := proto.Clone(n)
	clearLocations(c.ProtoReflect())
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	return string(b)
}

func clearLocations(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Name() == "location" || fd.Name() == "stmt_location":
			m.Clear(fd)
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				clearLocations(l.Get(i).Message())
			}
		case fd.Message() != nil && !fd.IsMap():
			clearLocations(v.Message())
		}
		return true
	})
}

// planQuery plans st by the general path.
func (s *Session) planQuery(st *pg.SelectStmt, params *[]types.Type, keepUnknown bool) (*plan, error) {
	root, cols, err := s.buildQuery(st, params, keepUnknown)
	if err != nil {
		return nil, err
	}
	return &plan{cols: cols, usesT: true, root: root, run: func(ctx context.Context, s *Session, pv []types.Value) (*Result, error) {
		return runQuery(ctx, s, pv, root)
	}}, nil
}

// planExplain plans EXPLAIN of a SELECT: the plan's nodes, one line each
// under the column "QUERY PLAN", as PostgreSQL's text format draws them
// (without costs: this layer has no cost model). A one-table SELECT shows
// the access its selectPlan chose.
func (s *Session) planExplain(st *pg.ExplainStmt, params *[]types.Type) (*plan, error) {
	o, err := explainOptions(st.Options) // explain_analyze.go
	if err != nil {
		return nil, err
	}
	sel := st.Query.GetSelectStmt()
	if sel == nil {
		return nil, pgerror.NotSupported("EXPLAIN is supported only for SELECT")
	}
	if o.analyze {
		return s.planExplainAnalyze(sel, params, o)
	}
	start := time.Now()
	p, err := s.planSelect(sel, params)
	if err != nil {
		return nil, err
	}
	var w strings.Builder
	if p.root != nil {
		p.root.explain(&w, 0)
	} else if p.explain != nil {
		p.explain(&w)
	} else {
		w.WriteString("Result\n")
	}
	if o.summary {
		fmt.Fprintf(&w, "Planning Time: %.3f ms\n", ms(time.Since(start)))
	}
	rows := planLines(w.String())
	return &plan{cols: []catalog.Column{{Name: "QUERY PLAN", Type: types.TText}}, run: func(context.Context, *Session, []types.Value) (*Result, error) {
		return &Result{Rows: rows, Tag: "EXPLAIN"}, nil
	}}, nil
}

func defElemString(d *pg.DefElem) string {
	if d.Arg == nil {
		return ""
	}
	if sv := d.Arg.GetString_(); sv != nil {
		return sv.Sval
	}
	return strings.Join(strs([]*pg.Node{d.Arg}), "")
}
