package sqlfe

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// compiler turns parse-tree expressions into typed exprs. params holds the
// statement's parameter types; a parameter without a type gets the one its
// context wants.
type compiler struct {
	params *[]types.Type
	cols   []catalog.Column // the row in scope (nil: no FROM)
	rel    string           // its name (or alias)
	// excluded: EXCLUDED.col names the row an INSERT … ON CONFLICT DO
	// UPDATE proposed, which follows cols in the row evaluated (upsert.go)
	excluded bool
	// scope: the FROM items of the general query path (query.go), in
	// place of cols and rel; agg: compiling above an aggregation (agg.go);
	// clause: where an aggregate call is not allowed ("WHERE", ...: its
	// 42803 message), "" where it is or where it is not recognised
	scope  *scope
	agg    *aggCtx
	clause string
	s      *Session // plans subqueries (nil: a subquery is not supported here)
	// outer compiles the enclosing query's names for a subquery's
	// compilers (a correlated subquery); nil at the top. fromLateral: this
	// compiler is the FROM items to the left of a LATERAL item (lateral.go)
	outer       *compiler
	fromLateral bool
	// win collects window calls where they are allowed (the select list,
	// ORDER BY: window.go)
	win *winCtx
	// srf collects set-returning calls where they are allowed (the select
	// list: srf.go)
	srf *srfCtx
	// wholeRow: a FROM item's name is its whole row, as the argument of
	// the JSON functions that take one (row_to_json, to_json[b],
	// json[b]_agg: jsonfuncs.go); tupled has no other composite values
	wholeRow bool
}

func (c *compiler) param(n int) *paramExpr {
	for len(*c.params) < n {
		*c.params = append(*c.params, types.TUnknown)
	}
	return &paramExpr{n: n - 1, types: c.params}
}

// coerce makes x of type want when x is untyped (a literal or a parameter
// without a type); typed exprs are returned unchanged.
func (c *compiler) coerce(x expr, want types.Type) (expr, error) {
	if want == types.TUnknown || x.typ() != types.TUnknown {
		return x, nil
	}
	switch y := x.(type) {
	case *paramExpr:
		(*c.params)[y.n] = want
		return y, nil
	case *constExpr:
		v, err := types.Cast(y.v, want)
		if err != nil {
			return nil, err
		}
		return &constExpr{v}, nil
	}
	return &castExpr{arg: x, t: want}, nil
}

func (c *compiler) compile(n *pg.Node, want types.Type) (expr, error) {
	x, err := c.compile1(n, want)
	if err != nil {
		return nil, err
	}
	return c.coerce(x, want)
}

