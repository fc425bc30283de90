package sqlfe

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// Foreign keys: REFERENCES column constraints, FOREIGN KEY table
// constraints of CREATE TABLE, ALTER TABLE … ADD [CONSTRAINT n] FOREIGN KEY
// and ALTER TABLE … DROP CONSTRAINT, over the engine's foreign keys
// (tupled.DB.AddForeignKey, which enforces them as PostgreSQL's RI
// triggers do: see internal/engine/fk.go).
//
// A foreign key is part of its referencing table's catalog entry
// (Table.FKeys, an FKDef). Its engine name is "<child engine table>/<name>"
// (constraint names are unique per table, as in PostgreSQL). It refers to
// the referenced table's primary key (FKDef.RefIndex "") or to one of its
// unique indexes on exactly the referenced columns (in any order, as
// transformFkeyCheckAttrs matches them): the engine reference (Ref) is the
// referencing columns' values encoded as that key is, so the engine finds
// the parent by a key lookup or a unique-index lookup. A NULL in any
// referencing column references nothing (MATCH SIMPLE). Loading the
// catalog declares every foreign key with the engine again (the engine
// does not store the functions), which checks the existing rows.
//
// DDL and transactions: the engine's AddForeignKey and DropForeignKey are
// not transactional (they lock both tables in a transaction of their own),
// so ALTER TABLE … ADD/DROP CONSTRAINT is refused inside a transaction
// block, as CREATE INDEX is. A CREATE TABLE with foreign keys that rolls
// back leaves its engine table, and with it the foreign keys, to reclaim.
// DROP TABLE refuses (2BP01) to drop a table referenced by a table it does
// not drop too; the engine tables of a dropped set are reclaimed children
// first (reclaim.go).

// fkOrder returns d's referencing and referenced columns in the order of
// the key it refers through (the referenced index's column order).
func fkOrder(parent *catalog.Table, d catalog.FKDef) (cols, refCols []int) {
	order := parent.KeyColumns() // a composite primary key's column order
	if d.RefIndex != "" {
		ix, ok := uniqueByName(parent, d.RefIndex)
		if !ok {
			return d.Cols, d.RefCols
		}
		order = ix.Cols
	} else if len(order) < 2 {
		return d.Cols, d.RefCols
	}
	for _, rc := range order {
		i := slices.Index(d.RefCols, rc)
		if i < 0 {
			return d.Cols, d.RefCols
		}
		cols, refCols = append(cols, d.Cols[i]), append(refCols, rc)
	}
	return cols, refCols
}

// fkRefKey encodes the referencing values vals (in fkOrder) as the
// referenced key is encoded.
func fkRefKey(parent *catalog.Table, d catalog.FKDef, refCols []int, vals []types.Value) []byte {
	conv := func(v types.Value, c catalog.Column) types.Value {
		v.T = c.Type
		if c.Type == types.TBpchar || c.Type == types.TText {
			v.I = 0
		}
		return v
	}
	if d.RefIndex == "" && !parent.Composite() {
		return catalog.AppendKey(nil, parent, conv(vals[0], parent.Cols[parent.Key]))
	}
	if d.RefIndex == "" { // a composite primary key: catalog.RowKey's encoding
		var out []byte
		for i, rc := range refCols {
			out = catalog.AppendKey(out, parent, conv(vals[i], parent.Cols[rc]))
		}
		return out
	}
	ix, _ := uniqueByName(parent, d.RefIndex)
	kf := ix.KeyFormat()
	var out []byte
	for i, rc := range refCols {
		out = catalog.AppendKey(out, kf, conv(vals[i], parent.Cols[rc]))
	}
	return out
}

// refTyped reports whether the references of d to parent are in
// KeyFormatTyped (the parent's key or unique index is), where a typed key
// type's value is not its text.
func refTyped(parent *catalog.Table, d catalog.FKDef) bool {
	if d.RefIndex == "" {
		return parent.KeyFormat == catalog.KeyFormatTyped
	}
	ix, _ := uniqueByName(parent, d.RefIndex)
	return ix.Typed
}

