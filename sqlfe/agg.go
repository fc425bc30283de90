package sqlfe

import (
	"math"
	"sort"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// Aggregation (GROUP BY, HAVING, aggregate functions) for the general query
// path (query.go).
//
// An aggNode reads its whole input, puts each row in the group of its GROUP
// BY values (NULLs are one group, as in PostgreSQL) and feeds the row to
// each aggregate's accumulator of that group. It then produces one row per
// group, in the order the groups were first seen: the group values, then
// the aggregates' results. With no GROUP BY there is one group, produced
// even when the input is empty (count(*) of an empty table is 0). With
// grouping sets (groupingsets.go) each row joins one group of each set,
// the group columns its set does not group by NULL; an empty set's group
// is produced even when the input is empty.
//
// What is evaluated above the aggregation (the select list, HAVING, ORDER
// BY) is compiled by a compiler whose aggCtx maps each GROUP BY expression
// and each aggregate call to its column of the aggNode's row; a column
// reference that is neither grouped nor functionally dependent on a
// grouped primary key is 42803, as PostgreSQL says.
//
// The variance family (stddev, variance and their _samp and _pop forms)
// is PostgreSQL's: integers and numerics give numeric, summing x and x²
// exactly (sql/types' NumericVariance has numeric_stddev_internal's
// scales), floats give double precision by float8_accum's Youngs-Cramer
// steps.

// aggNames are the aggregate functions this layer implements.
var aggNames = map[string]bool{
	"count": true, "sum": true, "min": true, "max": true, "avg": true,
	"bool_and": true, "bool_or": true, "every": true, "string_agg": true, "array_agg": true,
	"stddev": true, "stddev_samp": true, "stddev_pop": true, "variance": true, "var_samp": true, "var_pop": true,
	"percentile_cont": true, "percentile_disc": true, "mode": true,
	"json_agg": true, "jsonb_agg": true, "json_object_agg": true, "jsonb_object_agg": true,
}

// orderedSetAggs are the ordered-set aggregates: name(direct args) WITHIN
// GROUP (ORDER BY the aggregated value).
var orderedSetAggs = map[string]bool{"percentile_cont": true, "percentile_disc": true, "mode": true}

// statAggs are the variance family: sample (or population) variance, or
// its square root.
var statAggs = map[string]struct{ sample, stddev bool }{
	"stddev": {true, true}, "stddev_samp": {true, true}, "stddev_pop": {false, true},
	"variance": {true, false}, "var_samp": {true, false}, "var_pop": {false, false},
}

// isAggCall reports whether n is a call of an aggregate (not as a window
// function).
func isAggCall(n *pg.Node) bool {
	f := n.GetFuncCall()
	if f == nil || f.Over != nil {
		return false
	}
	names := strs(f.Funcname)
	if len(names) == 0 || (len(names) == 2 && names[0] != "pg_catalog") || len(names) > 2 {
		return false
	}
	return aggNames[names[len(names)-1]]
}

// aggSpec is one aggregate call.
type aggSpec struct {
	name     string
	star     bool // count(*)
	distinct bool
	args     []expr // over the input row
	filter   expr
	order    []sortKey  // ORDER BY inside the call
	t        types.Type // the result type
	// within: an ordered-set aggregate; args are its direct arguments,
	// evaluated once per group (orderedset.go), order its aggregated value
	within bool
}

// aggCtx is a compiler's view of the aggregation below it.
type aggCtx struct {
	in        *compiler      // compiles over the input rows
	groupKeys map[string]int // nodeKey of a GROUP BY expression → its column
	groupCols map[int]int    // input column index of a grouped column → its column
	groups    []expr         // the GROUP BY expressions, over the input row
	aggs      []*aggSpec
	having    expr // over the aggregation's row
	// sets: GROUP BY's grouping sets, each the group columns it groups by
	// (nil: one set of them all; groupingsets.go)
	sets [][]int
}

// width is the aggregation's row: the group columns, the aggregates and,
// with grouping sets, the index of the row's set.
func (a *aggCtx) width() int {
	if a.sets != nil {
		return len(a.groups) + len(a.aggs) + 1
	}
	return len(a.groups) + len(a.aggs)
}

// aggColumn is the column of the aggregation's row holding a value the
// aggregation produces; after planning, the aggregate columns are moved
// behind all the group columns (functional dependencies add group columns
// while the select list is compiled), so it holds a pointer.
type aggColumn struct {
	a   *aggCtx
	agg int // index into a.aggs, or -1 for a group column
	grp int
	t   types.Type
	m   types.Mod // a group column's modifier: a grouped smallint or varchar stays one
}

func (c *aggColumn) eval(e *env) (types.Value, error) {
	if c.agg >= 0 {
		return e.row[len(c.a.groups)+c.agg], nil
	}
	return e.row[c.grp], nil
}
func (c *aggColumn) typ() types.Type { return c.t }
func (c *aggColumn) kids() []expr    { return nil }

// lookup compiles n above the aggregation when n is a grouped expression,
// an aggregate call or a column reference; ok is false for anything else
// (the caller compiles it as usual, its parts coming back here).
func (a *aggCtx) lookup(c *compiler, n *pg.Node) (expr, bool, error) {
	if g, ok := a.groupKeys[nodeKey(n)]; ok {
		x := a.groups[g]
		return &aggColumn{a: a, agg: -1, grp: g, t: x.typ(), m: exprMod(x)}, true, nil
	}
	if isAggCall(n) {
		x, err := a.addAgg(c, n.GetFuncCall())
		return x, true, err
	}
	if gf := n.GetGroupingFunc(); gf != nil {
		x, err := a.groupingFunc(gf) // groupingsets.go
		return x, true, err
	}
	cr := n.GetColumnRef()
	if cr == nil {
		return nil, false, nil
	}
	x, err := a.in.column(cr)
	if err != nil {
		return nil, true, err
	}
	col, ok := x.(*colExpr)
	if !ok {
		// a merged USING column of a FULL JOIN: grouped only as itself
		return nil, true, a.ungrouped(cr)
	}
	if g, ok := a.groupCols[col.idx]; ok {
		return &aggColumn{a: a, agg: -1, grp: g, t: col.t, m: col.m}, true, nil
	}
	// functionally dependent on a grouped primary key: group by it too
	if a.in.scope != nil && a.in.scope.pkGrouped(col.idx, a.commonGroupCols()) {
		g := len(a.groups)
		a.groups = append(a.groups, col)
		a.groupCols[col.idx] = g
		for i := range a.sets { // grouped in every set, as the key is
			a.sets[i] = append(a.sets[i], g)
		}
		return &aggColumn{a: a, agg: -1, grp: g, t: col.t, m: col.m}, true, nil
	}
	return nil, true, a.ungrouped(cr)
}

func (a *aggCtx) ungrouped(cr *pg.ColumnRef) error {
	name := strings.Join(strs(cr.Fields), ".")
	if f := strs(cr.Fields); len(f) == 1 && a.in.scope != nil {
		if r := a.in.scope.relOf(f[0]); r != "" {
			name = r + "." + f[0]
		}
	}
	return pgerror.Errorf(pgerror.CodeGrouping, "column %q must appear in the GROUP BY clause or be used in an aggregate function", name).At(cr.Location)
}

// addAgg compiles an aggregate call's arguments over the input rows.
func (a *aggCtx) addAgg(c *compiler, f *pg.FuncCall) (expr, error) {
	names := strs(f.Funcname)
	name := names[len(names)-1]
	in := *a.in
	in.clause = "aggregate function calls" // nested aggregates: 42803
	in.srf = nil
	in.wholeRow = name == "json_agg" || name == "jsonb_agg" // json_agg(t): jsonfuncs.go
	sp := &aggSpec{name: name, star: f.AggStar, distinct: f.AggDistinct, within: f.AggWithinGroup}
	switch {
	case orderedSetAggs[name] && !f.AggWithinGroup:
		return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "WITHIN GROUP is required for ordered-set aggregate %s", name).At(f.Location)
	case !orderedSetAggs[name] && f.AggWithinGroup:
		return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "%s is not an ordered-set aggregate, so it cannot have WITHIN GROUP", name).At(f.Location)
	}
	for _, arg := range f.Args {
		x, err := in.compile(arg, types.TUnknown)
		if err != nil {
			return nil, err
		}
		if x.typ() == types.TUnknown {
			want := types.TText
			if sp.within { // a percentile's fraction
				want = types.TFloat8
			}
			if x, err = in.coerce(x, want); err != nil {
				return nil, err
			}
		}
		sp.args = append(sp.args, x)
	}
	if f.AggFilter != nil {
		fin := in
		fin.clause = "FILTER"
		fx, err := fin.compile(f.AggFilter, types.TBool)
		if err != nil {
			return nil, err
		}
		if fx.typ() != types.TBool {
			return nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "argument of FILTER must be type boolean, not type %s", fx.typ())
		}
		sp.filter = fx
	}
	for _, o := range f.AggOrder {
		sb := o.GetSortBy()
		x, err := in.compile(sb.Node, types.TUnknown)
		if err != nil {
			return nil, err
		}
		desc := sb.SortbyDir == pg.SortByDir_SORTBY_DESC
		nf := desc
		switch sb.SortbyNulls {
		case pg.SortByNulls_SORTBY_NULLS_FIRST:
			nf = true
		case pg.SortByNulls_SORTBY_NULLS_LAST:
			nf = false
		}
		sp.order = append(sp.order, sortKey{x: x, desc: desc, nullsFirst: nf})
	}
	if outerAggregate(append(append(sp.args[:len(sp.args):len(sp.args)], sp.filter), sortKeyExprs(sp.order)...)) { // lateral.go
		if a.in.outer != nil && a.in.outer.fromLateral {
			return nil, pgerror.Errorf(pgerror.CodeGrouping, "aggregate functions are not allowed in FROM clause of their own query level").At(f.Location)
		}
		return nil, pgerror.NotSupported("an aggregate over only the columns of an enclosing query is not supported").At(f.Location)
	}
	noSuch := func() error {
		var ts []string
		for _, x := range sp.args {
			ts = append(ts, x.typ().String())
		}
		return &pgerror.Error{Code: pgerror.CodeUndefinedFunction, Message: "function " + name + "(" + strings.Join(ts, ", ") + ") does not exist",
			Hint: "No function matches the given name and argument types. You might need to add explicit type casts.", Position: f.Location + 1}
	}
	nargs := len(sp.args)
	if sp.within {
		if err := orderedSetSpec(sp, f, noSuch); err != nil { // orderedset.go
			return nil, err
		}
		a.aggs = append(a.aggs, sp)
		return &aggColumn{a: a, agg: len(a.aggs) - 1, t: sp.t}, nil
	}
	if _, ok := statAggs[name]; ok {
		if nargs != 1 || !types.IsNumber(sp.args[0].typ()) && !types.IsFloat(sp.args[0].typ()) {
			return nil, noSuch()
		}
		sp.t = types.TNumeric
		if types.IsFloat(sp.args[0].typ()) {
			sp.t = types.TFloat8
		}
	}
	switch name {
	case "count":
		if !sp.star && nargs != 1 {
			return nil, noSuch()
		}
		sp.t = types.TInt8
	case "sum", "avg":
		if nargs == 1 && sp.args[0].typ() == types.TInterval {
			sp.t = types.TInterval // interval_pl's sum; avg divides it by the count
			break
		}
		if nargs != 1 || !types.IsNumber(sp.args[0].typ()) && !types.IsFloat(sp.args[0].typ()) {
			return nil, noSuch()
		}
		sp.t = types.TNumeric
		switch at := sp.args[0].typ(); {
		case name == "sum" && at == types.TInt4:
			sp.t = types.TInt8
		case name == "sum" && types.IsFloat(at):
			sp.t = at
		case types.IsFloat(at):
			sp.t = types.TFloat8
		}
	case "min", "max":
		if nargs != 1 || sp.args[0].typ() == types.TVoid || types.ExtTypes[sp.args[0].typ()] != nil && !types.ExtTypes[sp.args[0].typ()].MinMax {
			return nil, noSuch()
		}
		sp.t = sp.args[0].typ()
	case "bool_and", "bool_or", "every":
		if nargs != 1 || sp.args[0].typ() != types.TBool {
			return nil, noSuch()
		}
		sp.t = types.TBool
	case "string_agg":
		if nargs != 2 || !types.IsString(sp.args[0].typ()) || !types.IsString(sp.args[1].typ()) {
			return nil, noSuch()
		}
		sp.t = types.TText
	case "json_agg", "jsonb_agg":
		if nargs != 1 {
			return nil, noSuch()
		}
		sp.t = types.TJSON
		if name == "jsonb_agg" {
			sp.t = types.TJSONB
		}
	case "json_object_agg", "jsonb_object_agg":
		if nargs != 2 {
			return nil, noSuch()
		}
		sp.t = types.TJSON
		if name == "jsonb_object_agg" {
			sp.t = types.TJSONB
		}
	case "array_agg":
		if nargs != 1 {
			return nil, noSuch()
		}
		at, ok := types.ArrayOf(sp.args[0].typ())
		if !ok {
			return nil, pgerror.NotSupported("array_agg of %s is not supported", sp.args[0].typ()).At(f.Location)
		}
		sp.t = at
	}
	if sp.star && name != "count" {
		return nil, pgerror.Errorf(pgerror.CodeWrongObjectType, "%s(*) specified, but %s is not an aggregate function", name, name).At(f.Location)
	}
	a.aggs = append(a.aggs, sp)
	return &aggColumn{a: a, agg: len(a.aggs) - 1, t: sp.t}, nil
}

