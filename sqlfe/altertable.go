package sqlfe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// ALTER TABLE forms other than the foreign-key ones of fk.go:
//
//	ADD [CONSTRAINT name] PRIMARY KEY (cols)   (pgbench -i adds its keys so)
//	ADD [COLUMN] [IF NOT EXISTS] col type [DEFAULT x] [NOT NULL]
//	DROP [COLUMN] [IF EXISTS] col
//	ALTER [COLUMN] col [SET DATA] TYPE type [USING expr]   (altertype.go)
//	RENAME [COLUMN] a TO b
//	SET (fillfactor = n), RESET (fillfactor)   (accepted: the heap has no pages to leave free)
//
// A form that changes how rows are stored (a new primary key is a new
// engine key; a column added or dropped changes every row's encoding)
// rewrites the table, as PostgreSQL's ALTER TABLE does: a new engine
// table is made, the table's indexes are made on it, every row is copied
// through the statement's transaction, and the catalog entry names the new
// engine table; when the transaction commits the old one is reclaimed
// (reclaim.go), when it rolls back the new one is. The table is locked
// ACCESS EXCLUSIVE first, so no other transaction reads or writes it
// meanwhile. A table's own foreign keys are declared anew on the new
// engine table (a rewrite that changes their columns is 0A000); a table
// other tables' foreign keys reference is not rewritten (0A000): their
// engine foreign keys name its engine table, and the engine's
// declarations are not transactional.

// storageParams checks CREATE TABLE … WITH (…) and ALTER TABLE … SET (…):
// fillfactor (10–100) is accepted and has no effect; autovacuum settings
// too (there is a vacuum loop of the engine's own); anything else is 22023
// as in PostgreSQL.
func storageParams(opts []*pg.Node) error {
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			return pgerror.NotSupported("this storage parameter is not supported")
		}
		name := d.Defname
		if d.Defnamespace != "" {
			name = d.Defnamespace + "." + name
		}
		switch {
		case name == "fillfactor":
			v := defElemString(d)
			if iv := d.Arg.GetInteger(); iv != nil {
				v = strconv.Itoa(int(iv.Ival))
			}
			n, err := strconv.Atoi(v)
			if d.Arg == nil {
				continue // RESET (fillfactor)
			}
			if err != nil {
				return pgerror.Errorf(pgerror.CodeInvalidParamValue, "invalid value for integer option \"fillfactor\": %s", v)
			}
			if n < 10 || n > 100 {
				return &pgerror.Error{Code: pgerror.CodeInvalidParamValue, Message: fmt.Sprintf("value %d out of bounds for option \"fillfactor\"", n), Detail: "Valid values are between \"10\" and \"100\"."}
			}
		case strings.HasPrefix(name, "autovacuum_") || strings.HasPrefix(name, "toast.") || name == "parallel_workers":
		default:
			return pgerror.Errorf(pgerror.CodeInvalidParamValue, "unrecognized parameter %q", name)
		}
	}
	return nil
}