// nodeKind is the parse node's type name (GroupingSet, RowExpr,
// CreateEnumStmt): for lookups, never for a message.
func nodeKind(n *pg.Node) string {
	if n == nil {
		return ""
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", n.Node), "*pg_query.Node_")
}

// nodeSQL names in SQL words the construct of parse nodes of each kind
// a message may meet; nodeName falls back to the kind's words.
var nodeSQL = map[string]string{
	"GroupingSet": "GROUP BY ROLLUP, CUBE or GROUPING SETS", "GroupingFunc": "GROUPING()",
	"RowExpr": "a row constructor (ROW(...) or (a, b, ...))", "RangeTableSample": "TABLESAMPLE",
	"RangeTableFunc": "XMLTABLE", "XmlExpr": "an XML expression", "XmlSerialize": "XMLSERIALIZE",
	"CollateClause": "COLLATE", "MultiAssignRef": "a multiple-column assignment",
	"CurrentOfExpr": "WHERE CURRENT OF", "SetToDefault": "DEFAULT in this place",
	"MinMaxExpr": "GREATEST or LEAST", "BooleanTest": "IS [NOT] TRUE/FALSE/UNKNOWN",
	"ParamRef": "a parameter in this place", "TableLikeClause": "LIKE in CREATE TABLE",
	"RangeFunction": "a function in FROM", "RangeSubselect": "a subquery in FROM",
	"JsonObjectConstructor": "JSON_OBJECT", "JsonArrayConstructor": "JSON_ARRAY",
	"CreateEnumStmt": "CREATE TYPE ... AS ENUM", "CompositeTypeStmt": "CREATE TYPE ... AS",
	"CreateRangeStmt": "CREATE TYPE ... AS RANGE", "CreateDomainStmt": "CREATE DOMAIN",
	"DefineStmt": "CREATE AGGREGATE, OPERATOR or TYPE", "CreateTrigStmt": "CREATE TRIGGER",
	"RuleStmt": "CREATE RULE", "CreatePolicyStmt": "CREATE POLICY", "AlterOwnerStmt": "ALTER ... OWNER TO",
	"AlterObjectSchemaStmt": "ALTER ... SET SCHEMA", "AlterEnumStmt": "ALTER TYPE",
	"CreateStatsStmt": "CREATE STATISTICS", "CreatePublicationStmt": "CREATE PUBLICATION",
	"CreateSubscriptionStmt": "CREATE SUBSCRIPTION", "SecLabelStmt": "SECURITY LABEL",
	"AlterDefaultPrivilegesStmt": "ALTER DEFAULT PRIVILEGES", "GrantRoleStmt": "GRANT (a role)",
	"ClusterStmt": "CLUSTER", "RefreshMatViewStmt": "REFRESH MATERIALIZED VIEW", "LoadStmt": "LOAD",
	"CreateTableSpaceStmt": "CREATE TABLESPACE", "AlterSystemStmt": "ALTER SYSTEM",
	"CreateCastStmt": "CREATE CAST", "CreateOpClassStmt": "CREATE OPERATOR CLASS",
	"CreateConversionStmt": "CREATE CONVERSION", "CreateTransformStmt": "CREATE TRANSFORM",
	"CreateEventTrigStmt": "CREATE EVENT TRIGGER", "CreatePLangStmt": "CREATE LANGUAGE",
	"CreateFdwStmt": "CREATE FOREIGN DATA WRAPPER", "CreateForeignServerStmt": "CREATE SERVER",
	"CreateForeignTableStmt": "CREATE FOREIGN TABLE", "CreateUserMappingStmt": "CREATE USER MAPPING",
	"ImportForeignSchemaStmt": "IMPORT FOREIGN SCHEMA", "AlterRoleStmt": "ALTER ROLE",
	"DropRoleStmt": "DROP ROLE", "DropOwnedStmt": "DROP OWNED", "ReassignOwnedStmt": "REASSIGN OWNED",
	"AlterDatabaseStmt": "ALTER DATABASE", "AlterDatabaseSetStmt": "ALTER DATABASE ... SET",
	"DropdbStmt": "DROP DATABASE", "AlterFunctionStmt": "ALTER FUNCTION", "ConstraintsSetStmt": "SET CONSTRAINTS",
	"AlterTSDictionaryStmt": "ALTER TEXT SEARCH DICTIONARY", "AlterTSConfigurationStmt": "ALTER TEXT SEARCH CONFIGURATION",
	"CreateAmStmt": "CREATE ACCESS METHOD", "AlterCollationStmt": "ALTER COLLATION",
	"AlterExtensionStmt": "ALTER EXTENSION", "AlterSeqStmt": "ALTER SEQUENCE",
}

// nodeName is the construct of n in SQL words for a message ("an
// unsupported construct says so in SQL words, never a parser node name"):
// nodeSQL's, else a statement's kind spelled as its command (AlterDomainStmt
// is ALTER DOMAIN), else the kind's words in lower case.
func nodeName(n *pg.Node) string {
	if n == nil {
		return "an empty expression"
	}
	k := nodeKind(n)
	if w, ok := nodeSQL[k]; ok {
		return w
	}
	stmt := strings.HasSuffix(k, "Stmt")
	var words []string
	start := 0
	base := strings.TrimSuffix(k, "Stmt")
	for i := 1; i <= len(base); i++ {
		if i == len(base) || base[i] >= 'A' && base[i] <= 'Z' {
			words = append(words, base[start:i])
			start = i
		}
	}
	if stmt {
		return strings.ToUpper(strings.Join(words, " "))
	}
	return strings.ToLower(strings.Join(words, " "))
}

func strs(ns []*pg.Node) []string {
	var out []string
	for _, n := range ns {
		if s := n.GetString_(); s != nil {
			out = append(out, s.Sval)
		} else if n.GetAStar() != nil {
			out = append(out, "*")
		}
	}
	return out
}

func (c *compiler) compile1(n *pg.Node, want types.Type) (expr, error) {
	if fc := n.GetFuncCall(); fc != nil && fc.Over != nil {
		return c.windowCall(fc) // window.go
	}
	if fc := n.GetFuncCall(); fc != nil {
		if _, _, ok := srfOf(fc); ok {
			return c.srfCall(fc) // srf.go
		}
	} else if c.srf != nil {
		if err := c.srfConditional(n); err != nil {
			return nil, err
		}
	}
	if c.agg != nil {
		if x, ok, err := c.agg.lookup(c, n); ok || err != nil {
			return x, err
		}
	} else if c.clause == "aggregate function calls" && (isAggCall(n) || n.GetGroupingFunc() != nil) {
		return nil, pgerror.Errorf(pgerror.CodeGrouping, "aggregate function calls cannot be nested").At(nodeLocation(n))
	} else if c.clause != "" && isAggCall(n) {
		return nil, pgerror.Errorf(pgerror.CodeGrouping, "aggregate functions are not allowed in %s", c.clause).At(n.GetFuncCall().Location)
	} else if gf := n.GetGroupingFunc(); gf != nil {
		if c.clause != "" {
			return nil, pgerror.Errorf(pgerror.CodeGrouping, "grouping operations are not allowed in %s", c.clause).At(gf.Location)
		}
		return nil, pgerror.Errorf(pgerror.CodeGrouping, "arguments to GROUPING must be grouping expressions of the associated query level").At(gf.Location)
	}
	if x, ok, err := c.catalogExpr(n); ok { // catfuncs.go: reg* casts, ANY (array), subscripts, ARRAY (subquery)
		return x, err
	}
	switch {
	case n.GetAConst() != nil:
		k := n.GetAConst()
		if k.Isnull {
			return &constExpr{types.Null(types.TUnknown)}, nil
		}
		switch v := k.Val.(type) {
		case *pg.A_Const_Ival:
			return &constExpr{types.Int4(v.Ival.Ival)}, nil
		case *pg.A_Const_Fval:
			// an integer beyond int4 (or a negated constant: the grammar
			// folds -2147483648 into one): int4 if it fits, as
			// PostgreSQL's make_const does, else int8
			i, err := strconv.ParseInt(v.Fval.Fval, 10, 64)
			if err != nil {
				// a decimal or an integer beyond bigint: numeric
				d, err := types.ParseNumeric(v.Fval.Fval)
				if err != nil {
					return nil, ToError(err).At(k.Location)
				}
				return &constExpr{d.Value()}, nil
			}
			if i >= math.MinInt32 && i <= math.MaxInt32 {
				return &constExpr{types.Int4(int32(i))}, nil
			}
			return &constExpr{types.Int8(i)}, nil
		case *pg.A_Const_Boolval:
			return &constExpr{types.Bool(v.Boolval.Boolval)}, nil
		case *pg.A_Const_Sval:
			return &constExpr{types.Unknown(v.Sval.Sval)}, nil
		}
		return nil, pgerror.NotSupported("bit-string literals are not supported").At(k.Location)
	case n.GetColumnRef() != nil:
		x, err := c.column(n.GetColumnRef())
		if err != nil {
			if r, ok := c.wholeRowRef(n.GetColumnRef()); ok { // jsonfuncs.go
				if c.wholeRow {
					return r, nil
				}
				return nil, pgerror.NotSupported("a whole-row reference is supported only as the argument of row_to_json, to_json, to_jsonb, json_agg and jsonb_agg").At(n.GetColumnRef().Location)
			}
		}
		return x, err
	case n.GetParamRef() != nil:
		p := n.GetParamRef()
		if p.Number < 1 || p.Number > 65535 {
			return nil, pgerror.Errorf(pgerror.CodeUndefinedParameter, "there is no parameter $%d", p.Number).At(p.Location)
		}
		return c.param(int(p.Number)), nil
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		t, m, err := c.typeOfMod(tc.TypeName)
		if err != nil {
			return nil, err
		}
		want := t
		if m.Int2 || t == types.TInterval && m.Prec > 0 {
			// '40000'::smallint names the text in its error; '5'::interval
			// hour reads the literal in hours (interval_in's typmod)
			want = types.TUnknown
		}
		arg, err := c.compile(tc.Arg, want)
		if err != nil {
			if ac := tc.Arg.GetAConst(); ac != nil {
				return nil, ToError(err).At(ac.Location) // the input function failed on the literal
			}
			return nil, err
		}
		if arg.typ() == types.TUnknown && want == types.TUnknown {
			if _, ok := arg.(*paramExpr); ok {
				if arg, err = c.coerce(arg, t); err != nil {
					return nil, err
				}
			}
		}
		var am types.Mod
		if me, ok := arg.(*modExpr); ok {
			am = me.m
		}
		if !types.CanCast(arg.typ(), am, t, m) {
			return nil, pgerror.Errorf(pgerror.CodeCannotCoerce, "cannot cast type %s to %s", am.Name(arg.typ()), m.Name(t)).At(tc.Location)
		}
		var x expr
		switch {
		case m != (types.Mod{}):
			x = &modExpr{arg: arg, t: t, m: m, explicit: true}
		case arg.typ() == t && exprMod(arg) != (types.Mod{}):
			// smallint::int, varchar::text: the value stays, its type
			// as clients see it changes
			x = &modExpr{arg: arg, t: t, m: m, explicit: true}
		case arg.typ() == t:
			return arg, nil
		default:
			x = &castExpr{arg: arg, t: t}
		}
		if k, ok := arg.(*constExpr); ok {
			v, err := x.eval(&env{})
			if err != nil {
				e := ToError(err)
				if ac := tc.Arg.GetAConst(); ac != nil && k.v.T == types.TUnknown {
					e = e.At(ac.Location) // the input function failed on the literal
				}
				return nil, e
			}
			if (t == types.TBpchar && m.MaxLen > 0) || m.Int2 || m.Varchar || m.Prec > 0 {
				// folded, but keeping the type a RowDescription reports
				// (and smallint arithmetic needs)
				return &modExpr{arg: &constExpr{v}, t: t, m: m, explicit: true}, nil
			}
			return &constExpr{v}, nil
		}
		return x, nil
	case n.GetBoolExpr() != nil:
		b := n.GetBoolExpr()
		out := &boolExpr{op: b.Boolop}
		for _, a := range b.Args {
			x, err := c.compile(a, types.TBool)
			if err != nil {
				return nil, err
			}
			if x.typ() != types.TBool {
				return nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "argument of %s must be type boolean, not type %s", boolOpName(b.Boolop), x.typ()).At(b.Location)
			}
			out.args = append(out.args, x)
		}
		return out, nil
	case n.GetNullTest() != nil:
		nt := n.GetNullTest()
		arg, err := c.compile(nt.Arg, types.TUnknown)
		if err != nil {
			return nil, err
		}
		return &nullTestExpr{not: nt.Nulltesttype == pg.NullTestType_IS_NOT_NULL, arg: arg}, nil
	case n.GetAExpr() != nil:
		return c.aexpr(n.GetAExpr())
	case n.GetFuncCall() != nil:
		return c.funcCall(n.GetFuncCall())
	case n.GetCaseExpr() != nil:
		return c.caseExpr(n.GetCaseExpr()) // conditional.go
	case n.GetCoalesceExpr() != nil:
		xs, t, err := c.variadic(n.GetCoalesceExpr().Args, "COALESCE")
		if err != nil {
			return nil, err
		}
		return &coalesceExpr{args: xs, t: t}, nil
	case n.GetMinMaxExpr() != nil:
		m := n.GetMinMaxExpr()
		name := "GREATEST"
		if m.Op == pg.MinMaxOp_IS_LEAST {
			name = "LEAST"
		}
		xs, t, err := c.variadic(m.Args, name)
		if err != nil {
			return nil, err
		}
		if t == types.TInt4Array {
			return nil, pgerror.NotSupported("%s of arrays is not supported", name)
		}
		return &minMaxExpr{least: m.Op == pg.MinMaxOp_IS_LEAST, args: xs, t: t}, nil
	case n.GetSqlvalueFunction() != nil:
		return c.sqlValueFunction(n.GetSqlvalueFunction())
	case n.GetCollateClause() != nil:
		cc := n.GetCollateClause()
		switch name := strings.Join(strs(cc.Collname), "."); name {
		case "C", "POSIX", "default", "pg_catalog.C", "pg_catalog.POSIX", "pg_catalog.default", "ucs_basic":
			// text compares by its bytes here: C's order
			x, err := c.compile(cc.Arg, want)
			if err != nil {
				return nil, err
			}
			if !types.IsString(x.typ()) && x.typ() != types.TUnknown {
				return nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "collations are not supported by type %s", x.typ()).At(cc.Location)
			}
			return x, nil
		default:
			return nil, pgerror.Errorf(pgerror.CodeUndefinedObject, "collation %q for encoding \"UTF8\" does not exist", name).At(cc.Location)
		}
	case n.GetSubLink() != nil:
		return c.subLink(n.GetSubLink())
	case n.GetAArrayExpr() != nil:
		return c.arrayExpr(n.GetAArrayExpr(), want)
	case n.GetBooleanTest() != nil:
		bt := n.GetBooleanTest()
		x, err := c.compile(bt.Arg, types.TBool)
		if err != nil {
			return nil, err
		}
		if x.typ() != types.TBool {
			return nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "argument of IS TRUE must be type boolean, not type %s", x.typ()).At(bt.Location)
		}
		return &booleanTest{arg: x, test: bt.Booltesttype}, nil // strfuncs.go
	}
	return nil, pgerror.NotSupported("%s is not supported", nodeName(n))
}