// fkDecodeRef decodes a referenced key (fkRefKey's encoding) into the
// values of refCols.
func fkDecodeRef(parent *catalog.Table, d catalog.FKDef, refCols []int, ref []byte) ([]types.Value, error) {
	if d.RefIndex == "" && !parent.Composite() {
		v, err := catalog.DecodeKey(parent, ref)
		return []types.Value{v}, err
	}
	if d.RefIndex == "" {
		row := make([]types.Value, len(parent.Cols))
		if err := catalog.DecodeRowKey(parent, ref, row); err != nil {
			return nil, err
		}
		out := make([]types.Value, len(refCols))
		for i, rc := range refCols {
			out[i] = row[rc]
		}
		return out, nil
	}
	ix, _ := uniqueByName(parent, d.RefIndex)
	return catalog.DecodeIndexKey(parent, catalog.IndexDef{Cols: refCols, Typed: ix.Typed}, ref)
}

// engineFK is the engine declaration of child's foreign key d to parent.
func engineFK(child, parent *catalog.Table, d catalog.FKDef) tupled.ForeignKey {
	cols, refCols := fkOrder(parent, d)
	fk := tupled.ForeignKey{
		Name: catalog.EngFK(child, d.Name), Table: child.Engine, RefTable: parent.Engine,
		OnDelete: d.OnDelete, OnUpdate: d.OnUpdate,
	}
	if d.RefIndex != "" {
		fk.RefIndex = catalog.EngIndex(parent, d.RefIndex)
	}
	// the child's index on the referencing columns finds the children of a
	// reference if its keys are the references' encoding: the same format,
	// or columns none of whose types the formats encode differently
	sameEncoding := func(ix catalog.IndexDef) bool {
		if ix.Typed == refTyped(parent, d) {
			return true
		}
		for _, c := range cols {
			if catalog.TypedKeyType(child.Cols[c].Type) {
				return false
			}
		}
		return true
	}
	for _, ix := range child.Indexes {
		if slices.Equal(ix.Cols, cols) && ix.Exprs == nil && ix.Where == "" && sameEncoding(ix) {
			fk.ChildIndex = catalog.EngIndex(child, ix.Name)
			break
		}
	}
	fk.Ref = func(key, value []byte) (ref []byte, ok bool) {
		row := make([]types.Value, len(child.Cols))
		if err := catalog.DecodeRow(child, key, value, row); err != nil {
			return nil, false
		}
		vals := make([]types.Value, len(cols))
		for i, c := range cols {
			if row[c].Null {
				return nil, false
			}
			vals[i] = row[c]
		}
		return fkRefKey(parent, d, refCols, vals), true
	}
	fk.SetRef = func(key, value []byte, action tupled.FKAction, newRef []byte) ([]byte, error) {
		row := make([]types.Value, len(child.Cols))
		if err := catalog.DecodeRow(child, key, value, row); err != nil {
			return nil, err
		}
		switch action {
		case tupled.Cascade:
			vals, err := fkDecodeRef(parent, d, refCols, newRef)
			if err != nil {
				return nil, err
			}
			for i, c := range cols {
				v := vals[i]
				v.T = child.Cols[c].Type
				if v.T == types.TInt4 && (v.I < math.MinInt32 || v.I > math.MaxInt32) {
					return nil, pgerror.Errorf(pgerror.CodeNumericRange, "integer out of range")
				}
				row[c] = v
			}
		case tupled.SetNull:
			for _, c := range cols {
				row[c] = types.Null(child.Cols[c].Type)
			}
		case tupled.SetDefault:
			for _, c := range cols {
				v, err := fkDefault(child, c)
				if err != nil {
					return nil, err
				}
				row[c] = v
			}
		default:
			return nil, fmt.Errorf("sqlfe: foreign key %q: unexpected action %v", d.Name, action)
		}
		if err := checkRow(child, row); err != nil {
			return nil, err
		}
		return catalog.EncodeRow(child, row), nil
	}
	return fk
}

// fkDefault evaluates the DEFAULT of child's column c for ON … SET
// DEFAULT (a serial column's is refused: it needs the session).
func fkDefault(child *catalog.Table, c int) (v types.Value, err error) {
	col := child.Cols[c]
	if col.Serial || col.Identity != "" {
		return types.Value{}, pgerror.NotSupported("ON DELETE SET DEFAULT of a serial or identity column is not supported")
	}
	x, err := defaultExpr(child, col)
	if err != nil {
		return types.Value{}, err
	}
	defer func() {
		if recover() != nil {
			err = pgerror.NotSupported("this DEFAULT of column %q cannot be used by SET DEFAULT", col.Name)
		}
	}()
	v, err = x.eval(&env{ctx: context.Background()})
	if err != nil {
		return types.Value{}, err
	}
	return v, nil
}

