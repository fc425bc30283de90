package sqlfe

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/types"
)

// The operators of the general query path (query.go). Each is a plan node
// that pushes its rows, in order, to a callback: a scan calls it from inside
// the engine's scan, a join from inside its outer input's callback, and a
// node that must see all its input first (a sort, an aggregation, the build
// side of a hash join, the inner side of a nested loop) materializes it.
// A callback returning errStop ends the production early (a LIMIT that has
// its rows): every node passes errStop up unchanged, and the top of the
// plan swallows it.
//
// Rows a node hands to its callback may be reused by the node after the
// callback returns: a node that keeps a row (a sort, a hash table, a join's
// inner side) copies it.

// qctx is what a plan node runs with: the statement's context, session and
// parameters.
type qctx struct {
	ctx    context.Context
	s      *Session
	params []types.Value
	exec   *execRun
	outer  *env // a correlated subquery's enclosing row
}

func (q *qctx) env(row []types.Value) *env {
	return &env{ctx: q.ctx, s: q.s, params: q.params, row: row, exec: q.exec, outer: q.outer}
}

// relNode is one node of a query plan.
type relNode interface {
	// run pushes the node's rows to fn.
	run(q *qctx, fn func(row []types.Value) error) error
	// explain writes the node and its inputs, indented by depth.
	explain(w *strings.Builder, depth int)
}

func explainLine(w *strings.Builder, depth int, format string, args ...any) {
	if depth > 0 {
		w.WriteString(strings.Repeat("      ", depth-1))
		w.WriteString("  ->  ")
	}
	fmt.Fprintf(w, format, args...)
	w.WriteByte('\n')
}

// ---- scans ----

// tableScan reads a table with its snapshot through scanRows, which picks a
// point lookup, a key range or an index from filter (the conjuncts of WHERE
// that name only this table, compiled against it alone), decoding only the
// columns the query reads (use; the others are NULL in its rows).
type tableScan struct {
	t      *catalog.Table
	alias  string
	filter expr
	acc    access
	use    *colUse // the columns the query reads, the only ones decoded (nil: all)
}

func (n *tableScan) run(q *qctx, fn func(row []types.Value) error) error {
	tx, err := q.s.ensureTx(q.ctx)
	if err != nil {
		return err
	}
	var read []bool
	if n.use != nil {
		read = n.use.read
	}
	return q.s.scanRows(q.ctx, tx, n.t, &n.acc, n.filter, q.env(nil), false, read, func(_ []byte, row []types.Value) error {
		return fn(row)
	})
}

func (n *tableScan) explain(w *strings.Builder, depth int) {
	how := "Seq Scan"
	if n.acc.points != nil || n.acc.lo != nil || n.acc.hi != nil || n.acc.composite {
		how = "Index Scan using " + n.t.PrimaryKeyName()
	}
	name := n.t.Name
	if n.alias != "" && n.alias != n.t.Name {
		name += " " + n.alias
	}
	explainLine(w, depth, "%s on %s", how, name)
}

// rowsScan produces rows computed when it runs: a virtual relation
// (pg_locks, a set-returning function), a VALUES list, a subquery in FROM.
type rowsScan struct {
	what   string
	rows   func(q *qctx) ([][]types.Value, error)
	filter expr
}

