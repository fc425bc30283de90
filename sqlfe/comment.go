package sqlfe

import (
	"context"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/syscat"
	"github.com/tupled/tupled/sql/types"
)

// COMMENT ON TABLE | VIEW | INDEX | SEQUENCE name | COLUMN rel.col |
// CONSTRAINT name ON table IS 'text' | NULL, and COMMENT ON TYPE of an
// enum type (enum.go: its definition's Comment, pg_description's classoid
// pg_type). A constraint's comment is in Table.ConComments, by name
// (pg_description's classoid pg_constraint); a save of the table drops
// those whose constraint is gone.
//
// The design: a comment is a field of the object's catalog entry —
// Table.Comment (a table or view), Column.Comment, IndexDef.Comment,
// Table.PKeyComment (the primary key's index, which has no IndexDef),
// Sequence.Comment (a standalone sequence's entry, or a serial or
// identity column's Seq) — written in the statement's transaction like
// any DDL (saveTable), so it is transactional, persists, and goes with
// its object: a dropped table, column or index takes its comment along,
// a renamed column keeps it, a rewrite (ALTER TABLE) copies it. IS NULL
// and IS '' remove it, as in PostgreSQL. pg_description is generated
// from the fields (classoid pg_class, objsubid the column's attnum or 0),
// and obj_description / col_description read them (catfuncs.go).
// COMMENT ON any other kind of object is 0A000; on an object of another
// kind than named 42809 ("t" is not a view), as PostgreSQL says.
//
// The relation is locked SHARE UPDATE EXCLUSIVE first (PostgreSQL's
// lock for COMMENT), so a concurrent ALTER TABLE does not overwrite the
// comment nor the comment the ALTER; the entry is read after the lock.