// declareFKs declares t's foreign keys with the engine (lookup finds the
// referenced tables); one already declared is left as it is.
func declareFKs(ctx context.Context, db *tupled.DB, t *catalog.Table, lookup func(string) *catalog.Table) error {
	for _, d := range t.FKeys {
		parent := lookup(d.RefTable)
		if d.RefTable == t.Name {
			parent = t
		}
		if parent == nil {
			return fmt.Errorf("sqlfe: foreign key %q of %q: %w", d.Name, t.Name, catalog.ErrCorrupt)
		}
		err := db.AddForeignKey(ctx, engineFK(t, parent, d))
		if err != nil && !errors.Is(err, tupled.ErrDuplicateObject) {
			return err
		}
	}
	return nil
}

// fkAction is a REFERENCES clause's ON DELETE / ON UPDATE action.
func fkAction(a string) (tupled.FKAction, error) {
	switch a {
	case "", "a":
		return tupled.NoAction, nil
	case "r":
		return tupled.Restrict, nil
	case "c":
		return tupled.Cascade, nil
	case "n":
		return tupled.SetNull, nil
	case "d":
		return tupled.SetDefault, nil
	}
	return 0, pgerror.NotSupported("foreign key action %q is not supported", a)
}

// fkConstraint is a FOREIGN KEY constraint waiting to be resolved: c, and
// the column it was declared on ("" for a table constraint).
type fkConstraint struct {
	c   *pg.Constraint
	col string
}

// checkFKSyntax refuses the parts of a FOREIGN KEY constraint not
// supported here.
func checkFKSyntax(c *pg.Constraint) error {
	switch {
	case c.FkMatchtype != "" && c.FkMatchtype != "s":
		return pgerror.NotSupported("MATCH FULL is not supported").At(c.Location)
	case len(c.FkDelSetCols) > 0:
		return pgerror.NotSupported("ON DELETE SET NULL/SET DEFAULT with a column list is not supported").At(c.Location)
	case c.Deferrable || c.Initdeferred:
		return pgerror.NotSupported("DEFERRABLE foreign keys are not supported").At(c.Location)
	case c.SkipValidation:
		return pgerror.NotSupported("NOT VALID foreign keys are not supported").At(c.Location)
	}
	return nil
}

// fkColumns resolves foreign key column names in t (42703 with
// PostgreSQL's wording).
func fkColumns(t *catalog.Table, names []string, loc int32) ([]int, error) {
	var cols []int
	for _, n := range names {
		i := t.Col(n)
		if i < 0 {
			return nil, pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %q referenced in foreign key constraint does not exist", n).At(loc)
		}
		cols = append(cols, i)
	}
	return cols, nil
}

// constraintNames are the names of t's constraints (its foreign keys,
// besides its indexes, which indexNameTaken covers).
func fkNameTaken(t *catalog.Table, name string) bool {
	for _, d := range t.FKeys {
		if d.Name == name {
			return true
		}
	}
	return false
}

