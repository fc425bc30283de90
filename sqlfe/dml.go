package sqlfe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/syscat"
	"github.com/tupled/tupled/sql/types"
)

// lookupTable resolves a table name for the session: its own uncommitted
// DDL first, then the committed catalog.
// lookupTable returns the table name the session sees (its own DDL over
// the committed catalog), nil if none; views are lookupView's.
func (s *Session) lookupTable(name string) *catalog.Table {
	if t := s.lookupRel(name); !t.IsView() {
		return t
	}
	return nil
}

// stage records the open transaction's DDL of relation name: t, or nil
// for dropped (Session.pending, applied to the Catalog at commit).
func (s *Session) stage(name string, t *catalog.Table) {
	if s.pending == nil {
		s.pending = map[string]*catalog.Table{}
	}
	s.pending[name] = t
}

// lookupRel returns the table or view name the session sees.
func (s *Session) lookupRel(name string) *catalog.Table {
	// pg_temp comes first (temp.go); not inside a view, which is never
	// over a temporary table and reads the tables it read when made
	if tt := s.lookupTemp(name); tt != nil && s.viewDepth == 0 {
		return tt.t
	}
	return s.lookupShared(name)
}

// lookupShared is lookupRel past the session's temporary tables.
func (s *Session) lookupShared(name string) *catalog.Table {
	if t, ok := s.pending[name]; ok {
		return t
	}
	t, _ := s.eng.cat.Get(name)
	return t
}

func relName(rv *pg.RangeVar) (string, error) {
	if rv.Catalogname != "" {
		return "", pgerror.NotSupported("cross-database references are not implemented: %s.%s.%s", rv.Catalogname, rv.Schemaname, rv.Relname).At(rv.Location)
	}
	if rv.Schemaname != "" && rv.Schemaname != "public" {
		return "", pgerror.Errorf(pgerror.CodeUndefinedTable, "relation \"%s.%s\" does not exist", rv.Schemaname, rv.Relname).At(rv.Location)
	}
	return rv.Relname, nil
}

func (s *Session) table(rv *pg.RangeVar) (*catalog.Table, error) {
	name, err := relName(rv)
	if err != nil {
		return nil, err
	}
	t := s.lookupTable(name)
	if t == nil && s.lookupView(name) != nil { // views.go
		return nil, pgerror.NotSupported("%q is a view: only queries read views (INSERT, UPDATE, DELETE, COPY and TRUNCATE of a view are not supported)", name).At(rv.Location)
	}
	if t == nil {
		return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", name).At(rv.Location)
	}
	if t.Key < 0 {
		// CREATE TABLE t (): PostgreSQL's isolation specs create such
		// tables only to LOCK them; they hold no rows here.
		return nil, pgerror.NotSupported("queries on a table without columns are not supported").At(rv.Location)
	}
	return t, nil
}

// ---- SELECT ----

type sortKey struct {
	x          expr
	desc       bool
	nullsFirst bool
}

// selectPlan is a SELECT over one table, a virtual relation or no FROM.
type selectPlan struct {
	t       *catalog.Table // a table, or
	virt    virtRows       // a virtual relation, or neither (no FROM)
	where   expr
	acc     access
	targets []expr
	sorts   []sortKey
	natural bool // the sort is "key ascending" (or none): rows come out of the scan in order
	reverse bool // the sort is "key descending"
	limit   expr
	offset  expr
	lock    tupled.LockStrength
	wait    tupled.WaitPolicy
}

func (s *Session) planSelect(st *pg.SelectStmt, params *[]types.Type) (*plan, error) {
	return s.planSelectAs(st, params, false)
}

