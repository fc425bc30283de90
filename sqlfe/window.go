package sqlfe

import (
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
	"google.golang.org/protobuf/proto"
)

// Window functions OVER ([existing_window] [PARTITION BY …] [ORDER BY …]
// [frame]) or OVER name, with the SELECT's WINDOW name AS (…) clause
// resolved as PostgreSQL's transformWindowDefinitions does (a reference
// copies the named window's partitioning and, if it has one, its ORDER
// BY; it may add an ORDER BY the named window lacks; a named window with a
// frame can only be used whole).
//
//   - ranking: row_number, rank, dense_rank, percent_rank, cume_dist,
//     ntile(n);
//   - offsets in the partition: lag and lead (value [, offset [, default]]);
//   - over the frame: first_value, last_value, nth_value(value, n) and the
//     aggregates (count, sum, avg, min, max, bool_and/or, string_agg, …).
//
// The frame is PostgreSQL's: ROWS, RANGE or GROUPS between UNBOUNDED
// PRECEDING, n PRECEDING, CURRENT ROW, n FOLLOWING and UNBOUNDED
// FOLLOWING, with EXCLUDE CURRENT ROW / GROUP / TIES / NO OTHERS; the
// default (RANGE UNBOUNDED PRECEDING AND CURRENT ROW) is the partition's
// rows up to the current row and its peers, the whole partition without an
// ORDER BY. A RANGE offset needs one ORDER BY key and an offset type
// PostgreSQL's in_range has for it (an integer for integers, numeric,
// double precision, an interval for dates, timestamps, times and
// intervals); a ROWS or GROUPS offset is a bigint without column
// references. A frame that starts at UNBOUNDED PRECEDING and excludes
// nothing is aggregated incrementally as it grows; any other frame is
// aggregated anew for each row.
//
// A windowNode sits between the aggregation (or the FROM/WHERE) and the
// select list: it reads all its input, computes each window call's value
// for every row, and passes each row with those values appended; a
// winColumn reads them from the end of the row, so the columns before them
// keep their indexes.

// winSpec is one window function call.
type winSpec struct {
	name      string
	agg       *aggSpec // an aggregate over the window, or nil
	args      []expr   // the other functions' arguments, over the input row
	partition []expr
	order     []sortKey
	frame     winFrame
	t         types.Type
}

// The frame options of a window definition (PostgreSQL's FRAMEOPTION_*
// bits, as pg_query passes them).
const (
	frameNonDefault     = 0x00001
	frameRange          = 0x00002
	frameRows           = 0x00004
	frameGroups         = 0x00008
	frameStartUnbounded = 0x00020 // UNBOUNDED PRECEDING
	frameEndUnbounded   = 0x00100 // UNBOUNDED FOLLOWING
	frameStartCurrent   = 0x00200
	frameEndCurrent     = 0x00400
	frameStartPreceding = 0x00800
	frameEndPreceding   = 0x01000
	frameStartFollowing = 0x02000
	frameEndFollowing   = 0x04000
	frameExcludeCurrent = 0x08000
	frameExcludeGroup   = 0x10000
	frameExcludeTies    = 0x20000
)

// winFrame is a window's frame.
type winFrame struct {
	opts int32
	// startOff and endOff are the offsets of n PRECEDING / FOLLOWING
	// (constants of the statement); for RANGE, startBound and endBound are
	// the order key minus or plus the offset, over the current row.
	startOff, endOff     expr
	startBound, endBound expr
}

func (f *winFrame) has(o int32) bool { return f.opts&o != 0 }

// incremental: the frame starts at the partition's start and excludes
// nothing, so it only grows from row to row.
func (f *winFrame) incremental() bool {
	return f.opts&frameNonDefault == 0 || (f.has(frameStartUnbounded) && !f.has(frameExcludeCurrent|frameExcludeGroup|frameExcludeTies))
}