func (n *rowsScan) run(q *qctx, fn func(row []types.Value) error) error {
	rows, err := n.rows(q)
	if err != nil {
		return err
	}
	e := q.env(nil)
	for _, r := range rows {
		e.row = r
		ok, err := truthy(n.filter, e)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

func (n *rowsScan) explain(w *strings.Builder, depth int) { explainLine(w, depth, "%s", n.what) }

// ---- filter, project ----

type filterNode struct {
	in   relNode
	cond expr
}

func (n *filterNode) run(q *qctx, fn func(row []types.Value) error) error {
	e := q.env(nil)
	return n.in.run(q, func(row []types.Value) error {
		e.row = row
		ok, err := truthy(n.cond, e)
		if err != nil || !ok {
			return err
		}
		return fn(row)
	})
}

func (n *filterNode) explain(w *strings.Builder, depth int) {
	explainLine(w, depth, "Filter")
	n.in.explain(w, depth+1)
}

// projectNode computes the select list (and the ORDER BY keys that are not
// in it) from its input's rows.
type projectNode struct {
	in    relNode
	exprs []expr
}

func (n *projectNode) run(q *qctx, fn func(row []types.Value) error) error {
	e := q.env(nil)
	out := make([]types.Value, len(n.exprs))
	return n.in.run(q, func(row []types.Value) error {
		e.row = row
		if err := projectInto(e, n.exprs, out); err != nil {
			return err
		}
		return fn(out)
	})
}

// projectInto evaluates a select list over e into out (an untyped
// literal's value is text).
func projectInto(e *env, exprs []expr, out []types.Value) error {
	for i, x := range exprs {
		v, err := x.eval(e)
		if err != nil {
			return err
		}
		if v.T == types.TUnknown {
			v.T = types.TText
		}
		out[i] = v
	}
	return nil
}

func (n *projectNode) explain(w *strings.Builder, depth int) { n.in.explain(w, depth) }

// ---- joins ----

type joinKind int

const (
	joinInner joinKind = iota
	joinLeft
	joinRight
	joinFull
)

func (k joinKind) String() string {
	return [...]string{"Inner", "Left", "Right", "Full"}[k]
}

// nestedLoop joins each row of its outer input (left) with every row of
// its inner input (right), materialized once, keeping the pairs that
// satisfy cond; for outer joins, unmatched rows come out NULL-extended
// (a left row at once, right rows after the outer input ends).
type nestedLoop struct {
	kind        joinKind
	left, right relNode
	lw, rw      int // widths
	cond        expr
	// hash join: the equality keys, left and right expressions (each over
	// its own side's row); cond is then the rest of ON
	lkeys, rkeys []expr
	// the right side's FROM items, offsets in its row: which of its
	// columns the query reads (their colUse), the only ones the join keeps
	rrels []*scopeRel
	// lateral: the right side reads the left row, so runs once per left
	// row (runLateral, lateral.go)
	lateral bool
}

// rightCols is the indexes, in the right side's row, of the columns the
// query reads: of a table scan those its colUse marks, of any other item
// all. nil when that is every column (or the items do not tile the row).
// The join keeps only these of its inner rows (PostgreSQL's Hash node
// likewise keeps only the columns above it needs): fewer values to store
// and to copy into each joined row; the others stay NULL there.
func (n *nestedLoop) rightCols() []int {
	var cols []int
	at := 0
	for _, r := range n.rrels {
		if r.off != at {
			return nil
		}
		for i := range r.cols {
			if r.use == nil || r.use.read[i] {
				cols = append(cols, r.off+i)
			}
		}
		at += len(r.cols)
	}
	if at != n.rw || len(cols) == n.rw {
		return nil
	}
	return cols
}

func (n *nestedLoop) explain(w *strings.Builder, depth int) {
	if len(n.lkeys) > 0 {
		explainLine(w, depth, "Hash %s Join", n.kind)
	} else {
		explainLine(w, depth, "Nested Loop %s Join", n.kind)
	}
	n.left.explain(w, depth+1)
	n.right.explain(w, depth+1)
}

func copyRow(r []types.Value) []types.Value { return append([]types.Value(nil), r...) }

// innerRows is a join's inner side, materialized: rows of w values each,
// in chunks of 256 rows (the first grown as a slice up to that), reached
// by index — no slice header kept per row, one allocation per chunk, and
// nothing copied twice but the first chunk's growth.
type innerRows struct {
	w, n   int
	chunks [][]types.Value
}

// add appends a row (row's first w values, or zeros for row nil) and
// returns the stored row.
func (r *innerRows) add(row []types.Value) []types.Value {
	c := r.n >> 8
	if c == len(r.chunks) {
		var chunk []types.Value
		if c > 0 && r.w > 0 {
			chunk = getChunk(256 * r.w)
		}
		r.chunks = append(r.chunks, chunk)
	}
	at := len(r.chunks[c])
	if row == nil {
		r.chunks[c] = append(r.chunks[c], make([]types.Value, r.w)...)
	} else {
		r.chunks[c] = append(r.chunks[c], row[:r.w]...)
	}
	r.n++
	return r.chunks[c][at : at+r.w : at+r.w]
}

// row is row i, valid until the next add (which may move the first chunk).
func (r *innerRows) row(i int) []types.Value {
	at := (i & 255) * r.w
	return r.chunks[i>>8][at : at+r.w : at+r.w]
}

// release hands the full chunks back to chunkPool, cleared (so that they
// keep no value's text alive): the rows are gone.
func (r *innerRows) release() {
	for i := 1; i < len(r.chunks); i++ {
		c := r.chunks[i][:cap(r.chunks[i])]
		clear(c)
		chunkPool.Put(&c)
	}
	r.chunks, r.n = nil, 0
}

// chunkPool recycles innerRows' full chunks between joins: the inner side
// is a big join's biggest allocation (12.8 MB for 100k rows of two
// columns), and reusing it spares the collector a cycle every few joins.
var chunkPool sync.Pool // of *[]types.Value, cleared

// getChunk is an empty chunk of capacity at least n, from chunkPool if it
// has one that big.
func getChunk(n int) []types.Value {
	if p, _ := chunkPool.Get().(*[]types.Value); p != nil && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]types.Value, 0, n)
}

