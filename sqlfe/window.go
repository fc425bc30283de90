package sqlfe

import (
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
	"google.golang.org/protobuf/proto"
)

// Window functions: row_number(), rank(), dense_rank() and the aggregates
// (count, sum, avg, min, max, bool_and/or, string_agg) OVER ([PARTITION BY
// …] [ORDER BY …]) with the default frame: with an ORDER BY, the
// partition's rows up to the current row and its peers (RANGE UNBOUNDED
// PRECEDING); without one, the whole partition. Other frames and named
// windows are 0A000.
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
	partition []expr
	order     []sortKey
	t         types.Type
}

// winCtx collects a query's window calls.
type winCtx struct {
	specs []*winSpec
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

const frameOptionNonDefault = 0x1

// windowCall compiles f (a call with OVER) over the rows c compiles.
func (c *compiler) windowCall(f *pg.FuncCall) (expr, error) {
	names := strs(f.Funcname)
	name := names[len(names)-1]
	w := f.Over
	switch {
	case c.win == nil:
		return nil, pgerror.Errorf(pgerror.CodeWindowing, "window functions are not allowed in %s", orClause(c.clause, "this context")).At(f.Location)
	case w.Name != "" || w.Refname != "":
		return nil, pgerror.NotSupported("named windows are not supported").At(f.Location)
	case w.FrameOptions&frameOptionNonDefault != 0:
		return nil, pgerror.NotSupported("window frame clauses are not supported").At(f.Location)
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
	switch name {
	case "row_number", "rank", "dense_rank":
		if len(f.Args) > 0 || f.AggStar {
			return nil, noSuchFunc(f, nil)
		}
		sp.t = types.TInt8
	default:
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
		for start := 0; start < len(order); {
			end := start
			for end < len(order) && keys[order[end]].part == keys[order[start]].part {
				end++
			}
			if err := sp.fill(order[start:end], rows, vals, k, peer, len(sp.order) > 0, e); err != nil {
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

// fill computes spec k's value for the rows of one partition (part, in
// window order).
func (sp *winSpec) fill(part []int, rows, vals [][]types.Value, k int, peer func(a, b int) bool, ordered bool, e *env) error {
	if sp.agg == nil {
		rank, dense := int64(0), int64(0)
		for j, i := range part {
			if j == 0 || !peer(part[j-1], i) {
				rank, dense = int64(j+1), dense+1
			}
			switch sp.name {
			case "row_number":
				vals[i][k] = types.Int8(int64(j + 1))
			case "rank":
				vals[i][k] = types.Int8(rank)
			default:
				vals[i][k] = types.Int8(dense)
			}
		}
		return nil
	}
	acc := accumulator{sp: sp.agg}
	for j := 0; j < len(part); {
		// the frame grows by the current row's peers (all rows without
		// an ORDER BY)
		end := j + 1
		for end < len(part) && (!ordered || peer(part[j], part[end])) {
			end++
		}
		for _, i := range part[j:end] {
			e.row = rows[i]
			if err := acc.add(e); err != nil {
				return err
			}
		}
		cp := acc
		cp.text = strings.Builder{}
		cp.text.WriteString(acc.text.String())
		v, err := cp.result()
		if err != nil {
			return err
		}
		for _, i := range part[j:end] {
			vals[i][k] = v
		}
		j = end
	}
	return nil
}