// accumulator is one aggregate's running state for one group.
type accumulator struct {
	sp    *aggSpec
	count int64
	sum   types.Value // integer (I) or numeric (S) sum so far
	fsum  float64     // a float sum so far
	sumX2 types.Value // the variance family's numeric sum of squares
	fsxx  float64     // its float state: Youngs-Cramer's sum of squared differences
	// direct: an ordered-set aggregate's direct arguments, evaluated for
	// the group before result
	direct []types.Value
	best   types.Value // min/max, bool_and/or
	have   bool
	text   strings.Builder
	arr    []types.Value // array_agg's elements
	// with DISTINCT or an ORDER BY inside: the argument rows, aggregated
	// at the end
	rows [][]types.Value
	// scratch holds one row's argument values while step reads them (it
	// keeps none), so a plain aggregate allocates nothing per row
	scratch []types.Value
}

func (ac *accumulator) add(e *env) error {
	sp := ac.sp
	if sp.filter != nil {
		ok, err := truthy(sp.filter, e)
		if err != nil || !ok {
			return err
		}
	}
	if sp.star {
		ac.count++
		return nil
	}
	keep := sp.distinct || len(sp.order) > 0
	var vals []types.Value
	if keep {
		vals = make([]types.Value, len(sp.args), len(sp.args)+len(sp.order))
	} else {
		if ac.scratch == nil {
			ac.scratch = make([]types.Value, len(sp.args))
		}
		vals = ac.scratch
	}
	for i, x := range sp.args {
		v, err := x.eval(e)
		if err != nil {
			return err
		}
		vals[i] = v
	}
	if keep {
		for _, o := range sp.order {
			v, err := o.x.eval(e)
			if err != nil {
				return err
			}
			vals = append(vals, v)
		}
		ac.rows = append(ac.rows, vals)
		return nil
	}
	return ac.step(vals)
}

