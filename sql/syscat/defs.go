package syscat

// The definitions' text: pg_get_indexdef, pg_get_constraintdef and
// pg_get_expr of a column default.

import (
	"strings"

	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/types"
)

// IndexDef is pg_get_indexdef(r, col, pretty): the CREATE INDEX statement, or with
// col > 0 that element's text.
func (sn *Snap) IndexDef(r *Rel, col int, pretty bool) string {
	var els []string
	for i, c := range r.Index.Cols {
		if c >= 0 {
			els = append(els, eval.QuoteIdent(r.Table.Cols[c].Name))
			continue
		}
		e := indexExprText(r.Index, i)
		if !looksLikeCall(e) {
			e = "(" + e + ")"
		}
		els = append(els, e)
	}
	if col > 0 {
		if col > len(els) {
			return ""
		}
		return els[col-1]
	}
	u := ""
	if r.Index.Unique {
		u = "UNIQUE "
	}
	schema := "public." // pretty (PRETTYFLAG_SCHEMA) leaves out a schema on the search path
	if pretty {
		schema = ""
	}
	out := "CREATE " + u + "INDEX " + eval.QuoteIdent(r.Name) + " ON " + schema + eval.QuoteIdent(r.Table.Name) + " USING btree (" + strings.Join(els, ", ") + ")"
	if p := sn.indexPredicate(r, pretty); !p.Null {
		out += " WHERE " + p.S
	}
	return out
}

// looksLikeCall reports whether e is one function call (f(...)), which an
// index definition does not parenthesize.
func looksLikeCall(e string) bool {
	i := strings.IndexByte(e, '(')
	if i <= 0 || !strings.HasSuffix(e, ")") {
		return false
	}
	for _, ch := range e[:i] {
		if !(ch == '_' || ch == '.' || ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9') {
			return false
		}
	}
	depth := 0
	for j := i; j < len(e); j++ {
		switch e[j] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 && j != len(e)-1 {
				return false
			}
		}
	}
	return true
}

// ConstraintDef is pg_get_constraintdef(c, pretty).
func (sn *Snap) ConstraintDef(c *Con, pretty bool) string {
	names := func(t *catalog.Table, cs []int) string {
		var out []string
		for _, i := range cs {
			if i >= 0 && t != nil && i < len(t.Cols) {
				out = append(out, eval.QuoteIdent(t.Cols[i].Name))
			}
		}
		return strings.Join(out, ", ")
	}
	switch c.Kind {
	case "c":
		return sn.dp.CheckDef(c.Table, *c.Check, pretty)
	case "p":
		return "PRIMARY KEY (" + names(c.Table, c.Cols) + ")"
	case "u":
		return "UNIQUE (" + names(c.Table, c.Cols) + ")"
	}
	d := "FOREIGN KEY (" + names(c.Table, c.Cols) + ") REFERENCES " + eval.QuoteIdent(c.FK.RefTable) + "(" + names(c.Ref, c.FK.RefCols) + ")"
	for _, a := range []struct {
		what string
		code string
	}{{"UPDATE", fkActionCode(c.FK.OnUpdate)}, {"DELETE", fkActionCode(c.FK.OnDelete)}} {
		switch a.code {
		case "r":
			d += " ON " + a.what + " RESTRICT"
		case "c":
			d += " ON " + a.what + " CASCADE"
		case "n":
			d += " ON " + a.what + " SET NULL"
		case "d":
			d += " ON " + a.what + " SET DEFAULT"
		}
	}
	return d
}

// DefaultText is a column's default as pg_get_expr prints it ("" if none).
func DefaultText(t *catalog.Table, c catalog.Column) string {
	switch {
	case c.Identity != "":
		return "" // attidentity says it (sqlfe's identity.go)
	case c.Serial:
		return "nextval('" + eval.QuoteIdent(catalog.ColSequence(t, c).Name) + "'::regclass)"
	case c.Default != "":
		d := strings.TrimSuffix(strings.TrimPrefix(c.Default, "SELECT "), ";")
		if e := types.EnumOf(c.Type); e != nil && isStringLiteral(d) {
			return d + "::" + eval.QuoteIdent(e.Name) // the literal coerced to the enum, as PostgreSQL stores it
		}
		return d
	}
	return ""
}

// isStringLiteral reports whether SQL text d is one string literal (its
// quotes inside doubled).
func isStringLiteral(d string) bool {
	return len(d) >= 2 && d[0] == '\'' && d[len(d)-1] == '\'' && !strings.Contains(strings.ReplaceAll(d[1:len(d)-1], "''", ""), "'")
}

// indexPredicate is a partial index's WHERE as PostgreSQL's ruleutils
// prints it (pg_get_expr of pg_index.indpred, which psql asks pretty), or
// NULL for an index of every row.
func (sn *Snap) indexPredicate(r *Rel, pretty bool) types.Value {
	if r.Index.Where == "" {
		return nullText
	}
	return types.Text(sn.dp.Predicate(r.Table, r.Index.Where, pretty))
}

// indexExprText is the SQL text of index element i, an expression.
func indexExprText(ix catalog.IndexDef, i int) string {
	if i >= len(ix.Exprs) {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(ix.Exprs[i], "SELECT "), ";")
}

func fkActionCode(a interface{ String() string }) string {
	switch strings.ToUpper(a.String()) {
	case "RESTRICT":
		return "r"
	case "CASCADE":
		return "c"
	case "SET NULL":
		return "n"
	case "SET DEFAULT":
		return "d"
	}
	return "a"
}