func boolOpName(op pg.BoolExprType) string {
	switch op {
	case pg.BoolExprType_AND_EXPR:
		return "AND"
	case pg.BoolExprType_OR_EXPR:
		return "OR"
	}
	return "NOT"
}

// column compiles a column reference: a column of the row in scope, or,
// in a subquery, one of an enclosing query's (an outerExpr).
func (c *compiler) column(cr *pg.ColumnRef) (expr, error) {
	x, err := c.column1(cr)
	if err == nil || c.outer == nil {
		return x, err
	}
	var fe *pgerror.Error
	if !errors.As(err, &fe) || (fe.Code != pgerror.CodeUndefinedColumn && fe.Code != pgerror.CodeUndefinedTable) {
		return x, err
	}
	ox, oerr := c.outer.compile1(&pg.Node{Node: &pg.Node_ColumnRef{ColumnRef: cr}}, types.TUnknown)
	if oerr != nil {
		var oe *pgerror.Error
		if errors.As(oerr, &oe) && (oe.Code == pgerror.CodeUndefinedColumn || oe.Code == pgerror.CodeUndefinedTable) {
			return nil, err // not a name of the outer query either: the inner error
		}
		return nil, oerr
	}
	if c.s != nil {
		c.s.outerRefs++
	}
	return &outerExpr{x: ox}, nil
}