// planAlterRewrite plans the ALTER TABLE forms of this file; ok is false
// for the others (fk.go's).
func (s *Session) planAlterRewrite(st *pg.AlterTableStmt) (*plan, bool, error) {
	if st.Objtype != pg.ObjectType_OBJECT_TABLE || len(st.Cmds) != 1 {
		return nil, false, nil
	}
	cmd := st.Cmds[0].GetAlterTableCmd()
	tname, err := relName(st.Relation)
	if err != nil {
		return nil, true, err
	}
	var change func(ctx context.Context, s *Session, tx *tupled.Tx, t *catalog.Table) (*catalog.Table, func([]types.Value) ([]types.Value, error), error)
	switch cmd.GetSubtype() {
	case pg.AlterTableType_AT_SetRelOptions, pg.AlterTableType_AT_ResetRelOptions:
		if err := storageParams(cmd.Def.GetList().GetItems()); err != nil {
			return nil, true, err
		}
		change = func(context.Context, *Session, *tupled.Tx, *catalog.Table) (*catalog.Table, func([]types.Value) ([]types.Value, error), error) {
			return nil, nil, nil
		}
	case pg.AlterTableType_AT_AddConstraint:
		c := cmd.Def.GetConstraint()
		if c == nil || c.Contype != pg.ConstrType_CONSTR_PRIMARY {
			return nil, false, nil
		}
		if len(c.Options) > 0 || c.Indexspace != "" || c.Deferrable || len(c.Including) > 0 {
			return nil, true, pgerror.NotSupported("PRIMARY KEY options are not supported")
		}
		keys := strs(c.Keys)
		change = func(_ context.Context, s *Session, _ *tupled.Tx, t *catalog.Table) (*catalog.Table, func([]types.Value) ([]types.Value, error), error) {
			return s.addPrimaryKey(t, keys, c.Conname)
		}
	case pg.AlterTableType_AT_AddColumn:
		cd := cmd.Def.GetColumnDef()
		change = func(ctx context.Context, s *Session, tx *tupled.Tx, t *catalog.Table) (*catalog.Table, func([]types.Value) ([]types.Value, error), error) {
			return s.addColumn(ctx, t, cd, cmd.MissingOk)
		}
	case pg.AlterTableType_AT_AlterColumnType:
		cd := cmd.Def.GetColumnDef()
		change = func(ctx context.Context, s *Session, _ *tupled.Tx, t *catalog.Table) (*catalog.Table, func([]types.Value) ([]types.Value, error), error) {
			return s.alterColumnType(ctx, t, cmd.Name, cd)
		}
	case pg.AlterTableType_AT_DropColumn:
		change = func(_ context.Context, s *Session, _ *tupled.Tx, t *catalog.Table) (*catalog.Table, func([]types.Value) ([]types.Value, error), error) {
			if err := s.refuseUnderViews(t.Name, "ALTER TABLE ... DROP COLUMN"); err != nil { // views.go
				return nil, nil, err
			}
			return s.dropColumn(t, cmd.Name, cmd.MissingOk, cmd.Behavior == pg.DropBehavior_DROP_CASCADE)
		}
	default:
		return nil, false, nil
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		res := &Result{Tag: "ALTER TABLE"}
		t, tx, err := s.alterTableTarget(ctx, st, tname, true)
		if err != nil {
			return nil, err
		}
		if t == nil {
			return res, nil // IF EXISTS
		}
		nt, conv, err := change(ctx, s, tx, t)
		if err != nil || nt == nil {
			return res, err // nil, nil: nothing to change
		}
		if conv == nil {
			return res, s.saveTable(ctx, tx, nt) // the catalog entry only
		}
		return res, s.rewriteTable(ctx, tx, t, nt, conv)
	}
	return &plan{usesT: true, run: run}, true, nil
}

// alterTableTarget is the prologue of the ALTER TABLE forms that rewrite a
// table or its constraints (planAlterTable, check.go's planAlterCheck):
// the table st names — nil and no error when IF EXISTS finds none, after
// PostgreSQL's NOTICE —, the statement's transaction, and ACCESS EXCLUSIVE
// on the table until that transaction ends. seedRowid seeds a rowid
// table's counter first (rowid.go), which must happen before the lock.
func (s *Session) alterTableTarget(ctx context.Context, st *pg.AlterTableStmt, tname string, seedRowid bool) (*catalog.Table, *tupled.Tx, error) {
	t := s.lookupTable(tname)
	if t == nil && s.lookupView(tname) != nil {
		return nil, nil, pgerror.NotSupported("ALTER TABLE of a view is not supported").At(st.Relation.Location)
	}
	if t == nil {
		if st.MissingOk {
			s.notice("NOTICE", "00000", "relation \""+tname+"\" does not exist, skipping")
			return nil, nil, nil
		}
		return nil, nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", tname).At(st.Relation.Location)
	}
	if err := refuseTemp(t, "ALTER TABLE"); err != nil { // temp.go
		return nil, nil, err
	}
	tx, err := s.ensureTx(ctx)
	if err != nil {
		return nil, nil, err
	}
	if seedRowid {
		if err := s.eng.seedRowid(ctx, t); err != nil {
			return nil, nil, err
		}
	}
	if err := tx.LockTable(ctx, t.Engine, tupled.AccessExclusive, false); err != nil {
		return nil, nil, engineError(err, t)
	}
	return t, tx, nil
}