// step feeds one row of argument values.
func (ac *accumulator) step(vals []types.Value) error {
	sp := ac.sp
	v := vals[0]
	switch sp.name {
	case "string_agg", "array_agg", "json_agg", "jsonb_agg":
	case "json_object_agg", "jsonb_object_agg":
		if v.Null {
			return pgerror.Errorf(pgerror.CodeInvalidParamValue, "field name must not be null")
		}
	default:
		if v.Null {
			return nil // strict: NULL inputs are skipped
		}
	}
	if _, ok := statAggs[sp.name]; ok {
		return ac.statStep(v)
	}
	switch sp.name {
	case "count":
		ac.count++
	case "sum", "avg":
		ac.count++
		if types.IsFloat(sp.t) {
			ac.fsum += types.FloatOf(v)
			ac.have = true
			return nil
		}
		if sp.t == types.TInterval {
			if !ac.have {
				ac.sum, ac.have = v, true
				return nil
			}
			s, err := types.AddIntervals(types.IntervalOf(ac.sum), types.IntervalOf(v))
			if err != nil {
				return err
			}
			ac.sum = types.IntervalValue(s)
			return nil
		}
		if !ac.have {
			ac.have = true
			if sp.t == types.TInt8 {
				ac.sum = types.Int8(v.I)
			} else {
				ac.sum = toNumeric(v)
			}
			return nil
		}
		if sp.t == types.TInt8 {
			ac.sum.I += v.I // int4 inputs: a bigint cannot overflow before 2^32 rows
			return nil
		}
		s, err := types.NumericArith('+', ac.sum, toNumeric(v))
		if err != nil {
			return err
		}
		ac.sum = s
	case "min", "max":
		if !ac.have {
			ac.best, ac.have = v, true
			return nil
		}
		d := types.Compare(v, ac.best)
		if (sp.name == "min" && d < 0) || (sp.name == "max" && d > 0) {
			ac.best = v
		}
	case "bool_and", "every", "bool_or":
		if !ac.have {
			ac.best, ac.have = v, true
			return nil
		}
		if sp.name == "bool_or" {
			ac.best.I |= v.I
		} else {
			ac.best.I &= v.I
		}
	case "string_agg":
		if v.Null {
			return nil
		}
		if ac.have && !vals[1].Null {
			ac.text.WriteString(vals[1].S)
		}
		s := v.S
		if v.T == types.TBpchar {
			s = types.BpcharTrim(s)
		}
		ac.text.WriteString(s)
		ac.have = true
	case "json_agg", "jsonb_agg":
		_, composite := sp.args[0].(*rowExpr)
		ac.have = true
		return eval.JSONAggStep(&ac.text, sp.t, v, composite) // sql/eval/json.go
	case "json_object_agg", "jsonb_object_agg":
		ac.arr = append(ac.arr, v, vals[1])
		ac.have = true
	case "array_agg":
		if v.T == types.TBpchar {
			v = types.Text(types.BpcharTrim(v.S))
		}
		ac.arr = append(ac.arr, v)
		ac.have = true
	}
	return nil
}

