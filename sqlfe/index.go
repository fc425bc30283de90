package sqlfe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/syscat"
	"github.com/tupled/tupled/sql/types"
)

// Indexes: CREATE [UNIQUE] INDEX on columns, UNIQUE constraints of CREATE
// TABLE and DROP INDEX, over the engine's indexes (tupled.DB.CreateIndex).
// A table's indexes are part of its catalog entry (Table.Indexes); the
// engine index of one is named "<engine table>/<index name>", and its key
// is the tuple encoding (package keys) of its columns' values; a row with
// a NULL in one of them is not indexed, so NULLs never conflict, as in
// PostgreSQL. Loading the catalog registers every index's key function
// with the engine again (the engine does not store it).

// compileIndexExprs compiles d's expression elements over t's row (nil
// for a column element).
func compileIndexExprs(t *catalog.Table, d catalog.IndexDef) ([]expr, error) {
	xs := make([]expr, len(d.Cols))
	for i, c := range d.Cols {
		if c >= 0 {
			continue
		}
		sts, err := Parse(d.Exprs[i])
		if err != nil {
			return nil, err
		}
		sel := sts[0].node.GetSelectStmt()
		if sel == nil || len(sel.TargetList) != 1 {
			return nil, catalog.ErrCorrupt
		}
		x, err := (&compiler{cols: t.Cols, rel: t.Name}).compile(sel.TargetList[0].GetResTarget().Val, types.TUnknown)
		if err != nil {
			return nil, err
		}
		xs[i] = x
	}
	return xs, nil
}

// checkIndexPredicate refuses what a partial index's WHERE may not hold,
// with PostgreSQL's errors: subqueries (0A000), aggregates and window
// functions (42803, 42P20), parameters, and functions whose value is not
// the row's alone (42P17).
func checkIndexPredicate(n *pg.Node) error {
	var bad error
	walkNodes(n, func(n *pg.Node) bool {
		switch {
		case n.GetSubLink() != nil:
			bad = pgerror.NotSupported("cannot use subquery in index predicate")
		case n.GetParamRef() != nil:
			bad = pgerror.Errorf(pgerror.CodeUndefinedParameter, "there is no parameter $%d", n.GetParamRef().Number)
		case n.GetSqlvalueFunction() != nil:
			bad = pgerror.Errorf(pgerror.CodeInvalidObjectDefinition, "functions in index predicate must be marked IMMUTABLE")
		case n.GetFuncCall() != nil:
			f := n.GetFuncCall()
			names := strs(f.Funcname)
			name := names[len(names)-1]
			switch _, cat := catFuncs[name]; {
			case f.Over != nil:
				bad = pgerror.Errorf(pgerror.CodeWindowing, "cannot use window function in index predicate")
			case aggNames[name]:
				bad = pgerror.Errorf(pgerror.CodeGrouping, "cannot use aggregate function in index predicate")
			case cat || sessionFuncs[name] || strings.HasPrefix(name, "pg_") || name == "nextval" || name == "currval":
				bad = pgerror.Errorf(pgerror.CodeInvalidObjectDefinition, "functions in index predicate must be marked IMMUTABLE")
			}
		}
		return bad == nil
	})
	return bad
}

// compileIndexPredicate compiles d's WHERE over t's row (nil for an index
// of every row): a boolean, else 42804.
func compileIndexPredicate(t *catalog.Table, d catalog.IndexDef) (expr, error) {
	if d.Where == "" {
		return nil, nil
	}
	n, err := checkNode(catalog.CheckDef{Expr: d.Where}) // check.go: the stored "SELECT pred"
	if err != nil {
		return nil, err
	}
	x, err := (&compiler{cols: t.Cols, rel: t.Name}).compile(n, types.TBool)
	if err != nil {
		return nil, err
	}
	if x.typ() != types.TBool && x.typ() != types.TUnknown {
		return nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "argument of WHERE must be type boolean, not type %s", x.typ())
	}
	return x, nil
}