// planSelectAs plans a SELECT; with keepUnknown an untyped literal of the
// select list stays unknown (for INSERT ... SELECT, where the target
// column's type resolves it, as in PostgreSQL) instead of becoming text.
func (s *Session) planSelectAs(st *pg.SelectStmt, params *[]types.Type, keepUnknown bool) (*plan, error) {
	if st.WithClause == nil && (needsQueryPath(st) || s.anyCatalogRelation(st)) { // catalog relations: syscat.go
		return s.planQuery(st, params, keepUnknown) // query.go
	}
	switch {
	case st.Op != pg.SetOperation_SETOP_NONE:
		return nil, pgerror.NotSupported("UNION/INTERSECT/EXCEPT is not supported")
	case st.WithClause != nil:
		return s.planWith(st, params, keepUnknown) // with.go
	case len(st.ValuesLists) > 0:
		return nil, pgerror.NotSupported("VALUES as a query is not supported")
	case len(st.DistinctClause) > 0:
		return nil, pgerror.NotSupported("DISTINCT is not supported")
	case st.IntoClause != nil:
		return nil, pgerror.NotSupported("SELECT INTO is not supported")
	case len(st.GroupClause) > 0:
		return nil, pgerror.NotSupported("GROUP BY is not supported")
	case st.HavingClause != nil:
		return nil, pgerror.NotSupported("HAVING is not supported")
	case st.LimitOption == pg.LimitOption_LIMIT_OPTION_WITH_TIES:
		return nil, pgerror.NotSupported("FETCH ... WITH TIES is not supported")
	case len(st.FromClause) > 1:
		return nil, pgerror.NotSupported("FROM with more than one relation (joins) is not supported")
	}
	sp := &selectPlan{natural: true}
	c := &compiler{s: s, params: params}
	if len(st.FromClause) == 1 {
		f := st.FromClause[0]
		switch {
		case f.GetRangeVar() != nil:
			rv := f.GetRangeVar()
			if rv.Alias != nil && len(rv.Alias.Colnames) > 0 {
				return nil, pgerror.NotSupported("column aliases in FROM are not supported").At(rv.Location)
			}
			c.rel = rv.Relname
			if rv.Alias != nil {
				c.rel = rv.Alias.Aliasname
			}
			if (rv.Schemaname == "" || rv.Schemaname == "pg_catalog") && rv.Relname == "pg_locks" && s.lookupTable("pg_locks") == nil {
				c.cols, sp.virt = syscat.PgLocksCols, func(e *env) ([][]types.Value, error) { return pgLocks(e.ctx, e.s) }
			} else {
				t, err := s.table(rv)
				if err != nil {
					return nil, err
				}
				sp.t, c.cols = t, t.Cols
			}
		case f.GetRangeFunction() != nil:
			rf := f.GetRangeFunction()
			virt, cols, rel, err := s.rangeFunction(rf, c)
			if err != nil {
				return nil, err
			}
			sp.virt, c.cols, c.rel = virt, cols, rel
		case f.GetJoinExpr() != nil:
			return nil, pgerror.NotSupported("JOIN is not supported")
		case f.GetRangeSubselect() != nil:
			return nil, pgerror.NotSupported("subquery in FROM is not supported")
		default:
			return nil, pgerror.NotSupported("%s is not supported in FROM", nodeName(f))
		}
	}
	// select list
	var cols []catalog.Column
	type tgt struct {
		name string
		x    expr
	}
	var tgts []tgt
	for _, n := range st.TargetList {
		rt := n.GetResTarget()
		if rt == nil || len(rt.Indirection) > 0 {
			return nil, pgerror.NotSupported("this select list item is not supported")
		}
		if cr := rt.Val.GetColumnRef(); cr != nil {
			if f := strs(cr.Fields); len(f) > 0 && f[len(f)-1] == "*" {
				if c.cols == nil {
					return nil, pgerror.Errorf(pgerror.CodeSyntax, "SELECT * with no tables specified is not valid").At(cr.Location)
				}
				if len(f) == 2 && f[0] != c.rel {
					return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "missing FROM-clause entry for table %q", f[0]).At(cr.Location)
				}
				for i, col := range c.cols {
					if col.Hidden {
						continue
					}
					tgts = append(tgts, tgt{col.Name, &colExpr{idx: i, t: col.Type, m: col.Mod()}})
				}
				continue
			}
		}
		x, err := c.compile(rt.Val, types.TUnknown)
		if err != nil {
			return nil, err
		}
		name := rt.Name
		if name == "" {
			name = defaultName(rt.Val)
		}
		tgts = append(tgts, tgt{name, x})
	}
	if len(tgts) > maxTargetListEntries {
		return nil, pgerror.Errorf(pgerror.CodeTooManyColumns, "target lists can have at most %d entries", maxTargetListEntries)
	}
	for _, t := range tgts {
		typ := t.x.typ()
		if typ == types.TUnknown && !keepUnknown {
			typ = types.TText
		}
		col := resultColumn(t.name, typ, t.x)
		if ce, ok := t.x.(*colExpr); ok && sp.t != nil {
			col.Table, col.AttNum = sp.t.Name, syscat.AttNum(sp.t, ce.idx)
		}
		cols = append(cols, col)
		sp.targets = append(sp.targets, t.x)
	}
	if cols == nil {
		cols = []catalog.Column{}
	}
	if st.WhereClause != nil {
		wc := *c
		wc.clause = "WHERE"
		w, err := wc.compile(st.WhereClause, types.TBool)
		if err != nil {
			return nil, err
		}
		if w.typ() != types.TBool {
			return nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "argument of WHERE must be type boolean, not type %s", w.typ())
		}
		sp.where = w
	}
	if sp.t != nil {
		sp.acc = analyzeKeyAccess(sp.where, sp.t)
	}
	for _, n := range st.SortClause {
		sb := n.GetSortBy()
		if sb == nil || len(sb.UseOp) > 0 {
			return nil, pgerror.NotSupported("ORDER BY ... USING is not supported")
		}
		var x expr
		if k := sb.Node.GetAConst(); k != nil {
			iv, ok := k.Val.(*pg.A_Const_Ival)
			if !ok {
				return nil, pgerror.NotSupported("ORDER BY a constant is not supported").At(sb.Location)
			}
			pos := int(iv.Ival.Ival)
			if pos < 1 || pos > len(sp.targets) {
				return nil, pgerror.Errorf(pgerror.CodeInvalidColumnRef, "ORDER BY position %d is not in select list", pos).At(k.Location)
			}
			x = sp.targets[pos-1]
		} else if cr := sb.Node.GetColumnRef(); cr != nil {
			f := strs(cr.Fields)
			if len(f) == 1 {
				for i, t := range tgts {
					if t.name == f[0] {
						x = sp.targets[i]
						break
					}
				}
			}
		}
		if x == nil {
			var err error
			if x, err = c.compile(sb.Node, types.TUnknown); err != nil {
				return nil, err
			}
		}
		desc := sb.SortbyDir == pg.SortByDir_SORTBY_DESC
		nf := desc
		switch sb.SortbyNulls {
		case pg.SortByNulls_SORTBY_NULLS_FIRST:
			nf = true
		case pg.SortByNulls_SORTBY_NULLS_LAST:
			nf = false
		}
		sp.sorts = append(sp.sorts, sortKey{x: x, desc: desc, nullsFirst: nf})
	}
	if len(sp.sorts) > 0 {
		sp.natural = false
		if sp.t != nil {
			sp.natural, sp.reverse = keyOrder(sp.t, sp.sorts) // compositekey.go
		}
	}
	if sp.t == nil && sp.virt != nil {
		sp.natural = len(sp.sorts) == 0
	}
	var err error
	if sp.limit, sp.offset, err = compileLimit(st, params); err != nil { // query_plan.go
		return nil, err
	}
	if len(st.LockingClause) > 1 {
		return nil, pgerror.NotSupported("more than one locking clause is not supported")
	}
	if len(st.LockingClause) == 1 {
		lk := st.LockingClause[0].GetLockingClause()
		if sp.t == nil {
			if sp.virt != nil {
				return nil, pgerror.NotSupported("row locking on a virtual relation is not supported")
			}
			return nil, pgerror.NotSupported("FOR UPDATE/SHARE without FROM is not supported")
		}
		for _, r := range lk.LockedRels {
			if rv := r.GetRangeVar(); rv == nil || rv.Relname != c.rel {
				return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q in FOR UPDATE/SHARE clause not found in FROM clause", r.GetRangeVar().GetRelname())
			}
		}
		sp.lock, sp.wait = lockMode(lk) // lockjoin.go
	}
	return &plan{cols: cols, usesT: sp.t != nil, run: sp.run, explain: sp.explain}, nil
}