// winCtx collects a query's window calls and knows its named windows.
type winCtx struct {
	specs []*winSpec
	named map[string]*pg.WindowDef
}

// newWinCtx is the window context of a SELECT with the WINDOW clause defs.
func newWinCtx(defs []*pg.Node) (*winCtx, error) {
	w := &winCtx{named: map[string]*pg.WindowDef{}}
	for _, n := range defs {
		d := n.GetWindowDef()
		if d == nil {
			continue
		}
		if _, dup := w.named[d.Name]; dup {
			return nil, pgerror.Errorf(pgerror.CodeWindowing, "window %q is already defined", d.Name).At(d.Location)
		}
		if d.Refname != "" { // WINDOW w2 AS (w1 …): resolved against the earlier ones
			r, err := w.resolve(d, d.Location)
			if err != nil {
				return nil, err
			}
			d = r
		}
		w.named[d.Name] = d
	}
	return w, nil
}

// resolve is the window definition a call's OVER means: OVER name is the
// named window; OVER (name …) is the named window's PARTITION BY (and
// ORDER BY) with the call's own ORDER BY and frame.
func (w *winCtx) resolve(d *pg.WindowDef, loc int32) (*pg.WindowDef, error) {
	name := d.Refname
	whole := false
	if name == "" && d.Name != "" && len(d.PartitionClause) == 0 && len(d.OrderClause) == 0 && d.FrameOptions&frameNonDefault == 0 {
		name, whole = d.Name, true // OVER name
	}
	if name == "" {
		return d, nil
	}
	ref, ok := w.named[name]
	if !ok {
		return nil, pgerror.Errorf(pgerror.CodeUndefinedObject, "window %q does not exist", name).At(loc)
	}
	if whole {
		return ref, nil
	}
	switch {
	case len(d.PartitionClause) > 0:
		return nil, pgerror.Errorf(pgerror.CodeWindowing, "cannot override PARTITION BY clause of window %q", name).At(loc)
	case len(ref.OrderClause) > 0 && len(d.OrderClause) > 0:
		return nil, pgerror.Errorf(pgerror.CodeWindowing, "cannot override ORDER BY clause of window %q", name).At(loc)
	case ref.FrameOptions&frameNonDefault != 0:
		return nil, pgerror.Errorf(pgerror.CodeWindowing, "cannot copy window %q because it has a frame clause", name).At(loc)
	}
	out := proto.Clone(d).(*pg.WindowDef)
	out.Refname = ""
	out.PartitionClause = ref.PartitionClause
	if len(out.OrderClause) == 0 {
		out.OrderClause = ref.OrderClause
	}
	return out, nil
}

// winColumn is a window call's value in the windowNode's output row.
type winColumn struct {
	w *winCtx
	k int
	t types.Type
}

func (c *winColumn) eval(e *env) (types.Value, error) {
	return e.row[len(e.row)-len(c.w.specs)+c.k], nil
}
func (c *winColumn) typ() types.Type { return c.t }
func (c *winColumn) kids() []expr    { return nil }

// winArgs are the argument types of the window functions that are not
// aggregates: types.TUnknown takes the first argument's type.
var winArgs = map[string][][]types.Type{
	"row_number": {{}}, "rank": {{}}, "dense_rank": {{}}, "percent_rank": {{}}, "cume_dist": {{}},
	"ntile":       {{types.TInt4}},
	"lag":         {{types.TUnknown}, {types.TUnknown, types.TInt4}, {types.TUnknown, types.TInt4, types.TUnknown}},
	"lead":        {{types.TUnknown}, {types.TUnknown, types.TInt4}, {types.TUnknown, types.TInt4, types.TUnknown}},
	"first_value": {{types.TUnknown}}, "last_value": {{types.TUnknown}},
	"nth_value": {{types.TUnknown, types.TInt4}},
}