func (c *compiler) column1(cr *pg.ColumnRef) (expr, error) {
	f := strs(cr.Fields)
	if len(f) == 0 || f[len(f)-1] == "*" {
		return nil, pgerror.NotSupported("* is only supported as a whole select list item").At(cr.Location)
	}
	name := f[len(f)-1]
	if len(f) > 2 {
		return nil, pgerror.NotSupported("qualified column reference %s is not supported", strings.Join(f, ".")).At(cr.Location)
	}
	if c.scope != nil {
		return c.scope.resolve(f, cr.Location)
	}
	if len(f) == 2 && c.excluded && f[0] == "excluded" {
		if x, ok := c.excludedColumn(name); ok {
			return x, nil
		}
		return nil, pgerror.Errorf(pgerror.CodeUndefinedColumn, "column excluded.%s does not exist", name).At(cr.Location)
	}
	if len(f) == 2 && (c.cols == nil || f[0] != c.rel) {
		return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "missing FROM-clause entry for table %q", f[0]).At(cr.Location)
	}
	for i, col := range c.cols {
		if col.Name == name && !col.Hidden {
			return &colExpr{idx: i, t: col.Type, m: col.Mod()}, nil
		}
	}
	return nil, pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %q does not exist", name).At(cr.Location)
}

// untyped reports whether n is a quoted literal or NULL without a cast: its
// type, unknown, is for the operator around it to decide.
func untyped(n *pg.Node) bool {
	k := n.GetAConst()
	if k == nil {
		return false
	}
	_, ok := k.Val.(*pg.A_Const_Sval)
	return ok || k.Isnull
}

// operands compiles the operands of the binary operator op. An untyped
// literal mostly takes the other side's type (binary), which is what
// PostgreSQL's operator resolution picks when an operator takes that type
// on both sides. For arithmetic it does not always: no timestamp + timestamp
// exists, so beside a timestamp, timestamptz, time or interval the literal
// of a + is an interval ('1 day'); beside a date several operators fit
// (date + integer, + interval, + time) and PostgreSQL will not choose
// (42725), nor between two untyped literals.
func (c *compiler) operands(a *pg.A_Expr, op string) (expr, expr, error) {
	lu, ru := untyped(a.Lexpr), untyped(a.Rexpr)
	arith := op == "+" || op == "-" || op == "*" || op == "/" || op == "%"
	notUnique := func(lt, rt string) error {
		return &pgerror.Error{Code: pgerror.CodeAmbiguousFunction, Message: fmt.Sprintf("operator is not unique: %s %s %s", lt, op, rt),
			Hint: "Could not choose a best candidate operator. You might need to add explicit type casts.", Position: a.Location + 1}
	}
	switch {
	case arith && lu && ru:
		return nil, nil, notUnique("unknown", "unknown")
	case op == "+" && lu != ru:
		known, lit := a.Lexpr, a.Rexpr
		if lu {
			known, lit = a.Rexpr, a.Lexpr
		}
		x, err := c.compile1(known, types.TUnknown)
		if err != nil {
			return nil, nil, err
		}
		want := x.typ()
		switch want {
		case types.TTimestamp, types.TTimestamptz, types.TTime, types.TInterval:
			want = types.TInterval
		case types.TDate:
			if lu {
				return nil, nil, notUnique("unknown", "date")
			}
			return nil, nil, notUnique("date", "unknown")
		}
		y, err := c.compile(lit, want)
		if err != nil {
			return nil, nil, err
		}
		if lu {
			return y, x, nil
		}
		return x, y, nil
	}
	return c.binary(a.Lexpr, a.Rexpr)
}

// binary compiles l and r so that an untyped side takes the other's type.
func (c *compiler) binary(l, r *pg.Node) (expr, expr, error) {
	x, err := c.compile1(l, types.TUnknown)
	if err != nil {
		return nil, nil, err
	}
	y, err := c.compile(r, x.typ())
	if err != nil {
		return nil, nil, err
	}
	if x.typ() == types.TUnknown {
		want := y.typ()
		if want == types.TUnknown {
			want = types.TText
		}
		if x, err = c.coerce(x, want); err != nil {
			return nil, nil, err
		}
		if y, err = c.coerce(y, want); err != nil {
			return nil, nil, err
		}
	}
	// character(n) against text compares as text (PostgreSQL resolves to
	// text = text, text being the preferred type): the bpchar side loses
	// its trailing spaces
	if x.typ() == types.TBpchar && y.typ() == types.TText {
		x = &castExpr{arg: x, t: types.TText}
	} else if y.typ() == types.TBpchar && x.typ() == types.TText {
		y = &castExpr{arg: y, t: types.TText}
	}
	return x, y, nil
}