// explain draws the plan as EXPLAIN shows it.
func (sp *selectPlan) explain(w *strings.Builder) {
	depth := 0
	if sp.limit != nil || sp.offset != nil {
		explainLine(w, depth, "Limit")
		depth++
	}
	if sp.lock != tupled.NoLock {
		explainLine(w, depth, "LockRows")
		depth++
	}
	if !sp.natural && !sp.reverse {
		explainLine(w, depth, "Sort")
		depth++
	}
	switch {
	case sp.t != nil:
		ts := &tableScan{t: sp.t, acc: sp.acc}
		ts.explain(w, depth)
	case sp.virt != nil:
		explainLine(w, depth, "Function Scan")
	default:
		explainLine(w, depth, "Result")
	}
}

func wrapLimitErr(err error, what string) error {
	var e *pgerror.Error
	if errors.As(err, &e) && e.Code == pgerror.CodeUndefinedColumn {
		return pgerror.Errorf(pgerror.CodeInvalidColumnRef, "argument of %s must not contain variables", what)
	}
	return err
}

func evalCount(x expr, e *env, what string) (int64, bool, error) {
	if x == nil {
		return 0, false, nil
	}
	v, err := x.eval(e)
	if err != nil {
		return 0, false, err
	}
	if v.Null {
		return 0, false, nil
	}
	if v.I < 0 {
		code := pgerror.CodeInvalidRowCount
		if what == "OFFSET" {
			code = pgerror.CodeInvalidOffset
		}
		return 0, false, pgerror.Errorf(code, "%s must not be negative", what)
	}
	return v.I, true, nil
}

type candidate struct {
	key []byte
	row []types.Value
}

// scanRows calls fn for each row of t that the access may select and that
// satisfies where, reading the transaction's snapshot. fn may return errStop.
// With keep, each call gets a key and a row of its own, which fn may keep;
// without, both are valid only until fn returns (the scan reuses the row,
// and the key is the engine's), which spares the general query path's
// scans two allocations per row (its nodes copy what they keep). Either
// way the engine lends the stored bytes (ScanOptions.NoCopy, GetNoCopy):
// a row is decoded into values of its own at once, and only a key fn may
// keep is copied, so no scan allocates its key and value per row. read,
// if not nil, names the columns decoded (catalog.DecodeRowCols): the
// others are NULL in the rows fn gets.
func (s *Session) scanRows(ctx context.Context, tx *tupled.Tx, t *catalog.Table, acc *access, where expr, e *env, keep bool, read []bool, fn func(key []byte, row []types.Value) error) error {
	points, start, end, empty, err := acc.bounds(e, t)
	if err != nil || empty {
		return err
	}
	var reused []types.Value
	if !keep {
		reused = make([]types.Value, len(t.Cols))
	}
	visit := func(k, v []byte) error {
		row := reused
		if keep {
			row = make([]types.Value, len(t.Cols))
		}
		if err := catalog.DecodeRowCols(t, k, v, row, read); err != nil {
			return err
		}
		e.row = row
		ok, err := truthy(where, e)
		if err != nil || !ok {
			return err
		}
		return fn(k, row)
	}
	if points != nil {
		for _, k := range points {
			v, err := tx.GetNoCopy(ctx, t.Engine, k)
			if errors.Is(err, tupled.ErrNotFound) {
				continue
			}
			if err != nil {
				return engineError(err, t)
			}
			if err := visit(k, v); err != nil {
				if err == errStop {
					return nil
				}
				return err
			}
		}
		return nil
	}
	scan := func(fn func(k, v []byte) error) error {
		return tx.Scan(ctx, t.Engine, tupled.ScanOptions{Start: start, End: end, NoCopy: true}, fn)
	}
	if start == nil && end == nil {
		index, ikey, ok, err := indexAccess(t, where, e) // index.go
		if err != nil {
			return err
		}
		if ok {
			scan = func(fn func(k, v []byte) error) error {
				return tx.IndexScan(ctx, index, ikey, tupled.ScanOptions{NoCopy: true}, fn)
			}
		}
	}
	err = scan(func(k, v []byte) error {
		if keep {
			k = bytes.Clone(k)
		}
		return visit(k, v)
	})
	if err == errStop {
		return nil
	}
	if err != nil {
		var fe *pgerror.Error
		if errors.As(err, &fe) {
			return fe
		}
		return engineError(err, t)
	}
	return nil
}