// resolveFK resolves foreign key constraint fc of child (whose foreign
// keys so far are child.FKeys) into an FKDef, as ATAddForeignKeyConstraint
// checks it. taken holds names already chosen in the statement.
func (s *Session) resolveFK(child *catalog.Table, fc fkConstraint, taken map[string]bool) (catalog.FKDef, *catalog.Table, error) {
	c := fc.c
	if err := checkFKSyntax(c); err != nil {
		return catalog.FKDef{}, nil, err
	}
	names := strs(c.FkAttrs)
	if fc.col != "" {
		names = []string{fc.col}
	}
	cols, err := fkColumns(child, names, c.Location)
	if err != nil {
		return catalog.FKDef{}, nil, err
	}
	pname, err := relName(c.Pktable)
	if err != nil {
		return catalog.FKDef{}, nil, err
	}
	parent := child
	if pname != child.Name {
		if parent = s.lookupTable(pname); parent == nil {
			return catalog.FKDef{}, nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", pname).At(c.Pktable.Location)
		}
		if parent.Temp && !child.Temp {
			return catalog.FKDef{}, nil, pgerror.Errorf(pgerror.CodeInvalidTableDef, "constraints on permanent tables may reference only permanent tables")
		}
	}
	d := catalog.FKDef{Cols: cols, RefTable: parent.Name}
	if pkNames := strs(c.PkAttrs); len(pkNames) == 0 {
		if parent.Cols[parent.Key].Hidden {
			return catalog.FKDef{}, nil, pgerror.Errorf(pgerror.CodeUndefinedObject, "there is no primary key for referenced table %q", parent.Name).At(c.Location)
		}
		d.RefCols = slices.Clone(parent.KeyColumns())
	} else {
		if d.RefCols, err = fkColumns(parent, pkNames, c.Location); err != nil {
			return catalog.FKDef{}, nil, err
		}
		seen := map[int]bool{}
		for _, rc := range d.RefCols {
			if seen[rc] {
				return catalog.FKDef{}, nil, pgerror.Errorf("42830", "foreign key referenced-columns list must not contain duplicates").At(c.Location)
			}
			seen[rc] = true
		}
		switch {
		case len(d.RefCols) == parent.NKeyCols() && !parent.HiddenKey() && allKeyCols(parent, d.RefCols):
		default:
			found := false
			for _, ix := range parent.Indexes {
				if !ix.Unique || ix.Exprs != nil || ix.Where != "" || len(ix.Cols) != len(d.RefCols) {
					continue
				}
				match := true
				for _, ic := range ix.Cols {
					match = match && seen[ic]
				}
				if match {
					d.RefIndex, found = ix.Name, true
					break
				}
			}
			if !found {
				return catalog.FKDef{}, nil, pgerror.Errorf("42830", "there is no unique constraint matching given keys for referenced table %q", parent.Name).At(c.Location)
			}
		}
	}
	if len(d.Cols) != len(d.RefCols) {
		return catalog.FKDef{}, nil, pgerror.Errorf("42830", "number of referencing and referenced columns for foreign key disagree")
	}
	if d.OnDelete, err = fkAction(c.FkDelAction); err != nil {
		return catalog.FKDef{}, nil, err
	}
	if d.OnUpdate, err = fkAction(c.FkUpdAction); err != nil {
		return catalog.FKDef{}, nil, err
	}
	d.Name = c.Conname
	if d.Name == "" {
		var labels []string
		for _, ci := range cols {
			labels = append(labels, child.Cols[ci].Name)
		}
		d.Name = s.chooseLabelName(child, labels, "fkey", fkTaken(child, taken))
	} else if taken[d.Name] || fkNameTaken(child, d.Name) {
		return catalog.FKDef{}, nil, pgerror.Errorf("42710", "constraint %q for relation %q already exists", d.Name, child.Name)
	}
	for i, ci := range d.Cols {
		ct, pt := child.Cols[ci].Type, parent.Cols[d.RefCols[i]].Type
		if ct != pt && !(types.IsInt(ct) && types.IsInt(pt)) && !(types.IsString(ct) && types.IsString(pt)) {
			return catalog.FKDef{}, nil, &pgerror.Error{Code: pgerror.CodeDatatypeMismatch, Message: fmt.Sprintf("foreign key constraint %q cannot be implemented", d.Name),
				Detail: fmt.Sprintf("Key columns %q and %q are of incompatible types: %s and %s.", child.Cols[ci].Name, parent.Cols[d.RefCols[i]].Name, ct, pt)}
		}
		if ci == child.Key && (d.OnUpdate >= tupled.Cascade || d.OnDelete >= tupled.SetNull) {
			return catalog.FKDef{}, nil, pgerror.NotSupported("ON UPDATE/DELETE actions that rewrite a foreign key in the PRIMARY KEY are not supported")
		}
	}
	return d, parent, nil
}

// fkTaken is taken plus the names of child's foreign keys.
func fkTaken(child *catalog.Table, taken map[string]bool) map[string]bool {
	out := map[string]bool{}
	for n := range taken {
		out[n] = true
	}
	for _, d := range child.FKeys {
		out[d.Name] = true
	}
	return out
}