// concatExprs compiles l || r of compiled operands neither of which is an
// array (arrayOp, arrayfuncs.go, has those and calls this for the rest):
// text || text, or text with any non-array value (PostgreSQL's anynonarray
// || text and text || anynonarray), or bytea || bytea; an untyped side is
// text.
func (c *compiler) concatExprs(a *pg.A_Expr, l, r expr) (expr, error) {
	var err error
	// character(n) is never one of || 's anynonarray operands: it is cast
	// to text (losing its trailing spaces)
	if l.typ() == types.TBpchar {
		l = &castExpr{arg: l, t: types.TText}
	}
	if r.typ() == types.TBpchar {
		r = &castExpr{arg: r, t: types.TText}
	}
	if x, ok, err := c.byteaConcat(l, r); ok { // bytea.go
		return x, err
	}
	lt, rt := l.typ(), r.typ()
	bad := lt != types.TText && lt != types.TUnknown && rt != types.TText && rt != types.TUnknown
	if bad {
		return nil, &pgerror.Error{Code: pgerror.CodeUndefinedFunction, Message: fmt.Sprintf("operator does not exist: %s || %s", lt, rt),
			Hint: "No operator matches the given name and argument types. You might need to add explicit type casts.", Position: a.Location + 1}
	}
	if l, err = c.coerce(l, types.TText); err != nil {
		return nil, err
	}
	if r, err = c.coerce(r, types.TText); err != nil {
		return nil, err
	}
	return &concatExpr{l, r}, nil
}

func comparable(a, b types.Type) bool {
	return (a == b && a != types.TJSON) || ((types.IsNumber(a) || types.IsFloat(a)) && (types.IsNumber(b) || types.IsFloat(b))) || (types.IsDateTime(a) && types.IsDateTime(b))
}