func (sp *selectPlan) sortRows(rows []candidate, e *env) error {
	if sp.reverse {
		for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
			rows[i], rows[j] = rows[j], rows[i]
		}
		return nil
	}
	if sp.natural {
		return nil
	}
	keys := make([][]types.Value, len(rows))
	for i, r := range rows {
		e.row = r.row
		ks := make([]types.Value, len(sp.sorts))
		for j, sk := range sp.sorts {
			v, err := sk.x.eval(e)
			if err != nil {
				return err
			}
			ks[j] = v
		}
		keys[i] = ks
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ka, kb := keys[idx[a]], keys[idx[b]]
		for j, sk := range sp.sorts {
			x, y := ka[j], kb[j]
			if x.Null || y.Null {
				if x.Null && y.Null {
					continue
				}
				return x.Null == sk.nullsFirst
			}
			d := types.Compare(x, y)
			if d == 0 {
				continue
			}
			if sk.desc {
				return d > 0
			}
			return d < 0
		}
		return false
	})
	out := make([]candidate, len(rows))
	for i, j := range idx {
		out[i] = rows[j]
	}
	copy(rows, out)
	return nil
}

func (sp *selectPlan) run(ctx context.Context, s *Session, params []types.Value) (*Result, error) {
	e := &env{ctx: ctx, s: s, params: params, exec: &execRun{}}
	limit, hasLimit, err := evalCount(sp.limit, e, "LIMIT")
	if err != nil {
		return nil, err
	}
	offset, _, err := evalCount(sp.offset, e, "OFFSET")
	if err != nil {
		return nil, err
	}
	want := int64(-1) // rows to produce before offset/limit: -1 = all
	if hasLimit {
		want = offset + limit
	}
	var rows []candidate
	switch {
	case sp.t == nil && sp.virt == nil:
		ok, err := truthy(sp.where, e)
		if err != nil {
			return nil, err
		}
		if ok {
			rows = append(rows, candidate{})
		}
	case sp.virt != nil:
		all, err := sp.virt(e)
		if err != nil {
			return nil, err
		}
		for _, r := range all {
			e.row = r
			ok, err := truthy(sp.where, e)
			if err != nil {
				return nil, err
			}
			if ok {
				rows = append(rows, candidate{row: r})
			}
		}
		if err := sp.sortRows(rows, e); err != nil {
			return nil, err
		}
	default:
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		t := sp.t
		if sp.lock != tupled.NoLock && (sp.natural || sp.reverse) {
			// LockRows over a scan in key order: the locking scan, with
			// LIMIT + OFFSET as its limit.
			ls := &lockScan{t: t, where: sp.where, e: e, strength: sp.lock, wait: sp.wait}
			err := s.lockRows(ctx, tx, ls, &sp.acc, sp.reverse, want, func(k []byte, row []types.Value) error {
				rows = append(rows, candidate{key: k, row: row})
				return nil
			})
			if err != nil {
				return nil, err
			}
			break
		}
		early := sp.lock == tupled.NoLock && sp.natural && want >= 0
		err = s.scanRows(ctx, tx, t, &sp.acc, sp.where, e, true, nil, func(k []byte, row []types.Value) error {
			if early && int64(len(rows)) >= want {
				return errStop
			}
			rows = append(rows, candidate{key: k, row: row})
			return nil
		})
		if err != nil {
			return nil, err
		}
		if err := sp.sortRows(rows, e); err != nil {
			return nil, err
		}
		if sp.lock != tupled.NoLock {
			// LockRows above a Sort: lock the sorted rows in their order,
			// each by a point scan (which rechecks WHERE), until the
			// limit; a locked row keeps its place, as in PostgreSQL.
			ls := &lockScan{t: t, where: sp.where, e: e, strength: sp.lock, wait: sp.wait}
			locked := rows[:0:0]
			for _, r := range rows {
				if want >= 0 && int64(len(locked)) >= want {
					break
				}
				err := ls.point(ctx, tx, r.key, func(k []byte, row []types.Value) error {
					locked = append(locked, candidate{key: r.key, row: row})
					return nil
				})
				if err != nil {
					return nil, err
				}
			}
			rows = locked
		}
	}
	if offset > 0 {
		if offset >= int64(len(rows)) {
			rows = nil
		} else {
			rows = rows[offset:]
		}
	}
	if hasLimit && int64(len(rows)) > limit {
		rows = rows[:limit]
	}
	res := &Result{Rows: make([][]types.Value, 0, len(rows))}
	for _, r := range rows {
		e.row = r.row
		out := make([]types.Value, len(sp.targets))
		for i, x := range sp.targets {
			v, err := x.eval(e)
			if err != nil {
				return nil, err
			}
			if v.T == types.TUnknown {
				v.T = types.TText
			}
			out[i] = v
		}
		res.Rows = append(res.Rows, out)
	}
	res.Tag = fmt.Sprintf("SELECT %d", len(res.Rows))
	return res, nil
}

