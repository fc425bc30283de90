package sqlfe

// UPDATE ... FROM and DELETE ... USING: joins in DML.
//
// The design keeps UPDATE's and DELETE's own locking scan (dml.go,
// lockrows.go) as the one that finds, locks and rechecks target rows: the
// join becomes that scan's WHERE. The FROM (USING) items are planned by
// the general path's fromItem into one relation (a cross product, the
// items joined as written), whose rows are read once per execution
// (joinSource.sourceRows: a FROM item cannot name the target, so they do
// not depend on it); the statement's WHERE is compiled over the target's
// columns followed by the source's. A target row qualifies when some
// source row makes WHERE true (joinMatch), so, as in PostgreSQL:
//   - only target rows that join are locked (FOR NO KEY UPDATE, or FOR
//     UPDATE for DELETE and key updates), each once, and under READ
//     COMMITTED a row changed concurrently is rechecked on the version
//     locked (the engine's EvalPlanQual recheck runs joinMatch again);
//   - when several source rows match, the row is updated once, from the
//     first of them in the source's order (PostgreSQL: "one arbitrary");
//   - SET and RETURNING see the target row and that source row.
//
// Each target row is compared with every source row (no hash or index
// join here yet): the cost is the product of the two sizes.

import (
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// joinSource is the FROM (USING) side of an UPDATE (DELETE).
type joinSource struct {
	root   relNode // the source items' rows
	tWidth int     // the target row's width (len(t.Cols))
	where  expr    // over target ++ source; nil: every pair joins

	mu   sync.Mutex
	exec *execRun
	rows [][]types.Value
}

// planJoinSource plans the items of from beside target t (named rel) and
// returns the source and a compiler over target ++ source columns.
func (s *Session) planJoinSource(t *catalog.Table, rel string, from []*pg.Node, where *pg.Node, params *[]types.Type) (*joinSource, *compiler, error) {
	var node relNode
	var src *scope
	for _, f := range from {
		n, fsc, err := s.fromItem(f, params)
		if err != nil {
			return nil, nil, err
		}
		if node == nil {
			node, src = n, fsc
			continue
		}
		nl := &nestedLoop{kind: joinInner, left: node, right: n, lw: src.width, rw: fsc.width, rrels: fsc.rels}
		if src, err = src.merge(fsc); err != nil {
			return nil, nil, err
		}
		node = nl
	}
	target := &scope{rels: []*scopeRel{{name: rel, cols: t.Cols}}, width: len(t.Cols)}
	sc, err := target.merge(src)
	if err != nil {
		return nil, nil, err
	}
	j := &joinSource{root: node, tWidth: len(t.Cols)}
	c := &compiler{s: s, params: params, scope: sc, clause: "WHERE"}
	if where != nil {
		if j.where, err = c.compile(where, types.TBool); err != nil {
			return nil, nil, err
		}
		if j.where.typ() != types.TBool {
			return nil, nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "argument of WHERE must be type boolean, not type %s", j.where.typ())
		}
	}
	c.clause = ""
	return j, c, nil
}

// sourceRows are the source's rows, read once per execution.
func (j *joinSource) sourceRows(e *env) ([][]types.Value, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if e.exec != nil && j.exec == e.exec {
		return j.rows, nil
	}
	rows, err := collect(&qctx{ctx: e.ctx, s: e.s, params: e.params, exec: e.exec}, j.root)
	if err != nil {
		return nil, err
	}
	j.exec, j.rows = e.exec, rows
	return rows, nil
}

// match is the target row joined with the first source row WHERE accepts
// (nil if none).
func (j *joinSource) match(e *env, target []types.Value) ([]types.Value, error) {
	rows, err := j.sourceRows(e)
	if err != nil {
		return nil, err
	}
	je := &env{ctx: e.ctx, s: e.s, params: e.params, exec: e.exec}
	row := make([]types.Value, j.tWidth, j.tWidth+8)
	for _, r := range rows {
		copy(row, target[:j.tWidth])
		je.row = append(row[:j.tWidth], r...)
		ok, err := truthy(j.where, je)
		if err != nil {
			return nil, err
		}
		if ok {
			return je.row, nil
		}
	}
	return nil, nil
}

// joinMatch is the locking scan's WHERE: whether the target row (the
// env's row) joins.
type joinMatch struct{ j *joinSource }

func (m *joinMatch) typ() types.Type { return types.TBool }
func (m *joinMatch) kids() []expr    { return nil }
func (m *joinMatch) eval(e *env) (types.Value, error) {
	r, err := m.j.match(e, e.row)
	return types.Bool(r != nil), err
}