// windowCall compiles f (a call with OVER) over the rows c compiles.
func (c *compiler) windowCall(f *pg.FuncCall) (expr, error) {
	names := strs(f.Funcname)
	name := names[len(names)-1]
	if c.win == nil {
		return nil, pgerror.Errorf(pgerror.CodeWindowing, "window functions are not allowed in %s", orClause(c.clause, "this context")).At(f.Location)
	}
	w, err := c.win.resolve(f.Over, f.Location)
	if err != nil {
		return nil, err
	}
	in := *c
	in.win, in.srf = nil, nil
	in.clause = "window function calls" // nested window calls: 42P20
	sp := &winSpec{name: name}
	for _, p := range w.PartitionClause {
		x, err := in.compile(p, types.TUnknown)
		if err != nil {
			return nil, err
		}
		sp.partition = append(sp.partition, x)
	}
	for _, o := range w.OrderClause {
		sb := o.GetSortBy()
		x, err := in.compile(sb.Node, types.TUnknown)
		if err != nil {
			return nil, err
		}
		k := sortColOf(sb, 0)
		sp.order = append(sp.order, sortKey{x: x, desc: k.desc, nullsFirst: k.nullsFirst})
	}
	if err := in.windowFrame(w, sp); err != nil {
		return nil, err
	}
	if forms, ok := winArgs[name]; ok {
		if f.AggStar || f.AggDistinct || len(f.AggOrder) > 0 || f.AggFilter != nil {
			return nil, pgerror.Errorf(pgerror.CodeWrongObjectType, "%s is not an aggregate function", name).At(f.Location)
		}
		if err := in.windowArgs(f, sp, forms); err != nil {
			return nil, err
		}
	} else {
		if !aggNames[name] || name == "array_agg" {
			return nil, pgerror.NotSupported("window function %s is not supported", name).At(f.Location)
		}
		if len(f.AggOrder) > 0 || f.AggDistinct {
			return nil, pgerror.NotSupported("DISTINCT or ORDER BY in a window aggregate is not supported").At(f.Location)
		}
		// compile the aggregate's arguments through a scratch aggCtx
		a := &aggCtx{in: &in, groupKeys: map[string]int{}, groupCols: map[int]int{}}
		ac := in
		ac.agg = nil
		fc := proto.Clone(f).(*pg.FuncCall)
		fc.Over = nil
		if _, err := a.addAgg(&ac, fc); err != nil {
			return nil, err
		}
		sp.agg, sp.t = a.aggs[0], a.aggs[0].t
	}
	c.win.specs = append(c.win.specs, sp)
	return &winColumn{w: c.win, k: len(c.win.specs) - 1, t: sp.t}, nil
}

// windowArgs compiles the arguments of a window function that is not an
// aggregate, in one of its forms, and sets its result type.
func (c *compiler) windowArgs(f *pg.FuncCall, sp *winSpec, forms [][]types.Type) error {
	var form []types.Type
	for _, fm := range forms {
		if len(fm) == len(f.Args) {
			form = fm
		}
	}
	if form == nil && len(f.Args) > 0 {
		return noSuchFunc(f, nil)
	}
	for i, a := range f.Args {
		want := form[i]
		if want == types.TUnknown && i > 0 {
			want = sp.args[0].typ()
		}
		x, err := c.compile(a, want)
		if err != nil {
			return err
		}
		if x, err = c.coerce(x, want); err != nil {
			return err
		}
		if i == 0 && x.typ() == types.TUnknown {
			if x, err = c.coerce(x, types.TText); err != nil {
				return err
			}
		}
		ok := want == types.TUnknown || x.typ() == want || (types.IsInt(want) && types.IsInt(x.typ()))
		if !ok {
			return noSuchFunc(f, append(sp.args, x))
		}
		sp.args = append(sp.args, x)
	}
	switch sp.name {
	case "row_number", "rank", "dense_rank":
		sp.t = types.TInt8
	case "percent_rank", "cume_dist":
		sp.t = types.TFloat8
	case "ntile":
		sp.t = types.TInt4
	default:
		sp.t = sp.args[0].typ()
	}
	return nil
}