// ---- INSERT / UPDATE / DELETE ----

// assign compiles x for assignment to column col (PostgreSQL's assignment
// coercion, restricted to our types).
func assign(c *compiler, n *pg.Node, col catalog.Column) (expr, error) {
	if n.GetSetToDefault() != nil {
		return &constExpr{types.Null(col.Type)}, nil
	}
	if k := n.GetAConst(); k != nil && (col.Int2 || col.Type == types.TInterval && col.Prec > 0) {
		if sv, ok := k.Val.(*pg.A_Const_Sval); ok {
			// a literal goes through smallint's input function, or
			// interval's with the column's typmod ('5' is 5 hours in
			// an interval hour)
			v, err := types.CastMod(types.Unknown(sv.Sval.Sval), col.Type, col.Mod(), false)
			if err != nil {
				return nil, ToError(err).At(k.Location)
			}
			return &constExpr{v}, nil
		}
	}
	x, err := c.compile(n, col.Type)
	if err != nil {
		return nil, err
	}
	switch {
	case x.typ() == col.Type:
		return x, nil
	case (types.IsNumber(x.typ()) || types.IsFloat(x.typ())) && (types.IsNumber(col.Type) || types.IsFloat(col.Type)), types.IsString(col.Type) && x.typ() != types.TInt4Array,
		types.IsDateTime(x.typ()) && types.IsDateTime(col.Type): // PostgreSQL's assignment casts among date, timestamp, timestamptz
		return &castExpr{arg: x, t: col.Type}, nil
	}
	return nil, &pgerror.Error{Code: pgerror.CodeDatatypeMismatch, Message: fmt.Sprintf("column %q is of type %s but expression is of type %s", col.Name, col.Type, x.typ()),
		Hint: "You will need to rewrite or cast the expression."}
}

// checkRow brings row to its columns' modifiers (smallint range: 22003;
// varchar length: 22001, trailing spaces beyond it are cut) and checks NOT
// NULL, then the CHECK constraints (23514), in that order, as PostgreSQL
// does.
func checkRow(t *catalog.Table, row []types.Value) error { return checkRowModded(t, row, nil) }

// checkRowModded is checkRow leaving out the modifiers of the columns
// modded marks: COPY FROM applied them as it parsed the values.
func checkRowModded(t *catalog.Table, row []types.Value, modded []bool) error {
	for i, c := range t.Cols {
		if (c.Int2 || c.MaxLen > 0 || c.Prec > 0) && (modded == nil || !modded[i]) {
			v, err := types.ApplyMod(row[i], c.Mod(), false)
			if err != nil {
				return err
			}
			row[i] = v
		}
	}
	for i, c := range t.Cols {
		if row[i].Null && (c.NotNull || t.IsKeyCol(i)) {
			return &pgerror.Error{Code: pgerror.CodeNotNull, Message: fmt.Sprintf("null value in column %q of relation %q violates not-null constraint", c.Name, t.Name),
				Detail: "Failing row contains (" + failingRow(t, row) + ")."}
		}
	}
	return checkConstraints(t, row) // check.go
}

func dupKeyError(err error, t *catalog.Table, row []types.Value) error {
	e := engineError(err, t)
	if e.Code == pgerror.CodeUniqueViolation && indexViolation(err, t) == nil {
		e.Detail = fmt.Sprintf("Key (%s)=(%s) already exists.", keyColNames(t), keyColValues(t, row))
	}
	return e
}

// resultColumn describes an output column of type t computed by x; a
// character(n) keeps its length, which RowDescription reports as the type
// modifier.
func resultColumn(name string, t types.Type, x expr) catalog.Column {
	c := catalog.Column{Name: name, Type: t}
	m := exprMod(x)
	switch t {
	case types.TBpchar:
		c.MaxLen = m.MaxLen
	case types.TText:
		c.MaxLen, c.Varchar = m.MaxLen, m.Varchar || m.MaxLen > 0
	case types.TTextArray:
		c.Varchar = m.Varchar // varchar[]
	case types.TInt4:
		c.Int2 = m.Int2
	case types.TNumeric:
		c.Prec, c.Scale = m.Prec, m.Scale
	case types.TInterval:
		c.Prec = m.Prec // its typmod
	}
	return c
}

// maxTargetListEntries is PostgreSQL's MaxTupleAttributeNumber: a select or
// RETURNING list has at most this many entries (54011), which keeps a
// RowDescription within its 16-bit field count.
const maxTargetListEntries = 1664

func returning(c *compiler, list []*pg.Node) ([]expr, []catalog.Column, error) {
	var xs []expr
	var cols []catalog.Column
	for _, n := range list {
		rt := n.GetResTarget()
		if rt == nil || len(rt.Indirection) > 0 {
			return nil, nil, pgerror.NotSupported("this RETURNING item is not supported")
		}
		if cr := rt.Val.GetColumnRef(); cr != nil {
			if f := strs(cr.Fields); f[len(f)-1] == "*" {
				for i, col := range c.cols {
					if col.Hidden {
						continue
					}
					xs = append(xs, &colExpr{idx: i, t: col.Type, m: col.Mod()})
					cols = append(cols, col)
				}
				continue
			}
		}
		x, err := c.compile(rt.Val, types.TUnknown)
		if err != nil {
			return nil, nil, err
		}
		name := rt.Name
		if name == "" {
			name = defaultName(rt.Val)
		}
		t := x.typ()
		if t == types.TUnknown {
			t = types.TText
		}
		xs = append(xs, x)
		cols = append(cols, resultColumn(name, t, x))
	}
	if len(xs) > maxTargetListEntries {
		return nil, nil, pgerror.Errorf(pgerror.CodeTooManyColumns, "target lists can have at most %d entries", maxTargetListEntries)
	}
	return xs, cols, nil
}