// indexKey is the key function of t's index d: the tuple encoding of the
// indexed columns in d's format, or not indexed when one is NULL or the
// row is not one a partial index's predicate is true for.
func indexKey(t *catalog.Table, d catalog.IndexDef) func(key, value []byte) ([]byte, bool) {
	kf := d.KeyFormat()
	pred, perr := compileIndexPredicate(t, d)
	xs, xerr := compileIndexExprs(t, d)
	return func(key, value []byte) (_ []byte, ok bool) {
		defer func() {
			if recover() != nil { // a function that needs a session: not indexed
				ok = false
			}
		}()
		if xerr != nil || perr != nil {
			return nil, false // refused by CREATE INDEX: a catalog written by another version
		}
		row := make([]types.Value, len(t.Cols))
		if err := catalog.DecodeRow(t, key, value, row); err != nil {
			return nil, false
		}
		if pred != nil {
			if ok, err := truthy(pred, &env{ctx: context.Background(), row: row}); err != nil || !ok {
				return nil, false
			}
		}
		var out []byte
		for i, c := range d.Cols {
			var v types.Value
			if c >= 0 {
				v = row[c]
			} else {
				var err error
				if v, err = xs[i].eval(&env{ctx: context.Background(), row: row}); err != nil {
					return nil, false
				}
			}
			if v.Null {
				return nil, false
			}
			out = catalog.AppendKey(out, kf, v)
		}
		return out, true
	}
}

// createIndexes creates (or, for a table loaded from the catalog,
// registers again) t's indexes in the engine.
func createIndexes(ctx context.Context, db *tupled.DB, t *catalog.Table) error {
	for _, d := range t.Indexes {
		err := db.CreateIndex(ctx, t.Engine, catalog.EngIndex(t, d.Name), tupled.IndexOptions{Unique: d.Unique, Key: indexKey(t, d)})
		if err != nil && !errors.Is(err, tupled.ErrTableExists) {
			return err
		}
	}
	return nil
}

// relNameTaken reports whether a relation in t's namespace is called
// name: pg_temp's for a temporary table (temp.go), else the catalog's.
func (s *Session) relNameTaken(t *catalog.Table, name string) bool {
	if t.Temp {
		return s.tempNameTaken(name)
	}
	return s.indexNameTaken(name)
}

// indexNameTaken reports whether a table or an index is called name.
func (s *Session) indexNameTaken(name string) bool {
	if s.lookupShared(name) != nil || s.pkeyNamed(name) { // a table or view (not pg_temp's: temp.go); compositekey.go
		return true
	}
	return s.findIndex(name) != nil
}

// findIndex returns the table with index name, or nil.
func (s *Session) findIndex(name string) *catalog.Table {
	var found *catalog.Table
	s.eng.cat.Range(func(_ string, t *catalog.Table) bool {
		if p, ok := s.pending[t.Name]; ok {
			t = p
		}
		if t == nil {
			return true
		}
		for _, d := range t.Indexes {
			if d.Name == name {
				found = t
				return false
			}
		}
		return true
	})
	if found != nil {
		return found
	}
	for _, t := range s.pending {
		if t == nil {
			continue
		}
		for _, d := range t.Indexes {
			if d.Name == name {
				return t
			}
		}
	}
	return nil
}

// chooseIndexName is PostgreSQL's ChooseRelationName: table_cols_suffix,
// then with 1, 2, … appended until the name is free (taken: the names
// already used, besides the catalog's).
func (s *Session) chooseIndexName(t *catalog.Table, cols []int, suffix string, taken map[string]bool) string {
	var labels []string
	for _, c := range cols {
		labels = append(labels, t.Cols[c].Name)
	}
	return s.chooseLabelName(t, labels, suffix, taken)
}

// chooseLabelName is chooseIndexName over the elements' labels.
func (s *Session) chooseLabelName(t *catalog.Table, labels []string, suffix string, taken map[string]bool) string {
	base := strings.Join(append([]string{t.Name}, labels...), "_") + "_" + suffix
	name := base
	for i := 1; taken[name] || s.relNameTaken(t, name); i++ {
		name = fmt.Sprintf("%s%d", base, i)
	}
	return name
}

// indexCols resolves index columns by name.
func indexCols(t *catalog.Table, names []string, loc int32) ([]int, error) {
	var cols []int
	for _, n := range names {
		i := t.Col(n)
		if i < 0 {
			return nil, pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %q named in key does not exist", n).At(loc)
		}
		if types.IsArray(t.Cols[i].Type) {
			// its key would be the array's text, which does not sort as arrays do
			return nil, pgerror.NotSupported("an index on an array column is not supported").At(loc)
		}
		cols = append(cols, i)
	}
	return cols, nil
}

