package sqlfe

// checkdef.go prints a CHECK constraint as PostgreSQL's ruleutils.c does
// for pg_get_constraintdef (and so psql's \d "Check constraints:"). The
// stored expression is the raw parse tree; PostgreSQL prints the analysed
// one, so what analysis adds is added here for the common forms: an
// untyped literal takes the type of the other operand ('x'::text,
// 'x'::bpchar; a number stays bare), a varchar operand is cast to text,
// an integer compared with a numeric is cast to numeric, IN (...) is
// = ANY (ARRAY[...]), BETWEEN is >= AND <=, LIKE is ~~. Without the pretty
// flag every operator, boolean and null test is parenthesised; with it,
// parentheses follow ruleutils' isSimpleNode. A form not covered here
// prints as pg_query deparses it.

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/syscat"
	"github.com/tupled/tupled/sql/types"
)

// checkConstraintDef is pg_get_constraintdef of check d of table t.
func checkConstraintDef(t *catalog.Table, d catalog.CheckDef, pretty bool) string {
	out := "CHECK (" + strings.TrimSuffix(strings.TrimPrefix(d.Expr, "SELECT "), ";") + ")"
	if n, err := checkNode(d); err == nil {
		w := &ruleWriter{t: t, pretty: pretty}
		out = "CHECK (" + w.expr(n).s + ")"
	}
	if d.NotValid {
		out += " NOT VALID"
	}
	return out
}

type ruleWriter struct {
	t      *catalog.Table
	pretty bool
}

// printed is a printed expression and what ruleutils needs to know of it.
type printed struct {
	s      string
	class  byte // 's' simple (column, constant, function, cast), 'o' operator, 'b' boolean, 'n' null test / ANY
	op     string
	boolop pg.BoolExprType
	typ    types.Type
	col    *catalog.Column // a bare column of the table
	lit    *pg.A_Const
}

func (w *ruleWriter) paren(s string) string {
	if w.pretty {
		return s
	}
	return "(" + s + ")"
}

// arg prints child c under a parent of class pc (op / boolop its
// operator), parenthesised in pretty mode unless isSimpleNode says not.
func (w *ruleWriter) arg(c printed, pc byte, pop string, pbool pg.BoolExprType, first bool) string {
	if !w.pretty || w.simple(c, pc, pop, pbool, first) {
		return c.s
	}
	return "(" + c.s + ")"
}

func (w *ruleWriter) simple(c printed, pc byte, pop string, pbool pg.BoolExprType, first bool) bool {
	switch c.class {
	case 's':
		return true
	case 'o':
		if pc == 'o' {
			lo, hi := strings.Contains("+-", c.op) && len(c.op) == 1, strings.Contains("*/%", c.op) && len(c.op) == 1
			plo, phi := strings.Contains("+-", pop) && len(pop) == 1, strings.Contains("*/%", pop) && len(pop) == 1
			switch {
			case !(lo || hi) || !(plo || phi):
				return false
			case hi && plo:
				return true
			case lo && phi:
				return false
			}
			return first
		}
		return pc == 'b'
	case 'n':
		return pc == 'b'
	case 'b':
		if pc != 'b' {
			return false
		}
		switch c.boolop {
		case pg.BoolExprType_NOT_EXPR, pg.BoolExprType_AND_EXPR:
			return pbool == pg.BoolExprType_AND_EXPR || pbool == pg.BoolExprType_OR_EXPR
		case pg.BoolExprType_OR_EXPR:
			return pbool == pg.BoolExprType_OR_EXPR
		}
	}
	return false
}

// typeOf is n's type as the compiler sees it (TUnknown if it cannot say).
func (w *ruleWriter) typeOf(n *pg.Node) types.Type {
	x, err := (&compiler{cols: w.t.Cols, rel: w.t.Name}).compile(n, types.TUnknown)
	if err != nil {
		return types.TUnknown
	}
	return x.typ()
}

func (w *ruleWriter) fallback(n *pg.Node) printed {
	s, err := deparseExpr(n)
	if err != nil {
		return printed{s: "?", class: 's'}
	}
	return printed{s: "(" + strings.TrimSuffix(strings.TrimPrefix(s, "SELECT "), ";") + ")", class: 's', typ: w.typeOf(n)}
}