// project evaluates xs over e into a new row (projectInto).
func project(xs []expr, e *env) ([]types.Value, error) {
	out := make([]types.Value, len(xs))
	if err := projectInto(e, xs, out); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Session) planInsert(st *pg.InsertStmt, params *[]types.Type) (*plan, error) {
	switch {
	case st.WithClause != nil:
		return nil, pgerror.NotSupported("WITH is not supported")
	}
	t, err := s.table(st.Relation)
	if err != nil {
		return nil, err
	}
	var vals [][]*pg.Node
	var selPlan *plan // INSERT ... SELECT: the query whose rows are inserted
	if st.SelectStmt == nil {
		vals = [][]*pg.Node{{}} // DEFAULT VALUES
	} else if sel := st.SelectStmt.GetSelectStmt(); sel != nil && len(sel.ValuesLists) == 0 && len(sel.TargetList) > 0 {
		// a locking clause locks the rows the SELECT reads, as in
		// PostgreSQL: the SELECT's own plan takes the locks (it runs whole
		// before the first row is inserted)
		if selPlan, err = s.planSelectAs(sel, params, true); err != nil {
			return nil, err
		}
	} else {
		if sel == nil || len(sel.ValuesLists) == 0 || len(sel.TargetList) > 0 || sel.WithClause != nil || len(sel.SortClause) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil || len(sel.LockingClause) > 0 {
			return nil, pgerror.NotSupported("this form of INSERT is not supported")
		}
		for _, l := range sel.ValuesLists {
			vals = append(vals, l.GetList().Items)
		}
	}
	var target []int
	if len(st.Cols) == 0 {
		for i, col := range t.Cols {
			if !col.Hidden {
				target = append(target, i)
			}
		}
	} else {
		seen := map[int]bool{}
		for _, n := range st.Cols {
			rt := n.GetResTarget()
			if len(rt.Indirection) > 0 {
				return nil, pgerror.NotSupported("assignment to a part of a column is not supported").At(rt.Location)
			}
			i := t.Col(rt.Name)
			if i < 0 {
				return nil, pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %q of relation %q does not exist", rt.Name, t.Name).At(rt.Location)
			}
			if seen[i] {
				return nil, pgerror.Errorf(pgerror.CodeDuplicateColumn, "column %q specified more than once", rt.Name).At(rt.Location)
			}
			seen[i] = true
			target = append(target, i)
		}
	}
	ignore, err := identityInsert(t, target, st.Override, vals, selPlan != nil) // identity.go
	if err != nil {
		return nil, err
	}
	c := &compiler{params: params}
	rows := make([][]expr, len(vals))
	for r, items := range vals {
		if st.SelectStmt == nil {
			items = nil
		} else if len(st.Cols) == 0 && len(items) <= len(target) {
			// VALUES shorter than the table: the rest are defaults (NULL)
		} else if len(items) > len(target) {
			return nil, pgerror.Errorf(pgerror.CodeSyntax, "INSERT has more expressions than target columns")
		} else if len(items) < len(target) {
			return nil, pgerror.Errorf(pgerror.CodeSyntax, "INSERT has more target columns than expressions")
		}
		row := make([]expr, len(t.Cols))
		for i := range row {
			if row[i], err = defaultExpr(t, t.Cols[i]); err != nil {
				return nil, err
			}
		}
		for j, n := range items {
			if n.GetSetToDefault() != nil || ignore[target[j]] {
				continue // the default already there
			}
			x, err := assign(c, n, t.Cols[target[j]])
			if err != nil {
				return nil, err
			}
			row[target[j]] = x
		}
		rows[r] = row
	}
	var selRow []expr // INSERT ... SELECT: the row made of a query row
	if selPlan != nil {
		if selRow, err = insertSelectRow(t, target, selPlan.cols, len(st.Cols) > 0); err != nil {
			return nil, err
		}
		if err := overrideSelectRow(t, selRow, ignore); err != nil {
			return nil, err
		}
	}
	rc := &compiler{params: params, cols: t.Cols, rel: t.Name}
	ret, cols, err := returning(rc, st.ReturningList)
	if err != nil {
		return nil, err
	}
	oc, err := s.planOnConflict(st, t, params)
	if err != nil {
		return nil, err
	}
	run := func(ctx context.Context, s *Session, params []types.Value) (*Result, error) {
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		e := &env{ctx: ctx, s: s, params: params}
		res := &Result{}
		var ups upsertState
		n := 0
		rows := rows
		var selRows [][]types.Value
		if selPlan != nil {
			sr, err := selPlan.run(ctx, s, params)
			if err != nil {
				return nil, err
			}
			selRows = sr.Rows
			rows = make([][]expr, len(selRows))
			for i := range rows {
				rows[i] = selRow
			}
		}
		var keyBuf, valBuf []byte
		for r, xs := range rows {
			if selRows != nil {
				e.row = selRows[r]
			}
			row, err := project(xs, e)
			if err != nil {
				return nil, err
			}
			for i := range row {
				if row[i].T != t.Cols[i].Type {
					if row[i], err = types.Cast(row[i], t.Cols[i].Type); err != nil {
						return nil, err
					}
				}
			}
			var kbuf []byte // a plain insert's key and value: reused, the engine copies them
			if oc == nil {
				kbuf = keyBuf
			}
			key, err := s.prepareRow(ctx, t, row, nil, kbuf) // insertrow.go
			if err != nil {
				return nil, err
			}
			if oc != nil {
				if row, err = oc.insert(ctx, tx, e, &ups, key, row); err != nil {
					return nil, err
				}
				if row == nil {
					continue // DO NOTHING, or DO UPDATE whose WHERE failed
				}
			} else {
				keyBuf, valBuf = key, catalog.AppendRow(valBuf[:0], t, row)
				if err := tx.Insert(ctx, t.Engine, key, valBuf); err != nil {
					return nil, dupRowError(err, t, row)
				}
			}
			n++
			if ret != nil {
				e.row = row
				out, err := project(ret, e)
				if err != nil {
					return nil, err
				}
				res.Rows = append(res.Rows, out)
			}
		}
		res.Tag = fmt.Sprintf("INSERT 0 %d", n)
		return res, nil
	}
	return &plan{cols: cols, usesT: true, run: run}, nil
}

