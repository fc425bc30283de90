package sqlfe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Views: CREATE [OR REPLACE] VIEW, DROP VIEW, and a view named in FROM.
//
// A view is a catalog entry (catalog.Table with View set: the query as
// SQL text, deparsed by pg_query from the CREATE VIEW's parse tree, its
// result columns, and the tables and views it reads), persisted and
// made transactional like a table's; it has no engine table. Where a
// query names it in FROM, its text is parsed and planned as a subquery
// in FROM under the view's name (viewFromItem), so the planner sees
// through it as PostgreSQL's rewriter does. pg_class shows it with
// relkind 'v', pg_views and information_schema.views list it,
// information_schema.tables as table_type VIEW.
//
// Invariants:
//   - A view's columns are fixed when it is created: its query is planned
//     then, and later plans take that many columns (a column added to a
//     table its SELECT * reads stays out, as in PostgreSQL). CREATE OR
//     REPLACE may only add columns at the end (42P16 otherwise).
//   - A table or view a view reads cannot be dropped without CASCADE,
//     which drops the dependent views too (2BP01 otherwise, as
//     PostgreSQL's dependencies); DROP TABLE names no view, DROP VIEW no
//     table (42809).
//   - Only queries read a view: INSERT, UPDATE, DELETE, COPY and TRUNCATE
//     of one (which PostgreSQL runs on simple views) are 0A000, and so is
//     a locking clause reaching one (as on any subquery in FROM here),
//     ALTER of a view, and DROP COLUMN or RENAME COLUMN of a table a view
//     reads (PostgreSQL follows columns by number; stored SQL text would
//     silently break).
//   - A view is planned with no enclosing query in scope (no outer
//     columns, no WITH queries of the query naming it); one that reaches
//     itself through others is 42P17 (PostgreSQL's "infinite recursion").

// lookupView returns the view name the session sees, nil if none.
func (s *Session) lookupView(name string) *catalog.Table {
	if t := s.lookupRel(name); t.IsView() {
		return t
	}
	return nil
}

// viewOf returns the view rv names, nil if it names none.
func (s *Session) viewOf(rv *pg.RangeVar) *catalog.Table {
	if rv.Catalogname != "" || (rv.Schemaname != "" && rv.Schemaname != "public") {
		return nil
	}
	return s.lookupView(rv.Relname)
}

// maxViewDepth bounds views read through views (a cycle of CREATE OR
// REPLACE VIEWs would expand forever).
const maxViewDepth = 100

// viewFromItem plans view v, named in FROM as name (its alias, if any).
func (s *Session) viewFromItem(v *catalog.Table, name string, alias *pg.Alias, params *[]types.Type) (relNode, *scope, error) {
	if s.viewDepth >= maxViewDepth {
		return nil, nil, pgerror.Errorf("42P17", "infinite recursion detected in rules for relation %q", v.Name)
	}
	sub, err := parseViewQuery(v)
	if err != nil {
		return nil, nil, err
	}
	savedOuter, savedCTEs := s.planOuter, s.ctes
	s.planOuter, s.ctes = nil, nil
	s.viewDepth++
	p, err := s.planSelectAs(sub, params, false)
	s.viewDepth--
	s.planOuter, s.ctes = savedOuter, savedCTEs
	if err != nil {
		return nil, nil, err
	}
	n := len(v.Cols)
	if len(p.cols) < n {
		return nil, nil, pgerror.Errorf(pgerror.CodeInvalidTableDef, "view %q no longer has the columns it was created with", v.Name)
	}
	cols := make([]catalog.Column, n)
	for i := range cols {
		cols[i] = p.cols[i]
		cols[i].Name, cols[i].Table, cols[i].AttNum = v.Cols[i].Name, "", 0
	}
	if cols, err = aliasCols(cols, alias); err != nil {
		return nil, nil, err
	}
	wide := len(p.cols) > n
	scan := &rowsScan{what: "Subquery Scan on " + name, rows: func(q *qctx) ([][]types.Value, error) {
		res, err := p.run(q.ctx, q.s, q.params)
		if err != nil {
			return nil, err
		}
		if wide { // a column added under a SELECT * since: not the view's
			for i, r := range res.Rows {
				res.Rows[i] = r[:n]
			}
		}
		return res.Rows, nil
	}}
	return scan, &scope{rels: []*scopeRel{{name: name, cols: cols, rows: scan}}, width: len(cols)}, nil
}

