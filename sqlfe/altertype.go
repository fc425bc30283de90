package sqlfe

import (
	"context"
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// ALTER TABLE t ALTER [COLUMN] c [SET DATA] TYPE type [USING expr].
//
// The design follows PostgreSQL's ATPrepAlterColumnType and
// ATRewriteTable: the new value of c in each row is the USING expression
// (over the row's old values), or c itself, brought to the new type by an
// assignment coercion (assign, dml.go: the casts PostgreSQL applies in an
// INSERT); a conversion that is not an assignment cast is 42804 "column
// "c" cannot be cast automatically to type t" with PostgreSQL's HINT
// ("result of USING clause ..." for an expression). The table is then
// rewritten (altertable.go's rewriteTable, as ADD COLUMN does): every row
// converted in the statement's transaction, so a row that does not
// convert (22P02, 22003, 22001 from the type's modifier) fails the
// statement and leaves the table as it was. In each new row NOT NULL is
// checked (23502 "column "c" of relation "t" contains null values"), then
// the CHECK constraints, compiled anew over the new type ("check
// constraint "x" of relation "t" is violated by some row"). The primary
// key and the indexes are built on the new engine table, their
// expressions and predicates compiled over the new type, so their keys
// are the new type's (a collision the conversion makes is 23505 "could
// not create unique index"); a DEFAULT is kept as its text and must
// assign to the new type (42804 "default for column ..."); a serial or
// identity column's sequence keeps its own type, as in PostgreSQL.
//
// A view reading the table must not use the column (PostgreSQL's own
// refusal, 0A000): its stored result columns would go stale. viewMayUse
// over-approximates: a view is taken to use the column if its query names
// anything so (a column reference, a USING list), has a * or a NATURAL
// join, or names a FROM item's whole row.
//
// The table's own foreign keys are declared anew on the rewritten table
// (rewriteTable). Refused with 0A000: a column of one of them, a table
// other tables' foreign keys reference (their engine declarations name its
// engine table), a new type that cannot be in the primary key the column
// is in, array types, and COLLATE.

// alterColumnType is the change of ALTER COLUMN name TYPE (cd: the new
// type and the USING expression, cd.RawDefault) to t.
func (s *Session) alterColumnType(ctx context.Context, t *catalog.Table, name string, cd *pg.ColumnDef) (*catalog.Table, func([]types.Value) ([]types.Value, error), error) {
	i := t.Col(name)
	if i < 0 {
		return nil, nil, pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %q of relation %q does not exist", name, t.Name)
	}
	if cd.CollClause != nil {
		return nil, nil, pgerror.NotSupported("ALTER COLUMN TYPE ... COLLATE is not supported")
	}
	for _, v := range s.catalogSnap().Views {
		if slices.Contains(v.ViewDeps, t.Name) && viewMayUse(v, name) {
			return nil, nil, &pgerror.Error{Code: pgerror.CodeFeatureNotSupp, Message: "cannot alter type of a column used by a view or rule",
				Detail: fmt.Sprintf("rule _RETURN on view %s depends on column %q", v.Name, name)}
		}
	}
	typ, m, err := s.typeOfMod(cd.TypeName)
	if err != nil {
		return nil, nil, err
	}
	if typ == types.TInt4Array {
		return nil, nil, pgerror.NotSupported("array columns are not supported")
	}
	old := t.Cols[i]
	col := old
	col.Type, col.Int2, col.MaxLen, col.Varchar, col.Prec, col.Scale = typ, m.Int2, m.MaxLen, m.Varchar, m.Prec, m.Scale
	if t.IsKeyCol(i) && !catalog.KeyTypeOK(t, typ) {
		return nil, nil, pgerror.NotSupported("a PRIMARY KEY of type %s is not supported", typ)
	}
	if (old.Serial || old.Identity != "") && old.Seq == nil {
		// the sequence keeps the type it was made with (PostgreSQL's
		// ALTER COLUMN TYPE leaves it alone)
		col.Seq = catalog.NewSequence("", catalog.ColSeqType(old))
	}
	// PostgreSQL's format_type_be (no modifier) and
	// format_type_with_typemod (with it), for the messages
	bare := types.Mod{Int2: m.Int2, Varchar: m.Varchar}.Name(typ)
	full := m.Name(typ)

	c := &compiler{cols: t.Cols, rel: t.Name, clause: "transform expressions"} // no session: a subquery is 0A000, as in PostgreSQL
	// the column itself converts by an assignment cast or not; so does its
	// DEFAULT, whose value has the column's old type
	x, autoErr := assign(c, &pg.Node{Node: &pg.Node_ColumnRef{ColumnRef: &pg.ColumnRef{Fields: []*pg.Node{pg.MakeStrNode(name)}, Location: -1}}}, col)
	mismatch := ToError(autoErr) != nil && ToError(autoErr).Code == pgerror.CodeDatatypeMismatch
	switch {
	case autoErr != nil && !mismatch:
		return nil, nil, autoErr
	case mismatch && cd.RawDefault == nil:
		return nil, nil, &pgerror.Error{Code: pgerror.CodeDatatypeMismatch, Message: fmt.Sprintf("column %q cannot be cast automatically to type %s", name, bare),
			Hint: fmt.Sprintf("You might need to specify \"USING %s::%s\".", eval.QuoteIdent(name), full)}
	}
	if cd.RawDefault != nil {
		var err error
		x, err = assign(c, cd.RawDefault, col)
		if e := ToError(err); err != nil && e.Code == pgerror.CodeDatatypeMismatch {
			return nil, nil, &pgerror.Error{Code: pgerror.CodeDatatypeMismatch, Message: fmt.Sprintf("result of USING clause for column %q cannot be cast automatically to type %s", name, bare),
				Hint: "You might need to add an explicit cast."}
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if mismatch && old.Default != "" && !old.Serial && old.Identity == "" {
		return nil, nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "default for column %q cannot be cast automatically to type %s", name, bare)
	}

	nt := cloneTable(t)
	nt.Cols[i] = col
	if col.Default != "" && !col.Serial && col.Identity == "" {
		if _, err := defaultExpr(nt, col); err != nil { // the text as it will be compiled at INSERT
			return nil, nil, err
		}
	}
	// the indexes are built anew: their keys in the typed format, which
	// every type can be in
	for j, d := range nt.Indexes {
		if slices.Contains(d.Cols, i) {
			nt.Indexes[j].Typed = true
		}
	}
	checks, err := compiledChecks(nt) // compiled over the new type now, as PostgreSQL re-adds them
	if err != nil {
		return nil, nil, err
	}
	for _, d := range nt.Indexes { // so are index expressions and predicates (indexKey would skip the rows)
		if _, err := compileIndexExprs(nt, d); err != nil {
			return nil, nil, err
		}
		if _, err := compileIndexPredicate(nt, d); err != nil {
			return nil, nil, err
		}
	}

	e := &env{ctx: ctx, s: s}
	conv := func(row []types.Value) ([]types.Value, error) {
		e.row = row
		v, err := x.eval(e)
		if err != nil {
			return nil, err
		}
		if v, err = types.CastMod(v, col.Type, col.Mod(), false); err != nil {
			return nil, err
		}
		if v.Null && (col.NotNull || nt.IsKeyCol(i)) {
			return nil, &pgerror.Error{Code: pgerror.CodeNotNull, Message: fmt.Sprintf("column %q of relation %q contains null values", name, t.Name)}
		}
		row[i] = v // row is the rewrite's buffer, decoded anew for each row
		for _, ck := range checks {
			r, err := ck.x.eval(e)
			if err != nil {
				return nil, err
			}
			if !r.Null && r.I == 0 {
				return nil, pgerror.Errorf(pgerror.CodeCheckViolation, "check constraint %q of relation %q is violated by some row", ck.name, t.Name)
			}
		}
		return row, nil
	}
	return nt, conv, nil
}

// viewMayUse reports whether view v's query may use a column called col
// (see above: never false when it does).
func viewMayUse(v *catalog.Table, col string) bool {
	sts, err := Parse(v.View)
	if err != nil || len(sts) != 1 {
		return true
	}
	rels := map[string]bool{} // FROM items' names and aliases: a whole-row reference names one
	walkNodes(sts[0].node, func(n *pg.Node) bool {
		if rv := n.GetRangeVar(); rv != nil {
			rels[rv.Relname] = true
			if rv.Alias != nil {
				rels[rv.Alias.Aliasname] = true
			}
		}
		if rs := n.GetRangeSubselect(); rs != nil && rs.Alias != nil {
			rels[rs.Alias.Aliasname] = true
		}
		return true
	})
	uses := false
	walkNodes(sts[0].node, func(n *pg.Node) bool {
		switch {
		case n.GetString_() != nil && n.GetString_().Sval == col, n.GetAStar() != nil, n.GetJoinExpr() != nil && n.GetJoinExpr().IsNatural:
			uses = true
		case n.GetColumnRef() != nil && len(n.GetColumnRef().Fields) == 1 && n.GetColumnRef().Fields[0].GetString_() != nil && rels[n.GetColumnRef().Fields[0].GetString_().Sval]:
			uses = true
		}
		return !uses
	})
	return uses
}