// targetTable is the table an UPDATE, DELETE or INSERT … ON CONFLICT
// writes, with a compiler over its row under its name or alias.
func (s *Session) targetTable(rv *pg.RangeVar, params *[]types.Type) (*catalog.Table, *compiler, error) {
	t, err := s.table(rv)
	if err != nil {
		return nil, nil, err
	}
	rel := t.Name
	if rv.Alias != nil {
		rel = rv.Alias.Aliasname
	}
	return t, &compiler{s: s, params: params, cols: t.Cols, rel: rel}, nil
}

type setItem struct {
	col int
	x   expr
}

// compileSets compiles an UPDATE's (or ON CONFLICT DO UPDATE's) SET list
// for table t with c; keyOK: the primary key may be assigned.
func compileSets(c *compiler, t *catalog.Table, list []*pg.Node, keyOK bool) ([]setItem, error) {
	var sets []setItem
	seen := map[int]bool{}
	for _, n := range list {
		rt := n.GetResTarget()
		if rt == nil || len(rt.Indirection) > 0 || rt.Val.GetMultiAssignRef() != nil {
			return nil, pgerror.NotSupported("this form of SET is not supported")
		}
		i := t.Col(rt.Name)
		if i < 0 {
			return nil, pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %q of relation %q does not exist", rt.Name, t.Name).At(rt.Location)
		}
		if t.IsKeyCol(i) && !keyOK {
			return nil, pgerror.NotSupported("ON CONFLICT DO UPDATE SET of the primary key is not supported").At(rt.Location)
		}
		if seen[i] {
			return nil, pgerror.Errorf(pgerror.CodeSyntax, "multiple assignments to same column %q", rt.Name).At(rt.Location)
		}
		seen[i] = true
		if err := identitySet(t, i, rt.Val); err != nil { // identity.go
			return nil, err
		}
		var x expr
		var err error
		if rt.Val.GetSetToDefault() != nil {
			x, err = defaultExpr(t, t.Cols[i])
		} else {
			x, err = assign(c, rt.Val, t.Cols[i])
		}
		if err != nil {
			return nil, err
		}
		sets = append(sets, setItem{i, x})
	}
	return sets, nil
}