func (c *compiler) aexpr(a *pg.A_Expr) (expr, error) {
	ops := strs(a.Name)
	op := ""
	if len(ops) > 0 {
		op = ops[len(ops)-1]
	}
	switch a.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if a.Lexpr == nil {
			if op != "-" && op != "+" {
				return nil, pgerror.NotSupported("prefix operator %s is not supported", op).At(a.Location)
			}
			x, err := c.compile(a.Rexpr, types.TInt4)
			if err != nil {
				return nil, err
			}
			if !types.IsNumber(x.typ()) && !types.IsFloat(x.typ()) && x.typ() != types.TInterval {
				return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %s", op, x.typ()).At(a.Location)
			}
			if op == "+" {
				return x, nil
			}
			if k, ok := x.(*constExpr); ok {
				v, err := eval.Negate(k.v)
				if err != nil {
					return nil, err
				}
				return &constExpr{v}, nil
			}
			return &negExpr{x}, nil
		}
		if a.Rexpr == nil {
			return nil, pgerror.NotSupported("postfix operator %s is not supported", op).At(a.Location)
		}
		if x, ok, err := c.arrayOp(a, op); ok {
			return x, err // arrayfuncs.go: every ||, and @>, <@, && of arrays
		}
		if x, ok, err := c.patternOp(a, op); ok {
			return x, err // conditional.go
		}
		if x, ok, err := c.jsonOp(a, op); ok {
			return x, err // json.go
		}
		if rowItems(a.Lexpr) != nil || rowItems(a.Rexpr) != nil {
			return c.rowCompare(a.Lexpr, a.Rexpr, op, a.Location) // rowcmp.go
		}
		l, r, err := c.operands(a, op)
		if err != nil {
			return nil, err
		}
		switch op {
		case "=", "<>", "!=", "<", "<=", ">", ">=":
			if op == "!=" {
				op = "<>"
			}
			if !comparable(l.typ(), r.typ()) {
				return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %s %s", l.typ(), op, r.typ()).At(a.Location)
			}
			return &cmpExpr{op: op, l: l, r: r}, nil
		case "^":
			if !eval.IsNumeric(l.typ()) || !eval.IsNumeric(r.typ()) {
				return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "operator does not exist: %s ^ %s", l.typ(), r.typ()).At(a.Location)
			}
			return powerExpr(l, r)
		case "+", "-", "*", "/", "%":
			if x, ok, err := dateOp(op, l, r); ok { // dateops.go
				return x, err
			}
			if x, ok, err := intervalOp(op, l, r); ok { // intervalops.go
				return x, err
			}
			if (types.IsFloat(l.typ()) || types.IsFloat(r.typ())) && (types.IsNumber(l.typ()) || types.IsFloat(l.typ())) && (types.IsNumber(r.typ()) || types.IsFloat(r.typ())) {
				if op == "%" {
					return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %% %s", l.typ(), r.typ()).At(a.Location)
				}
				return &arithExpr{op: op[0], l: l, r: r, t: types.FloatResult(l.typ(), r.typ())}, nil
			}
			if (l.typ() == types.TNumeric || r.typ() == types.TNumeric) && types.IsNumber(l.typ()) && types.IsNumber(r.typ()) {
				return &arithExpr{op: op[0], l: l, r: r, t: types.TNumeric}, nil
			}
			if !types.IsInt(l.typ()) || !types.IsInt(r.typ()) {
				return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %s %s", l.typ(), op, r.typ()).At(a.Location)
			}
			t := types.TInt4
			if l.typ() == types.TInt8 || r.typ() == types.TInt8 {
				t = types.TInt8
			}
			x := &arithExpr{op: op[0], l: l, r: r, t: t}
			if t == types.TInt4 && exprMod(l).Int2 && exprMod(r).Int2 {
				// smallint op smallint is smallint (PostgreSQL's int2pl and
				// kin): out of its range is 22003
				return &modExpr{arg: x, t: types.TInt4, m: types.Mod{Int2: true}}, nil
			}
			return x, nil
		}
		return nil, pgerror.NotSupported("operator %s is not supported", op).At(a.Location)
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		l, r, err := c.binary(a.Lexpr, a.Rexpr)
		if err != nil {
			return nil, err
		}
		if !comparable(l.typ(), r.typ()) {
			return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "operator does not exist: %s = %s", l.typ(), r.typ()).At(a.Location)
		}
		return &distinctExpr{not: a.Kind == pg.A_Expr_Kind_AEXPR_NOT_DISTINCT, l: l, r: r}, nil
	case pg.A_Expr_Kind_AEXPR_IN:
		if rowItems(a.Lexpr) != nil && a.Rexpr.GetList() != nil {
			return c.rowIn(a, a.Rexpr.GetList().Items, op == "<>") // rowcmp.go
		}
		l, err := c.compile1(a.Lexpr, types.TUnknown)
		if err != nil {
			return nil, err
		}
		list := a.Rexpr.GetList()
		if list == nil {
			return nil, pgerror.NotSupported("IN with a subquery is not supported").At(a.Location)
		}
		var items []expr
		t := l.typ()
		for _, it := range list.Items {
			x, err := c.compile(it, t)
			if err != nil {
				return nil, err
			}
			if t == types.TUnknown {
				t = x.typ()
			}
			items = append(items, x)
		}
		if t == types.TUnknown {
			t = types.TText
		}
		if l, err = c.coerce(l, t); err != nil {
			return nil, err
		}
		for i := range items {
			if items[i], err = c.coerce(items[i], t); err != nil {
				return nil, err
			}
			if !comparable(items[i].typ(), t) {
				return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "operator does not exist: %s = %s", t, items[i].typ()).At(a.Location)
			}
		}
		return &inExpr{not: op == "<>", l: l, list: items}, nil
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		list := a.Rexpr.GetList()
		if list == nil || len(list.Items) != 2 {
			return nil, pgerror.NotSupported("this form of BETWEEN is not supported").At(a.Location)
		}
		lo, err := c.aexpr(&pg.A_Expr{Kind: pg.A_Expr_Kind_AEXPR_OP, Name: []*pg.Node{pg.MakeStrNode(">=")}, Lexpr: a.Lexpr, Rexpr: list.Items[0], Location: a.Location})
		if err != nil {
			return nil, err
		}
		hi, err := c.aexpr(&pg.A_Expr{Kind: pg.A_Expr_Kind_AEXPR_OP, Name: []*pg.Node{pg.MakeStrNode("<=")}, Lexpr: a.Lexpr, Rexpr: list.Items[1], Location: a.Location})
		if err != nil {
			return nil, err
		}
		both := &boolExpr{op: pg.BoolExprType_AND_EXPR, args: []expr{lo, hi}}
		if a.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN {
			return &boolExpr{op: pg.BoolExprType_NOT_EXPR, args: []expr{both}}, nil
		}
		return both, nil
	case pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		if x, ok, err := c.patternOp(a, op); ok {
			return x, err
		}
	case pg.A_Expr_Kind_AEXPR_SIMILAR:
		return c.similarTo(a, op) // conditional.go
	case pg.A_Expr_Kind_AEXPR_NULLIF:
		l, r, err := c.binary(a.Lexpr, a.Rexpr)
		if err != nil {
			return nil, err
		}
		if !comparable(l.typ(), r.typ()) {
			return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "operator does not exist: %s = %s", l.typ(), r.typ()).At(a.Location)
		}
		if l.typ() == types.TUnknown {
			l = &castExpr{arg: l, t: types.TText}
		}
		return &nullifExpr{l: l, r: r}, nil
	}
	kinds := map[pg.A_Expr_Kind]string{
		pg.A_Expr_Kind_AEXPR_OP_ANY: "ANY", pg.A_Expr_Kind_AEXPR_OP_ALL: "ALL", pg.A_Expr_Kind_AEXPR_NULLIF: "NULLIF",
		pg.A_Expr_Kind_AEXPR_LIKE: "LIKE", pg.A_Expr_Kind_AEXPR_ILIKE: "ILIKE", pg.A_Expr_Kind_AEXPR_SIMILAR: "SIMILAR TO",
		pg.A_Expr_Kind_AEXPR_BETWEEN_SYM: "BETWEEN SYMMETRIC", pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM: "NOT BETWEEN SYMMETRIC",
	}
	name := kinds[a.Kind]
	if name == "" {
		name = a.Kind.String()
	}
	return nil, pgerror.NotSupported("%s is not supported", name).At(a.Location)
}

// typeOf maps a type name of the parse tree to a Type.
func typeOf(tn *pg.TypeName) (types.Type, error) {
	t, _, err := typeOfMod(tn)
	return t, err
}

var pgTypes = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(pgTypeNames) {
		m[n] = true
	}
	for _, n := range []string{"int", "integer", "smallint", "bigint", "boolean", "real", "decimal", "dec", "float", "character", "char"} {
		m[n] = true
	}
	return m
}()

// typeOfMod maps a type name of the parse tree to a Type and its modifier.
// A name PostgreSQL does not know is 42704; one it knows that tupled does
// not implement is 0A000. An enum type's name is resolved in types'
// registry (LookupEnum): where a session plans, s.typeOfMod resolves it
// in the catalog the session sees.
func typeOfMod(tn *pg.TypeName) (types.Type, types.Mod, error) {
	return typeOfModIn(tn, types.LookupEnum)
}

// typeOfMod is typeOfMod with enum types resolved as the session sees
// them.
func (s *Session) typeOfMod(tn *pg.TypeName) (types.Type, types.Mod, error) {
	return typeOfModIn(tn, s.lookupEnum)
}

