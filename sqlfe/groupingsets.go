package sqlfe

import (
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// GROUP BY: plain expressions, and PostgreSQL's grouping sets — ROLLUP,
// CUBE, GROUPING SETS and the empty set () — expanded as PostgreSQL's
// expand_grouping_sets does: each GROUP BY item is a list of sets, the
// items' lists are multiplied (GROUP BY a, ROLLUP (b, c) is the sets
// (a, b, c), (a, b), (a)), a set holds each expression once, and the list
// keeps repeated sets unless GROUP BY DISTINCT. Each distinct expression
// is one group column of the aggregation (aggCtx.groups); a set names the
// columns it groups by (aggCtx.sets), the others are NULL in its rows.
// grouping(e, …) is the bit mask of its arguments not grouped in the row's
// set (the first argument the highest bit); the aggregation's row carries
// its set's index after the aggregates (aggCtx.width).

// maxGroupingSets and maxCubeItems are PostgreSQL's limits.
const (
	maxGroupingSets = 4096
	maxCubeItems    = 12
)

// groupClause compiles st's GROUP BY into agg: its expressions, and its
// grouping sets when it has any.
func groupClause(gin *compiler, st *pg.SelectStmt, agg *aggCtx) error {
	hasSets := false
	for _, g := range st.GroupClause {
		if g.GetGroupingSet() != nil {
			hasSets = true
		}
	}
	if !hasSets {
		for _, g := range st.GroupClause {
			if _, err := addGroupExpr(gin, st, agg, g); err != nil {
				return err
			}
		}
		return nil
	}
	sets := [][]int{{}}
	for _, g := range st.GroupClause {
		item, err := groupItemSets(gin, st, agg, g, true)
		if err != nil {
			return err
		}
		if len(sets)*len(item) > maxGroupingSets {
			return pgerror.Errorf(pgerror.CodeStackDepth, // 54001, statement_too_complex too
				"too many grouping sets present (maximum %d)", maxGroupingSets)
		}
		var next [][]int
		for _, s := range sets {
			for _, t := range item {
				next = append(next, union(s, t))
			}
		}
		sets = next
	}
	if st.GroupDistinct {
		seen := map[string]bool{}
		var kept [][]int
		for _, s := range sets {
			k := string(appendInts(nil, s))
			if !seen[k] {
				seen[k] = true
				kept = append(kept, s)
			}
		}
		sets = kept
	}
	agg.sets = sets
	return nil
}

// groupItemSets is the list of sets one GROUP BY item (or an element
// inside a grouping set) stands for.
func groupItemSets(gin *compiler, st *pg.SelectStmt, agg *aggCtx, n *pg.Node, top bool) ([][]int, error) {
	gs := n.GetGroupingSet()
	if gs == nil {
		if r := n.GetRowExpr(); r != nil && r.RowFormat == pg.CoercionForm_COERCE_IMPLICIT_CAST {
			var set []int
			for _, a := range r.Args {
				g, err := addGroupExpr(gin, st, agg, a)
				if err != nil {
					return nil, err
				}
				set = union(set, []int{g})
			}
			return [][]int{set}, nil
		}
		g, err := addGroupExpr(gin, st, agg, n)
		if err != nil {
			return nil, err
		}
		return [][]int{{g}}, nil
	}
	// the elements of a ROLLUP or CUBE: each one set (an expression or a
	// parenthesized list)
	elements := func() ([][]int, error) {
		var out [][]int
		for _, c := range gs.Content {
			s, err := groupItemSets(gin, st, agg, c, false)
			if err != nil {
				return nil, err
			}
			out = append(out, s[0])
		}
		return out, nil
	}
	switch gs.Kind {
	case pg.GroupingSetKind_GROUPING_SET_EMPTY:
		return [][]int{{}}, nil
	case pg.GroupingSetKind_GROUPING_SET_ROLLUP:
		els, err := elements()
		if err != nil {
			return nil, err
		}
		var out [][]int
		for k := len(els); k >= 0; k-- {
			var set []int
			for _, e := range els[:k] {
				set = union(set, e)
			}
			out = append(out, set)
		}
		return out, nil
	case pg.GroupingSetKind_GROUPING_SET_CUBE:
		if len(gs.Content) > maxCubeItems {
			return nil, pgerror.Errorf(pgerror.CodeTooManyColumns, "CUBE is limited to %d elements", maxCubeItems).At(gs.Location)
		}
		els, err := elements()
		if err != nil {
			return nil, err
		}
		var out [][]int
		for mask := (1 << len(els)) - 1; mask >= 0; mask-- {
			var set []int
			for i, e := range els {
				if mask&(1<<(len(els)-1-i)) != 0 {
					set = union(set, e)
				}
			}
			out = append(out, set)
		}
		return out, nil
	case pg.GroupingSetKind_GROUPING_SET_SETS:
		var out [][]int
		for _, c := range gs.Content {
			s, err := groupItemSets(gin, st, agg, c, false)
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
		return out, nil
	}
	return nil, pgerror.NotSupported("this grouping set is not supported").At(gs.Location)
}

// union is the set of a's and b's group columns, sorted.
func union(a, b []int) []int {
	out := append([]int{}, a...)
	for _, x := range b {
		if !containsInt(out, x) {
			out = append(out, x)
		}
	}
	sort.Ints(out)
	return out
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func appendInts(b []byte, xs []int) []byte {
	for _, x := range xs {
		b = append(b, byte(x>>8), byte(x))
	}
	return b
}

// addGroupExpr compiles one GROUP BY expression (a select-list position
// or output name, else an expression over the input row) and returns its
// group column, the one it already has when it is grouped already.
func addGroupExpr(gin *compiler, st *pg.SelectStmt, agg *aggCtx, g *pg.Node) (int, error) {
	gn := g
	if k := g.GetAConst(); k != nil {
		if iv, ok := k.Val.(*pg.A_Const_Ival); ok {
			pos := int(iv.Ival.Ival)
			if pos < 1 || pos > len(st.TargetList) {
				return 0, pgerror.Errorf(pgerror.CodeInvalidColumnRef, "GROUP BY position %d is not in select list", pos).At(k.Location)
			}
			gn = st.TargetList[pos-1].GetResTarget().Val
		}
	}
	x, err := gin.compile(gn, types.TUnknown)
	if err != nil {
		// GROUP BY an output column's name
		if cr := gn.GetColumnRef(); cr != nil && len(cr.Fields) == 1 {
			name := strs(cr.Fields)[0]
			for _, t := range st.TargetList {
				if rt := t.GetResTarget(); rt.Name == name {
					gn = rt.Val
					x, err = gin.compile(gn, types.TUnknown)
					break
				}
			}
		}
		if err != nil {
			return 0, err
		}
	}
	if x.typ() == types.TUnknown {
		x = &castExpr{arg: x, t: types.TText}
	}
	if i, dup := agg.groupKeys[nodeKey(gn)]; dup {
		return i, nil
	}
	agg.groupKeys[nodeKey(gn)] = len(agg.groups)
	if c, ok := x.(*colExpr); ok {
		agg.groupCols[c.idx] = len(agg.groups)
	}
	agg.groups = append(agg.groups, x)
	return len(agg.groups) - 1, nil
}

// commonGroupCols is groupCols restricted to the columns every grouping
// set groups by: only those make a column functionally dependent (as in
// PostgreSQL, which looks at the sets' intersection).
func (a *aggCtx) commonGroupCols() map[int]int {
	if a.sets == nil {
		return a.groupCols
	}
	out := map[int]int{}
	for idx, g := range a.groupCols {
		all := true
		for _, s := range a.sets {
			if !containsInt(s, g) {
				all = false
				break
			}
		}
		if all {
			out[idx] = g
		}
	}
	return out
}

// groupingFunc compiles grouping(args) above the aggregation: each
// argument must be one of GROUP BY's expressions.
func (a *aggCtx) groupingFunc(gf *pg.GroupingFunc) (expr, error) {
	if len(gf.Args) > 31 {
		return nil, pgerror.Errorf(pgerror.CodeTooManyArguments, "GROUPING must have fewer than 32 arguments").At(gf.Location)
	}
	g := &groupingExpr{a: a}
	for _, arg := range gf.Args {
		i, ok := a.groupKeys[nodeKey(arg)]
		if !ok {
			if cr := arg.GetColumnRef(); cr != nil {
				if x, err := a.in.column(cr); err == nil {
					if c, isCol := x.(*colExpr); isCol {
						i, ok = a.groupCols[c.idx]
					}
				}
			}
		}
		if !ok {
			loc := gf.Location
			if cr := arg.GetColumnRef(); cr != nil {
				loc = cr.Location
			}
			return nil, pgerror.Errorf(pgerror.CodeGrouping, "arguments to GROUPING must be grouping expressions of the associated query level").At(loc)
		}
		g.args = append(g.args, i)
	}
	return g, nil
}

// groupingExpr is grouping(args) over the aggregation's row.
type groupingExpr struct {
	a    *aggCtx
	args []int // group columns
}

func (g *groupingExpr) typ() types.Type { return types.TInt4 }
func (g *groupingExpr) kids() []expr    { return nil }
func (g *groupingExpr) eval(e *env) (types.Value, error) {
	var set []int
	if g.a.sets != nil {
		set = g.a.sets[e.row[len(g.a.groups)+len(g.a.aggs)].I]
	}
	v := int32(0)
	for _, i := range g.args {
		v <<= 1
		if g.a.sets != nil && !containsInt(set, i) {
			v |= 1
		}
	}
	return types.Int4(v), nil
}

// nodeLocation is where an aggregate call or grouping() starts.
func nodeLocation(n *pg.Node) int32 {
	if f := n.GetFuncCall(); f != nil {
		return f.Location
	}
	return n.GetGroupingFunc().GetLocation()
}