func (s *Session) planCreateIndex(st *pg.IndexStmt) (*plan, error) {
	switch {
	case st.AccessMethod != "" && st.AccessMethod != "btree":
		return nil, pgerror.NotSupported("access method %q is not supported", st.AccessMethod)
	case len(st.IndexIncludingParams) > 0 || len(st.Options) > 0 || st.TableSpace != "":
		return nil, pgerror.NotSupported("CREATE INDEX options are not supported")
	case st.Concurrent:
		return nil, pgerror.NotSupported("CREATE INDEX CONCURRENTLY is not supported")
	case st.NullsNotDistinct:
		return nil, pgerror.NotSupported("NULLS NOT DISTINCT is not supported")
	}
	tname, err := relName(st.Relation)
	if err != nil {
		return nil, err
	}
	var names, exprs, labels []string // by element: a column's name, or an expression's text
	for _, p := range st.IndexParams {
		e := p.GetIndexElem()
		if e == nil || len(e.Collation) > 0 || len(e.Opclass) > 0 {
			return nil, pgerror.NotSupported("index elements other than columns and expressions are not supported")
		}
		if e.Name != "" {
			names, exprs, labels = append(names, e.Name), append(exprs, ""), append(labels, e.Name)
			continue
		}
		sql, err := deparseExpr(e.Expr)
		if err != nil {
			return nil, err
		}
		label := "expr"
		if fc := e.Expr.GetFuncCall(); fc != nil {
			if fn := strs(fc.Funcname); len(fn) > 0 {
				label = fn[len(fn)-1]
			}
		}
		names, exprs, labels = append(names, ""), append(exprs, sql), append(labels, label)
	}
	var where string // a partial index's predicate
	if st.WhereClause != nil {
		if err := checkIndexPredicate(st.WhereClause); err != nil {
			return nil, err
		}
		var err error
		if where, err = deparseExpr(st.WhereClause); err != nil {
			return nil, err
		}
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		res := &Result{Tag: "CREATE INDEX"}
		if s.block == blkExplicit {
			return nil, pgerror.NotSupported("CREATE INDEX inside a transaction block is not supported")
		}
		t := s.lookupTable(tname)
		if t == nil && s.lookupView(tname) != nil {
			return nil, &pgerror.Error{Code: pgerror.CodeWrongObjectType, Message: fmt.Sprintf("cannot create index on relation %q", tname),
				Detail: "This operation is not supported for views."}
		}
		if t == nil {
			return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", tname)
		}
		if err := refuseTemp(t, "CREATE INDEX"); err != nil { // temp.go
			return nil, err
		}
		if s.holdsWriteLock(t) {
			// The engine builds an index in a transaction of its own that
			// takes ShareLock, waiting for the table's writers: one is
			// this statement's own transaction (an earlier statement of
			// the query string wrote the table or added a foreign key to
			// it), which it would wait for forever.
			return nil, pgerror.NotSupported("CREATE INDEX on a table an earlier statement of the same query string wrote to is not supported: send it in a query of its own")
		}
		var cols []int
		var hasExpr bool
		for _, n := range names {
			if n == "" {
				cols, hasExpr = append(cols, -1), true
				continue
			}
			c, err := indexCols(t, []string{n}, st.Relation.Location)
			if err != nil {
				return nil, err
			}
			cols = append(cols, c...)
		}
		d := catalog.IndexDef{Cols: cols, Unique: st.Unique, Typed: true, Where: where, IndexOnly: st.Unique}
		if hasExpr {
			d.Exprs = exprs
			if _, err := compileIndexExprs(t, d); err != nil {
				return nil, err
			}
		}
		if _, err := compileIndexPredicate(t, d); err != nil {
			return nil, err
		}
		name := st.Idxname
		if name == "" {
			name = s.chooseLabelName(t, labels, "idx", nil)
		} else if s.indexNameTaken(name) {
			if st.IfNotExists {
				s.notice("NOTICE", pgerror.CodeDuplicateTable, "relation \""+name+"\" already exists, skipping")
				return res, nil
			}
			return nil, pgerror.Errorf(pgerror.CodeDuplicateTable, "relation %q already exists", name)
		}
		d.Name = name
		err := s.eng.db.CreateIndex(ctx, t.Engine, catalog.EngIndex(t, name), tupled.IndexOptions{Unique: d.Unique, Key: indexKey(t, d)})
		if err != nil {
			if errors.Is(err, tupled.ErrDuplicateKey) {
				return nil, pgerror.Errorf(pgerror.CodeUniqueViolation, "could not create unique index %q", name)
			}
			return nil, engineError(err, t)
		}
		tx, err := s.ensureTx(ctx)
		if err == nil {
			err = s.saveIndexes(ctx, tx, t, append(append([]catalog.IndexDef(nil), t.Indexes...), d))
		}
		if err != nil {
			_ = s.eng.db.DropIndex(ctx, catalog.EngIndex(t, name), true)
			return nil, err
		}
		return res, nil
	}
	return &plan{usesT: true, run: run}, nil
}