// tableByEngine is the SQL table (as this session sees it) stored in
// engine table e, or nil.
func (s *Session) tableByEngine(e string) *catalog.Table {
	for _, t := range s.pending {
		if t != nil && t.Engine == e {
			return t
		}
	}
	return s.eng.cat.ByEngine(e)
}

// allTables is every table this session sees (its transaction's DDL over
// the catalog).
func (s *Session) allTables() []*catalog.Table {
	var out []*catalog.Table
	s.eng.cat.Range(func(name string, t *catalog.Table) bool {
		if _, ok := s.pending[name]; !ok {
			out = append(out, t)
		}
		return true
	})
	for _, t := range s.pending {
		if t != nil {
			out = append(out, t)
		}
	}
	return out
}

// describeFK rewrites e, a foreign key violation from the engine, into
// PostgreSQL's message and DETAIL (ri_ReportViolation).
func (s *Session) describeFK(e *pgerror.Error) {
	fe := fkCause(e)
	e.Cause = nil
	child, parent := s.tableByEngine(fe.FK.Table), s.tableByEngine(fe.FK.RefTable)
	if child == nil || parent == nil {
		return
	}
	var d catalog.FKDef
	found := false
	for _, x := range child.FKeys {
		if catalog.EngFK(child, x.Name) == fe.FK.Name {
			d, found = x, true
		}
	}
	if found {
		fkDetail(e, fe, child, parent, d)
	}
}

// fkDetail words e, the violation fe of child's foreign key d to parent.
func fkDetail(e *pgerror.Error, fe *tupled.ForeignKeyError, child, parent *catalog.Table, d catalog.FKDef) {
	e.Cause = nil
	keyOf := func(t *catalog.Table, cols []int, key, value []byte) string {
		row := make([]types.Value, len(t.Cols))
		if catalog.DecodeRow(t, key, value, row) != nil {
			return ""
		}
		var names, vals []string
		for _, c := range cols {
			names, vals = append(names, t.Cols[c].Name), append(vals, row[c].String())
		}
		return fmt.Sprintf("Key (%s)=(%s)", strings.Join(names, ", "), strings.Join(vals, ", "))
	}
	if fe.Referenced {
		e.Message = fmt.Sprintf("update or delete on table %q violates foreign key constraint %q on table %q", parent.Name, d.Name, child.Name)
		if k := keyOf(parent, d.RefCols, fe.Key, fe.Value); k != "" {
			e.Detail = fmt.Sprintf("%s is still referenced from table %q.", k, child.Name)
		}
		return
	}
	e.Message = fmt.Sprintf("insert or update on table %q violates foreign key constraint %q", child.Name, d.Name)
	if k := keyOf(child, d.Cols, fe.Key, fe.Value); k != "" {
		e.Detail = fmt.Sprintf("%s is not present in table %q.", k, parent.Name)
	}
}

// dropDependents checks DROP TABLE of the tables drop (by name): tables
// referenced by a foreign key of a table not dropped are 2BP01, as
// reportDependentObjects words it (the dependents listed by table name).
func (s *Session) dropDependents(drop map[string]bool, names []string) error {
	tables := s.allTables()
	slices.SortFunc(tables, func(a, b *catalog.Table) int { return strings.Compare(a.Name, b.Name) })
	var deps []string
	for _, t := range tables {
		if drop[t.Name] {
			continue
		}
		for _, d := range t.FKeys {
			if drop[d.RefTable] {
				deps = append(deps, fmt.Sprintf("constraint %s on table %s depends on table %s", d.Name, t.Name, d.RefTable))
			}
		}
	}
	if deps == nil {
		return nil
	}
	msg := "cannot drop desired object(s) because other objects depend on them"
	if len(names) == 1 {
		msg = fmt.Sprintf("cannot drop table %s because other objects depend on it", names[0])
	}
	return &pgerror.Error{Code: "2BP01", Message: msg, Detail: strings.Join(deps, "\n"),
		Hint: "Use DROP ... CASCADE to drop the dependent objects too."}
}