// typeOfMod is the session's typeOfMod if the compiler has one.
func (c *compiler) typeOfMod(tn *pg.TypeName) (types.Type, types.Mod, error) {
	if c.s != nil {
		return c.s.typeOfMod(tn)
	}
	return typeOfMod(tn)
}

func typeOfModIn(tn *pg.TypeName, enum func(string) *types.Enum) (types.Type, types.Mod, error) {
	names := strs(tn.Names)
	name := ""
	if len(names) > 0 {
		name = names[len(names)-1]
	}
	undefined := func() (types.Type, types.Mod, error) {
		full := strings.Join(names, ".")
		if len(tn.ArrayBounds) > 0 {
			full += "[]"
		}
		return 0, types.Mod{}, pgerror.Errorf(pgerror.CodeUndefinedObject, "type %q does not exist", full).At(tn.Location)
	}
	if len(names) == 2 && names[0] == "public" || len(names) == 1 && !pgTypes[name] && !pgTypes[strings.TrimPrefix(name, "_")] {
		if e := enumOfName(names, enum); e != nil { // enum.go
			if len(tn.Typmods) > 0 {
				return 0, types.Mod{}, pgerror.Errorf(pgerror.CodeSyntax, "type modifier is not allowed for type %q", e.Name).At(tn.Location)
			}
			switch len(tn.ArrayBounds) {
			case 0:
				return e.Type, types.Mod{}, nil
			case 1:
				at, _ := types.ArrayOf(e.Type)
				return at, types.Mod{}, nil
			}
			return 0, types.Mod{}, pgerror.NotSupported("array type %s[] is not supported", e.Name).At(tn.Location)
		}
	}
	if len(names) > 2 || (len(names) == 2 && names[0] != "pg_catalog") {
		return undefined()
	}
	var t types.Type
	var m types.Mod
	switch name {
	case "int4", "integer", "int":
		t = types.TInt4
	case "int2", "smallint":
		t, m.Int2 = types.TInt4, true
	case "int8", "bigint":
		t = types.TInt8
	case "text", "name":
		t = types.TText
	case "varchar":
		t, m.Varchar = types.TText, true
	case "bpchar": // char(n), character(n); the grammar makes a bare char char(1)
		t = types.TBpchar
	case "bool", "boolean":
		t = types.TBool
	case "numeric": // also decimal, dec
		t = types.TNumeric
	case "timestamp": // timestamp without time zone
		t = types.TTimestamp
	case "timestamptz": // timestamp with time zone
		t = types.TTimestamptz
	case "date":
		t = types.TDate
	case "float8": // double precision, float, float(25..53)
		t = types.TFloat8
	case "float4": // real, float(1..24)
		t = types.TFloat4
	case "uuid":
		t = types.TUUID
	case "bytea":
		t = types.TBytea
	case "json":
		t = types.TJSON
	case "jsonb":
		t = types.TJSONB
	case "interval":
		t = types.TInterval
	case "time": // time without time zone
		t = types.TTime
	default:
		if !pgTypes[strings.TrimPrefix(name, "_")] {
			return undefined()
		}
		return 0, m, pgerror.NotSupported("type %s is not supported", name).At(tn.Location)
	}
	if len(tn.ArrayBounds) > 0 {
		// varchar[] is a text[] that clients see as varchar[] (OID 1015)
		at, ok := types.ArrayOf(t)
		if len(tn.ArrayBounds) > 1 || m.Int2 || t == types.TBpchar || len(tn.Typmods) > 0 || !ok {
			return 0, m, pgerror.NotSupported("array type %s[] is not supported", name).At(tn.Location)
		}
		t = at
	}
	if len(tn.Typmods) > 0 && name == "numeric" {
		return numericTypmods(tn, t, m)
	}
	if len(tn.Typmods) > 0 && name == "interval" && t == types.TInterval {
		return intervalTypmods(tn, t, m)
	}
	if len(tn.Typmods) > 0 {
		if (name != "varchar" && name != "bpchar") || len(tn.Typmods) != 1 {
			return 0, m, pgerror.NotSupported("type modifiers on %s are not supported", name).At(tn.Location)
		}
		k := tn.Typmods[0].GetAConst()
		iv, ok := k.GetVal().(*pg.A_Const_Ival)
		if !ok {
			return 0, m, pgerror.Errorf(pgerror.CodeSyntax, "type modifiers must be simple constants or identifiers").At(tn.Location)
		}
		n := iv.Ival.Ival
		short := name // PostgreSQL's anychar_typmodin names char, not bpchar
		if name == "bpchar" {
			short = "char"
		}
		switch {
		case n < 1:
			return 0, m, pgerror.Errorf(pgerror.CodeInvalidParamValue, "length for type %s must be at least 1", short).At(tn.Location)
		case n > types.MaxCharLength:
			return 0, m, pgerror.Errorf(pgerror.CodeInvalidParamValue, "length for type %s cannot exceed %d", short, types.MaxCharLength).At(tn.Location)
		}
		m.MaxLen = int(n)
	}
	return t, m, nil
}

// typmodInts is a type name's typmods, integer constants (42601 for
// anything else).
func typmodInts(tn *pg.TypeName) ([]int, error) {
	var vals []int
	for _, n := range tn.Typmods {
		iv, ok := n.GetAConst().GetVal().(*pg.A_Const_Ival)
		if !ok {
			return nil, pgerror.Errorf(pgerror.CodeSyntax, "type modifiers must be simple constants or identifiers").At(tn.Location)
		}
		vals = append(vals, int(iv.Ival.Ival))
	}
	return vals, nil
}