// typeLabel is format_type of a column's type or of t.
func typeLabel(t types.Type, c *catalog.Column) string {
	if c != nil {
		ti := syscat.ColumnType(*c)
		if e := types.EnumOf(c.Type); e != nil {
			return eval.QuoteIdent(e.Name)
		}
		if c.Type == types.TText && c.Mod().Varchar {
			return "character varying"
		}
		return ti.DataType
	}
	if e := types.EnumOf(t); e != nil {
		return eval.QuoteIdent(e.Name)
	}
	return syscat.ColumnType(catalog.Column{Type: t}).DataType
}

// constant prints literal k as a value of type t (col: of that column).
func (w *ruleWriter) constant(k *pg.A_Const, t types.Type, col *catalog.Column) printed {
	if k.Isnull {
		return printed{s: "NULL", class: 's', typ: t}
	}
	switch v := k.Val.(type) {
	case *pg.A_Const_Ival:
		s := strconv.Itoa(int(v.Ival.Ival))
		if v.Ival.Ival < 0 {
			s = "'" + s + "'::integer"
		}
		return printed{s: s, class: 's', typ: types.TInt4, lit: k}
	case *pg.A_Const_Fval:
		s := v.Fval.Fval
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return printed{s: "'" + s + "'::bigint", class: 's', typ: types.TInt8, lit: k}
		}
		if strings.HasPrefix(s, "-") {
			s = "'" + s + "'::numeric"
		}
		return printed{s: s, class: 's', typ: types.TNumeric, lit: k}
	case *pg.A_Const_Boolval:
		return printed{s: strconv.FormatBool(v.Boolval.Boolval), class: 's', typ: types.TBool, lit: k}
	case *pg.A_Const_Sval:
		if t == types.TUnknown {
			t = types.TText
		}
		txt := v.Sval.Sval
		if t != types.TText && t != types.TBpchar {
			if cv, err := types.Cast(types.Unknown(txt), t); err == nil {
				txt = cv.String()
			}
		}
		label := typeLabel(t, col)
		if t == types.TBpchar {
			label = "bpchar"
		}
		if col != nil && col.Type == types.TText && col.Mod().Varchar {
			label = "text" // varchar = unknown resolves to text = text
		}
		if (t == types.TInt4 && (col == nil || !col.Int2)) || t == types.TInt8 || t == types.TNumeric {
			if _, err := strconv.ParseFloat(txt, 64); err == nil && !strings.HasPrefix(txt, "-") {
				if t == types.TInt4 {
					return printed{s: txt, class: 's', typ: t, lit: k}
				}
			}
		}
		if t == types.TBool {
			return printed{s: txt, class: 's', typ: t, lit: k}
		}
		return printed{s: eval.QuoteLiteral(txt) + "::" + label, class: 's', typ: t, lit: k}
	}
	return printed{s: "?", class: 's'}
}

// cast prints p cast to a type named label.
func (w *ruleWriter) cast(p printed, label string, t types.Type) printed {
	s := p.s
	if !w.pretty || p.class != 's' {
		s = "(" + s + ")"
	}
	return printed{s: s + "::" + label, class: 's', typ: t}
}

// operands prints the two sides of a binary operator, giving an untyped
// literal the other side's type and adding the implicit casts.
func (w *ruleWriter) operands(l, r *pg.Node) (printed, printed) {
	lp, rp := w.expr(l), w.expr(r)
	relit := func(p printed, other printed) printed {
		if p.lit != nil {
			if _, ok := p.lit.Val.(*pg.A_Const_Sval); ok {
				return w.constant(p.lit, other.typ, other.col)
			}
		}
		return p
	}
	lp, rp = relit(lp, rp), relit(rp, lp)
	castSide := func(p, other printed) printed {
		switch {
		case p.col != nil && p.col.Type == types.TText && p.col.Mod().Varchar && other.typ == types.TText && !(other.col != nil && other.col.Mod().Varchar):
			return w.cast(p, "text", types.TText)
		case (p.typ == types.TInt4 || p.typ == types.TInt8) && other.typ == types.TNumeric:
			return w.cast(p, "numeric", types.TNumeric)
		}
		return p
	}
	return castSide(lp, rp), castSide(rp, lp)
}

func (w *ruleWriter) binary(op string, l, r printed) printed {
	s := w.arg(l, 'o', op, 0, true) + " " + op + " " + w.arg(r, 'o', op, 0, false)
	t := types.TBool
	if strings.Contains("+-*/%", op) {
		t = l.typ
	}
	return printed{s: w.paren(s), class: 'o', op: op, typ: t}
}

