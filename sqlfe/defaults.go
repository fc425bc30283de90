package sqlfe

import (
	"context"
	"errors"
	"math"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// Column defaults and serial columns.
//
// A column's DEFAULT is kept in the catalog as SQL text (Column.Default,
// the expression deparsed) and compiled, like the assignment it stands
// for, wherever an INSERT leaves the column out or a VALUES or SET list
// says DEFAULT. It may not refer to columns (42P10 in PostgreSQL: 0A000
// here names it).
//
// smallserial, serial and bigserial columns (Column.Serial) are smallint,
// integer and bigint NOT NULL columns whose default is the next value of
// their own sequence, as PostgreSQL's nextval('t_c_seq'): a sequence owned
// by the column (catalog.ColSequence), whose state is the row of
// SequenceTable keyed by the engine table's name and the column's. DROP
// TABLE deletes those rows in its own transaction, so a new table of the
// same name starts at 1 again.

var serialTypes = map[string]struct {
	t    types.Type
	int2 bool
	max  int64
}{
	"smallserial": {types.TInt4, true, math.MaxInt16}, "serial2": {types.TInt4, true, math.MaxInt16},
	"serial": {types.TInt4, false, math.MaxInt32}, "serial4": {types.TInt4, false, math.MaxInt32},
	"bigserial": {types.TInt8, false, math.MaxInt64}, "serial8": {types.TInt8, false, math.MaxInt64},
}

// serialType reports the serial pseudo-type tn names, if any.
func serialType(tn *pg.TypeName) (types.Type, bool, bool) {
	names := strs(tn.Names)
	if len(names) != 1 || len(tn.ArrayBounds) > 0 || len(tn.Typmods) > 0 {
		return 0, false, false
	}
	st, ok := serialTypes[names[0]]
	return st.t, st.int2, ok
}

// deparseExpr is n's SQL text.
func deparseExpr(n *pg.Node) (string, error) {
	sel := &pg.SelectStmt{TargetList: []*pg.Node{pg.MakeResTargetNodeWithVal(n, 0)}}
	out, err := pg.Deparse(&pg.ParseResult{Stmts: []*pg.RawStmt{{Stmt: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}}}}})
	if err != nil {
		return "", err
	}
	return out, nil
}

// defaultExpr compiles col's default for table t: NULL when it has none.
func defaultExpr(t *catalog.Table, col catalog.Column) (expr, error) {
	switch {
	case col.Serial || col.Identity != "":
		return &nextvalExpr{seq: catalog.ColSequence(t, col), t: col.Type}, nil
	case col.Default != "":
		sts, err := Parse(col.Default)
		if err != nil {
			return nil, err
		}
		sel := sts[0].node.GetSelectStmt()
		if sel == nil || len(sel.TargetList) != 1 {
			return nil, catalog.ErrCorrupt
		}
		return assign(&compiler{}, sel.TargetList[0].GetResTarget().Val, col)
	}
	return &constExpr{types.Null(col.Type)}, nil
}

// nextvalExpr is nextval of a serial or identity column's sequence.
type nextvalExpr struct {
	seq *catalog.Sequence
	t   types.Type
}

func (n *nextvalExpr) typ() types.Type { return n.t }
func (n *nextvalExpr) kids() []expr    { return nil }
func (n *nextvalExpr) eval(e *env) (types.Value, error) {
	v, err := e.s.nextval(e.ctx, n.seq) // sequence.go
	if err != nil {
		return types.Value{}, err
	}
	return types.Value{T: n.t, I: v}, nil
}

// columnDefault checks a column's DEFAULT constraint and records it.
func columnDefault(table string, col *catalog.Column, c *pg.Constraint) error {
	if col.Serial || col.Default != "" {
		return pgerror.Errorf(pgerror.CodeSyntax, "multiple default values specified for column %q of table %q", col.Name, table)
	}
	_, err := assign(&compiler{}, c.RawExpr, *col)
	if e := ToError(err); e != nil && (e.Code == pgerror.CodeUndefinedColumn || e.Code == pgerror.CodeUndefinedTable) {
		// compiled without columns, any column reference fails to resolve
		return pgerror.NotSupported("cannot use column reference in DEFAULT expression")
	}
	if err != nil {
		return err
	}
	sql, err := deparseExpr(c.RawExpr)
	if err != nil {
		return err
	}
	col.Default = sql
	return nil
}

// dropSequences deletes the sequences of t's serial columns in tx (the DROP
// TABLE's transaction).
func dropSequences(ctx context.Context, tx *tupled.Tx, t *catalog.Table) error {
	for _, c := range t.Cols {
		if !c.Serial && c.Identity == "" {
			continue
		}
		err := tx.Delete(ctx, SequenceTable, []byte(t.Engine+"."+c.Name))
		if err != nil && !errors.Is(err, tupled.ErrNotFound) {
			return err
		}
	}
	return nil
}