// rewriteTable copies t's rows, converted by conv, into a new engine table
// for nt, and makes nt t's catalog entry; with conv nil it copies no rows
// (TRUNCATE's new, empty engine table: truncate.go).
func (s *Session) rewriteTable(ctx context.Context, tx *tupled.Tx, t, nt *catalog.Table, conv func([]types.Value) ([]types.Value, error)) error {
	if s.referenced(t) {
		return pgerror.NotSupported("ALTER TABLE that rewrites a table other tables' foreign keys reference is not supported")
	}
	if !fkColsKept(t, nt) {
		return pgerror.NotSupported("ALTER TABLE that changes the columns of a foreign key is not supported")
	}
	e, err := s.eng.cat.NewEngineTable(ctx, s.eng.db, t.Name)
	if err != nil {
		return err
	}
	s.created = append(s.created, e)
	nt.Engine = e
	if err := createIndexes(ctx, s.eng.db, nt); err != nil {
		return err
	}
	if conv != nil {
		err = s.copyRows(ctx, tx, t, nt, conv)
	}
	if err != nil {
		var fe *pgerror.Error
		if errors.As(err, &fe) {
			return fe
		}
		return engineError(err, t)
	}
	if nt.HiddenKey() {
		// the rows keep their rowids: the new engine table's counter goes
		// on from the old one's
		s.eng.rowids.mu.Lock()
		s.eng.rowids.next[nt.Engine] = s.eng.rowids.next[t.Engine]
		s.eng.rowids.mu.Unlock()
	}
	// t's foreign keys, declared anew on the new engine table, check its
	// rows (the old one's go when it is reclaimed, the new one's with it
	// if the transaction rolls back)
	for _, d := range nt.FKeys {
		parent := s.lookupTable(d.RefTable)
		if d.RefTable == nt.Name {
			parent = nt
		}
		if parent == nil {
			return fmt.Errorf("sqlfe: foreign key %q of %q: %w", d.Name, nt.Name, catalog.ErrCorrupt)
		}
		if err := tx.AddForeignKey(ctx, engineFK(nt, parent, d)); err != nil {
			e := ToError(err)
			if fe := fkCause(e); fe != nil {
				fkDetail(e, fe, nt, parent, d)
			}
			return e
		}
	}
	for _, c := range nt.Cols {
		if c.Serial || c.Identity != "" {
			if err := moveSequence(ctx, tx, t.Engine+"."+c.Name, nt.Engine+"."+c.Name); err != nil {
				return err
			}
		}
	}
	return s.saveTable(ctx, tx, nt)
}

// copyRows copies t's rows, converted by conv, into nt's new engine
// table: by bulk loads (bulk.go) while the engine takes them (no
// indexes on it yet), else one insert each.
func (s *Session) copyRows(ctx context.Context, tx *tupled.Tx, t, nt *catalog.Table, conv func([]types.Value) ([]types.Value, error)) error {
	row := make([]types.Value, len(t.Cols))
	var kb []byte
	var b bulkBuf
	bulk := len(nt.Indexes) == 0
	dup := func(err error, i int) error { // the error of chunk row i
		out := make([]types.Value, len(nt.Cols))
		if derr := catalog.DecodeRow(nt, b.keys[i], b.vals[i], out); derr != nil {
			return derr
		}
		if errors.Is(err, tupled.ErrDuplicateKey) {
			return rewriteDuplicate(err, nt, out)
		}
		return dupKeyError(err, nt, out)
	}
	load := func() error {
		n, refused, err := b.load(ctx, tx, nt.Engine)
		if errors.Is(err, tupled.ErrDuplicateKey) {
			return dup(err, n)
		}
		if err != nil || !refused {
			return err
		}
		bulk = false
		for i := range b.keys {
			if err := tx.Insert(ctx, nt.Engine, b.keys[i], b.vals[i]); err != nil {
				return dup(err, i)
			}
		}
		b.reset()
		return nil
	}
	err := tx.Scan(ctx, t.Engine, tupled.ScanOptions{}, func(k, v []byte) error {
		if err := catalog.DecodeRow(t, k, v, row); err != nil {
			return err
		}
		out, err := conv(row)
		if err != nil {
			return err
		}
		kb = catalog.RowKey(kb[:0], nt, out)
		if bulk {
			b.add(kb, catalog.EncodeRow(nt, out))
			if b.full() {
				return load()
			}
			return nil
		}
		if err := tx.Insert(ctx, nt.Engine, kb, catalog.EncodeRow(nt, out)); err != nil {
			if errors.Is(err, tupled.ErrDuplicateKey) {
				return rewriteDuplicate(err, nt, out)
			}
			return dupKeyError(err, nt, out)
		}
		return nil
	})
	if err == nil {
		err = load()
	}
	return err
}