// planComment plans COMMENT ON.
func (s *Session) planComment(st *pg.CommentStmt) (*plan, error) {
	var what string
	switch st.Objtype {
	case pg.ObjectType_OBJECT_TABLE:
		what = "table"
	case pg.ObjectType_OBJECT_VIEW:
		what = "view"
	case pg.ObjectType_OBJECT_INDEX:
		what = "index"
	case pg.ObjectType_OBJECT_SEQUENCE:
		what = "sequence"
	case pg.ObjectType_OBJECT_COLUMN:
		what = "column"
	case pg.ObjectType_OBJECT_TYPE:
		return s.planCommentType(st) // enum.go
	case pg.ObjectType_OBJECT_TABCONSTRAINT:
		what = "constraint"
	default:
		kind, ok := map[pg.ObjectType]string{pg.ObjectType_OBJECT_DOMCONSTRAINT: "CONSTRAINT ... ON DOMAIN",
			pg.ObjectType_OBJECT_MATVIEW: "MATERIALIZED VIEW", pg.ObjectType_OBJECT_FDW: "FOREIGN DATA WRAPPER", pg.ObjectType_OBJECT_TSCONFIGURATION: "TEXT SEARCH CONFIGURATION",
			pg.ObjectType_OBJECT_TSDICTIONARY: "TEXT SEARCH DICTIONARY", pg.ObjectType_OBJECT_TSPARSER: "TEXT SEARCH PARSER", pg.ObjectType_OBJECT_TSTEMPLATE: "TEXT SEARCH TEMPLATE",
			pg.ObjectType_OBJECT_OPCLASS: "OPERATOR CLASS", pg.ObjectType_OBJECT_OPFAMILY: "OPERATOR FAMILY", pg.ObjectType_OBJECT_LARGEOBJECT: "LARGE OBJECT"}[st.Objtype]
		if !ok {
			kind = strings.ReplaceAll(strings.TrimPrefix(st.Objtype.String(), "OBJECT_"), "_", " ")
		}
		return nil, pgerror.NotSupported("COMMENT ON %s is not supported", kind)
	}
	names := strs(st.Object.GetList().GetItems())
	col := ""
	if what == "constraint" { // COMMENT ON CONSTRAINT name ON table: the table's names, then the name
		col, names = names[len(names)-1], names[:len(names)-1]
	}
	if what == "column" {
		if len(names) < 2 {
			return nil, pgerror.Errorf("42601", "column name must be qualified")
		}
		col, names = names[len(names)-1], names[:len(names)-1]
	}
	var rel string
	switch {
	case len(names) == 1:
		rel = names[0]
	case len(names) == 2 && names[0] == "public":
		rel = names[1]
	case len(names) == 2:
		return nil, pgerror.Errorf("3F000", "schema %q does not exist", names[0])
	default:
		return nil, pgerror.NotSupported("cross-database references are not implemented: %s", strings.Join(names, "."))
	}
	text := st.Comment // "" is NULL, as in PostgreSQL
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		res := &Result{Tag: "COMMENT"}
		if tt := s.lookupTemp(rel); tt != nil {
			return nil, refuseTemp(tt.t, "COMMENT ON") // temp.go
		}
		r := s.catalogSnap().ByName[rel]
		if r == nil {
			return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", rel)
		}
		kind := map[string]string{"r": "table", "v": "view", "i": "index", "S": "sequence"}[r.Kind]
		switch {
		case what == "constraint" && kind != "table":
			return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", rel)
		case what == "column" && kind != "table" && kind != "view":
			return nil, pgerror.Errorf(pgerror.CodeWrongObjectType, "%q is not a table, view, materialized view, composite type, or foreign table", rel)
		case what != "column" && what != "constraint" && what != kind:
			return nil, pgerror.Errorf(pgerror.CodeWrongObjectType, "%q is not a%s %s", rel, map[bool]string{true: "n", false: ""}[what == "index"], what)
		}
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		owner := r.Table // the table holding the comment's field (nil: a standalone sequence)
		if r.Kind == "S" && s.lookupSeq(rel) != nil {
			owner = nil
		}
		if owner != nil && !owner.IsView() {
			if err := tx.LockTable(ctx, owner.Engine, tupled.ShareUpdateExclusive, false); err != nil {
				return nil, engineError(err, owner)
			}
			if owner = s.lookupTable(owner.Name); owner == nil { // dropped meanwhile
				return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", rel)
			}
		}
		if owner == nil {
			sq := *s.lookupSeq(rel)
			sq.Comment = text
			return res, s.saveSequence(ctx, tx, rel, &sq) // sequence.go
		}
		nt := cloneTable(owner)
		if what == "constraint" {
			if !slices.Contains(syscat.ConstraintNames(nt), col) {
				return nil, pgerror.Errorf(pgerror.CodeUndefinedObject, "constraint %q for table %q does not exist", col, rel)
			}
			cs := slices.DeleteFunc(slices.Clone(nt.ConComments), func(c catalog.NamedComment) bool { return c.Name == col })
			if text != "" {
				cs = append(cs, catalog.NamedComment{Name: col, Text: text})
			}
			nt.ConComments = cs
			return res, s.saveTable(ctx, tx, nt)
		}
		switch r.Kind {
		case "r", "v":
			if what != "column" {
				nt.Comment = text
				break
			}
			i := nt.Col(col)
			if i < 0 {
				return nil, pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %q of relation %q does not exist", col, rel)
			}
			nt.Cols[i].Comment = text
		case "i":
			if r.PKey {
				nt.PKeyComment = text
				break
			}
			for j := range nt.Indexes {
				if nt.Indexes[j].Name == rel {
					nt.Indexes[j].Comment = text
				}
			}
		case "S": // a serial or identity column's own sequence: the column's Seq
			c := &nt.Cols[r.SeqCol]
			def := *catalog.ColSequence(owner, *c)
			def.Comment = text
			c.Seq = colSeqDef(owner, *c, def) // sequence.go
		}
		return res, s.saveTable(ctx, tx, nt)
	}
	return &plan{usesT: true, run: run}, nil
}
