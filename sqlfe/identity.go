package sqlfe

// Identity columns: GENERATED { ALWAYS | BY DEFAULT } AS IDENTITY [(
// sequence options )].
//
// The design: an identity column is a serial column told apart (sequence.go
// has the one implementation of both). Column.Identity is "a" or "d"
// (PostgreSQL's attidentity), Column.Seq the sequence's definition when its
// options differ from the type's defaults; the column is NOT NULL, its
// default is nextval of its own sequence (catalog.ColSequence), named t_c_seq or
// as SEQUENCE NAME says, owned by the column, restarted by TRUNCATE ...
// RESTART IDENTITY and dropped with the table. What sets it apart from a
// serial column is what PostgreSQL's rewriter checks, here at planning:
//   - INSERT of a value other than DEFAULT into an ALWAYS column is 428C9
//     unless OVERRIDING SYSTEM VALUE; OVERRIDING USER VALUE replaces the
//     values given for every identity column by the sequence's
//     (identityInsert); COPY is not checked, as in PostgreSQL;
//   - UPDATE (and ON CONFLICT DO UPDATE) SET of an ALWAYS column to
//     anything but DEFAULT is 428C9 (identitySet);
//   - the catalogs show attidentity and no pg_attrdef row, and
//     information_schema.columns is_identity and identity_*.

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// identityConstraint makes col, of table, an identity column as c says.
func identityConstraint(table string, col *catalog.Column, c *pg.Constraint) error {
	switch {
	case col.Identity != "":
		return pgerror.Errorf(pgerror.CodeSyntax, "multiple identity specifications for column %q of table %q", col.Name, table).At(c.Location)
	case col.Default != "" || col.Serial:
		return pgerror.Errorf(pgerror.CodeSyntax, "both default and identity specified for column %q of table %q", col.Name, table).At(c.Location)
	case col.Type != types.TInt8 && col.Type != types.TInt4:
		return pgerror.Errorf(pgerror.CodeInvalidParamValue, "identity column type must be smallint, integer, or bigint")
	}
	o, err := parseSeqOptions(c.Options, true)
	if err != nil {
		return err
	}
	if o.typ != nil {
		return pgerror.NotSupported("AS type in an identity column's sequence options is not supported")
	}
	if o.restart {
		return pgerror.Errorf(pgerror.CodeSyntax, "RESTART must not be used with CREATE SEQUENCE")
	}
	typ := catalog.ColSeqType(*col)
	sq := &catalog.Sequence{Type: typ}
	o.typ = &typ
	if _, _, err := applySeqOptions(sq, o, true); err != nil {
		return err
	}
	if *sq != *catalog.NewSequence("", typ) || o.nameSet {
		sq.Name = o.name
		col.Seq = sq
	}
	col.Identity, col.NotNull = c.GeneratedWhen, true
	return nil
}

// isDefault reports whether n is DEFAULT.
func isDefault(n *pg.Node) bool { return n != nil && n.GetSetToDefault() != nil }

func identityAlwaysError(hint string, c catalog.Column) *pgerror.Error {
	return &pgerror.Error{Code: "428C9", Message: "cannot insert a non-DEFAULT value into column \"" + c.Name + "\"",
		Detail: "Column \"" + c.Name + "\" is an identity column defined as GENERATED ALWAYS.",
		Hint:   hint}
}

// identityInsert checks an INSERT's target columns against t's identity
// columns: vals are the VALUES rows (nil for INSERT ... SELECT). It returns
// the target columns whose given values give way to the default
// (OVERRIDING USER VALUE).
func identityInsert(t *catalog.Table, target []int, over pg.OverridingKind, vals [][]*pg.Node, sel bool) (map[int]bool, error) {
	var ignore map[int]bool
	for j, i := range target {
		c := t.Cols[i]
		if c.Identity == "" {
			continue
		}
		switch {
		case over == pg.OverridingKind_OVERRIDING_USER_VALUE:
			if ignore == nil {
				ignore = map[int]bool{}
			}
			ignore[i] = true
		case c.Identity == "a" && over != pg.OverridingKind_OVERRIDING_SYSTEM_VALUE:
			allDefault := !sel
			for _, row := range vals {
				if j < len(row) && !isDefault(row[j]) {
					allDefault = false
				}
			}
			if !allDefault {
				return nil, identityAlwaysError("Use OVERRIDING SYSTEM VALUE to override.", c)
			}
		}
	}
	return ignore, nil
}

// identitySet checks an UPDATE's SET of column i of t to n.
func identitySet(t *catalog.Table, i int, n *pg.Node) error {
	if c := t.Cols[i]; c.Identity == "a" && !isDefault(n) {
		return &pgerror.Error{Code: "428C9", Message: "column \"" + c.Name + "\" can only be updated to DEFAULT",
			Detail: "Column \"" + c.Name + "\" is an identity column defined as GENERATED ALWAYS."}
	}
	return nil
}

// overrideSelectRow puts the defaults back into an INSERT ... SELECT row
// for the target columns OVERRIDING USER VALUE ignores.
func overrideSelectRow(t *catalog.Table, row []expr, ignore map[int]bool) error {
	for i := range ignore {
		x, err := defaultExpr(t, t.Cols[i])
		if err != nil {
			return err
		}
		row[i] = x
	}
	return nil
}
