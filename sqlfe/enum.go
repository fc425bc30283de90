package sqlfe

// Enum types: CREATE TYPE name AS ENUM, ALTER TYPE (ADD VALUE, RENAME
// VALUE, RENAME TO), DROP TYPE, and enum_first, enum_last, enum_range.
//
// The design:
//
//   - A definition (types.Enum: name, OID, labels with PostgreSQL's float4
//     sort orders) is catalog data like a sequence's: an entry of
//     CatalogTable under catalog.EnumCatalogKey(name), written through the
//     DDL's transaction and installed in the Catalog when it commits
//     (Session.pendingEnums, catalog.ApplyEnums).
//   - Each enum type has a types.Type number of its own, given when it is
//     created or loaded, and its definition is in types' registry, so a
//     value, a column and an expression carry their enum type as any other
//     type. The registry is the process's, not a transaction's: CREATE and
//     ALTER TYPE install the new definition there at once, and a rollback
//     puts the committed definitions back (restoreEnums). A value ADD
//     VALUE adds is marked Pending until the commit (settleEnums): its
//     input is 55P04, as in PostgreSQL, in every session (where another
//     session's PostgreSQL would not see it: 22P02).
//   - Sort orders follow PostgreSQL's AddEnumLabel: n+1 at the end, a
//     neighbour's ±1 at an end, the float4 midpoint between two. Where the
//     midpoint is one of them PostgreSQL renumbers the type; tupled stores
//     a value by its sort order (types' enum.go), so it refuses that with
//     0A000 instead.
//   - DROP TYPE of a type a column uses is 2BP01 (with PostgreSQL's
//     DETAIL); CASCADE drops those columns, each table rewritten as by
//     ALTER TABLE ... DROP COLUMN (whose refusals apply: 0A000 for a key
//     or indexed column; a view's column of the type is 0A000 too).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// lookupEnum is the enum type name as the session sees it (nil: none).
func (s *Session) lookupEnum(name string) *types.Enum {
	if e, ok := s.pendingEnums[name]; ok {
		return e
	}
	return s.eng.cat.Enum(name)
}