// rewriteDuplicate is the error of a rewrite whose rows collide in nt's
// primary key or one of its unique indexes: the rows were distinct in the
// table rewritten, so the key or index is new (ADD PRIMARY KEY) or its
// values are (ALTER COLUMN TYPE), and PostgreSQL, building it anew, says
// it "could not create unique index".
func rewriteDuplicate(err error, nt *catalog.Table, row []types.Value) error {
	name, cols := nt.PrimaryKeyName(), nt.KeyColumns()
	if d, ok := violatedIndex(err, nt); ok {
		name, cols = d.Name, d.Cols
	}
	e := &pgerror.Error{Code: pgerror.CodeUniqueViolation, Message: fmt.Sprintf("could not create unique index %q", name)}
	if !slices.Contains(cols, -1) { // an expression's value is not at hand
		var names, vals []string
		for _, c := range cols {
			names, vals = append(names, nt.Cols[c].Name), append(vals, row[c].String())
		}
		e.Detail = fmt.Sprintf("Key (%s)=(%s) is duplicated.", strings.Join(names, ", "), strings.Join(vals, ", "))
	}
	return e
}

// fkColsKept reports whether nt, t rewritten, keeps t's foreign keys'
// columns as they were: the same names at the same places with the same
// types (a rewrite that would change them, which the engine's foreign
// keys would have to follow, is refused).
func fkColsKept(t, nt *catalog.Table) bool {
	if len(t.FKeys) != len(nt.FKeys) {
		return false
	}
	for i, d := range t.FKeys {
		if !slices.Equal(d.Cols, nt.FKeys[i].Cols) {
			return false
		}
		for _, c := range d.Cols {
			if c >= len(nt.Cols) || nt.Cols[c].Name != t.Cols[c].Name || nt.Cols[c].Type != t.Cols[c].Type || nt.Cols[c].Mod() != t.Cols[c].Mod() {
				return false
			}
		}
	}
	return true
}