func (s *Session) planUpdate(st *pg.UpdateStmt, params *[]types.Type) (*plan, error) {
	switch {
	case st.WithClause != nil:
		return nil, pgerror.NotSupported("WITH is not supported")
	}
	t, c, err := s.targetTable(st.Relation, params)
	if err != nil {
		return nil, err
	}
	var js *joinSource // UPDATE ... FROM (dmljoin.go): c then compiles over the target and the source
	if len(st.FromClause) > 0 {
		if js, c, err = s.planJoinSource(t, c.rel, st.FromClause, st.WhereClause, params); err != nil {
			return nil, err
		}
	}
	sets, err := compileSets(c, t, st.TargetList, true)
	if err != nil {
		return nil, err
	}
	var where expr
	if js != nil {
		where = &joinMatch{js}
	} else if st.WhereClause != nil {
		if where, err = c.compile(st.WhereClause, types.TBool); err != nil {
			return nil, err
		}
		if where.typ() != types.TBool {
			return nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "argument of WHERE must be type boolean, not type %s", where.typ())
		}
	}
	acc := analyzeKeyAccess(where, t)
	ret, cols, err := returning(c, st.ReturningList)
	if err != nil {
		return nil, err
	}
	newRow := func(e *env, old []types.Value) ([]types.Value, error) {
		row := append([]types.Value(nil), old...)
		if js != nil { // SET sees the source row the target row joins
			joined, err := js.match(e, old)
			if err != nil || joined == nil {
				return nil, err
			}
			e.row = joined
		}
		for _, si := range sets {
			v, err := si.x.eval(e)
			if err != nil {
				return nil, err
			}
			if v.T != t.Cols[si.col].Type {
				if v, err = types.Cast(v, t.Cols[si.col].Type); err != nil {
					return nil, err
				}
			}
			row[si.col] = v
		}
		return row, checkRow(t, row)
	}
	run := func(ctx context.Context, s *Session, params []types.Value) (*Result, error) {
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		e := &env{ctx: ctx, s: s, params: params, exec: &execRun{}}
		// Each row the locking scan finds (locked FOR NO KEY UPDATE,
		// WHERE rechecked on the version locked) is updated from the
		// version locked. A no-key update is written at once, as
		// ExecModifyTable does; a key update (the new row has another key)
		// is written after the scan, so that the scan cannot meet the new
		// row (this engine has no command ids to hide it). Its UpdateKey
		// upgrades the lock to FOR UPDATE, as heap_update waits for FOR KEY
		// SHARE lockers only when the key changes, and leaves a link that
		// READ COMMITTED locking scans follow to the new key.
		res := &Result{}
		n := 0
		emit := func(row, joined []types.Value) error {
			n++
			if ret != nil {
				e.row = row
				if joined != nil { // RETURNING sees the new row and the source row
					e.row = append(append([]types.Value(nil), row...), joined[len(row):]...)
				}
				out, err := project(ret, e)
				if err != nil {
					return err
				}
				res.Rows = append(res.Rows, out)
			}
			return nil
		}
		var moves []candidate // key updates: the old key, the new row
		var movedJoins [][]types.Value
		ls := &lockScan{t: t, where: where, e: e, strength: tupled.ForNoKeyUpdate, wait: tupled.Wait}
		err = s.lockRows(ctx, tx, ls, &acc, false, -1, func(k []byte, old []types.Value) error {
			e.row = old
			row, err := newRow(e, old)
			if err != nil || row == nil {
				return err
			}
			var joined []types.Value
			if js != nil {
				joined = e.row
			}
			if !bytes.Equal(catalog.RowKey(nil, t, row), k) {
				moves = append(moves, candidate{key: k, row: row})
				movedJoins = append(movedJoins, joined)
				return nil
			}
			err = tx.Update(ctx, t.Engine, k, catalog.EncodeRow(t, row))
			if errors.Is(err, tupled.ErrNotFound) {
				return nil
			}
			if err != nil {
				return dupRowError(err, t, row) // a unique index's DETAIL
			}
			return emit(row, joined)
		})
		if err != nil {
			return nil, err
		}
		for i, mv := range moves {
			err := tx.UpdateKey(ctx, t.Engine, mv.key, catalog.RowKey(nil, t, mv.row), catalog.EncodeRow(t, mv.row))
			if errors.Is(err, tupled.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, dupRowError(err, t, mv.row)
			}
			if err := emit(mv.row, movedJoins[i]); err != nil {
				return nil, err
			}
		}
		res.Tag = fmt.Sprintf("UPDATE %d", n)
		return res, nil
	}
	return &plan{cols: cols, usesT: true, run: run}, nil
}

func (s *Session) planDelete(st *pg.DeleteStmt, params *[]types.Type) (*plan, error) {
	switch {
	case st.WithClause != nil:
		return nil, pgerror.NotSupported("WITH is not supported")
	}
	t, c, err := s.targetTable(st.Relation, params)
	if err != nil {
		return nil, err
	}
	var js *joinSource // DELETE ... USING (dmljoin.go): c then compiles over the target and the source
	if len(st.UsingClause) > 0 {
		if js, c, err = s.planJoinSource(t, c.rel, st.UsingClause, st.WhereClause, params); err != nil {
			return nil, err
		}
	}
	var where expr
	if js != nil {
		where = &joinMatch{js}
	} else if st.WhereClause != nil {
		if where, err = c.compile(st.WhereClause, types.TBool); err != nil {
			return nil, err
		}
		if where.typ() != types.TBool {
			return nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "argument of WHERE must be type boolean, not type %s", where.typ())
		}
	}
	acc := analyzeKeyAccess(where, t)
	ret, cols, err := returning(c, st.ReturningList)
	if err != nil {
		return nil, err
	}
	run := func(ctx context.Context, s *Session, params []types.Value) (*Result, error) {
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		e := &env{ctx: ctx, s: s, params: params, exec: &execRun{}}
		res := &Result{}
		n := 0
		if acc.exact && ret == nil {
			points, _, _, _, err := acc.bounds(e, t)
			if err != nil {
				return nil, err
			}
			for _, k := range points {
				err := tx.Delete(ctx, t.Engine, k)
				if errors.Is(err, tupled.ErrNotFound) {
					continue
				}
				if err != nil {
					return nil, engineError(err, t)
				}
				n++
			}
			res.Tag = fmt.Sprintf("DELETE %d", n)
			return res, nil
		}
		// Each row the locking scan finds (locked FOR UPDATE, WHERE
		// rechecked on the version locked) is deleted at once; RETURNING
		// sees the version locked.
		ls := &lockScan{t: t, where: where, e: e, strength: tupled.ForUpdate, wait: tupled.Wait}
		err = s.lockRows(ctx, tx, ls, &acc, false, -1, func(k []byte, old []types.Value) error {
			err := tx.Delete(ctx, t.Engine, k)
			if errors.Is(err, tupled.ErrNotFound) {
				return nil
			}
			if err != nil {
				return engineError(err, t)
			}
			n++
			if ret != nil {
				e.row = old
				if js != nil { // RETURNING sees the source row too
					joined, err := js.match(e, old)
					if err != nil {
						return err
					}
					if joined != nil {
						e.row = joined
					}
				}
				out, err := project(ret, e)
				if err != nil {
					return err
				}
				res.Rows = append(res.Rows, out)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		res.Tag = fmt.Sprintf("DELETE %d", n)
		return res, nil
	}
	return &plan{cols: cols, usesT: true, run: run}, nil
}