// enumList is every enum type the session sees, by name.
func (s *Session) enumList() []*types.Enum {
	if len(s.pendingEnums) == 0 {
		return s.eng.cat.Enums()
	}
	m := map[string]*types.Enum{}
	for _, e := range s.eng.cat.Enums() {
		m[e.Name] = e
	}
	for n, e := range s.pendingEnums {
		if e == nil {
			delete(m, n)
		} else {
			m[n] = e
		}
	}
	out := make([]*types.Enum, 0, len(m))
	for _, e := range m {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// setPendingEnum records the transaction's new definition of name (nil:
// dropped) and installs it in types' registry.
func (s *Session) setPendingEnum(name string, e *types.Enum) {
	if s.pendingEnums == nil {
		s.pendingEnums = map[string]*types.Enum{}
	}
	if e == nil {
		if old := s.lookupEnum(name); old != nil {
			d := *old
			d.Dropped = true
			types.SetEnum(&d)
		}
	} else {
		types.SetEnum(e)
	}
	s.pendingEnums[name] = e
}

// restoreEnums puts the committed definitions of the enum types a
// rolled-back transaction changed back into types' registry.
// Only those: another session's uncommitted ALTER TYPE stays installed.
// The new types are marked dropped first, then the committed definitions
// of every name touched are installed (a renamed type gets its old
// definition back after its new name's is marked).
func restoreEnums(cat *catalog.Catalog, pending map[string]*types.Enum) {
	for n, e := range pending {
		if e != nil && cat.Enum(n) == nil {
			d := *e
			d.Dropped = true
			types.SetEnum(&d)
		}
	}
	for n := range pending {
		if c := cat.Enum(n); c != nil {
			types.SetEnum(c)
		}
	}
}

// settleEnums is the commit's: the values the transaction added become
// usable (their Pending marks go) in the definitions it installs.
func settleEnums(pending map[string]*types.Enum) {
	for n, e := range pending {
		if e == nil || !slices.ContainsFunc(e.Labels, func(l types.EnumLabel) bool { return l.Pending }) {
			continue
		}
		c := *e
		c.Labels = append([]types.EnumLabel(nil), e.Labels...)
		for i := range c.Labels {
			c.Labels[i].Pending = false
		}
		types.SetEnum(&c)
		pending[n] = &c
	}
}

// rollbackEnumsTo is ROLLBACK TO SAVEPOINT's: the transaction's enum DDL
// back to saved, and types' registry with it.
func (s *Session) rollbackEnumsTo(saved map[string]*types.Enum) {
	if s.pendingEnums == nil && saved == nil {
		return
	}
	restoreEnums(&s.eng.cat, s.pendingEnums)
	s.pendingEnums = saved
	for n, e := range saved {
		if e != nil {
			types.SetEnum(e)
		} else if old := s.eng.cat.Enum(n); old != nil {
			d := *old
			d.Dropped = true
			types.SetEnum(&d)
		}
	}
}

// enumName is the type name of a CREATE / ALTER / DROP TYPE (public.x or x).
func enumName(names []string, loc int32) (string, error) {
	switch {
	case len(names) == 1:
	case len(names) == 2 && (names[0] == "public" || names[0] == "pg_catalog"):
	default:
		return "", pgerror.Errorf(pgerror.CodeUndefinedObject, "type %q does not exist", strings.Join(names, ".")).At(loc)
	}
	return names[len(names)-1], nil
}

// enumOfName resolves a type name to the enum type lookup finds (nil: not
// an enum).
func enumOfName(names []string, lookup func(string) *types.Enum) *types.Enum {
	if lookup == nil || len(names) > 2 || (len(names) == 2 && names[0] != "public") {
		return nil
	}
	return lookup(names[len(names)-1])
}

func (s *Session) saveEnum(ctx context.Context, tx *tupled.Tx, e *types.Enum, insert bool) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	key := catalog.EnumCatalogKey(e.Name)
	if insert {
		err = tx.Insert(ctx, catalog.CatalogTable, key, data)
		if errors.Is(err, tupled.ErrDuplicateKey) {
			return pgerror.Errorf(codeDuplicateObject, "type %q already exists", e.Name)
		}
		return err
	}
	if err := tx.Update(ctx, catalog.CatalogTable, key, data); err != nil {
		if errors.Is(err, tupled.ErrNotFound) { // dropped by a transaction committed since
			return pgerror.Errorf(pgerror.CodeUndefinedObject, "type %q does not exist", e.Name)
		}
		return err
	}
	return nil
}

// typeExists reports whether name is taken as a type: an enum, or a
// table's or view's row type.
func (s *Session) typeExists(name string) bool {
	return s.lookupEnum(name) != nil || s.lookupTable(name) != nil || s.lookupView(name) != nil
}

func (s *Session) planCreateEnum(st *pg.CreateEnumStmt) (*plan, error) {
	name, err := enumName(strs(st.TypeName), -1)
	if err != nil {
		return nil, err
	}
	var labels []types.EnumLabel
	seen := map[string]bool{}
	for i, v := range st.Vals {
		l := v.GetString_().GetSval()
		if err := checkEnumLabel(l); err != nil {
			return nil, err
		}
		if seen[l] {
			return nil, pgerror.Errorf(pgerror.CodeUniqueViolation, "duplicate key value violates unique constraint \"pg_enum_typid_label_index\"")
		}
		seen[l] = true
		labels = append(labels, types.EnumLabel{Label: l, Sort: float32(i + 1)})
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		if s.typeExists(name) {
			return nil, pgerror.Errorf(codeDuplicateObject, "type %q already exists", name)
		}
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		typ, err := types.NewEnumType()
		if err != nil {
			return nil, err
		}
		oid := types.NewEnumOIDs(2 + len(labels))
		e := &types.Enum{Type: typ, Name: name, OID: oid, ArrayOID: oid + 1, Labels: append([]types.EnumLabel(nil), labels...)}
		for i := range e.Labels {
			e.Labels[i].OID = oid + 2 + uint32(i)
		}
		if err := s.saveEnum(ctx, tx, e, true); err != nil {
			return nil, err
		}
		s.setPendingEnum(name, e)
		return &Result{Tag: "CREATE TYPE"}, nil
	}
	return &plan{usesT: true, run: run}, nil
}

// checkEnumLabel refuses a label PostgreSQL's enum code does: longer than
// NAMEDATALEN-1 bytes (42602), or not valid text (22021).
func checkEnumLabel(l string) error {
	if len(l) > 63 {
		return &pgerror.Error{Code: pgerror.CodeInvalidName, Message: fmt.Sprintf("invalid enum label %q", l), Detail: "Labels must be 63 bytes or less."}
	}
	if err := types.CheckEncoding(l); err != nil { // a *pgerror.Error: no typed nil in the error
		return err
	}
	return nil
}

// enumSortBetween is AddEnumLabel's sort order for a label placed next to
// labels[i] (after it if after): false where PostgreSQL would renumber.
func enumSortBetween(labels []types.EnumLabel, i int, after bool) (float32, bool) {
	other := i - 1
	if after {
		other = i + 1
	}
	nb := labels[i].Sort
	switch {
	case other < 0:
		return nb - 1, true
	case other >= len(labels):
		return nb + 1, true
	}
	mid := (nb + labels[other].Sort) / 2
	if mid == nb || mid == labels[other].Sort {
		return 0, false
	}
	return mid, true
}

func (s *Session) planAlterEnum(st *pg.AlterEnumStmt) (*plan, error) {
	name, err := enumName(strs(st.TypeName), -1)
	if err != nil {
		return nil, err
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		res := &Result{Tag: "ALTER TYPE"}
		old, tx, err := s.enumToAlter(ctx, name, pgerror.Errorf(pgerror.CodeWrongObjectType, "%s is not an enum", name))
		if err != nil {
			return nil, err
		}
		ne := *old
		ne.Labels = append([]types.EnumLabel(nil), old.Labels...)
		if st.OldVal != "" { // RENAME VALUE
			i := ne.Label(st.OldVal)
			if i < 0 {
				return nil, pgerror.Errorf(pgerror.CodeInvalidParamValue, "%q is not an existing enum label", st.OldVal)
			}
			if ne.Label(st.NewVal) >= 0 {
				return nil, pgerror.Errorf(codeDuplicateObject, "enum label %q already exists", st.NewVal)
			}
			if err := checkEnumLabel(st.NewVal); err != nil {
				return nil, err
			}
			ne.Labels[i].Label = st.NewVal
		} else { // ADD VALUE
			if ne.Label(st.NewVal) >= 0 {
				if st.SkipIfNewValExists {
					s.notice("NOTICE", "00000", fmt.Sprintf("enum label %q already exists, skipping", st.NewVal))
					return res, nil
				}
				return nil, pgerror.Errorf(codeDuplicateObject, "enum label %q already exists", st.NewVal)
			}
			if err := checkEnumLabel(st.NewVal); err != nil {
				return nil, err
			}
			// not usable before the commit (55P04, PostgreSQL's rule, even
			// for a type the transaction created)
			l := types.EnumLabel{Label: st.NewVal, OID: types.NewEnumOIDs(1), Pending: true}
			at := len(ne.Labels)
			switch {
			case st.NewValNeighbor != "":
				i := ne.Label(st.NewValNeighbor)
				if i < 0 {
					return nil, pgerror.Errorf(pgerror.CodeInvalidParamValue, "%q is not an existing enum label", st.NewValNeighbor)
				}
				var ok bool
				if l.Sort, ok = enumSortBetween(ne.Labels, i, st.NewValIsAfter); !ok {
					return nil, pgerror.NotSupported("no room for another enum value between %q and its neighbour: tupled does not renumber an enum's sort orders", st.NewValNeighbor)
				}
				at = i
				if st.NewValIsAfter {
					at = i + 1
				}
			case len(ne.Labels) > 0:
				l.Sort = ne.Labels[len(ne.Labels)-1].Sort + 1
			default:
				l.Sort = 1
			}
			ne.Labels = append(ne.Labels[:at], append([]types.EnumLabel{l}, ne.Labels[at:]...)...)
		}
		if err := s.saveEnum(ctx, tx, &ne, false); err != nil {
			return nil, err
		}
		s.setPendingEnum(name, &ne)
		return res, nil
	}
	return &plan{usesT: true, run: run}, nil
}

// enumToAlter is the prologue of ALTER TYPE and COMMENT ON TYPE: enum
// type name's definition to change (42704 if none; rowType if name is a
// table's or view's row type), locked in the statement's transaction
// (lockEnum).
func (s *Session) enumToAlter(ctx context.Context, name string, rowType error) (*types.Enum, *tupled.Tx, error) {
	old := s.lookupEnum(name)
	if old == nil {
		if s.lookupTable(name) != nil || s.lookupView(name) != nil {
			return nil, nil, rowType
		}
		return nil, nil, pgerror.Errorf(pgerror.CodeUndefinedObject, "type %q does not exist", name)
	}
	tx, err := s.ensureTx(ctx)
	if err != nil {
		return nil, nil, err
	}
	if old, err = s.lockEnum(ctx, tx, old); err != nil {
		return nil, nil, err
	}
	return old, tx, nil
}

// lockEnum locks enum type e's catalog row for the ALTER TYPE of tx (by
// writing it as it is) and returns the definition to change: a concurrent
// ALTER TYPE of the type holds the row until its transaction ends, so
// this waits for it, and then its result (in types' registry since its
// ALTER ran, whether or not its commit has reached the Catalog yet) is
// what this ALTER changes, not the definition read before the wait.
func (s *Session) lockEnum(ctx context.Context, tx *tupled.Tx, e *types.Enum) (*types.Enum, error) {
	if _, own := s.pendingEnums[e.Name]; own {
		return e, nil // the transaction's own definition: the row is locked already
	}
	if err := s.saveEnum(ctx, tx, e, false); err != nil {
		return nil, err
	}
	if cur := types.EnumOf(e.Type); cur != nil && !cur.Dropped && cur.Name == e.Name {
		return cur, nil
	}
	return e, nil
}

// planRenameType is ALTER TYPE name RENAME TO newname.
func (s *Session) planRenameType(st *pg.RenameStmt) (*plan, error) {
	name, err := enumName(strs(st.Object.GetList().GetItems()), -1)
	if err != nil {
		return nil, err
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		if s.lookupEnum(name) != nil && s.typeExists(st.Newname) {
			return nil, pgerror.Errorf(codeDuplicateObject, "type %q already exists", st.Newname)
		}
		old, tx, err := s.enumToAlter(ctx, name, pgerror.NotSupported("renaming a table's row type is not supported: rename the table"))
		if err != nil {
			return nil, err
		}
		if err := tx.Delete(ctx, catalog.CatalogTable, catalog.EnumCatalogKey(name)); err != nil {
			return nil, err
		}
		ne := *old
		ne.Name = st.Newname
		if err := s.saveEnum(ctx, tx, &ne, true); err != nil {
			return nil, err
		}
		s.pendingEnumsDel(name)
		s.setPendingEnum(st.Newname, &ne)
		return &Result{Tag: "ALTER TYPE"}, nil
	}
	return &plan{usesT: true, run: run}, nil
}

// pendingEnumsDel records name as gone without marking its type dropped
// (a rename keeps the type).
func (s *Session) pendingEnumsDel(name string) {
	if s.pendingEnums == nil {
		s.pendingEnums = map[string]*types.Enum{}
	}
	s.pendingEnums[name] = nil
}

// enumUser is a column of an enum type: of table t, or of a view.
type enumUser struct {
	t    *catalog.Table
	col  string
	view bool
}

func (u enumUser) String() string {
	if u.view {
		return fmt.Sprintf("column %s of view %s", u.col, u.t.Name)
	}
	return fmt.Sprintf("column %s of table %s", u.col, u.t.Name)
}

// enumUsers are the table and view columns of enum type e (or of its
// array type), in PostgreSQL's dependency description's order (by name).
func (s *Session) enumUsers(e *types.Enum) []enumUser {
	var out []enumUser
	for _, r := range s.catalogSnap().Rels {
		if r.Table == nil || r.Kind != "r" && r.Kind != "v" {
			continue
		}
		for _, c := range r.Table.Cols {
			if c.Type == e.Type || types.IsArray(c.Type) && types.ElemType(c.Type) == e.Type {
				out = append(out, enumUser{t: r.Table, col: c.Name, view: r.Kind == "v"})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// dropEnumColumns is DROP TYPE ... CASCADE's: the columns of the type
// dropped, each table rewritten once without them (as ALTER TABLE ...
// DROP COLUMN, whose refusals apply: a key or indexed column, a table a
// view reads); a view column of the type is 0A000.
func (s *Session) dropEnumColumns(ctx context.Context, tx *tupled.Tx, users []enumUser) error {
	byTable := map[string][]string{}
	var order []string
	for _, u := range users {
		if u.view {
			return pgerror.NotSupported("DROP TYPE ... CASCADE of a type a view's column has (%s) is not supported", u)
		}
		if byTable[u.t.Name] == nil {
			order = append(order, u.t.Name)
		}
		byTable[u.t.Name] = append(byTable[u.t.Name], u.col)
	}
	if len(users) == 1 {
		s.notice("NOTICE", "00000", "drop cascades to "+users[0].String())
	} else {
		var d []string
		for _, u := range users {
			d = append(d, "drop cascades to "+u.String())
		}
		if s.Notice != nil {
			s.Notice(&pgerror.Error{Severity: "NOTICE", Code: "00000", Message: fmt.Sprintf("drop cascades to %d other objects", len(users)), Detail: strings.Join(d, "\n")})
		}
	}
	for _, name := range order {
		t := s.lookupTable(name)
		if err := s.refuseUnderViews(name, "DROP TYPE ... CASCADE"); err != nil { // views.go
			return err
		}
		if err := s.eng.seedRowid(ctx, t); err != nil { // rowid.go: before the lock
			return err
		}
		if err := tx.LockTable(ctx, t.Engine, tupled.AccessExclusive, false); err != nil {
			return engineError(err, t)
		}
		nt, conv := t, func(row []types.Value) ([]types.Value, error) { return row, nil }
		for _, col := range byTable[name] {
			next, c, err := s.dropColumn(nt, col, false, true) // altertable.go
			if err != nil {
				return err
			}
			prev := conv
			conv = func(row []types.Value) ([]types.Value, error) {
				row, err := prev(row)
				if err != nil {
					return nil, err
				}
				return c(row)
			}
			nt = next
		}
		if err := s.rewriteTable(ctx, tx, t, nt, conv); err != nil {
			return err
		}
	}
	return nil
}

func (s *Session) planDropType(st *pg.DropStmt) (*plan, error) {
	var names []string
	for _, o := range st.Objects {
		tn := o.GetTypeName()
		if tn == nil {
			return nil, pgerror.NotSupported("DROP TYPE of this name is not supported")
		}
		n, err := enumName(strs(tn.Names), tn.Location)
		if err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		res := &Result{Tag: "DROP TYPE"}
		var drop []*types.Enum
		for _, n := range names {
			e := s.lookupEnum(n)
			if e == nil {
				if s.lookupTable(n) != nil || s.lookupView(n) != nil {
					return nil, &pgerror.Error{Code: "2BP01", Message: fmt.Sprintf("cannot drop type %s because table %s requires it", n, n),
						Hint: fmt.Sprintf("You can drop table %s instead.", n)}
				}
				if st.MissingOk {
					s.notice("NOTICE", "00000", fmt.Sprintf("type %q does not exist, skipping", n))
					continue
				}
				return nil, pgerror.Errorf(pgerror.CodeUndefinedObject, "type %q does not exist", n)
			}
			if users := s.enumUsers(e); len(users) > 0 && st.Behavior != pg.DropBehavior_DROP_CASCADE {
				var d []string
				for _, u := range users {
					d = append(d, u.String()+" depends on type "+e.Name)
				}
				return nil, &pgerror.Error{Code: "2BP01", Message: "cannot drop type " + e.Name + " because other objects depend on it",
					Detail: strings.Join(d, "\n"), Hint: "Use DROP ... CASCADE to drop the dependent objects too."}
			}
			drop = append(drop, e)
		}
		if len(drop) == 0 {
			return res, nil
		}
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		for _, e := range drop {
			if users := s.enumUsers(e); len(users) > 0 {
				if err := s.dropEnumColumns(ctx, tx, users); err != nil {
					return nil, err
				}
			}
		}
		for _, e := range drop {
			if err := tx.Delete(ctx, catalog.CatalogTable, catalog.EnumCatalogKey(e.Name)); err != nil {
				return nil, err
			}
			s.setPendingEnum(e.Name, nil)
		}
		return res, nil
	}
	return &plan{usesT: true, run: run}, nil
}

// planCommentType is COMMENT ON TYPE name IS 'text' | NULL, of an enum
// type: its definition's Comment, written as any ALTER TYPE.
func (s *Session) planCommentType(st *pg.CommentStmt) (*plan, error) {
	tn := st.Object.GetTypeName()
	if tn == nil {
		return nil, pgerror.NotSupported("COMMENT ON TYPE of this name is not supported")
	}
	name, err := enumName(strs(tn.Names), tn.Location)
	if err != nil {
		return nil, err
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		old, tx, err := s.enumToAlter(ctx, name, pgerror.NotSupported("COMMENT ON TYPE of a table's row type is not supported"))
		if err != nil {
			return nil, err
		}
		ne := *old
		ne.Comment = st.Comment // "" is NULL, as in PostgreSQL
		if err := s.saveEnum(ctx, tx, &ne, false); err != nil {
			return nil, err
		}
		s.setPendingEnum(name, &ne)
		return &Result{Tag: "COMMENT"}, nil
	}
	return &plan{usesT: true, run: run}, nil
}

// enumComment is obj_description(oid, 'pg_type') of an enum type (NULL:
// none, or not an enum the session sees).
func enumComment(s *Session, oid int64) types.Value {
	for _, e := range s.enumList() {
		if int64(e.OID) == oid && e.Comment != "" {
			return types.Text(e.Comment)
		}
	}
	return types.Null(types.TText)
}

// ---- functions ----

// enumArg is the enum type of an enum support function's argument
// (enum_first(NULL::mood)): its value is not looked at.
func enumArg(x expr, fn string) (*types.Enum, error) {
	e := types.EnumOf(x.typ())
	if e == nil {
		return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "function %s(%s) does not exist", fn, x.typ()).
			WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
	}
	return e, nil
}

// enumFunc compiles enum_first, enum_last and enum_range (ok false: f is
// none of them).
func (c *compiler) enumFunc(f *pg.FuncCall, name string) (expr, bool, error) {
	if name != "enum_first" && name != "enum_last" && name != "enum_range" || len(f.Args) < 1 || len(f.Args) > 2 ||
		(len(f.Args) == 2 && name != "enum_range") {
		return nil, false, nil
	}
	var args []expr
	for _, a := range f.Args {
		x, err := c.compile(a, types.TUnknown)
		if err != nil {
			return nil, true, err
		}
		args = append(args, x)
	}
	if len(args) == 2 && args[0].typ() == types.TUnknown && types.IsEnum(args[1].typ()) {
		args[0], args[1] = args[1], args[0] // enum_range(NULL, 'ok'::mood): the type is the second's
		e, err := enumArg(args[0], name)
		if err != nil {
			return nil, true, err
		}
		if args[1], err = c.coerce(args[1], e.Type); err != nil {
			return nil, true, err
		}
		args[0], args[1] = args[1], args[0]
		at, _ := types.ArrayOf(e.Type)
		return &enumFuncExpr{name: name, t: at, enum: e.Type, args: args}, true, nil
	}
	e, err := enumArg(args[0], name)
	if err != nil {
		return nil, true, err
	}
	if len(args) == 2 {
		if args[1].typ() == types.TUnknown {
			if args[1], err = c.coerce(args[1], e.Type); err != nil {
				return nil, true, err
			}
		}
		if args[1].typ() != e.Type {
			return nil, true, pgerror.Errorf(pgerror.CodeUndefinedFunction, "function enum_range(%s, %s) does not exist", e.Name, args[1].typ())
		}
	}
	t := e.Type
	if name == "enum_range" {
		t, _ = types.ArrayOf(e.Type)
	}
	return &enumFuncExpr{name: name, t: t, enum: e.Type, args: args}, true, nil
}

type enumFuncExpr struct {
	name string
	t    types.Type
	enum types.Type
	args []expr
}

func (x *enumFuncExpr) typ() types.Type { return x.t }
func (x *enumFuncExpr) kids() []expr    { return x.args }
func (x *enumFuncExpr) eval(env *env) (types.Value, error) {
	e := types.EnumOf(x.enum)
	switch x.name {
	case "enum_first", "enum_last":
		if len(e.Labels) == 0 {
			return types.Value{}, &pgerror.Error{Code: "55000", Message: "enum " + e.Name + " contains no values"}
		}
		if x.name == "enum_first" {
			return e.Value(e.Labels[0]), nil
		}
		return e.Value(e.Labels[len(e.Labels)-1]), nil
	}
	lo, hi := types.Null(x.enum), types.Null(x.enum)
	if len(x.args) == 2 {
		var err error
		if lo, err = x.args[0].eval(env); err != nil {
			return types.Value{}, err
		}
		if hi, err = x.args[1].eval(env); err != nil {
			return types.Value{}, err
		}
	}
	var b strings.Builder
	b.WriteByte('{')
	n := 0
	for _, l := range e.Labels {
		v := e.Value(l)
		if !lo.Null && v.I < lo.I || !hi.Null && v.I > hi.I {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		types.QuoteArrayElem(&b, l.Label)
	}
	b.WriteByte('}')
	return types.Value{T: x.t, S: b.String()}, nil
}

// codeDuplicateObject is duplicate_object (42710).
const codeDuplicateObject = "42710"