// intervalTypmods reads interval's typmods as the grammar makes them: a
// range of fields, then a precision (interval(3) is the full range's).
func intervalTypmods(tn *pg.TypeName, t types.Type, m types.Mod) (types.Type, types.Mod, error) {
	vals, err := typmodInts(tn)
	if err != nil {
		return 0, m, err
	}
	prec := -1
	switch len(vals) {
	case 1:
	case 2:
		prec = vals[1]
	default:
		return 0, m, pgerror.Errorf(pgerror.CodeInvalidParamValue, "invalid INTERVAL type modifier").At(tn.Location)
	}
	typmod, err := types.IntervalTypmod(vals[0], prec)
	if err != nil {
		return 0, m, ToError(err).At(tn.Location)
	}
	m.Prec = typmod
	return t, m, nil
}

// defaultName is the output column name PostgreSQL gives an expression.
func defaultName(n *pg.Node) string {
	switch {
	case n.GetColumnRef() != nil:
		f := strs(n.GetColumnRef().Fields)
		return f[len(f)-1]
	case n.GetFuncCall() != nil:
		f := strs(n.GetFuncCall().Funcname)
		return f[len(f)-1]
	case n.GetTypeCast() != nil:
		// PostgreSQL's FigureColname: the argument's name if it has a
		// strong one (a column, a function), else the type's
		tc := n.GetTypeCast()
		if d := defaultName(tc.Arg); d != "?column?" && tc.Arg.GetTypeCast() == nil && tc.Arg.GetCaseExpr() == nil {
			return d
		}
		names := strs(tc.TypeName.Names)
		t, m, err := typeOfMod(tc.TypeName)
		if err == nil {
			switch {
			case m.Int2:
				return "int2"
			case (m.MaxLen > 0 || m.Varchar) && t == types.TText:
				return "varchar"
			}
			switch t {
			case types.TBpchar:
				return "bpchar"
			case types.TInt4:
				return "int4"
			case types.TInt8:
				return "int8"
			case types.TBool:
				return "bool"
			}
		}
		return names[len(names)-1]
	case n.GetCaseExpr() != nil:
		return "case"
	case n.GetCoalesceExpr() != nil:
		return "coalesce"
	case n.GetMinMaxExpr() != nil:
		if n.GetMinMaxExpr().Op == pg.MinMaxOp_IS_LEAST {
			return "least"
		}
		return "greatest"
	case n.GetAExpr() != nil && n.GetAExpr().Kind == pg.A_Expr_Kind_AEXPR_NULLIF:
		return "nullif"
	case n.GetCollateClause() != nil:
		return defaultName(n.GetCollateClause().Arg)
	case n.GetSqlvalueFunction() != nil:
		return sqlValueFunctionNames[n.GetSqlvalueFunction().Op]
	case n.GetSubLink() != nil:
		sl := n.GetSubLink()
		switch sl.SubLinkType {
		case pg.SubLinkType_EXISTS_SUBLINK:
			return "exists"
		case pg.SubLinkType_ARRAY_SUBLINK:
			return "array"
		case pg.SubLinkType_EXPR_SUBLINK:
			if sel := sl.Subselect.GetSelectStmt(); sel != nil && len(sel.TargetList) == 1 {
				if rt := sel.TargetList[0].GetResTarget(); rt != nil {
					if rt.Name != "" {
						return rt.Name
					}
					return defaultName(rt.Val)
				}
			}
		}
	}
	return "?column?"
}

// numericTypmods reads numeric(p[, s]): 1 ≤ p ≤ 1000, -1000 ≤ s ≤ 1000
// (PostgreSQL 15's bounds; 22023 outside them).
func numericTypmods(tn *pg.TypeName, t types.Type, m types.Mod) (types.Type, types.Mod, error) {
	if len(tn.Typmods) > 2 {
		return 0, m, pgerror.Errorf(pgerror.CodeInvalidParamValue, "invalid NUMERIC type modifier").At(tn.Location)
	}
	vals, err := typmodInts(tn)
	if err != nil {
		return 0, m, err
	}
	m.Prec = vals[0]
	if len(vals) == 2 {
		m.Scale = vals[1]
	}
	if m.Prec < 1 || m.Prec > 1000 {
		return 0, m, pgerror.Errorf(pgerror.CodeInvalidParamValue, "NUMERIC precision %d must be between 1 and 1000", m.Prec).At(tn.Location)
	}
	if m.Scale < -1000 || m.Scale > 1000 {
		return 0, m, pgerror.Errorf(pgerror.CodeInvalidParamValue, "NUMERIC scale %d must be between -1000 and 1000", m.Scale).At(tn.Location)
	}
	return t, m, nil
}

// arrayExpr is ARRAY[e, ...]: an array of the elements' common type (text
// for literals alone, or the element type of a wanted array type), a
// bigint[] of integers when a bigint[] is wanted.
func (c *compiler) arrayExpr(a *pg.A_ArrayExpr, want types.Type) (expr, error) {
	elWant := types.ElemType(want)
	var els []expr
	for _, n := range a.Elements {
		x, err := c.compile(n, elWant)
		if err != nil {
			return nil, err
		}
		els = append(els, x)
	}
	if len(els) == 0 {
		if !types.IsArray(want) {
			return nil, pgerror.Errorf(pgerror.CodeIndeterminateType, "cannot determine type of empty array").At(a.Location).
				WithHint("Explicitly cast to the desired type, for example ARRAY[]::integer[].")
		}
		v, err := types.MakeArray(want, nil)
		return &constExpr{v}, err
	}
	et, err := c.commonType(els, "ARRAY")
	if err != nil {
		return nil, err
	}
	if et == types.TInt4 && want == types.TInt8Array {
		et = types.TInt8
	}
	t, ok := types.ArrayOf(et)
	if !ok {
		return nil, pgerror.NotSupported("arrays of %s are not supported", et).At(a.Location)
	}
	if els, err = c.coerceAll(els, types.ElemType(t)); err != nil {
		return nil, err
	}
	return &funcExpr{name: "array", t: t, args: els, fn: func(_ *env, vs []types.Value) (types.Value, error) {
		return types.MakeArray(t, vs)
	}}, nil
}