// saveIndexes writes t's catalog entry with indexes ixs (committed with
// the statement's transaction).
func (s *Session) saveIndexes(ctx context.Context, tx *tupled.Tx, t *catalog.Table, ixs []catalog.IndexDef) error {
	if err := refuseTemp(t, "changing the definition"); err != nil { // temp.go: never in the catalog table
		return err
	}
	nt := *t
	nt.Indexes = ixs
	if len(nt.ConComments) > 0 { // comments on constraints gone go with them
		names := syscat.ConstraintNames(&nt)
		nt.ConComments = slices.DeleteFunc(slices.Clone(nt.ConComments), func(c catalog.NamedComment) bool { return !slices.Contains(names, c.Name) })
	}
	data, err := json.Marshal(&nt)
	if err != nil {
		return err
	}
	if err := tx.Update(ctx, catalog.CatalogTable, []byte(t.Name), data); err != nil {
		return err
	}
	s.stage(t.Name, &nt)
	return nil
}

func (s *Session) planDropIndex(st *pg.DropStmt) (*plan, error) {
	if st.Concurrent {
		return nil, pgerror.NotSupported("DROP INDEX CONCURRENTLY is not supported")
	}
	var names []string
	for _, o := range st.Objects {
		parts := strs(o.GetList().GetItems())
		if len(parts) == 2 && parts[0] == "public" {
			parts = parts[1:]
		}
		if len(parts) != 1 {
			return nil, pgerror.Errorf(pgerror.CodeUndefinedObject, "index %q does not exist", strings.Join(parts, "."))
		}
		names = append(names, parts[0])
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		if s.block == blkExplicit {
			return nil, pgerror.NotSupported("DROP INDEX inside a transaction block is not supported")
		}
		for _, name := range names {
			t := s.findIndex(name)
			if t == nil {
				if st.MissingOk {
					s.notice("NOTICE", "00000", "index \""+name+"\" does not exist, skipping")
					continue
				}
				return nil, pgerror.Errorf(pgerror.CodeUndefinedObject, "index %q does not exist", name)
			}
			var keep []catalog.IndexDef
			for _, d := range t.Indexes {
				if d.Name != name {
					keep = append(keep, d)
				}
			}
			if err := s.eng.db.DropIndex(ctx, catalog.EngIndex(t, name), true); err != nil {
				return nil, engineError(err, t)
			}
			tx, err := s.ensureTx(ctx)
			if err != nil {
				return nil, err
			}
			if err := s.saveIndexes(ctx, tx, t, keep); err != nil {
				return nil, err
			}
		}
		return &Result{Tag: "DROP INDEX"}, nil
	}
	return &plan{usesT: true, run: run}, nil
}

// indexViolation is the 23505 of a unique index of t named in err, or
// nil when err names none (the primary key's).
func indexViolation(err error, t *catalog.Table) *pgerror.Error {
	if d, ok := violatedIndex(err, t); ok {
		return pgerror.Errorf(pgerror.CodeUniqueViolation, "duplicate key value violates unique constraint %q", d.Name)
	}
	return nil
}

// violatedIndex is the unique index of t that err (a 23505) names.
func violatedIndex(err error, t *catalog.Table) (catalog.IndexDef, bool) {
	for _, d := range t.Indexes {
		if strings.Contains(err.Error(), `"`+catalog.EngIndex(t, d.Name)+`"`) {
			return d, true
		}
	}
	return catalog.IndexDef{}, false
}

// uniqueByName is t's unique index called name.
func uniqueByName(t *catalog.Table, name string) (catalog.IndexDef, bool) {
	for _, d := range t.Indexes {
		if d.Unique && d.Name == name {
			return d, true
		}
	}
	return catalog.IndexDef{}, false
}