// rowArena keeps copies of rows in chunks, of 4 rows first, doubling up
// to 256: one allocation per chunk, not one per row, and a result of one
// row no bigger than before. Each copy is capped at its own length, so
// appending to one reallocates rather than writing over the next.
type rowArena struct {
	chunk []types.Value
	rows  int // the next chunk's rows
}

func (a *rowArena) copy(row []types.Value) []types.Value {
	if len(a.chunk)+len(row) > cap(a.chunk) {
		a.rows = min(max(2*a.rows, 4), 256)
		a.chunk = make([]types.Value, 0, a.rows*max(len(row), 1))
	}
	at := len(a.chunk)
	a.chunk = append(a.chunk, row...)
	return a.chunk[at:len(a.chunk):len(a.chunk)]
}

func (n *nestedLoop) run(q *qctx, fn func(row []types.Value) error) error {
	if n.lateral {
		return n.runLateral(q, fn)
	}
	// The inner rows, materialized in chunks of 256 rows: one allocation
	// per chunk, not one per row, and nothing copied twice.
	// Of each inner row only the columns read are kept (cols; nil: all).
	cols := n.rightCols()
	inner := innerRows{w: n.rw}
	if cols != nil {
		inner.w = len(cols)
	}
	defer inner.release()
	if err := n.right.run(q, func(row []types.Value) error {
		if cols == nil {
			inner.add(row)
			return nil
		}
		kept := inner.add(nil)
		for j, c := range cols {
			kept[j] = row[c]
		}
		return nil
	}); err != nil {
		return err
	}
	// setRight puts inner row i in dst's right side; the columns not kept
	// stay as they are (NULL: see nulls below).
	setRight := func(dst []types.Value, i int) {
		r := inner.row(i)
		if cols == nil {
			copy(dst[n.lw:], r)
			return
		}
		for j, c := range cols {
			dst[n.lw+c] = r[j]
		}
	}
	nulls := func(dst []types.Value) {
		for i := range dst {
			dst[i] = types.Value{Null: true}
		}
	}
	e := q.env(nil)
	var h *joinHash // hash join: key → inner rows
	if len(n.lkeys) > 0 {
		h = &joinHash{}
		defer h.ints.release()
		pad := make([]types.Value, n.lw+n.rw) // the right keys read the right side's columns at their scope index
		e.row = pad
		if err := h.build(inner.n, n.rkeys, e, func(i int) { setRight(pad, i) }); err != nil {
			return err
		}
	}
	var matched []bool // the inner rows joined, for a right or full join's NULL-extended rest
	if n.kind == joinRight || n.kind == joinFull {
		matched = make([]bool, inner.n)
	}
	out := make([]types.Value, n.lw+n.rw)
	nulls(out[n.lw:])
	// join joins lrow with the inner rows of the hash chain from i (more:
	// whether the chain goes on), or without a hash with every inner row.
	join := func(lrow []types.Value, i int32, more bool) error {
		copy(out, lrow)
		any := false
		try := func(i int) error {
			setRight(out, i)
			e.row = out
			ok, err := truthy(n.cond, e)
			if err != nil || !ok {
				return err
			}
			any = true
			if matched != nil {
				matched[i] = true
			}
			return fn(out)
		}
		if h == nil {
			for i := range inner.n {
				if err := try(i); err != nil {
					return err
				}
			}
		} else {
			for i >= 0 {
				if err := try(int(i)); err != nil {
					return err
				}
				if !more {
					break
				}
				i = h.next[i]
			}
		}
		if !any && (n.kind == joinLeft || n.kind == joinFull) {
			nulls(out[n.lw:])
			return fn(out)
		}
		return nil
	}
	var err error
	if h != nil && n.probeInBatches() {
		err = n.probeBatched(q, h, &inner, e, join)
	} else {
		err = n.left.run(q, func(lrow []types.Value) error {
			if h == nil {
				return join(lrow, 0, false)
			}
			e.row = lrow
			i, more, err := h.first(n.lkeys, e)
			if err != nil {
				return err
			}
			return join(lrow, i, more)
		})
	}
	if err != nil {
		return err
	}
	if matched != nil {
		for i := range inner.n {
			if matched[i] {
				continue
			}
			nulls(out[:n.lw])
			setRight(out, i)
			if err := fn(out); err != nil {
				return err
			}
		}
	}
	return nil
}

