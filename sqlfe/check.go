package sqlfe

// CHECK constraints.
//
// The design: a CHECK constraint is a CheckDef of its table (Table.Checks):
// its name (given, or PostgreSQL's generated t_col_check / t_check) and its
// expression as SQL text (the raw parse tree deparsed, like a DEFAULT),
// compiled against the table's columns by name when first needed and kept
// in checkCache for that *Table (a committed or pending Table is never
// changed in place: DDL makes a new one). checkRow (dml.go), the one place
// every row to be written passes — INSERT, UPDATE, COPY FROM, ON CONFLICT
// DO UPDATE and a foreign key's SET NULL / SET DEFAULT — evaluates them
// after NOT NULL, in name order as PostgreSQL does; a row fails only when
// one is false (NULL passes): 23514 "new row for relation "t" violates
// check constraint "c"" with the failing row. A CHECK may not use a
// subquery (0A000, as PostgreSQL), an aggregate (42803) or a function that
// needs the session (0A000 here): so it evaluates without one.
//
// ALTER TABLE ADD [CONSTRAINT c] CHECK (...) [NOT VALID] validates the
// rows under ACCESS EXCLUSIVE in the statement's transaction (23514 "check
// constraint "c" of relation "t" is violated by some row"); DROP
// CONSTRAINT removes it; DROP COLUMN drops the checks that use the column,
// as PostgreSQL does. pg_constraint lists them (contype 'c') and
// pg_get_constraintdef prints them as PostgreSQL's ruleutils does, with and
// without its pretty flag (checkdef.go).

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"weak"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// checkNode is the parse tree of d's expression.
func checkNode(d catalog.CheckDef) (*pg.Node, error) {
	sts, err := Parse(d.Expr)
	if err != nil {
		return nil, err
	}
	sel := sts[0].node.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 {
		return nil, catalog.ErrCorrupt
	}
	return sel.TargetList[0].GetResTarget().Val, nil
}

// sessionFuncs are functions whose value depends on the session or that
// change state: a CHECK may not call them here.
var sessionFuncs = map[string]bool{"now": true, "current_setting": true, "set_config": true, "txid_current": true, "pg_notify": true,
	"statement_timestamp": true, "transaction_timestamp": true, "clock_timestamp": true, "random": true}

// checkCheckNode refuses what a CHECK expression may not hold.
func checkCheckNode(n *pg.Node) error {
	var bad error
	walk := func(n *pg.Node) {
		switch {
		case n.GetSubLink() != nil:
			bad = pgerror.NotSupported("cannot use subquery in check constraint")
		case n.GetSqlvalueFunction() != nil:
			bad = pgerror.NotSupported("%s in a CHECK constraint is not supported", sqlValueName(n.GetSqlvalueFunction()))
		case n.GetParamRef() != nil:
			bad = pgerror.Errorf(pgerror.CodeUndefinedParameter, "there is no parameter $%d", n.GetParamRef().Number)
		case n.GetFuncCall() != nil:
			names := strs(n.GetFuncCall().Funcname)
			name := names[len(names)-1]
			if _, cat := catFuncs[name]; cat || sessionFuncs[name] || strings.HasPrefix(name, "pg_") {
				bad = pgerror.NotSupported("function %s() in a CHECK constraint is not supported", name)
			}
		}
	}
	walkNodes(n, func(n *pg.Node) bool { walk(n); return bad == nil })
	return bad
}

// walkNodes calls fn on n and on every node below it, depth first, while
// fn returns true.
func walkNodes(n *pg.Node, fn func(*pg.Node) bool) bool {
	var visit func(m protoreflect.Message) bool
	visit = func(m protoreflect.Message) bool {
		if nd, ok := m.Interface().(*pg.Node); ok && !fn(nd) {
			return false
		}
		more := true
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len() && more; i++ {
					more = visit(l.Get(i).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				more = visit(v.Message())
			}
			return more
		})
		return more
	}
	if n == nil {
		return true
	}
	return visit(n.ProtoReflect())
}

func sqlValueName(f *pg.SQLValueFunction) string {
	return strings.ToLower(strings.TrimPrefix(f.Op.String(), "SVFOP_"))
}

// compileCheck compiles d for the columns of t.
func compileCheck(t *catalog.Table, d catalog.CheckDef) (expr, error) {
	n, err := checkNode(d)
	if err != nil {
		return nil, err
	}
	c := &compiler{cols: t.Cols, rel: t.Name, clause: "check constraints"}
	x, err := c.compile(n, types.TBool)
	if err != nil {
		return nil, err
	}
	if x.typ() == types.TUnknown {
		x = &castExpr{arg: x, t: types.TBool}
	}
	if x.typ() != types.TBool {
		return nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "argument of CHECK must be type boolean, not type %s", x.typ())
	}
	return x, nil
}

type compiledCheck struct {
	name string
	x    expr
}

