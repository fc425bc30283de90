package syscat

// pg_description: the comments on relations, columns, constraints and
// enum types (COMMENT ON is sqlfe's comment.go).

import (
	"github.com/tupled/tupled/sql/types"
)

// Description is the comment pg_description holds for relation r's
// column of attribute number n (0: for r itself), "" if none.
func (r *Rel) Description(n int) string {
	switch {
	case n > 0 && r.Table != nil && (r.Kind == "r" || r.Kind == "v"):
		for i, c := range r.Table.Cols {
			if !c.Hidden && AttNum(r.Table, i) == n {
				return c.Comment
			}
		}
		return ""
	case n > 0:
		return ""
	case r.Kind == "r" || r.Kind == "v":
		return r.Table.Comment
	case r.Kind == "i":
		return r.Index.Comment
	case r.Kind == "S" && r.Seq != nil:
		return r.Seq.Comment
	}
	return ""
}

var pgDescriptionCols = Columns(`objoid:oid classoid:oid objsubid:i4 description`)

// pgDescriptionRows lists the comments on relations and their columns.
func pgDescriptionRows(s Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	add := func(r *Rel, sub int, d string) {
		if d != "" {
			rows = append(rows, []types.Value{types.Int8(r.OID), types.Int8(OIDClassPgClass), types.Int4(int32(sub)), types.Text(d)})
		}
	}
	for _, e := range s.Enums() {
		if e.Comment != "" {
			rows = append(rows, []types.Value{types.Int8(int64(e.OID)), types.Int8(OIDClassPgType), types.Int4(0), types.Text(e.Comment)})
		}
	}
	for _, c := range sn.Cons {
		if d := c.Table.ConComment(c.Name); d != "" {
			rows = append(rows, []types.Value{types.Int8(c.OID), types.Int8(OIDClassPgConstraint), types.Int4(0), types.Text(d)})
		}
	}
	for _, r := range sn.Rels {
		add(r, 0, r.Description(0))
		if r.Kind == "r" || r.Kind == "v" {
			for i, c := range r.Table.Cols {
				if !c.Hidden {
					add(r, AttNum(r.Table, i), c.Comment)
				}
			}
		}
	}
	return rows
}

// Describe is obj_description(oid [, catalog]) and col_description(oid,
// attnum): the comment, NULL if none.
func Describe(sn *Snap, oid int64, attnum int) types.Value {
	if r := sn.ByOID[oid]; r != nil {
		if d := r.Description(attnum); d != "" {
			return types.Text(d)
		}
	}
	if attnum == 0 {
		return DescribeConstraint(sn, oid)
	}
	return types.Null(types.TText)
}

// DescribeConstraint is obj_description(oid, 'pg_constraint'): the
// comment on the constraint of that OID, NULL if none.
func DescribeConstraint(sn *Snap, oid int64) types.Value {
	for _, c := range sn.Cons {
		if c.OID == oid {
			if d := c.Table.ConComment(c.Name); d != "" {
				return types.Text(d)
			}
		}
	}
	return types.Null(types.TText)
}