func toNumeric(v types.Value) types.Value {
	if v.T == types.TNumeric {
		return v
	}
	return types.Value{T: types.TNumeric, S: strconv.FormatInt(v.I, 10)}
}

// result is the aggregate's value for the group.
func (ac *accumulator) result() (types.Value, error) {
	sp := ac.sp
	if sp.within {
		return ac.orderedSetResult() // orderedset.go
	}
	if ac.rows != nil {
		rows := ac.rows
		n := len(sp.args)
		if len(sp.order) > 0 {
			keys := make([]sortCol, len(sp.order))
			for i, o := range sp.order {
				keys[i] = sortCol{idx: n + i, desc: o.desc, nullsFirst: o.nullsFirst}
			}
			sort.SliceStable(rows, func(i, j int) bool { return lessRows(rows[i], rows[j], keys) })
		} else if sp.distinct {
			// PostgreSQL sorts a DISTINCT aggregate's input by its
			// arguments, so string_agg(DISTINCT x) comes in x's order
			keys := make([]sortCol, n)
			for i := range keys {
				keys[i] = sortCol{idx: i}
			}
			sort.SliceStable(rows, func(i, j int) bool { return lessRows(rows[i], rows[j], keys) })
		}
		seen := map[string]bool{}
		var kb []byte
		for _, r := range rows {
			if sp.distinct {
				kb = valuesKey(kb[:0], r[:n])
				if seen[string(kb)] {
					continue
				}
				seen[string(kb)] = true
			}
			if err := ac.step(r[:n]); err != nil {
				return types.Value{}, err
			}
		}
		ac.rows = nil
	}
	if st, ok := statAggs[sp.name]; ok {
		return ac.statResult(st.sample, st.stddev)
	}
	switch sp.name {
	case "count":
		return types.Int8(ac.count), nil
	case "sum":
		if !ac.have {
			return types.Null(sp.t), nil
		}
		if types.IsFloat(sp.t) {
			return types.FloatValue(ac.fsum, sp.t), nil
		}
		return ac.sum, nil
	case "avg":
		if !ac.have {
			return types.Null(sp.t), nil
		}
		if types.IsFloat(sp.t) {
			return types.FloatValue(ac.fsum/float64(ac.count), types.TFloat8), nil
		}
		if sp.t == types.TInterval {
			return eval.IntervalResult(types.DivInterval(types.IntervalOf(ac.sum), float64(ac.count)))
		}
		return types.NumericArith('/', ac.sum, toNumeric(types.Int8(ac.count)))
	case "string_agg":
		if !ac.have {
			return types.Null(types.TText), nil
		}
		return types.Text(ac.text.String()), nil
	case "json_agg", "jsonb_agg":
		if !ac.have {
			return types.Null(sp.t), nil
		}
		return types.Value{T: sp.t, S: ac.text.String() + "]"}, nil
	case "json_object_agg", "jsonb_object_agg":
		if !ac.have {
			return types.Null(sp.t), nil
		}
		return eval.JSONObjectOf(sp.t, ac.arr, true) // sql/eval/json.go
	case "array_agg":
		if !ac.have {
			return types.Null(sp.t), nil
		}
		return types.MakeArray(sp.t, ac.arr)
	}
	if !ac.have {
		return types.Null(sp.t), nil
	}
	return ac.best, nil
}