// checkCache: a Table's compiled checks, dropped with the Table.
var checkCache sync.Map // weak.Pointer[Table] → []compiledCheck

func compiledChecks(t *catalog.Table) ([]compiledCheck, error) {
	wp := weak.Make(t)
	if v, ok := checkCache.Load(wp); ok {
		return v.([]compiledCheck), nil
	}
	defs := append([]catalog.CheckDef(nil), t.Checks...)
	sort.SliceStable(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	out := make([]compiledCheck, len(defs))
	for i, d := range defs {
		x, err := compileCheck(t, d)
		if err != nil {
			return nil, err
		}
		out[i] = compiledCheck{d.Name, x}
	}
	if _, loaded := checkCache.LoadOrStore(wp, out); !loaded {
		runtime.AddCleanup(t, func(k weak.Pointer[catalog.Table]) { checkCache.Delete(k) }, wp)
	}
	return out, nil
}

// checkConstraints evaluates t's CHECK constraints on row (checkRow).
func checkConstraints(t *catalog.Table, row []types.Value) error {
	if len(t.Checks) == 0 {
		return nil
	}
	cs, err := compiledChecks(t)
	if err != nil {
		return err
	}
	e := &env{ctx: context.Background(), row: row}
	for _, c := range cs {
		v, err := c.x.eval(e)
		if err != nil {
			return err
		}
		if !v.Null && v.I == 0 {
			return &pgerror.Error{Code: pgerror.CodeCheckViolation, Message: fmt.Sprintf("new row for relation %q violates check constraint %q", t.Name, c.name),
				Detail: "Failing row contains (" + failingRow(t, row) + ")."}
		}
	}
	return nil
}

// failingRow is a row as a Failing-row detail shows it.
func failingRow(t *catalog.Table, row []types.Value) string {
	var vals []string
	for j, v := range row {
		switch {
		case t.Cols[j].Hidden:
		case v.Null:
			vals = append(vals, "null")
		default:
			vals = append(vals, v.String())
		}
	}
	return strings.Join(vals, ", ")
}

// checkColumns are the columns (indexes in t.Cols) expression n names,
// in table order.
func checkColumns(t *catalog.Table, n *pg.Node) []int {
	seen := map[int]bool{}
	walkNodes(n, func(n *pg.Node) bool {
		if cr := n.GetColumnRef(); cr != nil {
			if f := strs(cr.Fields); len(f) > 0 {
				if i := t.Col(f[len(f)-1]); i >= 0 {
					seen[i] = true
				}
			}
		}
		return true
	})
	var out []int
	for i := range t.Cols {
		if seen[i] {
			out = append(out, i)
		}
	}
	return out
}

// newCheck makes the CheckDef of constraint c for table t (its columns
// all known), choosing PostgreSQL's name when it has none: t_col_check
// for an expression of one column, else t_check, with a number appended
// while taken says the name is used.
func newCheck(t *catalog.Table, c *pg.Constraint, taken func(string) bool) (catalog.CheckDef, error) {
	if c.IsNoInherit {
		return catalog.CheckDef{}, pgerror.NotSupported("CHECK ... NO INHERIT is not supported").At(c.Location)
	}
	if err := checkCheckNode(c.RawExpr); err != nil {
		return catalog.CheckDef{}, ToError(err).At(c.Location)
	}
	text, err := deparseExpr(c.RawExpr)
	if err != nil {
		return catalog.CheckDef{}, err
	}
	d := catalog.CheckDef{Name: c.Conname, Expr: text, NotValid: c.SkipValidation}
	if _, err := compileCheck(t, d); err != nil {
		return catalog.CheckDef{}, err
	}
	if d.Name != "" {
		if taken(d.Name) {
			return catalog.CheckDef{}, pgerror.Errorf("42710", "constraint %q for relation %q already exists", d.Name, t.Name)
		}
		return d, nil
	}
	base := t.Name
	if cols := checkColumns(t, c.RawExpr); len(cols) == 1 {
		base += "_" + t.Cols[cols[0]].Name
	}
	d.Name = chooseName(base, "check", taken)
	return d, nil
}

// chooseName is PostgreSQL's ChooseRelationName: base_suffix, else
// base_suffix1, 2, ..., within 63 bytes.
func chooseName(base, suffix string, taken func(string) bool) string {
	for n := 0; ; n++ {
		sfx := "_" + suffix
		if n > 0 {
			sfx += fmt.Sprint(n)
		}
		b := base
		if len(b)+len(sfx) > 63 {
			b = b[:63-len(sfx)]
		}
		if !taken(b + sfx) {
			return b + sfx
		}
	}
}

// tableConstraintNames are the names of t's constraints.
func tableConstraintNames(t *catalog.Table) map[string]bool {
	m := map[string]bool{}
	if t.HasPKey() {
		m[t.PrimaryKeyName()] = true
	}
	for _, ix := range t.Indexes {
		m[ix.Name] = true
	}
	for _, fk := range t.FKeys {
		m[fk.Name] = true
	}
	for _, c := range t.Checks {
		m[c.Name] = true
	}
	return m
}

// addChecks turns CREATE TABLE's CHECK constraints into t.Checks.
func addChecks(t *catalog.Table, cons []*pg.Constraint) error {
	for _, c := range cons {
		names := tableConstraintNames(t)
		d, err := newCheck(t, c, func(n string) bool { return names[n] })
		if err != nil {
			return err
		}
		t.Checks = append(t.Checks, d)
	}
	return nil
}

// ---- ALTER TABLE ----

// planAlterCheck plans ALTER TABLE t ADD [CONSTRAINT c] CHECK (...) and
// DROP CONSTRAINT of a check constraint (ok false: st is neither).
func (s *Session) planAlterCheck(st *pg.AlterTableStmt) (*plan, bool, error) {
	if st.Objtype != pg.ObjectType_OBJECT_TABLE || len(st.Cmds) != 1 {
		return nil, false, nil
	}
	cmd := st.Cmds[0].GetAlterTableCmd()
	tname, err := relName(st.Relation)
	if err != nil {
		return nil, false, nil
	}
	var add *pg.Constraint
	switch cmd.GetSubtype() {
	case pg.AlterTableType_AT_AddConstraint:
		if add = cmd.Def.GetConstraint(); add == nil || add.Contype != pg.ConstrType_CONSTR_CHECK {
			return nil, false, nil
		}
	case pg.AlterTableType_AT_DropConstraint:
		t := s.lookupTable(tname)
		if t == nil || !slices.ContainsFunc(t.Checks, func(d catalog.CheckDef) bool { return d.Name == cmd.Name }) {
			return nil, false, nil
		}
	default:
		return nil, false, nil
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		res := &Result{Tag: "ALTER TABLE"}
		t, tx, err := s.alterTableTarget(ctx, st, tname, false)
		if err != nil {
			return nil, err
		}
		if t == nil {
			return res, nil // IF EXISTS
		}
		nt := cloneTable(t)
		nt.Checks = append([]catalog.CheckDef(nil), t.Checks...)
		if add == nil {
			nt.Checks = slices.DeleteFunc(nt.Checks, func(d catalog.CheckDef) bool { return d.Name == cmd.Name })
			return res, s.saveTable(ctx, tx, nt)
		}
		names := tableConstraintNames(t)
		d, err := newCheck(t, add, func(n string) bool { return names[n] })
		if err != nil {
			return nil, err
		}
		if !d.NotValid {
			if err := validateCheck(ctx, tx, t, d); err != nil {
				return nil, err
			}
		}
		nt.Checks = append(nt.Checks, d)
		return res, s.saveTable(ctx, tx, nt)
	}
	return &plan{usesT: true, run: run}, true, nil
}

// validateCheck checks d on every row of t in tx.
func validateCheck(ctx context.Context, tx *tupled.Tx, t *catalog.Table, d catalog.CheckDef) error {
	x, err := compileCheck(t, d)
	if err != nil {
		return err
	}
	row := make([]types.Value, len(t.Cols))
	e := &env{ctx: ctx, row: row}
	err = tx.Scan(ctx, t.Engine, tupled.ScanOptions{}, func(k, v []byte) error {
		if err := catalog.DecodeRow(t, k, v, row); err != nil {
			return err
		}
		r, err := x.eval(e)
		if err != nil {
			return err
		}
		if !r.Null && r.I == 0 {
			return pgerror.Errorf(pgerror.CodeCheckViolation, "check constraint %q of relation %q is violated by some row", d.Name, t.Name)
		}
		return nil
	})
	if e := ToError(err); err != nil && e.Code == pgerror.CodeCheckViolation {
		return e
	}
	if err != nil {
		return engineError(err, t)
	}
	return nil
}

// dropColumnChecks drops the checks of t that use column name (ALTER
// TABLE DROP COLUMN), as PostgreSQL does.
func dropColumnChecks(t *catalog.Table, name string) {
	t.Checks = slices.DeleteFunc(append([]catalog.CheckDef(nil), t.Checks...), func(d catalog.CheckDef) bool {
		n, err := checkNode(d)
		if err != nil {
			return false
		}
		for _, i := range checkColumns(t, n) {
			if t.Cols[i].Name == name {
				return true
			}
		}
		return false
	})
}

// checkUsesColumn reports whether a check of t names column name.
func checkUsesColumn(t *catalog.Table, name string) bool {
	for _, d := range t.Checks {
		if n, err := checkNode(d); err == nil {
			for _, i := range checkColumns(t, n) {
				if t.Cols[i].Name == name {
					return true
				}
			}
		}
	}
	return false
}