// uniqueByCols is the unique index of t on exactly the columns of an ON
// CONFLICT inference specification (in any order), as PostgreSQL's
// infer_arbiter_indexes matches them. A partial index is one only for an
// inference WHERE (where, its SQL text) that is its predicate; PostgreSQL
// takes any it implies, tupled the same text (after pg_query's deparse).
func uniqueByCols(t *catalog.Table, elems []*pg.Node, where string) (catalog.IndexDef, bool) {
	want := map[string]bool{} // "c<col>" or "e<expression text>"
	for _, n := range elems {
		e := n.GetIndexElem()
		if e == nil {
			return catalog.IndexDef{}, false
		}
		if e.Name == "" {
			sql, err := deparseExpr(e.Expr)
			if err != nil {
				return catalog.IndexDef{}, false
			}
			want["e"+sql] = true
			continue
		}
		c := t.Col(e.Name)
		if c < 0 {
			return catalog.IndexDef{}, false
		}
		want[fmt.Sprintf("c%d", c)] = true
	}
	var partial *catalog.IndexDef
	for _, d := range t.Indexes {
		if !d.Unique || len(d.Cols) != len(want) || (d.Where != "" && d.Where != where) {
			continue
		}
		match := true
		for i, c := range d.Cols {
			if c < 0 {
				match = match && want["e"+d.Exprs[i]]
			} else {
				match = match && want[fmt.Sprintf("c%d", c)]
			}
		}
		if match && d.Where == "" {
			return d, true
		}
		if match && partial == nil {
			partial = &d
		}
	}
	if partial != nil {
		return *partial, true
	}
	return catalog.IndexDef{}, false
}

// dupRowError is dupKeyError for a write of row: a unique index's
// violation gets PostgreSQL's DETAIL, `Key (cols)=(values) already
// exists.`, with the index's columns and expressions.
func dupRowError(err error, t *catalog.Table, row []types.Value) error {
	e := indexViolation(err, t)
	if e == nil {
		return dupKeyError(err, t, row)
	}
	d, _ := violatedIndex(err, t)
	xs, xerr := compileIndexExprs(t, d)
	if xerr != nil || len(d.Cols) == 0 {
		return e
	}
	var names, vals []string
	for i, c := range d.Cols {
		if c >= 0 {
			names, vals = append(names, t.Cols[c].Name), append(vals, row[c].String())
			continue
		}
		v, err := xs[i].eval(&env{ctx: context.Background(), row: row})
		if err != nil {
			return e
		}
		names, vals = append(names, strings.TrimSuffix(strings.TrimPrefix(d.Exprs[i], "SELECT "), ";")), append(vals, v.String())
	}
	e.Detail = fmt.Sprintf("Key (%s)=(%s) already exists.", strings.Join(names, ", "), strings.Join(vals, ", "))
	return e
}

// indexAccess finds, for a scan of t with where that is not limited by the
// primary key, a conjunct `col = value` over the single column of one of
// t's indexes, and returns that index's engine name and the key to look up
// (ok false: none; the scan reads the table). value must not depend on the
// row and must have the column's type (int4 and int8 share an encoding);
// the rows found are still checked against the whole of where.
func indexAccess(t *catalog.Table, where expr, e *env) (index string, ikey []byte, ok bool, err error) {
	if where == nil || len(t.Indexes) == 0 {
		return "", nil, false, nil
	}
	intType := func(ty types.Type) bool { return ty == types.TInt4 || ty == types.TInt8 }
	for _, c := range conjuncts(where) {
		x, isCmp := c.(*cmpExpr)
		if !isCmp || x.op != "=" {
			continue
		}
		for _, side := range [][2]expr{{x.l, x.r}, {x.r, x.l}} {
			col, isCol := side[0].(*colExpr)
			other := side[1]
			if !isCol || col.idx >= len(t.Cols) || usesRow(other) {
				continue
			}
			ct, ot := t.Cols[col.idx].Type, other.typ()
			if ct != ot && !(intType(ct) && intType(ot)) || ct == types.TBpchar {
				continue
			}
			for _, d := range t.Indexes {
				if len(d.Cols) != 1 || d.Cols[0] != col.idx || d.Where != "" { // a partial index has not every row
					continue
				}
				// a type whose text is not its key: only through a typed index
				if types.NoKeyType(ct) && !(d.Typed && catalog.TypedKeyType(ct)) {
					continue
				}
				v, err := other.eval(e)
				if err != nil {
					return "", nil, false, err
				}
				if v.Null {
					continue
				}
				return catalog.EngIndex(t, d.Name), catalog.AppendKey(nil, d.KeyFormat(), v), true, nil
			}
		}
	}
	return "", nil, false, nil
}

// holdsWriteLock reports whether the session's transaction holds a lock on
// t's engine table that conflicts with ShareLock (RowExclusiveLock and
// stronger).
func (s *Session) holdsWriteLock(t *catalog.Table) bool {
	if s.tx == nil {
		return false
	}
	id := s.tx.ID()
	for _, l := range s.eng.db.Locks() {
		if l.TxID != id || !l.Granted || l.Tag != "relation "+t.Engine {
			continue
		}
		switch l.Mode {
		case "AccessShareLock", "RowShareLock", "ShareLock":
		default:
			return true
		}
	}
	return false
}