// planAlterTable is ALTER TABLE t ADD [CONSTRAINT n] FOREIGN KEY … and
// ALTER TABLE t DROP CONSTRAINT [IF EXISTS] n (a foreign key's), one
// command per statement.
func (s *Session) planAlterTable(st *pg.AlterTableStmt) (*plan, error) {
	if st.Objtype != pg.ObjectType_OBJECT_TABLE || len(st.Cmds) != 1 {
		return nil, pgerror.NotSupported("ALTER TABLE is supported only with one ADD FOREIGN KEY or DROP CONSTRAINT")
	}
	cmd := st.Cmds[0].GetAlterTableCmd()
	tname, err := relName(st.Relation)
	if err != nil {
		return nil, err
	}
	var add *pg.Constraint
	switch cmd.GetSubtype() {
	case pg.AlterTableType_AT_AddConstraint:
		add = cmd.Def.GetConstraint()
		if add == nil || add.Contype != pg.ConstrType_CONSTR_FOREIGN {
			return nil, pgerror.NotSupported("ALTER TABLE ADD CONSTRAINT is supported only for FOREIGN KEY")
		}
		if err := checkFKSyntax(add); err != nil {
			return nil, err
		}
	case pg.AlterTableType_AT_DropConstraint:
		if cmd.Behavior == pg.DropBehavior_DROP_CASCADE {
			return nil, pgerror.NotSupported("DROP CONSTRAINT … CASCADE is not supported")
		}
	default:
		return nil, pgerror.NotSupported("ALTER TABLE is supported only with one ADD FOREIGN KEY or DROP CONSTRAINT")
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		res := &Result{Tag: "ALTER TABLE"}
		if s.block == blkExplicit {
			return nil, pgerror.NotSupported("ALTER TABLE inside a transaction block is not supported")
		}
		t := s.lookupTable(tname)
		if t == nil {
			if st.MissingOk {
				s.notice("NOTICE", "00000", "relation \""+tname+"\" does not exist, skipping")
				return res, nil
			}
			return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", tname).At(st.Relation.Location)
		}
		if err := refuseTemp(t, "ALTER TABLE"); err != nil { // temp.go
			return nil, err
		}
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		nt := *t
		if add != nil {
			d, parent, err := s.resolveFK(t, fkConstraint{c: add}, nil)
			if err != nil {
				return nil, err
			}
			if err := tx.AddForeignKey(ctx, engineFK(t, parent, d)); err != nil {
				e := ToError(err)
				if fe := fkCause(e); fe != nil {
					fkDetail(e, fe, t, parent, d)
				}
				return nil, e
			}
			nt.FKeys = append(append([]catalog.FKDef(nil), t.FKeys...), d)
			if err := s.saveTable(ctx, tx, &nt); err != nil {
				_ = s.eng.db.DropForeignKey(ctx, catalog.EngFK(t, d.Name), true)
				return nil, err
			}
			return res, nil
		}
		i := slices.IndexFunc(t.FKeys, func(d catalog.FKDef) bool { return d.Name == cmd.Name })
		if i < 0 {
			if cmd.MissingOk {
				s.notice("NOTICE", "00000", fmt.Sprintf("constraint %q of relation %q does not exist, skipping", cmd.Name, t.Name))
				return res, nil
			}
			return nil, pgerror.Errorf(pgerror.CodeUndefinedObject, "constraint %q of relation %q does not exist", cmd.Name, t.Name)
		}
		if err := s.eng.db.DropForeignKey(ctx, catalog.EngFK(t, cmd.Name), true); err != nil {
			return nil, err
		}
		nt.FKeys = slices.Delete(slices.Clone(t.FKeys), i, i+1)
		return res, s.saveTable(ctx, tx, &nt)
	}
	return &plan{usesT: true, run: run}, nil
}

// saveTable writes t's catalog entry (committed with the statement's
// transaction).
func (s *Session) saveTable(ctx context.Context, tx *tupled.Tx, t *catalog.Table) error {
	return s.saveIndexes(ctx, tx, t, t.Indexes)
}

// allKeyCols reports whether every column of cols is a primary-key column
// of t (with no duplicates and as many as the key has, that is the key).
func allKeyCols(t *catalog.Table, cols []int) bool {
	for _, c := range cols {
		if !t.IsKeyCol(c) {
			return false
		}
	}
	return true
}