func (w *ruleWriter) boolean(op pg.BoolExprType, args []printed) printed {
	if op == pg.BoolExprType_NOT_EXPR {
		return printed{s: w.paren("NOT " + w.arg(args[0], 'b', "", op, true)), class: 'b', boolop: op, typ: types.TBool}
	}
	word := map[pg.BoolExprType]string{pg.BoolExprType_AND_EXPR: " AND ", pg.BoolExprType_OR_EXPR: " OR "}[op]
	var parts []string
	for i, a := range args {
		parts = append(parts, w.arg(a, 'b', "", op, i == 0))
	}
	return printed{s: w.paren(strings.Join(parts, word)), class: 'b', boolop: op, typ: types.TBool}
}

func (w *ruleWriter) expr(n *pg.Node) printed {
	switch {
	case n.GetColumnRef() != nil:
		f := strs(n.GetColumnRef().Fields)
		i := w.t.Col(f[len(f)-1])
		if len(f) != 1 || i < 0 {
			return w.fallback(n)
		}
		c := w.t.Cols[i]
		return printed{s: eval.QuoteIdent(c.Name), class: 's', typ: c.Type, col: &c}
	case n.GetAConst() != nil:
		return w.constant(n.GetAConst(), types.TUnknown, nil)
	case n.GetBoolExpr() != nil:
		b := n.GetBoolExpr()
		var args []printed
		for _, a := range b.Args {
			args = append(args, w.expr(a))
		}
		return w.boolean(b.Boolop, args)
	case n.GetNullTest() != nil:
		nt := n.GetNullTest()
		a := w.expr(nt.Arg)
		what := " IS NULL"
		if nt.Nulltesttype == pg.NullTestType_IS_NOT_NULL {
			what = " IS NOT NULL"
		}
		return printed{s: w.paren(w.arg(a, 'n', "", 0, true) + what), class: 'n', typ: types.TBool}
	case n.GetFuncCall() != nil:
		f := n.GetFuncCall()
		names := strs(f.Funcname)
		if len(names) != 1 || f.AggStar || f.Over != nil || len(f.AggOrder) > 0 {
			return w.fallback(n)
		}
		var args []string
		for _, a := range f.Args {
			args = append(args, w.expr(a).s)
		}
		return printed{s: eval.QuoteIdent(names[0]) + "(" + strings.Join(args, ", ") + ")", class: 's', typ: w.typeOf(n)}
	case n.GetAExpr() != nil:
		return w.aExpr(n, n.GetAExpr())
	}
	return w.fallback(n)
}

func (w *ruleWriter) aExpr(n *pg.Node, a *pg.A_Expr) printed {
	names := strs(a.Name)
	if len(names) != 1 {
		return w.fallback(n)
	}
	op := names[0]
	switch a.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if a.Lexpr == nil {
			return w.fallback(n)
		}
		l, r := w.operands(a.Lexpr, a.Rexpr)
		return w.binary(op, l, r)
	case pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		l, r := w.operands(a.Lexpr, a.Rexpr)
		m := map[string]string{"~~": "~~", "!~~": "!~~", "~~*": "~~*", "!~~*": "!~~*"}[op]
		if m == "" {
			return w.fallback(n)
		}
		return w.binary(m, l, r)
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		items := a.Rexpr.GetList().GetItems()
		if len(items) != 2 {
			return w.fallback(n)
		}
		l1, lo := w.operands(a.Lexpr, items[0])
		l2, hi := w.operands(a.Lexpr, items[1])
		if a.Kind == pg.A_Expr_Kind_AEXPR_BETWEEN {
			return w.boolean(pg.BoolExprType_AND_EXPR, []printed{w.binary(">=", l1, lo), w.binary("<=", l2, hi)})
		}
		return w.boolean(pg.BoolExprType_OR_EXPR, []printed{w.binary("<", l1, lo), w.binary(">", l2, hi)})
	case pg.A_Expr_Kind_AEXPR_IN:
		items := a.Rexpr.GetList().GetItems()
		if len(items) == 0 {
			return w.fallback(n)
		}
		var l printed
		var elems []string
		for _, it := range items {
			var e printed
			l, e = w.operands(a.Lexpr, it)
			elems = append(elems, e.s)
		}
		quant := "ANY"
		if op == "<>" {
			quant = "ALL"
		}
		s := w.arg(l, 'n', "", 0, true) + " " + op + " " + quant + " (ARRAY[" + strings.Join(elems, ", ") + "])"
		return printed{s: w.paren(s), class: 'n', typ: types.TBool}
	}
	return w.fallback(n)
}