// windowFrame compiles w's frame into sp (whose ORDER BY is compiled).
func (c *compiler) windowFrame(w *pg.WindowDef, sp *winSpec) error {
	fr := &sp.frame
	fr.opts = w.FrameOptions
	if fr.opts&frameNonDefault == 0 {
		return nil
	}
	mode := "ROWS"
	switch {
	case fr.has(frameRange):
		mode = "RANGE"
	case fr.has(frameGroups):
		mode = "GROUPS"
		if len(sp.order) == 0 {
			return pgerror.Errorf(pgerror.CodeWindowing, "GROUPS mode requires an ORDER BY clause").At(w.Location)
		}
	}
	for _, end := range []struct {
		node       *pg.Node
		prec, foll int32
		off, bound *expr
	}{{w.StartOffset, frameStartPreceding, frameStartFollowing, &fr.startOff, &fr.startBound},
		{w.EndOffset, frameEndPreceding, frameEndFollowing, &fr.endOff, &fr.endBound}} {
		if !fr.has(end.prec | end.foll) {
			continue
		}
		if mode != "RANGE" {
			x, err := c.compile(end.node, types.TInt8)
			if err != nil {
				return err
			}
			if usesRow(x) {
				return pgerror.Errorf(pgerror.CodeInvalidColumnRef, "argument of %s must not contain variables", mode).At(w.Location)
			}
			if !types.IsInt(x.typ()) {
				return pgerror.Errorf(pgerror.CodeDatatypeMismatch, "argument of %s must be type bigint, not type %s", mode, x.typ()).At(w.Location)
			}
			*end.off = x
			continue
		}
		if len(sp.order) != 1 {
			return pgerror.Errorf(pgerror.CodeWindowing, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column").At(w.Location)
		}
		ob := w.OrderClause[0].GetSortBy()
		kt := sp.order[0].x.typ()
		off, err := c.compile(end.node, types.TUnknown)
		if err != nil {
			return err
		}
		if off.typ() == types.TUnknown {
			want := kt
			if types.IsDateTime(kt) || kt == types.TTime {
				want = types.TInterval
			}
			if off, err = c.coerce(off, want); err != nil {
				return err
			}
		}
		if usesRow(off) {
			return pgerror.Errorf(pgerror.CodeInvalidColumnRef, "argument of RANGE must not contain variables").At(w.Location)
		}
		if !rangeOffsetOK(kt, off.typ()) {
			return pgerror.NotSupported("RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s and offset type %s", kt, off.typ()).At(w.Location)
		}
		// the bound: the key minus the offset where the frame reaches
		// back in the window's order (PRECEDING in ascending order), else
		// plus it
		op := "+"
		if fr.has(end.prec) != sp.order[0].desc {
			op = "-"
		}
		rn := end.node
		if off.typ() == types.TInterval { // an untyped '1 day' is the interval it was resolved as
			rn = &pg.Node{Node: &pg.Node_TypeCast{TypeCast: &pg.TypeCast{Arg: rn,
				TypeName: &pg.TypeName{Names: []*pg.Node{pg.MakeStrNode("pg_catalog"), pg.MakeStrNode("interval")}, Typemod: -1}}}}
		}
		b, err := c.compile(&pg.Node{Node: &pg.Node_AExpr{AExpr: &pg.A_Expr{Kind: pg.A_Expr_Kind_AEXPR_OP,
			Name: []*pg.Node{pg.MakeStrNode(op)}, Lexpr: ob.Node, Rexpr: rn, Location: w.Location}}}, types.TUnknown)
		if err != nil {
			return err
		}
		*end.off, *end.bound = off, b
	}
	return nil
}

// rangeOffsetOK reports whether PostgreSQL has an in_range function for
// an ORDER BY key of type kt and a RANGE offset of type ot.
func rangeOffsetOK(kt, ot types.Type) bool {
	switch {
	case types.IsInt(kt):
		return types.IsInt(ot)
	case kt == types.TNumeric:
		return ot == types.TNumeric || types.IsInt(ot)
	case types.IsFloat(kt):
		return types.IsFloat(ot) || types.IsInt(ot)
	case types.IsDateTime(kt) || kt == types.TTime || kt == types.TInterval:
		return ot == types.TInterval
	}
	return false
}

func orClause(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// windowNode computes the window calls over its input.
type windowNode struct {
	in relNode
	w  *winCtx
}

func (n *windowNode) explain(w *strings.Builder, depth int) {
	explainLine(w, depth, "WindowAgg")
	n.in.explain(w, depth+1)
}

func (n *windowNode) run(q *qctx, fn func(row []types.Value) error) error {
	var rows [][]types.Value
	nw := len(n.w.specs)
	if err := n.in.run(q, func(row []types.Value) error {
		r := make([]types.Value, len(row), len(row)+nw)
		copy(r, row)
		rows = append(rows, r)
		return nil
	}); err != nil {
		return err
	}
	vals := make([][]types.Value, len(rows))
	for i := range vals {
		vals[i] = make([]types.Value, nw)
	}
	e := q.env(nil)
	order := make([]int, len(rows))
	for k, sp := range n.w.specs {
		// partition and order keys of each row
		type keyed struct {
			part string
			ord  []types.Value
		}
		keys := make([]keyed, len(rows))
		var kb []byte
		for i, r := range rows {
			e.row = r
			kb = kb[:0]
			for _, p := range sp.partition {
				v, err := p.eval(e)
				if err != nil {
					return err
				}
				kb = appendHashKey(kb, v)
			}
			keys[i].part = string(kb)
			for _, o := range sp.order {
				v, err := o.x.eval(e)
				if err != nil {
					return err
				}
				keys[i].ord = append(keys[i].ord, v)
			}
		}
		ocols := make([]sortCol, len(sp.order))
		for j, o := range sp.order {
			ocols[j] = sortCol{idx: j, desc: o.desc, nullsFirst: o.nullsFirst}
		}
		// partitions in order of first appearance, rows sorted within
		first := map[string]int{}
		for i := range rows {
			if _, ok := first[keys[i].part]; !ok {
				first[keys[i].part] = len(first)
			}
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool {
			ka, kb := keys[order[a]], keys[order[b]]
			if ka.part != kb.part {
				return first[ka.part] < first[kb.part]
			}
			return lessRows(ka.ord, kb.ord, ocols)
		})
		peer := func(a, b int) bool {
			return keys[a].part == keys[b].part && !lessRows(keys[a].ord, keys[b].ord, ocols) && !lessRows(keys[b].ord, keys[a].ord, ocols)
		}
		offs, err := sp.frame.offsets(e)
		if err != nil {
			return err
		}
		for start := 0; start < len(order); {
			end := start
			for end < len(order) && keys[order[end]].part == keys[order[start]].part {
				end++
			}
			wp := newWinPart(order[start:end], rows, peer)
			if len(sp.order) > 0 {
				wp.key = func(i int) types.Value { return keys[i].ord[0] }
			}
			if err := sp.fill(wp, vals, k, offs, e); err != nil {
				return err
			}
			start = end
		}
	}
	for _, i := range order {
		if err := fn(append(rows[i], vals[i]...)); err != nil {
			return err
		}
	}
	return nil
}

// winPart is one partition, in window order: pos are its rows' indexes,
// group the peer group of each position, groupStart each group's first
// position (and len(pos) after the last).
type winPart struct {
	pos        []int
	rows       [][]types.Value
	group      []int
	groupStart []int
	key        func(row int) types.Value // the (one) ORDER BY key of a row, for RANGE offsets
}

func newWinPart(pos []int, rows [][]types.Value, peer func(a, b int) bool) *winPart {
	wp := &winPart{pos: pos, rows: rows, group: make([]int, len(pos))}
	for j := range pos {
		if j == 0 || !peer(pos[j-1], pos[j]) {
			wp.groupStart = append(wp.groupStart, j)
		}
		wp.group[j] = len(wp.groupStart) - 1
	}
	wp.groupStart = append(wp.groupStart, len(pos))
	return wp
}

// frameOffsets are a frame's ROWS/GROUPS offsets, evaluated once.
type frameOffsets struct{ start, end int64 }

// offsets evaluates the frame's offsets: PostgreSQL's errors for a NULL
// (22004) or a negative one (22013).
func (f *winFrame) offsets(e *env) (frameOffsets, error) {
	var o frameOffsets
	for _, x := range []struct {
		off   expr
		dst   *int64
		which string
	}{{f.startOff, &o.start, "starting"}, {f.endOff, &o.end, "ending"}} {
		if x.off == nil {
			continue
		}
		v, err := x.off.eval(e)
		if err != nil {
			return o, err
		}
		if v.Null {
			return o, pgerror.Errorf(pgerror.CodeNullValueNotAllowed, "frame %s offset must not be null", x.which)
		}
		if f.has(frameRange) {
			if types.Compare(v, zeroOf(v.T)) < 0 {
				return o, pgerror.Errorf(pgerror.CodeInvalidPrecedingOrFollowing, "invalid preceding or following size in window function")
			}
			continue
		}
		if v.I < 0 {
			return o, pgerror.Errorf(pgerror.CodeInvalidPrecedingOrFollowing, "frame %s offset must not be negative", x.which)
		}
		*x.dst = v.I
	}
	return o, nil
}

// zeroOf is 0 of a RANGE offset's type.
func zeroOf(t types.Type) types.Value {
	if t == types.TInterval {
		return types.IntervalValue(types.Interval{})
	}
	return types.Int4(0)
}

// bounds are the positions [lo, hi) of position j's frame.
func (sp *winSpec) bounds(wp *winPart, j int, offs frameOffsets, e *env) (lo, hi int, err error) {
	f := &sp.frame
	n := len(wp.pos)
	g := wp.group[j]
	ng := len(wp.groupStart) - 1
	if f.opts&frameNonDefault == 0 { // RANGE UNBOUNDED PRECEDING AND CURRENT ROW
		return 0, wp.groupStart[g+1], nil
	}
	clamp := func(x int64) int {
		switch {
		case x < 0:
			return 0
		case x > int64(n):
			return n
		}
		return int(x)
	}
	groupAt := func(x int64) int { // the first position of group x, clamped
		switch {
		case x < 0:
			return 0
		case x >= int64(ng):
			return n
		}
		return wp.groupStart[x]
	}
	rows, groups := f.has(frameRows), f.has(frameGroups)
	// an offset past the partition reaches as far as one just past it
	offs.start, offs.end = min(offs.start, int64(n)+1), min(offs.end, int64(n)+1)
	// a RANGE bound: the first position whose key is at or past the
	// bound (strictly past for the frame's end) in the window's order;
	// a NULL key's frame is its peers
	rangeAt := func(bound expr, past bool, peersAt int) (int, error) {
		cur := wp.rows[wp.pos[j]]
		e.row = cur
		if wp.key(wp.pos[j]).Null {
			return peersAt, nil
		}
		b, err := bound.eval(e)
		if err != nil {
			return 0, err
		}
		k := sp.order[0]
		return sort.Search(n, func(i int) bool {
			c := sortCmp(wp.key(wp.pos[i]), b, k)
			return c > 0 || (!past && c == 0)
		}), nil
	}
	switch {
	case f.has(frameStartUnbounded):
		lo = 0
	case f.has(frameStartCurrent):
		lo = j
		if !rows {
			lo = wp.groupStart[g]
		}
	case f.has(frameStartPreceding) && rows:
		lo = clamp(int64(j) - offs.start)
	case f.has(frameStartPreceding) && groups:
		lo = groupAt(int64(g) - offs.start)
	case f.has(frameStartFollowing) && rows:
		lo = clamp(int64(j) + offs.start)
	case f.has(frameStartFollowing) && groups:
		lo = groupAt(int64(g) + offs.start)
	default: // RANGE offset
		if lo, err = rangeAt(f.startBound, false, wp.groupStart[g]); err != nil {
			return 0, 0, err
		}
	}
	switch {
	case f.has(frameEndUnbounded):
		hi = n
	case f.has(frameEndCurrent):
		hi = j + 1
		if !rows {
			hi = wp.groupStart[g+1]
		}
	case f.has(frameEndPreceding) && rows:
		hi = clamp(int64(j) - offs.end + 1)
	case f.has(frameEndPreceding) && groups:
		hi = groupAt(int64(g) - offs.end + 1)
	case f.has(frameEndFollowing) && rows:
		hi = clamp(int64(j) + offs.end + 1)
	case f.has(frameEndFollowing) && groups:
		hi = groupAt(int64(g) + offs.end + 1)
	default:
		if hi, err = rangeAt(f.endBound, true, wp.groupStart[g+1]); err != nil {
			return 0, 0, err
		}
	}
	return lo, hi, nil
}

// excluded reports whether position i is out of position j's frame by its
// EXCLUDE clause.
func (sp *winSpec) excluded(wp *winPart, i, j int) bool {
	f := &sp.frame
	switch {
	case f.has(frameExcludeCurrent):
		return i == j
	case f.has(frameExcludeGroup):
		return wp.group[i] == wp.group[j]
	case f.has(frameExcludeTies):
		return i != j && wp.group[i] == wp.group[j]
	}
	return false
}

// sortCmp compares two values of a sort key in the key's order (its
// direction and NULLs placement).
func sortCmp(a, b types.Value, k sortKey) int {
	switch {
	case a.Null && b.Null:
		return 0
	case a.Null:
		if k.nullsFirst {
			return -1
		}
		return 1
	case b.Null:
		if k.nullsFirst {
			return 1
		}
		return -1
	}
	d := types.Compare(a, b)
	if k.desc {
		return -d
	}
	return d
}

// fill computes spec k's value for the rows of one partition.
func (sp *winSpec) fill(wp *winPart, vals [][]types.Value, k int, offs frameOffsets, e *env) error {
	n := len(wp.pos)
	arg := func(a, row int) (types.Value, error) { // argument a over the row at position row
		e.row = wp.rows[wp.pos[row]]
		return sp.args[a].eval(e)
	}
	switch sp.name {
	case "row_number", "rank", "dense_rank", "percent_rank", "cume_dist":
		for j, i := range wp.pos {
			g := wp.group[j]
			rank := int64(wp.groupStart[g] + 1)
			switch sp.name {
			case "row_number":
				vals[i][k] = types.Int8(int64(j + 1))
			case "rank":
				vals[i][k] = types.Int8(rank)
			case "dense_rank":
				vals[i][k] = types.Int8(int64(g + 1))
			case "percent_rank":
				pr := 0.0
				if n > 1 {
					pr = float64(rank-1) / float64(n-1)
				}
				vals[i][k] = types.FloatValue(pr, types.TFloat8)
			default:
				vals[i][k] = types.FloatValue(float64(wp.groupStart[g+1])/float64(n), types.TFloat8)
			}
		}
		return nil
	case "ntile":
		// the bucket count as of the partition's first row; the first
		// n % buckets buckets have one row more
		b, err := arg(0, 0)
		if err != nil {
			return err
		}
		if !b.Null && b.I <= 0 {
			return pgerror.Errorf(pgerror.CodeInvalidArgumentForNtile, "argument of ntile must be greater than zero")
		}
		for j, i := range wp.pos {
			if b.Null {
				vals[i][k] = types.Null(types.TInt4)
				continue
			}
			vals[i][k] = types.Int4(int32(ntileOf(int64(j), int64(n), b.I)))
		}
		return nil
	case "lag", "lead":
		for j, i := range wp.pos {
			off := int64(1)
			if len(sp.args) > 1 {
				o, err := arg(1, j)
				if err != nil {
					return err
				}
				if o.Null {
					vals[i][k] = types.Null(sp.t)
					continue
				}
				off = o.I
			}
			if sp.name == "lag" {
				off = -off
			}
			var v types.Value
			var err error
			switch at := int64(j) + off; {
			case at >= 0 && at < int64(n):
				v, err = arg(0, int(at))
			case len(sp.args) > 2:
				v, err = arg(2, j)
			default:
				v = types.Null(sp.t)
			}
			if err != nil {
				return err
			}
			vals[i][k] = v
		}
		return nil
	case "first_value", "last_value", "nth_value":
		for j, i := range wp.pos {
			lo, hi, err := sp.bounds(wp, j, offs, e)
			if err != nil {
				return err
			}
			nth := int64(1)
			if sp.name == "nth_value" {
				v, err := arg(1, j)
				if err != nil {
					return err
				}
				if v.Null {
					vals[i][k] = types.Null(sp.t)
					continue
				}
				if v.I <= 0 {
					return pgerror.Errorf(pgerror.CodeInvalidArgumentForNthValue, "argument of nth_value must be greater than zero")
				}
				nth = v.I
			}
			at := -1
			if sp.name == "last_value" {
				for x := hi - 1; x >= lo && at < 0; x-- {
					if !sp.excluded(wp, x, j) {
						at = x
					}
				}
			} else {
				for x := lo; x < hi && at < 0; x++ {
					if !sp.excluded(wp, x, j) {
						if nth--; nth == 0 {
							at = x
						}
					}
				}
			}
			if at < 0 {
				vals[i][k] = types.Null(sp.t)
				continue
			}
			v, err := arg(0, at)
			if err != nil {
				return err
			}
			vals[i][k] = v
		}
		return nil
	}
	// an aggregate over the frame
	if sp.frame.incremental() {
		acc := accumulator{sp: sp.agg}
		added := 0
		for j, i := range wp.pos {
			_, hi, err := sp.bounds(wp, j, offs, e)
			if err != nil {
				return err
			}
			for ; added < hi; added++ {
				e.row = wp.rows[wp.pos[added]]
				if err := acc.add(e); err != nil {
					return err
				}
			}
			if vals[i][k], err = acc.peek(); err != nil {
				return err
			}
		}
		return nil
	}
	for j, i := range wp.pos {
		lo, hi, err := sp.bounds(wp, j, offs, e)
		if err != nil {
			return err
		}
		acc := accumulator{sp: sp.agg}
		for x := lo; x < hi; x++ {
			if sp.excluded(wp, x, j) {
				continue
			}
			e.row = wp.rows[wp.pos[x]]
			if err := acc.add(e); err != nil {
				return err
			}
		}
		if vals[i][k], err = acc.result(); err != nil {
			return err
		}
	}
	return nil
}

// ntileOf is the bucket (1-based) of row j of n in b buckets, as
// PostgreSQL's window_ntile deals them.
func ntileOf(j, n, b int64) int64 {
	if b > n {
		return j + 1
	}
	size, extra := n/b, n%b
	big := extra * (size + 1) // rows in the larger buckets
	if j < big {
		return j/(size+1) + 1
	}
	return extra + (j-big)/size + 1
}

// peek is the aggregate's value so far, the accumulator going on.
func (ac *accumulator) peek() (types.Value, error) {
	cp := *ac
	cp.text = strings.Builder{}
	cp.text.WriteString(ac.text.String())
	return cp.result()
}