// moveSequence moves a serial column's sequence row (defaults.go) to a new
// key in tx, locking it meanwhile as nextval does; a sequence never
// advanced has no row.
func moveSequence(ctx context.Context, tx *tupled.Tx, from, to string) error {
	cur, err := tx.Lock(ctx, SequenceTable, []byte(from), tupled.ForUpdate, tupled.Wait)
	if errors.Is(err, tupled.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := tx.Insert(ctx, SequenceTable, []byte(to), cur); err != nil {
		return err
	}
	return tx.Delete(ctx, SequenceTable, []byte(from))
}

// referenced reports whether another table's foreign key references t.
func (s *Session) referenced(t *catalog.Table) bool {
	found := false
	s.eng.cat.Range(func(_ string, o *catalog.Table) bool {
		if p, ok := s.pending[o.Name]; ok {
			o = p
		}
		if o == nil {
			return true
		}
		for _, d := range o.FKeys {
			if d.RefTable == t.Name && o.Name != t.Name {
				found = true
				return false
			}
		}
		return true
	})
	return found
}

// cloneTable is a copy of t whose slices can change without touching t's.
func cloneTable(t *catalog.Table) *catalog.Table {
	nt := *t
	nt.Cols = append([]catalog.Column(nil), t.Cols...)
	nt.KeyCols = append([]int(nil), t.KeyCols...)
	nt.Indexes = append([]catalog.IndexDef(nil), t.Indexes...)
	nt.FKeys = append([]catalog.FKDef(nil), t.FKeys...)
	return &nt
}

// addPrimaryKey makes cols t's primary key: the hidden rowid goes.
func (s *Session) addPrimaryKey(t *catalog.Table, cols []string, conname string) (*catalog.Table, func([]types.Value) ([]types.Value, error), error) {
	if t.HasPKey() {
		return nil, nil, pgerror.Errorf(pgerror.CodeInvalidTableDef, "multiple primary keys for table %q are not allowed", t.Name)
	}
	nt := cloneTable(t)
	nt.Cols = nt.Cols[:len(nt.Cols)-1] // the hidden rowid is the last column (rowid.go)
	nt.Key, nt.KeyCols = -1, nil
	var idx []int
	for _, c := range cols {
		i := nt.Col(c)
		if i < 0 {
			return nil, nil, pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %q of relation %q does not exist", c, t.Name)
		}
		for _, j := range idx {
			if j == i {
				return nil, nil, pgerror.Errorf(pgerror.CodeDuplicateColumn, "column %q appears twice in primary key constraint", c)
			}
		}
		if ty := nt.Cols[i].Type; !catalog.KeyTypeOK(nt, ty) {
			return nil, nil, pgerror.NotSupported("a PRIMARY KEY of type %s is not supported", ty)
		}
		idx = append(idx, i)
	}
	nt.Key = idx[0]
	if len(idx) > 1 {
		nt.KeyCols = idx
	}
	nt.PKeyName = conname
	if err := s.claimPkeyName(nt, map[string]bool{}); err != nil {
		return nil, nil, err
	}
	conv := func(row []types.Value) ([]types.Value, error) {
		out := row[:len(nt.Cols)]
		for _, i := range idx {
			if out[i].Null {
				return nil, &pgerror.Error{Code: pgerror.CodeNotNull, Message: fmt.Sprintf("column %q of relation %q contains null values", nt.Cols[i].Name, t.Name)}
			}
		}
		return out, nil
	}
	for _, i := range idx {
		nt.Cols[i].NotNull = true
	}
	return nt, conv, nil
}

// addColumn adds a column at the end, its DEFAULT (a constant: evaluated
// once, as PostgreSQL does for a non-volatile default) in every row.
func (s *Session) addColumn(ctx context.Context, t *catalog.Table, cd *pg.ColumnDef, ifNotExists bool) (*catalog.Table, func([]types.Value) ([]types.Value, error), error) {
	if t.Col(cd.Colname) >= 0 {
		if ifNotExists {
			s.notice("NOTICE", "42701", fmt.Sprintf("column %q of relation %q already exists, skipping", cd.Colname, t.Name))
			return nil, nil, nil
		}
		return nil, nil, pgerror.Errorf(pgerror.CodeDuplicateColumn, "column %q of relation %q already exists", cd.Colname, t.Name)
	}
	if cd.CollClause != nil || cd.Identity != "" || cd.Generated != "" {
		return nil, nil, pgerror.NotSupported("this column option in ALTER TABLE ADD COLUMN is not supported")
	}
	col := catalog.Column{Name: cd.Colname, NotNull: cd.IsNotNull}
	if _, _, ok := serialType(cd.TypeName); ok {
		return nil, nil, pgerror.NotSupported("ALTER TABLE ADD COLUMN of a serial column is not supported")
	}
	typ, m, err := s.typeOfMod(cd.TypeName)
	if err != nil {
		return nil, nil, err
	}
	col.Type, col.Int2, col.MaxLen, col.Varchar, col.Prec, col.Scale = typ, m.Int2, m.MaxLen, m.Varchar, m.Prec, m.Scale
	for _, cn := range cd.Constraints {
		c := cn.GetConstraint()
		switch c.GetContype() {
		case pg.ConstrType_CONSTR_DEFAULT:
			if err := columnDefault(t.Name, &col, c); err != nil {
				return nil, nil, err
			}
		case pg.ConstrType_CONSTR_NOTNULL:
			col.NotNull = true
		case pg.ConstrType_CONSTR_NULL:
		default:
			return nil, nil, pgerror.NotSupported("constraint %s in ALTER TABLE ADD COLUMN is not supported", strings.TrimPrefix(c.GetContype().String(), "CONSTR_"))
		}
	}
	nt := cloneTable(t)
	// the new column goes before a hidden rowid, which stays last
	at := len(nt.Cols)
	if t.HiddenKey() {
		at--
	}
	nt.Cols = append(nt.Cols[:at:at], append([]catalog.Column{col}, nt.Cols[at:]...)...)
	if t.HiddenKey() {
		nt.Key = len(nt.Cols) - 1
	}
	val := types.Null(col.Type)
	if col.Default != "" {
		x, err := defaultExpr(nt, col)
		if err != nil {
			return nil, nil, err
		}
		if val, err = x.eval(&env{ctx: ctx, s: s}); err != nil {
			return nil, nil, err
		}
	}
	if val.Null && col.NotNull {
		// PostgreSQL checks the rows: an empty table takes it
		n := 0
		tx, _ := s.ensureTx(ctx)
		_ = tx.Scan(ctx, t.Engine, tupled.ScanOptions{Limit: 1}, func(_, _ []byte) error { n++; return nil })
		if n > 0 {
			return nil, nil, &pgerror.Error{Code: pgerror.CodeNotNull, Message: fmt.Sprintf("column %q of relation %q contains null values", col.Name, t.Name)}
		}
	}
	conv := func(row []types.Value) ([]types.Value, error) {
		out := make([]types.Value, 0, len(row)+1)
		out = append(out, row[:at]...)
		out = append(out, val)
		return append(out, row[at:]...), nil
	}
	return nt, conv, nil
}

// dropColumn drops a column; one an index, the primary key or a foreign
// key uses is refused unless CASCADE could drop those (not supported).
func (s *Session) dropColumn(t *catalog.Table, name string, ifExists, cascade bool) (*catalog.Table, func([]types.Value) ([]types.Value, error), error) {
	i := t.Col(name)
	if i < 0 || t.Cols[i].Hidden {
		if ifExists {
			s.notice("NOTICE", "00000", fmt.Sprintf("column %q of relation %q does not exist, skipping", name, t.Name))
			return nil, nil, nil
		}
		return nil, nil, pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %q of relation %q does not exist", name, t.Name)
	}
	if t.IsKeyCol(i) && t.HasPKey() {
		return nil, nil, pgerror.NotSupported("dropping a primary-key column is not supported")
	}
	for _, d := range t.Indexes {
		for _, c := range d.Cols {
			if c == i {
				return nil, nil, pgerror.NotSupported("dropping a column of index %q is not supported", d.Name)
			}
		}
	}
	if t.Cols[i].Serial || t.Cols[i].Identity != "" {
		return nil, nil, pgerror.NotSupported("dropping a serial or identity column is not supported")
	}
	nt := cloneTable(t)
	dropColumnChecks(nt, name) // check.go
	nt.Cols = append(nt.Cols[:i:i], nt.Cols[i+1:]...)
	shift := func(c int) int {
		if c > i {
			return c - 1
		}
		return c
	}
	nt.Key = shift(nt.Key)
	for j := range nt.KeyCols {
		nt.KeyCols[j] = shift(nt.KeyCols[j])
	}
	for j := range nt.Indexes {
		cols := append([]int(nil), nt.Indexes[j].Cols...)
		for k := range cols {
			cols[k] = shift(cols[k])
		}
		nt.Indexes[j].Cols = cols
	}
	conv := func(row []types.Value) ([]types.Value, error) {
		out := make([]types.Value, 0, len(row)-1)
		out = append(out, row[:i]...)
		return append(out, row[i+1:]...), nil
	}
	return nt, conv, nil
}

// planRename is ALTER TABLE … RENAME [COLUMN] a TO b (catalog only).
func (s *Session) planRename(st *pg.RenameStmt) (*plan, error) {
	if st.RenameType != pg.ObjectType_OBJECT_COLUMN {
		return nil, pgerror.NotSupported("ALTER … RENAME is supported only for columns")
	}
	tname, err := relName(st.Relation)
	if err != nil {
		return nil, err
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		res := &Result{Tag: "ALTER TABLE"}
		t := s.lookupTable(tname)
		if t == nil && s.lookupView(tname) != nil {
			return nil, pgerror.NotSupported("renaming a view's columns is not supported")
		}
		if t == nil {
			if st.MissingOk {
				s.notice("NOTICE", "00000", "relation \""+tname+"\" does not exist, skipping")
				return res, nil
			}
			return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", tname)
		}
		if err := s.refuseUnderViews(tname, "ALTER TABLE ... RENAME COLUMN"); err != nil { // views.go
			return nil, err
		}
		i := t.Col(st.Subname)
		if i < 0 || t.Cols[i].Hidden {
			return nil, pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %q does not exist", st.Subname)
		}
		if j := t.Col(st.Newname); j >= 0 {
			return nil, pgerror.Errorf(pgerror.CodeDuplicateColumn, "column %q of relation %q already exists", st.Newname, t.Name)
		}
		if len(t.FKeys) > 0 || s.referenced(t) {
			return nil, pgerror.NotSupported("renaming a column of a table with foreign keys is not supported")
		}
		if checkUsesColumn(t, st.Subname) { // check.go: checks name their columns
			return nil, pgerror.NotSupported("renaming a column a CHECK constraint uses is not supported")
		}
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		if err := tx.LockTable(ctx, t.Engine, tupled.AccessExclusive, false); err != nil {
			return nil, engineError(err, t)
		}
		nt := cloneTable(t)
		nt.Cols[i].Name = st.Newname
		if nt.Cols[i].Serial || nt.Cols[i].Identity != "" {
			if err := moveSequence(ctx, tx, t.Engine+"."+st.Subname, t.Engine+"."+st.Newname); err != nil {
				return nil, err
			}
		}
		return res, s.saveTable(ctx, tx, nt)
	}
	return &plan{usesT: true, run: run}, nil
}
