package sqlfe

// Row locking in the general query path: PostgreSQL's LockRows node above
// the join, rechecking with EvalPlanQual.
//
// A SELECT ... FROM a JOIN b ... FOR <strength> [OF t, ...] [NOWAIT | SKIP
// LOCKED] is planned as any join (query_plan.go); its FROM tables' scans
// are pinnable (pinScan), and a lockRowsNode sits on the joined row
// before the select list, as PostgreSQL's LockRows sits below the
// projection and the LIMIT. For each row the join yields (so only rows that
// qualify), it locks, in FROM order, the row of each table the clauses
// name (by its primary key, catalog.RowKey, through lockScan.point; each table's
// strength is its strongest clause's, NOWAIT winning over SKIP LOCKED as
// in PostgreSQL), getting the newest version. If a locked version differs
// from the one the snapshot joined (a concurrent committed update, under
// READ COMMITTED), the row is rechecked as EvalPlanQual does: the FROM and
// WHERE subtree runs again with every table scan pinned to its one row
// (the locked tables' new versions, the others' versions as joined), so
// the join conditions, the pushed-down filters and the rest of WHERE are
// all evaluated on the new row; the row is returned with the new values if
// it still qualifies and skipped otherwise (its lock stays held, as in
// PostgreSQL). A row whose locked table's row was deleted (or its key
// updated) is skipped, as is one whose row is locked under SKIP LOCKED.
//
// A LIMIT stops the LockRows node after enough rows, so rows past it are
// not locked. ORDER BY under a lock is sorted below the lock (the keys must
// be columns of the FROM items), again PostgreSQL's order: rows come out
// in the order of the versions the snapshot saw; an ORDER BY the first
// table's key needs no sort (inKeyOrder), so a LIMIT also stops the scan.

import (
	"bytes"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
	"google.golang.org/protobuf/proto"
)

// lockMode is a locking clause's strength and wait policy.
func lockMode(lk *pg.LockingClause) (tupled.LockStrength, tupled.WaitPolicy) {
	strength := tupled.ForUpdate
	switch lk.Strength {
	case pg.LockClauseStrength_LCS_FORKEYSHARE:
		strength = tupled.ForKeyShare
	case pg.LockClauseStrength_LCS_FORSHARE:
		strength = tupled.ForShare
	case pg.LockClauseStrength_LCS_FORNOKEYUPDATE:
		strength = tupled.ForNoKeyUpdate
	}
	wait := tupled.Wait
	switch lk.WaitPolicy {
	case pg.LockWaitPolicy_LockWaitSkip:
		wait = tupled.SkipLocked
	case pg.LockWaitPolicy_LockWaitError:
		wait = tupled.NoWait
	}
	return strength, wait
}

// lockClauseName is the clause as PostgreSQL's messages name it.
func lockClauseName(lk *pg.LockingClause) string {
	switch lk.Strength {
	case pg.LockClauseStrength_LCS_FORKEYSHARE:
		return "FOR KEY SHARE"
	case pg.LockClauseStrength_LCS_FORSHARE:
		return "FOR SHARE"
	case pg.LockClauseStrength_LCS_FORNOKEYUPDATE:
		return "FOR NO KEY UPDATE"
	}
	return "FOR UPDATE"
}

// pinScan is a FROM table's scan that a recheck can pin to one row.
type pinScan struct {
	ts     *tableScan
	pinned bool
	row    []types.Value // nil while pinned: no row (a NULL-extended side)
}

func (n *pinScan) run(q *qctx, fn func(row []types.Value) error) error {
	if !n.pinned {
		return n.ts.run(q, fn)
	}
	if n.row == nil {
		return nil
	}
	ok, err := truthy(n.ts.filter, q.env(n.row))
	if err != nil || !ok {
		return err
	}
	return fn(copyRow(n.row))
}

func (n *pinScan) explain(w *strings.Builder, depth int) { n.ts.explain(w, depth) }

// lockTarget is one table the LockRows node locks.
type lockTarget struct {
	rel      *scopeRel
	strength tupled.LockStrength
	wait     tupled.WaitPolicy
}

// lockRowsNode locks the rows of its targets in each row of in.
type lockRowsNode struct {
	in      relNode
	targets []*lockTarget
	pins    []*pinScan  // every FROM table's scan, for the recheck
	pinRels []*scopeRel // pins[i]'s place in the row
	recheck relNode     // in, run again with the pins set
}

func (n *lockRowsNode) explain(w *strings.Builder, depth int) {
	explainLine(w, depth, "LockRows")
	n.in.explain(w, depth+1)
}

func (n *lockRowsNode) run(q *qctx, fn func(row []types.Value) error) error {
	tx, err := q.s.ensureTx(q.ctx)
	if err != nil {
		return err
	}
	return n.in.run(q, func(row []types.Value) error {
		row = copyRow(row)
		changed := false
		for _, lt := range n.targets {
			t, off := lt.rel.t, lt.rel.off
			old := row[off : off+len(t.Cols)]
			key := catalog.RowKey(nil, t, old)
			ls := &lockScan{t: t, e: q.env(nil), strength: lt.strength, wait: lt.wait}
			var locked []types.Value
			if err := ls.point(q.ctx, tx, key, func(_ []byte, r []types.Value) error {
				locked = r
				return nil
			}); err != nil {
				return err
			}
			if locked == nil {
				return nil // deleted, key updated, or skipped: not returned
			}
			if !bytes.Equal(valuesKey(nil, old), valuesKey(nil, locked)) {
				copy(old, locked)
				changed = true
			}
		}
		if changed {
			var ok bool
			if row, ok, err = n.evalPlanQual(q, row); err != nil || !ok {
				return err
			}
		}
		return fn(row)
	})
}