// parseViewQuery parses a view's stored query.
func parseViewQuery(v *catalog.Table) (*pg.SelectStmt, error) {
	tree, err := pg.Parse(v.View)
	if err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil {
		return nil, pgerror.Errorf(pgerror.CodeInternal, "view %q: its stored query does not parse", v.Name)
	}
	return tree.Stmts[0].Stmt.GetSelectStmt(), nil
}

// planCreateView plans CREATE [OR REPLACE] VIEW name [(cols)] AS query.
func (s *Session) planCreateView(st *pg.ViewStmt) (*plan, error) {
	switch {
	case st.View.Relpersistence == "t":
		return nil, pgerror.NotSupported("temporary views are not supported")
	case st.WithCheckOption != pg.ViewCheckOption_NO_CHECK_OPTION:
		return nil, pgerror.NotSupported("WITH CHECK OPTION is not supported")
	case len(st.Options) > 0:
		return nil, pgerror.NotSupported("view options (WITH (...)) are not supported")
	}
	name, err := relName(st.View)
	if err != nil {
		return nil, err
	}
	sel := st.Query.GetSelectStmt()
	if sel == nil {
		return nil, pgerror.NotSupported("CREATE VIEW is supported only AS SELECT")
	}
	if sel.IntoClause != nil {
		return nil, pgerror.Errorf(pgerror.CodeFeatureNotSupp, "views must not contain SELECT INTO")
	}
	aliases := strs(st.Aliases)
	text, err := pg.Deparse(&pg.ParseResult{Stmts: []*pg.RawStmt{{Stmt: st.Query}}})
	if err != nil {
		return nil, pgerror.NotSupported("this view's query cannot be stored: %v", err)
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		old := s.lookupRel(name)
		switch {
		case old != nil && !old.IsView() && st.Replace:
			return nil, pgerror.Errorf(pgerror.CodeWrongObjectType, "%q is not a view", name)
		case old != nil && !st.Replace, old == nil && s.catalogSnap().ByName[name] != nil:
			return nil, pgerror.Errorf(pgerror.CodeDuplicateTable, "relation %q already exists", name)
		case old == nil && s.lookupEnum(name) != nil: // enum.go
			return nil, pgerror.Errorf(codeDuplicateObject, "type %q already exists", name).WithHint("A relation has an associated type of the same name, so you must use a name that doesn't conflict with any existing type.")
		}
		// the query's columns, planned now (it may read no parameters)
		var params []types.Type
		q, err := parseViewQuery(&catalog.Table{Name: name, View: text})
		if err != nil {
			return nil, err
		}
		p, err := s.planSelectAs(q, &params, false)
		if err != nil {
			return nil, err
		}
		if len(params) > 0 {
			return nil, pgerror.Errorf("42P02", "there is no parameter $1")
		}
		if len(aliases) > len(p.cols) {
			return nil, pgerror.Errorf(pgerror.CodeSyntax, "CREATE VIEW specifies more column names than columns")
		}
		v := &catalog.Table{Name: name, Key: -1, View: text}
		seen := map[string]bool{}
		for i, c := range p.cols {
			col := catalog.Column{Name: c.Name, Type: c.Type, MaxLen: c.MaxLen, Prec: c.Prec, Scale: c.Scale}
			if i < len(aliases) {
				col.Name = aliases[i]
			}
			if col.Type == types.TUnknown {
				col.Type = types.TText
			}
			if seen[col.Name] {
				return nil, pgerror.Errorf(pgerror.CodeDuplicateColumn, "column %q specified more than once", col.Name)
			}
			seen[col.Name] = true
			v.Cols = append(v.Cols, col)
		}
		v.ViewDeps = s.viewDeps(q)
		for _, d := range v.ViewDeps {
			if s.lookupTemp(d) != nil { // PostgreSQL makes the view temporary
				return nil, pgerror.NotSupported("a view over a temporary table is not supported")
			}
		}
		for _, d := range v.ViewDeps {
			if d == name {
				return nil, pgerror.Errorf("42P17", "infinite recursion detected in rules for relation %q", name)
			}
		}
		if old != nil {
			if err := replaceableBy(old, v); err != nil {
				return nil, err
			}
			// the same relation: its comments stay (comment.go)
			v.Comment = old.Comment
			for i := range old.Cols {
				v.Cols[i].Comment = old.Cols[i].Comment
			}
		}
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		data, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if old != nil {
			err = tx.Update(ctx, catalog.CatalogTable, []byte(name), data)
		} else if err = tx.Insert(ctx, catalog.CatalogTable, []byte(name), data); errors.Is(err, tupled.ErrDuplicateKey) {
			return nil, pgerror.Errorf(pgerror.CodeDuplicateTable, "relation %q already exists", name)
		}
		if err != nil {
			return nil, err
		}
		s.stage(name, v)
		return &Result{Tag: "CREATE VIEW"}, nil
	}
	return &plan{usesT: true, run: run}, nil
}