// probeBatch is how many outer rows a hash join looks up at a time.
const probeBatch = 64

// probeInBatches reports whether the hash join may read its outer rows
// ahead of joining them, probeBatch at a time: when they come from a
// table scan with no filter and its keys are columns, reading ahead
// evaluates nothing — no function runs and no error can be raised for a
// row that a LIMIT above would not have reached.
func (n *nestedLoop) probeInBatches() bool {
	ts, ok := n.left.(*tableScan)
	if !ok || ts.filter != nil {
		return false
	}
	for _, x := range n.lkeys {
		if _, ok := x.(*colExpr); !ok {
			return false
		}
	}
	return true
}

// probeBatched is the hash join's probe of outer rows read probeBatch at a
// time (probeInBatches): the rows' keys are evaluated, their hash-table
// slots touched in a tight loop, the first inner row of each key found
// touched in another, and only then are the rows joined, in order. The probes of a big join are cache misses
// (the slots and the inner rows are reached at random); issued together,
// the processor overlaps them instead of waiting for each in turn, as
// a hash join's group prefetching does.
func (n *nestedLoop) probeBatched(q *qctx, h *joinHash, inner *innerRows, e *env, join func(lrow []types.Value, i int32, more bool) error) error {
	lw := n.lw
	buf := make([]types.Value, probeBatch*lw)
	var keys [probeBatch]int64
	var kind [probeBatch]int8 // 0: NULL key, 1: an integer, 2: another kind (the strings table)
	var firsts [probeBatch]int32
	var mores [probeBatch]bool
	nb := 0
	flush := func() error {
		var sink int64
		for b := range nb {
			e.row = buf[b*lw : (b+1)*lw]
			k, isInteger, ok, err := h.key(n.lkeys, e)
			if err != nil {
				return err
			}
			switch {
			case !ok:
				kind[b] = 0
			case isInteger && h.ints.slots != nil:
				keys[b], kind[b] = k, 1
			case isInteger:
				kind[b] = 0 // no inner row has an integer key
			default:
				kind[b] = 2
			}
		}
		// The touches: loops of a few instructions a row, so that the
		// processor has many of their cache misses in flight at once.
		if h.ints.slots != nil {
			for b := range nb {
				sink += int64(h.ints.slots[h.ints.home(keys[b])].row) // a row of no integer key touches a stale one: harmless
			}
		}
		for b := range nb {
			firsts[b], mores[b] = -1, false
			switch kind[b] {
			case 1:
				sl := h.ints.slot(keys[b])
				firsts[b], mores[b] = sl.row-1, sl.more
			case 2:
				e.row = buf[b*lw : (b+1)*lw]
				var err error
				if firsts[b], mores[b], err = h.first(n.lkeys, e); err != nil {
					return err
				}
			}
		}
		for b := range nb {
			if firsts[b] >= 0 {
				for _, v := range inner.row(int(firsts[b])) { // one cache line a value
					sink += v.I
				}
			}
		}
		h.sink = sink // the touches are used: not optimized away
		for b := range nb {
			if err := join(buf[b*lw:(b+1)*lw], firsts[b], mores[b]); err != nil {
				return err
			}
		}
		nb = 0
		return nil
	}
	err := n.left.run(q, func(lrow []types.Value) error {
		copy(buf[nb*lw:], lrow)
		nb++
		if nb == probeBatch {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// hashKeys appends the hash-table key of the values of xs to dst; ok is
// false when one is NULL (which equals nothing).
func hashKeys(dst []byte, xs []expr, e *env) ([]byte, bool, error) {
	for _, x := range xs {
		v, err := x.eval(e)
		if err != nil {
			return nil, false, err
		}
		if v.Null {
			return dst, false, nil
		}
		dst = appendHashKey(dst, v)
	}
	return dst, true, nil
}

// appendHashKey appends an encoding of v under which two values are equal
// exactly when types.Compare says so: integers of either width by value,
// character(n) without its trailing spaces, numeric without trailing
// fractional zeros (1.0 = 1.00), intervals by their span. NULL has an
// encoding of its own, for DISTINCT and GROUP BY, where NULLs are one group.
func appendHashKey(dst []byte, v types.Value) []byte {
	if v.Null {
		return append(dst, 0)
	}
	switch {
	case types.IsInt(v.T) || v.T == types.TBool:
		dst = append(dst, 1)
		return binary.BigEndian.AppendUint64(dst, uint64(v.I))
	case types.IsFloat(v.T):
		return types.FloatHashKey(dst, v) // float.go
	case v.T == types.TInterval:
		return types.IntervalHashKey(dst, v) // '1 day' = '24 hours'
	case v.T == types.TNumeric:
		s := v.S
		if strings.IndexByte(s, '.') >= 0 {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
		if s == "-0" {
			s = "0"
		}
		dst = append(dst, 2)
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		return append(dst, s...)
	case types.IsIntArray(v.T) && v.S == "": // S: a NULL element, as text below
		dst = append(dst, 3)
		dst = binary.AppendUvarint(dst, uint64(len(v.A)))
		for _, a := range v.A {
			dst = binary.BigEndian.AppendUint64(dst, uint64(a))
		}
		return dst
	}
	s := v.S
	if v.T == types.TBpchar {
		s = types.BpcharTrim(s)
	}
	dst = append(dst, 4)
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// ---- sort, distinct, limit ----

// sortNode sorts its input on keys (indexes into the row).
type sortNode struct {
	in   relNode
	keys []sortCol
}

type sortCol struct {
	idx        int
	desc       bool
	nullsFirst bool
}

func lessRows(a, b []types.Value, keys []sortCol) bool {
	for _, k := range keys {
		x, y := a[k.idx], b[k.idx]
		if x.Null || y.Null {
			if x.Null && y.Null {
				continue
			}
			return x.Null == k.nullsFirst
		}
		d := types.Compare(x, y)
		if d == 0 {
			continue
		}
		if k.desc {
			return d > 0
		}
		return d < 0
	}
	return false
}

func (n *sortNode) run(q *qctx, fn func(row []types.Value) error) error {
	var rows [][]types.Value
	if err := n.in.run(q, func(row []types.Value) error {
		rows = append(rows, copyRow(row))
		return nil
	}); err != nil {
		return err
	}
	sort.SliceStable(rows, func(i, j int) bool { return lessRows(rows[i], rows[j], n.keys) })
	for _, r := range rows {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

func (n *sortNode) explain(w *strings.Builder, depth int) {
	explainLine(w, depth, "Sort")
	n.in.explain(w, depth+1)
}

// distinctNode passes the first row of each set of equal rows (equal on
// the first width columns: the select list, not the extra sort keys).
type distinctNode struct {
	in    relNode
	width int
}

func (n *distinctNode) run(q *qctx, fn func(row []types.Value) error) error {
	seen := map[string]bool{}
	var kb []byte
	return n.in.run(q, func(row []types.Value) error {
		kb = kb[:0]
		for _, v := range row[:n.width] {
			kb = appendHashKey(kb, v)
		}
		if seen[string(kb)] {
			return nil
		}
		seen[string(kb)] = true
		return fn(row)
	})
}

func (n *distinctNode) explain(w *strings.Builder, depth int) {
	explainLine(w, depth, "HashAggregate (DISTINCT)")
	n.in.explain(w, depth+1)
}

// distinctOnNode is SELECT DISTINCT ON: of each run of rows (sorted
// below it) equal in the on columns, the first.
type distinctOnNode struct {
	in relNode
	on []int
}

func (n *distinctOnNode) run(q *qctx, fn func(row []types.Value) error) error {
	var prev, kb []byte
	first := true
	return n.in.run(q, func(row []types.Value) error {
		kb = kb[:0]
		for _, i := range n.on {
			kb = appendHashKey(kb, row[i])
		}
		if !first && string(kb) == string(prev) {
			return nil
		}
		first = false
		prev = append(prev[:0], kb...)
		return fn(row)
	})
}

func (n *distinctOnNode) explain(w *strings.Builder, depth int) {
	explainLine(w, depth, "Unique (DISTINCT ON)")
	n.in.explain(w, depth+1)
}

// limitNode skips offset rows and passes at most limit (nil: all).
type limitNode struct {
	in            relNode
	limit, offset expr
}

func (n *limitNode) run(q *qctx, fn func(row []types.Value) error) error {
	e := q.env(nil)
	limit, hasLimit, err := evalCount(n.limit, e, "LIMIT")
	if err != nil {
		return err
	}
	offset, _, err := evalCount(n.offset, e, "OFFSET")
	if err != nil {
		return err
	}
	if hasLimit && limit == 0 {
		return nil
	}
	var seen, sent int64
	err = n.in.run(q, func(row []types.Value) error {
		seen++
		if seen <= offset {
			return nil
		}
		sent++
		if err := fn(row); err != nil {
			return err
		}
		if hasLimit && sent >= limit {
			return errStop
		}
		return nil
	})
	if err == errStop {
		return nil
	}
	return err
}

func (n *limitNode) explain(w *strings.Builder, depth int) {
	explainLine(w, depth, "Limit")
	n.in.explain(w, depth+1)
}

// truncNode passes the first width columns of each row (drops the ORDER
// BY keys that are not in the select list).
type truncNode struct {
	in    relNode
	width int
}

func (n *truncNode) run(q *qctx, fn func(row []types.Value) error) error {
	return n.in.run(q, func(row []types.Value) error { return fn(row[:n.width]) })
}

func (n *truncNode) explain(w *strings.Builder, depth int) { n.in.explain(w, depth) }

// ---- set operations ----

type setOpNode struct {
	op          string // UNION, INTERSECT, EXCEPT
	all         bool
	left, right relNode
	types       []types.Type // the result columns' types, to which each side's values are cast
}

func (n *setOpNode) explain(w *strings.Builder, depth int) {
	name := n.op
	if n.all {
		name += " ALL"
	}
	explainLine(w, depth, "SetOp %s", name)
	n.left.explain(w, depth+1)
	n.right.explain(w, depth+1)
}

func (n *setOpNode) conv(row []types.Value) ([]types.Value, error) {
	out := make([]types.Value, len(row))
	for i, v := range row {
		if v.T != n.types[i] && n.types[i] != types.TUnknown {
			c, err := types.Cast(v, n.types[i])
			if err != nil {
				return nil, err
			}
			v = c
		}
		out[i] = v
	}
	return out, nil
}

func valuesKey(dst []byte, row []types.Value) []byte {
	for _, v := range row {
		dst = appendHashKey(dst, v)
	}
	return dst
}

func (n *setOpNode) run(q *qctx, fn func(row []types.Value) error) error {
	if n.op == "UNION" && n.all {
		for _, side := range []relNode{n.left, n.right} {
			if err := side.run(q, func(row []types.Value) error {
				r, err := n.conv(row)
				if err != nil {
					return err
				}
				return fn(r)
			}); err != nil {
				return err
			}
		}
		return nil
	}
	// count each distinct row on both sides, in the order of first
	// appearance
	type entry struct {
		row   []types.Value
		l, r  int64
		order int
	}
	groups := map[string]*entry{}
	var order []*entry
	var kb []byte
	for side, in := range []relNode{n.left, n.right} {
		if err := in.run(q, func(row []types.Value) error {
			r, err := n.conv(row)
			if err != nil {
				return err
			}
			kb = valuesKey(kb[:0], r)
			g := groups[string(kb)]
			if g == nil {
				g = &entry{row: r, order: len(order)}
				groups[string(kb)] = g
				order = append(order, g)
			}
			if side == 0 {
				g.l++
			} else {
				g.r++
			}
			return nil
		}); err != nil {
			return err
		}
	}
	for _, g := range order {
		var k int64
		switch n.op {
		case "UNION":
			k = 1
		case "INTERSECT":
			if n.all {
				k = min(g.l, g.r)
			} else if g.l > 0 && g.r > 0 {
				k = 1
			}
		case "EXCEPT":
			if n.all {
				k = max(g.l-g.r, 0)
			} else if g.l > 0 && g.r == 0 {
				k = 1
			}
		}
		for ; k > 0; k-- {
			if err := fn(g.row); err != nil {
				return err
			}
		}
	}
	return nil
}

// ---- running a plan ----

// runQuery runs a query plan and collects its rows.
func runQuery(ctx context.Context, s *Session, params []types.Value, root relNode) (*Result, error) {
	rows, err := collect(&qctx{ctx: ctx, s: s, params: params, exec: &execRun{}}, root)
	if err != nil {
		return nil, err
	}
	return &Result{Rows: rows, Tag: fmt.Sprintf("SELECT %d", len(rows))}, nil
}

// collect runs root and keeps its rows (copied in chunks: a result of
// many rows allocates per chunk, not per row).
func collect(q *qctx, root relNode) ([][]types.Value, error) {
	rows := [][]types.Value{}
	var arena rowArena
	err := root.run(q, func(row []types.Value) error {
		rows = append(rows, arena.copy(row))
		return nil
	})
	if err == errStop {
		err = nil
	}
	return rows, err
}