// evalPlanQual runs the FROM and WHERE subtree again over row's versions.
func (n *lockRowsNode) evalPlanQual(q *qctx, row []types.Value) ([]types.Value, bool, error) {
	for i, p := range n.pins {
		r := n.pinRels[i]
		part := row[r.off : r.off+len(r.cols)]
		p.pinned, p.row = true, part
		if r.nullable && allNull(part) {
			p.row = nil
		}
	}
	defer func() {
		for _, p := range n.pins {
			p.pinned, p.row = false, nil
		}
	}()
	var out []types.Value
	err := n.recheck.run(q, func(r []types.Value) error {
		out = copyRow(r)
		return errStop
	})
	if err != nil && err != errStop {
		return nil, false, err
	}
	return out, out != nil, nil
}

func allNull(row []types.Value) bool {
	for _, v := range row {
		if !v.Null {
			return false
		}
	}
	return true
}

// planJoinLocks resolves st's locking clauses against the FROM scope and
// puts a LockRows node over node (the FROM and WHERE subtree). ORDER BY is
// sorted below it when keys != nil.
func (s *Session) planJoinLocks(st *pg.SelectStmt, sc *scope, node relNode, keys []sortCol) (*lockRowsNode, error) {
	targets := map[*scopeRel]*lockTarget{}
	add := func(r *scopeRel, lk *pg.LockingClause) error {
		if r.lockedInside {
			return nil // a subquery that locks its own rows (lateral.go pushLocks)
		}
		if r.t == nil {
			return pgerror.NotSupported("%s on a view, subquery, function or virtual relation in FROM is not supported", lockClauseName(lk))
		}
		if r.nullable {
			return pgerror.NotSupported("%s cannot be applied to the nullable side of an outer join", lockClauseName(lk))
		}
		strength, wait := lockMode(lk)
		lt := targets[r]
		if lt == nil {
			targets[r] = &lockTarget{rel: r, strength: strength, wait: wait}
			return nil
		}
		lt.strength = max(lt.strength, strength)
		if wait == tupled.NoWait || (wait == tupled.SkipLocked && lt.wait == tupled.Wait) {
			lt.wait = wait
		}
		return nil
	}
	for _, n := range st.LockingClause {
		lk := n.GetLockingClause()
		if len(lk.LockedRels) == 0 {
			for _, r := range sc.rels {
				if err := add(r, lk); err != nil {
					return nil, err
				}
			}
			continue
		}
		for _, ln := range lk.LockedRels {
			rv := ln.GetRangeVar()
			var found *scopeRel
			for _, r := range sc.rels {
				if rv != nil && rv.Schemaname == "" && r.name == rv.Relname {
					found = r
					break
				}
			}
			if found == nil {
				name := ""
				if rv != nil {
					name = rv.Relname
				}
				return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q in %s clause not found in FROM clause", name, lockClauseName(lk)).At(rv.GetLocation())
			}
			if err := add(found, lk); err != nil {
				return nil, err
			}
		}
	}
	lr := &lockRowsNode{recheck: node}
	for _, r := range sc.rels { // FROM order
		if lt := targets[r]; lt != nil {
			lr.targets = append(lr.targets, lt)
		}
	}
	if len(keys) > 0 {
		node = &sortNode{in: node, keys: keys}
	}
	lr.in = node
	return lr, nil
}

// lockedFrom puts the LockRows node of st's locking clauses over node, the
// FROM and WHERE subtree over scope sc (compiled by in, whose table scans
// are pins), and returns st without its ORDER BY when that is sorted
// below the lock.
func (s *Session) lockedFrom(st *pg.SelectStmt, in *compiler, sc *scope, node relNode, pins []*pinScan) (relNode, *pg.SelectStmt, error) {
	var keys []sortCol
	if len(st.SortClause) > 0 {
		for _, n := range st.SortClause {
			sb := n.GetSortBy()
			x, err := in.compile(sb.Node, types.TUnknown)
			c, ok := x.(*colExpr)
			if err != nil || !ok {
				return nil, nil, pgerror.NotSupported("ORDER BY with FOR UPDATE/SHARE on a join must name columns of the FROM items")
			}
			keys = append(keys, sortColOf(sb, c.idx))
		}
		st = proto.Clone(st).(*pg.SelectStmt)
		st.SortClause = nil
		if inKeyOrder(sc, keys) {
			keys = nil
		}
	}
	lr, err := s.planJoinLocks(st, sc, node, keys)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range pins {
		for _, r := range sc.rels {
			if r.scan == p.ts {
				lr.pins = append(lr.pins, p)
				lr.pinRels = append(lr.pinRels, r)
			}
		}
	}
	return lr, st, nil
}

// inKeyOrder reports whether the FROM subtree already yields its rows in
// the order of keys: they are the leading primary key columns, ascending,
// of the first FROM item, a table read by a key range or in full (no
// point list, no secondary index that could serve its filter); a join
// streams its left side in order (its right side is the one it reads
// whole) and emits NULL-extended rows, whose keys sort last, at the end.
// Then nothing is sorted, and a LIMIT stops the scan of that table after
// the rows it needs (the queue claim's ORDER BY id LIMIT 1 ... SKIP
// LOCKED reads the jobs it skips and the one it takes, not the table).
func inKeyOrder(sc *scope, keys []sortCol) bool {
	if len(sc.rels) == 0 {
		return false
	}
	r := sc.rels[0]
	if r.t == nil || r.scan == nil || r.off != 0 || r.scan.acc.points != nil {
		return false
	}
	if len(r.t.Indexes) > 0 && r.scan.filter != nil {
		return false
	}
	kc := r.t.KeyColumns()
	if len(keys) > len(kc) {
		return false
	}
	for i, k := range keys {
		if k.idx != kc[i] || k.desc {
			return false
		}
	}
	return true
}