// replaceableBy is CREATE OR REPLACE VIEW's check: the old view's columns
// must stay, by name and type, new ones may follow.
func replaceableBy(old, v *catalog.Table) error {
	if len(v.Cols) < len(old.Cols) {
		return pgerror.Errorf(pgerror.CodeInvalidTableDef, "cannot drop columns from view")
	}
	for i, oc := range old.Cols {
		nc := v.Cols[i]
		if nc.Name != oc.Name {
			return &pgerror.Error{Code: pgerror.CodeInvalidTableDef, Message: fmt.Sprintf("cannot change name of view column %q to %q", oc.Name, nc.Name),
				Hint: "Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead."}
		}
		if nc.Type != oc.Type || nc.Mod() != oc.Mod() {
			return pgerror.Errorf(pgerror.CodeInvalidTableDef, "cannot change data type of view column %q from %s to %s", oc.Name, oc.Mod().Name(oc.Type), nc.Mod().Name(nc.Type))
		}
	}
	return nil
}

// viewDeps are the tables and views a view's query names (not its WITH
// queries' names), sorted.
func (s *Session) viewDeps(q *pg.SelectStmt) []string {
	ctes := map[string]bool{}
	var rvs []*pg.RangeVar
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		switch x := m.Interface().(type) {
		case *pg.CommonTableExpr:
			ctes[x.Ctename] = true
		case *pg.RangeVar:
			rvs = append(rvs, x)
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					walk(l.Get(i).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				walk(v.Message())
			}
			return true
		})
	}
	walk(q.ProtoReflect())
	set := map[string]bool{}
	for _, rv := range rvs {
		if rv.Catalogname != "" || (rv.Schemaname != "" && rv.Schemaname != "public") || (rv.Schemaname == "" && ctes[rv.Relname]) {
			continue
		}
		if s.lookupRel(rv.Relname) != nil {
			set[rv.Relname] = true
		}
	}
	var out []string
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// dependentViews are the views that read any of names, directly or
// through others, that are not among them; in an order that drops each
// before what it reads.
func (s *Session) dependentViews(names map[string]bool) []string {
	var out []string
	found := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, v := range s.catalogSnap().Views {
			if names[v.Name] || found[v.Name] {
				continue
			}
			for _, d := range v.ViewDeps {
				if names[d] || found[d] {
					found[v.Name], changed = true, true
					out = append(out, v.Name)
					break
				}
			}
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// dropViewsFor checks (or, with cascade, drops) the views depending on
// names, which are being dropped (of kind what: "table" or "view").
func (s *Session) dropViewsFor(ctx context.Context, tx *tupled.Tx, names map[string]bool, cascade bool) error {
	deps := s.dependentViews(names)
	if len(deps) == 0 {
		return nil
	}
	if !cascade {
		var first string
		for n := range names {
			if first == "" || n < first {
				first = n
			}
		}
		kind := "table"
		if s.lookupView(first) != nil {
			kind = "view"
		}
		var detail []string
		for _, d := range deps {
			for _, on := range s.lookupView(d).ViewDeps {
				if names[on] {
					detail = append(detail, fmt.Sprintf("view %s depends on %s %s", d, kindOf(s, on), on))
				}
			}
		}
		return &pgerror.Error{Code: "2BP01", Message: fmt.Sprintf("cannot drop %s %s because other objects depend on it", kind, first),
			Detail: strings.Join(detail, "\n"), Hint: "Use DROP ... CASCADE to drop the dependent objects too."}
	}
	for _, d := range deps {
		s.notice("NOTICE", "00000", "drop cascades to view "+d)
		if err := s.dropView(ctx, tx, d); err != nil {
			return err
		}
	}
	return nil
}

// refuseUnderViews is 0A000 for an ALTER TABLE form that changes the
// columns of a table a view reads: PostgreSQL's views follow columns by
// number (a renamed one is renamed in the view, a dropped one it reads
// is 2BP01); these are SQL text, which would silently break.
func (s *Session) refuseUnderViews(table, what string) error {
	if deps := s.dependentViews(map[string]bool{table: true}); len(deps) > 0 {
		return pgerror.NotSupported("%s on a table a view reads (%s) is not supported", what, deps[len(deps)-1])
	}
	return nil
}

func kindOf(s *Session, name string) string {
	if s.lookupView(name) != nil {
		return "view"
	}
	return "table"
}

// dropView deletes view name's catalog entry in tx.
func (s *Session) dropView(ctx context.Context, tx *tupled.Tx, name string) error {
	if err := tx.Delete(ctx, catalog.CatalogTable, []byte(name)); err != nil && !errors.Is(err, tupled.ErrNotFound) {
		return err
	}
	s.stage(name, nil)
	return nil
}

// planDropView plans DROP VIEW [IF EXISTS] name, ... [CASCADE | RESTRICT].
func (s *Session) planDropView(st *pg.DropStmt) (*plan, error) {
	var names []string
	for _, o := range st.Objects {
		parts := strs(o.GetList().GetItems())
		if len(parts) != 1 && !(len(parts) == 2 && parts[0] == "public") {
			return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "view %q does not exist", strings.Join(parts, "."))
		}
		names = append(names, parts[len(parts)-1])
	}
	cascade := st.Behavior == pg.DropBehavior_DROP_CASCADE
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		drop := map[string]bool{}
		for _, name := range names {
			switch {
			case s.lookupView(name) != nil:
				drop[name] = true
			case s.lookupTable(name) != nil:
				return nil, pgerror.Errorf(pgerror.CodeWrongObjectType, "%q is not a view", name).WithHint("Use DROP TABLE to remove a table.")
			case st.MissingOk:
				s.notice("NOTICE", "00000", "view \""+name+"\" does not exist, skipping")
			default:
				return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "view %q does not exist", name)
			}
		}
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		if err := s.dropViewsFor(ctx, tx, drop, cascade); err != nil {
			return nil, err
		}
		for _, name := range names {
			if drop[name] {
				if err := s.dropView(ctx, tx, name); err != nil {
					return nil, err
				}
			}
		}
		return &Result{Tag: "DROP VIEW"}, nil
	}
	return &plan{usesT: true, run: run}, nil
}