// aggNode groups and aggregates its input.
type aggNode struct {
	in     relNode
	a      *aggCtx
	scalar bool // no GROUP BY: one group, even of no rows
}

func (n *aggNode) explain(w *strings.Builder, depth int) {
	if n.a.sets != nil {
		explainLine(w, depth, "MixedAggregate")
	} else if n.scalar {
		explainLine(w, depth, "Aggregate")
	} else {
		explainLine(w, depth, "HashAggregate")
	}
	n.in.explain(w, depth+1)
}

func (n *aggNode) run(q *qctx, fn func(row []types.Value) error) error {
	type group struct {
		vals []types.Value
		accs []accumulator
	}
	newGroup := func(vals []types.Value) *group {
		g := &group{vals: vals, accs: make([]accumulator, len(n.a.aggs))}
		for i, sp := range n.a.aggs {
			g.accs[i].sp = sp
		}
		return g
	}
	groups := map[string]*group{}
	var order []*group
	e := q.env(nil)
	var kb []byte
	sets := n.a.sets
	if sets == nil {
		sets = [][]int{nil} // one set: every group column
	}
	setOf := make([]int, 0, 1) // order's groups' sets
	all := make([]types.Value, len(n.a.groups))
	err := n.in.run(q, func(row []types.Value) error {
		e.row = row
		for i, x := range n.a.groups {
			v, err := x.eval(e)
			if err != nil {
				return err
			}
			all[i] = v
		}
		for si, set := range sets {
			kb = append(kb[:0], byte(si>>8), byte(si))
			vals := make([]types.Value, len(n.a.groups))
			for i, v := range all {
				if n.a.sets != nil && !containsInt(set, i) {
					vals[i] = types.Null(n.a.groups[i].typ())
					continue
				}
				vals[i] = v
				kb = appendHashKey(kb, v)
			}
			g := groups[string(kb)]
			if g == nil {
				g = newGroup(vals)
				groups[string(kb)] = g
				order, setOf = append(order, g), append(setOf, si)
			}
			for i := range g.accs {
				if err := g.accs[i].add(e); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n.scalar && len(order) == 0 {
		order, setOf = append(order, newGroup(nil)), append(setOf, 0)
	}
	if len(order) == 0 {
		// an empty grouping set is one group, even of no rows
		for si, set := range n.a.sets {
			if len(set) == 0 {
				vals := make([]types.Value, len(n.a.groups))
				for i, x := range n.a.groups {
					vals[i] = types.Null(x.typ())
				}
				order, setOf = append(order, newGroup(vals)), append(setOf, si)
			}
		}
	}
	out := make([]types.Value, n.a.width())
	e.row = nil
	for gi, g := range order {
		copy(out, g.vals)
		if n.a.sets != nil {
			out[len(out)-1] = types.Int4(int32(setOf[gi]))
		}
		for i := range g.accs {
			if err := g.accs[i].evalDirect(e); err != nil {
				return err
			}
			v, err := g.accs[i].result()
			if err != nil {
				return err
			}
			out[len(n.a.groups)+i] = v
		}
		if err := fn(out); err != nil {
			return err
		}
	}
	return nil
}

// statStep feeds v (not NULL) to an aggregate of the variance family:
// integers and numerics sum x and x² exactly (PostgreSQL's
// do_numeric_accum), floats keep the Youngs-Cramer state of float8_accum.
func (ac *accumulator) statStep(v types.Value) error {
	ac.count++
	if ac.sp.t == types.TFloat8 {
		x, oldSum := types.FloatOf(v), ac.fsum
		ac.fsum += x
		if ac.count == 1 {
			if math.IsInf(x, 0) || math.IsNaN(x) {
				ac.fsxx = math.NaN()
			}
			return nil
		}
		n := float64(ac.count)
		tmp := x*n - ac.fsum
		ac.fsxx += tmp * tmp / (n * (n - 1))
		if math.IsInf(ac.fsum, 0) || math.IsInf(ac.fsxx, 0) {
			if !math.IsInf(oldSum, 0) && !math.IsInf(x, 0) {
				return pgerror.Errorf(pgerror.CodeNumericRange, "value out of range: overflow")
			}
			ac.fsxx = math.NaN()
		}
		return nil
	}
	x := toNumeric(v)
	sq, err := types.NumericArith('*', x, x)
	if err != nil {
		return err
	}
	if ac.count == 1 {
		ac.sum, ac.sumX2 = x, sq
		return nil
	}
	if ac.sum, err = types.NumericArith('+', ac.sum, x); err != nil {
		return err
	}
	ac.sumX2, err = types.NumericArith('+', ac.sumX2, sq)
	return err
}

// statResult is the variance family's result: NULL for no rows (or one,
// for a sample), as PostgreSQL's float8_var_samp and
// numeric_stddev_internal.
func (ac *accumulator) statResult(sample, stddev bool) (types.Value, error) {
	if ac.count == 0 || (sample && ac.count == 1) {
		return types.Null(ac.sp.t), nil
	}
	if ac.sp.t != types.TFloat8 {
		return types.NumericVariance(ac.count, ac.sum, ac.sumX2, sample, stddev)
	}
	n := float64(ac.count)
	if sample {
		n--
	}
	r := 0.0
	if !(ac.fsxx <= 0) { // NaN stays NaN
		r = ac.fsxx / n
	}
	if stddev {
		r = math.Sqrt(r)
	}
	return types.FloatValue(r, types.TFloat8), nil
}
