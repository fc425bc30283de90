package sqlfe

// The functions and expression forms clients use on the system catalogs
// (package sql/syscat): format_type, pg_get_indexdef and its kin, the privilege
// and visibility tests, the reg* casts, = ANY (array), array subscripts and
// ARRAY (subquery).
//
// regclass (and regtype, regnamespace, regrole) is not a type here. A cast
// of a string to it is the OID the name resolves to (a bigint: 42P01 if
// there is no such relation), so 'books'::regclass compares with oid
// columns; a cast of an integer (an oid column) is the name, as a
// regclass value prints, so conrelid::regclass AS ontable reads as
// PostgreSQL's. ::oid of an integer is the integer as a bigint.

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/syscat"
	"github.com/tupled/tupled/sql/types"
)

var (
	nullText = types.Null(types.TText)
	nullOID  = types.Null(types.TInt8)
)

// tAny marks a catalog function argument of any type.
const tAny types.Type = 255

type catFn struct {
	args   []types.Type
	ret    types.Type
	strict bool // NULL if any argument is NULL
	fn     func(e *env, a []types.Value) (types.Value, error)
}

func catConst(ret types.Type, v types.Value, n ...int) []catFn {
	var out []catFn
	for _, k := range n {
		args := make([]types.Type, k)
		for i := range args {
			args[i] = tAny
		}
		out = append(out, catFn{args, ret, false, func(*env, []types.Value) (types.Value, error) { return v, nil }})
	}
	return out
}

var catFuncs map[string][]catFn

func init() {
	snap := func(e *env) *syscat.Snap { return e.s.catalogSnap() }
	T, I4, I8, B, A := types.TText, types.TInt4, types.TInt8, types.TBool, tAny
	indexdef := func(e *env, a []types.Value) (types.Value, error) {
		r := snap(e).ByOID[a[0].I]
		if r == nil || r.Kind != "i" {
			return nullText, nil
		}
		col := 0
		if len(a) > 1 && !a[1].Null {
			col = int(a[1].I)
		}
		return types.Text(snap(e).IndexDef(r, col, len(a) > 2 && a[2].I != 0)), nil
	}
	condef := func(e *env, a []types.Value) (types.Value, error) {
		c := snap(e).ConByOID[a[0].I]
		if c == nil {
			return nullText, nil
		}
		return types.Text(snap(e).ConstraintDef(c, len(a) > 1 && a[1].I != 0)), nil
	}
	// pg_get_viewdef(oid | name [, pretty])
	viewdef := func(e *env, a []types.Value) (types.Value, error) {
		sn := snap(e)
		r := sn.ByOID[a[0].I]
		if !types.IsInt(a[0].T) {
			r = sn.ByName[a[0].S]
		}
		if r != nil && r.Kind == "v" {
			return types.Text(r.Table.View), nil // the stored text (views.go)
		}
		return nullText, nil
	}
	getExpr := func(_ *env, a []types.Value) (types.Value, error) { return a[0], nil }
	yes := func(*env, []types.Value) (types.Value, error) { return types.Bool(true), nil }
	nullT := func(*env, []types.Value) (types.Value, error) { return nullText, nil }
	priv := func(n ...int) []catFn {
		var out []catFn
		for _, k := range n {
			args := make([]types.Type, k)
			for i := range args {
				args[i] = A
			}
			out = append(out, catFn{args, B, true, yes})
		}
		return out
	}
	size := []catFn{{[]types.Type{A}, I8, true, func(*env, []types.Value) (types.Value, error) { return types.Int8(0), nil }},
		{[]types.Type{A, T}, I8, true, func(*env, []types.Value) (types.Value, error) { return types.Int8(0), nil }}}
	catFuncs = map[string][]catFn{
		"format_type": {{[]types.Type{I8, I4}, T, false, func(_ *env, a []types.Value) (types.Value, error) {
			if a[0].Null {
				return nullText, nil
			}
			mod := int64(-1)
			if !a[1].Null {
				mod = a[1].I
			}
			return types.Text(syscat.FormatType(a[0].I, mod)), nil
		}}},
		"pg_get_userbyid": {{[]types.Type{I8}, T, true, func(e *env, a []types.Value) (types.Value, error) {
			switch a[0].I {
			case syscat.OIDSuperuser:
				return types.Text(e.s.user), nil
			case syscat.OIDDBOwnerRole:
				return types.Text("pg_database_owner"), nil
			}
			return types.Text("unknown (OID=" + strconv.FormatInt(a[0].I, 10) + ")"), nil
		}}},
		"pg_table_is_visible":     {{[]types.Type{I8}, B, true, yes}},
		"pg_type_is_visible":      {{[]types.Type{I8}, B, true, yes}},
		"pg_function_is_visible":  {{[]types.Type{I8}, B, true, yes}},
		"pg_collation_is_visible": {{[]types.Type{I8}, B, true, yes}},
		"pg_get_indexdef":         {{[]types.Type{I8}, T, true, indexdef}, {[]types.Type{I8, I4, B}, T, true, indexdef}},
		"pg_get_constraintdef":    {{[]types.Type{I8}, T, true, condef}, {[]types.Type{I8, B}, T, true, condef}},
		"pg_get_expr":             {{[]types.Type{T, I8}, T, true, getExpr}, {[]types.Type{T, I8, B}, T, true, getExpr}},
		"pg_get_serial_sequence": {{[]types.Type{T, T}, T, true, func(e *env, a []types.Value) (types.Value, error) {
			sn := snap(e)
			parts := syscat.SplitQualified(a[0].S)
			name := parts[len(parts)-1]
			r := sn.ByName[name]
			if r == nil || r.Kind != "r" || (len(parts) == 2 && parts[0] != "public") || len(parts) > 2 {
				return types.Value{}, pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", a[0].S)
			}
			i := r.Table.Col(a[1].S)
			if i < 0 {
				return types.Value{}, pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %q of relation %q does not exist", a[1].S, name)
			}
			for _, sr := range sn.Rels { // serial, identity and OWNED BY sequences (sequence.go)
				if sr.Kind == "S" && sr.Table == r.Table && sr.SeqCol == i {
					return types.Text("public." + eval.QuoteIdent(sr.Name)), nil
				}
			}
			return nullText, nil
		}}},
		"obj_description": {{[]types.Type{I8}, T, true, func(e *env, a []types.Value) (types.Value, error) {
			if d := enumComment(e.s, a[0].I); !d.Null { // enum.go
				return d, nil
			}
			return syscat.Describe(snap(e), a[0].I, 0), nil // comment.go
		}}, {[]types.Type{I8, T}, T, true, func(e *env, a []types.Value) (types.Value, error) {
			if a[1].S == "pg_type" {
				return enumComment(e.s, a[0].I), nil // enum.go
			}
			switch a[1].S {
			case "pg_class":
				return syscat.Describe(snap(e), a[0].I, 0), nil
			case "pg_constraint":
				return syscat.DescribeConstraint(snap(e), a[0].I), nil // comment.go
			}
			return nullText, nil // only relations, constraints and enum types have comments here
		}}},
		"col_description": {{[]types.Type{I8, I4}, T, true, func(e *env, a []types.Value) (types.Value, error) {
			return syscat.Describe(snap(e), a[0].I, int(a[1].I)), nil
		}}},
		"shobj_description": {{[]types.Type{I8, T}, T, false, nullT}},
		"quote_ident": {{[]types.Type{T}, T, true, func(_ *env, a []types.Value) (types.Value, error) {
			return types.Text(eval.QuoteIdent(a[0].S)), nil
		}}},
		"quote_literal": {{[]types.Type{A}, T, true, func(_ *env, a []types.Value) (types.Value, error) {
			return types.Text(eval.QuoteLiteral(valueText(a[0]))), nil
		}}},
		"quote_nullable": {{[]types.Type{A}, T, false, func(_ *env, a []types.Value) (types.Value, error) {
			if a[0].Null {
				return types.Text("NULL"), nil
			}
			return types.Text(eval.QuoteLiteral(valueText(a[0]))), nil
		}}},
		"current_schema": catConst(T, types.Text("public"), 0),
		"current_schemas": {{[]types.Type{B}, T, true, func(_ *env, a []types.Value) (types.Value, error) {
			if a[0].I != 0 {
				return types.Text("{pg_catalog,public}"), nil
			}
			return types.Text("{public}"), nil
		}}},
		"current_database": {{nil, T, false, func(e *env, _ []types.Value) (types.Value, error) { return types.Text(e.s.database()), nil }}},
		"pg_encoding_to_char": {{[]types.Type{I4}, T, true, func(_ *env, a []types.Value) (types.Value, error) {
			switch a[0].I {
			case 6:
				return types.Text("UTF8"), nil
			case 0:
				return types.Text("SQL_ASCII"), nil
			}
			return types.Text(""), nil
		}}},
		"has_table_privilege":      priv(2, 3),
		"has_schema_privilege":     priv(2, 3),
		"has_database_privilege":   priv(2, 3),
		"has_column_privilege":     priv(3, 4),
		"has_sequence_privilege":   priv(2, 3),
		"has_function_privilege":   priv(2, 3),
		"has_any_column_privilege": priv(2, 3),
		"to_regclass": {{[]types.Type{T}, I8, true, func(e *env, a []types.Value) (types.Value, error) {
			if o, ok := snap(e).RelOID(a[0].S); ok && !isDigits(a[0].S) {
				return types.Int8(o), nil
			}
			return nullOID, nil
		}}},
		"pg_relation_size":       size,
		"pg_total_relation_size": size[:1],
		"pg_table_size":          size[:1],
		"pg_indexes_size":        size[:1],
		"pg_size_pretty": {{[]types.Type{I8}, T, true, func(_ *env, a []types.Value) (types.Value, error) {
			return types.Text(eval.SizePretty(a[0].I)), nil
		}}},
		"pg_get_viewdef":                     {{[]types.Type{A}, T, true, viewdef}, {[]types.Type{A, B}, T, true, viewdef}},
		"pg_get_function_result":             {{[]types.Type{I8}, T, false, nullT}},
		"pg_get_function_arguments":          {{[]types.Type{I8}, T, false, nullT}},
		"pg_get_function_identity_arguments": {{[]types.Type{I8}, T, false, nullT}},
		"pg_get_triggerdef":                  {{[]types.Type{I8}, T, false, nullT}, {[]types.Type{I8, B}, T, false, nullT}},
		"pg_get_ruledef":                     {{[]types.Type{I8}, T, false, nullT}, {[]types.Type{I8, B}, T, false, nullT}},
		"pg_get_partkeydef":                  {{[]types.Type{I8}, T, false, nullT}},
		"pg_get_statisticsobjdef_columns":    {{[]types.Type{I8}, T, false, nullT}},
		"pg_relation_is_publishable":         {{[]types.Type{I8}, B, true, yes}},
		// a table that is no partition is its own only ancestor
		"pg_partition_ancestors": {{[]types.Type{I8}, I8, true, func(_ *env, a []types.Value) (types.Value, error) { return a[0], nil }}},
		"pg_is_in_recovery":      {{nil, B, false, func(*env, []types.Value) (types.Value, error) { return types.Bool(false), nil }}},
	}
	seqFuncs(func(name string, fns ...catFn) { catFuncs[name] = fns }) // sequence.go
}

func isDigits(s string) bool {
	_, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return err == nil
}

// valueText is v's text form (v not NULL).
func valueText(v types.Value) string {
	switch v.T {
	case types.TInt4, types.TInt8:
		return strconv.FormatInt(v.I, 10)
	case types.TBool:
		if v.I != 0 {
			return "true"
		}
		return "false"
	case types.TInt4Array, types.TInt8Array:
		return v.String()
	}
	return v.S
}

// parseTextArray reads the text of a catalog array (a text column holding
// {a,"b c",NULL}) as a text[]'s elements.
func parseTextArray(s string) ([]types.Value, error) {
	return types.ArrayElems(types.Value{T: types.TTextArray, S: s})
}

// formatTextArray is the text[] output form of vs's texts (ARRAY of a
// type without an array type here).
func formatTextArray(vs []types.Value) string {
	els := make([]types.Value, len(vs))
	for i, v := range vs {
		els[i] = nullText
		if !v.Null {
			els[i] = types.Text(valueText(v))
		}
	}
	a, _ := types.MakeArray(types.TTextArray, els) // a text[] takes any element
	return a.S
}

// ---- the hooks ----

// catalogFunc compiles a call of one of catFuncs (ok false: f is not one).
func (c *compiler) catalogFunc(f *pg.FuncCall, name string) (expr, bool, error) {
	if name == "pg_typeof" && len(f.Args) == 1 {
		x, err := c.compile(f.Args[0], types.TUnknown)
		if err != nil {
			return nil, true, err
		}
		t := x.typ().String()
		if me, ok := x.(*modExpr); ok && x.typ() != types.TInterval { // pg_typeof names no interval fields
			t = me.m.Name(x.typ())
		}
		return &constExpr{types.Text(t)}, true, nil
	}
	ovs, ok := catFuncs[name]
	if !ok {
		return nil, false, nil
	}
	for _, ov := range ovs {
		if len(ov.args) != len(f.Args) {
			continue
		}
		out := &funcExpr{name: name, t: ov.ret}
		for i, a := range f.Args {
			want := ov.args[i]
			if want == tAny {
				want = types.TUnknown
			}
			x, err := c.compile(a, want)
			if err != nil {
				return nil, true, err
			}
			if x, err = c.coerce(x, want); err != nil {
				return nil, true, err
			}
			switch {
			case ov.args[i] == tAny:
				if x.typ() == types.TUnknown {
					x = &castExpr{arg: x, t: types.TText}
				}
			case x.typ() == want:
			case types.IsInt(want) && types.IsInt(x.typ()), want == types.TText && x.typ() == types.TBpchar:
				x = &castExpr{arg: x, t: want}
			default:
				return nil, true, pgerror.Errorf(pgerror.CodeUndefinedFunction, "function %s(%s) does not exist", name, argTypes(c, f.Args)).At(f.Location)
			}
			out.args = append(out.args, x)
		}
		fn, strict, ret := ov.fn, ov.strict, ov.ret
		out.fn = func(e *env, a []types.Value) (types.Value, error) {
			if strict {
				for _, v := range a {
					if v.Null {
						return types.Null(ret), nil
					}
				}
			}
			return fn(e, a)
		}
		return out, true, nil
	}
	return nil, true, &pgerror.Error{Code: pgerror.CodeUndefinedFunction, Message: "function " + name + "(" + argTypes(c, f.Args) + ") does not exist",
		Hint: "No function matches the given name and argument types. You might need to add explicit type casts.", Position: f.Location + 1}
}

func argTypes(c *compiler, args []*pg.Node) string {
	var ts []string
	for _, a := range args {
		x, err := c.compile1(a, types.TUnknown)
		if err != nil {
			ts = append(ts, "unknown")
			continue
		}
		ts = append(ts, x.typ().String())
	}
	return strings.Join(ts, ", ")
}

// catalogExpr compiles the expression forms of the catalogs' queries that
// the rest of the compiler does not know (ok false: n is none of them).
func (c *compiler) catalogExpr(n *pg.Node) (expr, bool, error) {
	switch {
	case n.GetTypeCast() != nil:
		return c.regCast(n.GetTypeCast())
	case n.GetAIndirection() != nil:
		x, err := c.subscript(n.GetAIndirection())
		return x, true, err
	case n.GetAExpr() != nil && (n.GetAExpr().Kind == pg.A_Expr_Kind_AEXPR_OP_ANY || n.GetAExpr().Kind == pg.A_Expr_Kind_AEXPR_OP_ALL):
		x, err := c.anyArray(n.GetAExpr())
		return x, true, err
	case n.GetAExpr() != nil && n.GetAExpr().Kind == pg.A_Expr_Kind_AEXPR_OP:
		return c.arrayLiteralCmp(n.GetAExpr())
	case n.GetSubLink() != nil && n.GetSubLink().SubLinkType == pg.SubLinkType_ARRAY_SUBLINK:
		x, err := c.arraySubLink(n.GetSubLink())
		return x, true, err
	}
	return nil, false, nil
}

func (c *compiler) regCast(tc *pg.TypeCast) (expr, bool, error) {
	names := strs(tc.TypeName.Names)
	if len(names) == 0 || len(names) > 2 || (len(names) == 2 && names[0] != "pg_catalog") {
		return nil, false, nil
	}
	name := names[len(names)-1]
	array := len(tc.TypeName.ArrayBounds) > 0
	switch {
	case array && name == "int2", !array && (name == "int2vector" || name == "oidvector"), array && name == "oid":
		x, err := c.compile(tc.Arg, types.TInt4Array)
		if err != nil {
			return nil, true, err
		}
		if x, err = c.coerce(x, types.TInt4Array); err != nil {
			return nil, true, err
		}
		if x.typ() != types.TInt4Array {
			return nil, true, pgerror.Errorf(pgerror.CodeCannotCoerce, "cannot cast type %s to %s", x.typ(), name).At(tc.Location)
		}
		return x, true, nil
	case array:
		return nil, false, nil
	}
	kinds := map[string]bool{"regclass": true, "regtype": true, "regnamespace": true, "regrole": true, "regproc": true, "regprocedure": true, "oid": true}
	if !kinds[name] {
		return nil, false, nil
	}
	x, err := c.compile(tc.Arg, types.TUnknown)
	if err != nil {
		return nil, true, err
	}
	if x.typ() == types.TUnknown {
		if _, isParam := x.(*paramExpr); isParam && name == "oid" {
			x, err = c.coerce(x, types.TInt8)
		} else {
			x, err = c.coerce(x, types.TText)
		}
		if err != nil {
			return nil, true, err
		}
	}
	if types.IsInt(x.typ()) {
		if name == "oid" {
			if x.typ() == types.TInt4 {
				x = &castExpr{arg: x, t: types.TInt8}
			}
			return x, true, nil
		}
		// an OID's name, as a reg* value prints
		return &funcExpr{name: name, t: types.TText, args: []expr{x}, fn: func(e *env, a []types.Value) (types.Value, error) {
			if a[0].Null {
				return nullText, nil
			}
			return types.Text(regName(e, name, a[0].I)), nil
		}}, true, nil
	}
	if !types.IsString(x.typ()) {
		return nil, true, pgerror.Errorf(pgerror.CodeCannotCoerce, "cannot cast type %s to %s", x.typ(), name).At(tc.Location)
	}
	return &funcExpr{name: name, t: types.TInt8, args: []expr{x}, fn: func(e *env, a []types.Value) (types.Value, error) {
		if a[0].Null {
			return nullOID, nil
		}
		return regOID(e, name, a[0].S)
	}}, true, nil
}

// regName is the name of OID o as a value of reg* type kind prints.
func regName(e *env, kind string, o int64) string {
	num := strconv.FormatInt(o, 10)
	switch kind {
	case "regclass":
		if r := e.s.catalogSnap().ByOID[o]; r != nil {
			return eval.QuoteIdent(r.Name)
		}
		for full := range syscat.Relations {
			sch, rel, _ := strings.Cut(full, ".")
			if so, ok := syscat.SystemRelOID(sch, rel); ok && so == o {
				if sch == "pg_catalog" {
					return rel
				}
				return full
			}
		}
	case "regtype":
		if o == 0 {
			return "-"
		}
		return syscat.FormatType(o, -1)
	case "regnamespace":
		for _, r := range syscat.Namespaces() {
			if r[0].I == o {
				return eval.QuoteIdent(r[1].S)
			}
		}
	case "regrole":
		switch o {
		case syscat.OIDSuperuser:
			return eval.QuoteIdent(e.s.user)
		case syscat.OIDDBOwnerRole:
			return "pg_database_owner"
		}
	case "regproc", "regprocedure":
		if o == 0 {
			return "-"
		}
	}
	return num
}

// regOID resolves a name as input of reg* type kind.
func regOID(e *env, kind, s string) (types.Value, error) {
	if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
		return types.Int8(n), nil
	}
	switch kind {
	case "regclass":
		if o, ok := e.s.catalogSnap().RelOID(s); ok {
			return types.Int8(o), nil
		}
		return types.Value{}, pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", s)
	case "regtype":
		if o, ok := syscat.TypeOIDByName(s); ok {
			return types.Int8(o), nil
		}
		return types.Value{}, pgerror.Errorf(pgerror.CodeUndefinedObject, "type %q does not exist", s)
	case "regnamespace":
		for _, r := range syscat.Namespaces() {
			if r[1].S == s {
				return r[0], nil
			}
		}
		return types.Value{}, pgerror.Errorf(pgerror.CodeUndefinedObject, "schema %q does not exist", s)
	case "regrole":
		if s == e.s.user {
			return types.Int8(syscat.OIDSuperuser), nil
		}
		if s == "pg_database_owner" {
			return types.Int8(syscat.OIDDBOwnerRole), nil
		}
		return types.Value{}, pgerror.Errorf(pgerror.CodeUndefinedObject, "role %q does not exist", s)
	case "oid":
		return types.Value{}, pgerror.Errorf(pgerror.CodeInvalidText, "invalid input syntax for type oid: %q", s)
	}
	return types.Value{}, pgerror.Errorf(pgerror.CodeUndefinedFunction, "function %q does not exist", s)
}

// arrayLiteralCmp compiles col = '{...}' (and <>) over an integer array
// column, as psql's pol.polroles = '{0}'.
func (c *compiler) arrayLiteralCmp(a *pg.A_Expr) (expr, bool, error) {
	ops := strs(a.Name)
	if len(ops) != 1 || (ops[0] != "=" && ops[0] != "<>" && ops[0] != "!=") || a.Lexpr == nil || a.Rexpr == nil {
		return nil, false, nil
	}
	col, lit := a.Lexpr, a.Rexpr
	if col.GetColumnRef() == nil {
		col, lit = lit, col
	}
	k := lit.GetAConst()
	if col.GetColumnRef() == nil || k == nil || k.GetSval() == nil || !strings.HasPrefix(k.GetSval().Sval, "{") {
		return nil, false, nil
	}
	x, err := c.compile(col, types.TUnknown)
	if err != nil || x.typ() != types.TInt4Array {
		return nil, false, nil
	}
	want, err := types.Cast(types.Unknown(k.GetSval().Sval), types.TInt4Array)
	if err != nil {
		return nil, true, ToError(err).At(k.Location)
	}
	eq := ops[0] == "="
	return &funcExpr{name: "array_eq", t: types.TBool, args: []expr{x}, fn: func(_ *env, v []types.Value) (types.Value, error) {
		if v[0].Null {
			return types.Null(types.TBool), nil
		}
		same := len(v[0].A) == len(want.A)
		for i := 0; same && i < len(want.A); i++ {
			same = v[0].A[i] == want.A[i]
		}
		return types.Bool(same == eq), nil
	}}, true, nil
}

// subscript compiles arr[i]: the element, NULL outside the array.
func (c *compiler) subscript(ind *pg.A_Indirection) (expr, error) {
	if len(ind.Indirection) != 1 || ind.Indirection[0].GetAIndices() == nil || ind.Indirection[0].GetAIndices().IsSlice {
		return nil, pgerror.NotSupported("this array subscript is not supported")
	}
	arg, err := c.compile(ind.Arg, types.TUnknown)
	if err == nil {
		arg, err = c.coerce(arg, types.TInt4Array) // a literal: the catalog's int2vector
	}
	if err != nil {
		return nil, err
	}
	if !types.IsArray(arg.typ()) {
		return nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "cannot subscript type %s because it does not support subscripting", arg.typ())
	}
	idx, err := c.compile(ind.Indirection[0].GetAIndices().Uidx, types.TInt4)
	if err != nil {
		return nil, err
	}
	if idx, err = c.coerce(idx, types.TInt4); err != nil {
		return nil, err
	}
	if !types.IsInt(idx.typ()) {
		return nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "array subscript must have type integer")
	}
	et := types.ElemType(arg.typ())
	return &funcExpr{name: "subscript", t: et, args: []expr{arg, idx}, fn: func(_ *env, a []types.Value) (types.Value, error) {
		if a[0].Null || a[1].Null {
			return types.Null(et), nil
		}
		els, err := types.ArrayElems(a[0])
		if err != nil || a[1].I < 1 || a[1].I > int64(len(els)) {
			return types.Null(et), err
		}
		return els[a[1].I-1], nil
	}}, nil
}

// anyArray compiles x op ANY (array) and x op ALL (array), over an integer
// array or a text array literal.
func (c *compiler) anyArray(a *pg.A_Expr) (expr, error) {
	op := "="
	if ops := strs(a.Name); len(ops) > 0 {
		op = ops[len(ops)-1]
	}
	if op == "!=" {
		op = "<>"
	}
	switch op {
	case "=", "<>", "<", "<=", ">", ">=":
	default:
		return nil, pgerror.NotSupported("operator %s with ANY/ALL is not supported", op).At(a.Location)
	}
	r, err := c.compile(a.Rexpr, types.TUnknown)
	if err != nil {
		return nil, err
	}
	lwant := types.ElemType(r.typ())
	if types.IsIntArray(r.typ()) {
		lwant = types.TInt4
	}
	l, err := c.compile(a.Lexpr, lwant)
	if err != nil {
		return nil, err
	}
	if r.typ() == types.TUnknown {
		// = ANY($1) and = ANY('{..}'): an array of the left side's type
		want := types.TText // no array type: the literal's text is read as a text[]'s
		if types.IsInt(l.typ()) {
			want = types.TInt4Array
		} else if at, ok := types.ArrayOf(l.typ()); ok {
			want = at
		}
		if r, err = c.coerce(r, want); err != nil {
			return nil, err
		}
	}
	if l.typ() == types.TUnknown {
		t := types.TText
		if types.IsArray(r.typ()) {
			t = types.ElemType(r.typ())
		}
		if l, err = c.coerce(l, t); err != nil {
			return nil, err
		}
	}
	arr := types.IsArray(r.typ())
	switch {
	case arr && comparable(l.typ(), types.ElemType(r.typ())):
	case arr && types.IsString(l.typ()) && types.ElemType(r.typ()) == types.TText:
	case !arr && types.IsString(r.typ()) && types.IsString(l.typ()):
	default:
		return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %s %s", l.typ(), op, r.typ()).At(a.Location)
	}
	all := a.Kind == pg.A_Expr_Kind_AEXPR_OP_ALL
	return &funcExpr{name: "any", t: types.TBool, args: []expr{l, r}, fn: func(_ *env, v []types.Value) (types.Value, error) {
		if v[1].Null {
			return types.Null(types.TBool), nil
		}
		var els []types.Value
		var err error
		if arr {
			els, err = types.ArrayElems(v[1])
		} else {
			els, err = parseTextArray(v[1].S)
		}
		if err != nil {
			return types.Value{}, err
		}
		sawNull := false // NULL op ANY ('{}') is false, as for any empty array
		for _, b := range els {
			if v[0].Null || b.Null {
				sawNull = true
				continue
			}
			ok := eval.CmpOp(op, types.Compare(v[0], b))
			if ok && !all {
				return types.Bool(true), nil
			}
			if !ok && all {
				return types.Bool(false), nil
			}
		}
		if sawNull {
			return types.Null(types.TBool), nil
		}
		return types.Bool(all), nil
	}}, nil
}

// arraySubLink compiles ARRAY (subquery): an array of the column's type,
// or, for a type without one here, the text of a text[] of its values.
func (c *compiler) arraySubLink(sl *pg.SubLink) (expr, error) {
	cp := &pg.SubLink{SubLinkType: pg.SubLinkType_EXPR_SUBLINK, Subselect: sl.Subselect, Location: sl.Location}
	x, err := c.subLink(cp)
	if err != nil {
		return nil, err
	}
	q, ok := x.(*subqueryExpr)
	if !ok {
		return nil, pgerror.NotSupported("this ARRAY subquery is not supported")
	}
	t, ok := types.ArrayOf(q.t)
	if !ok {
		t = types.TText
	}
	return &arraySubExpr{q: q, t: t}, nil
}

type arraySubExpr struct {
	q *subqueryExpr
	t types.Type
}

func (a *arraySubExpr) typ() types.Type { return a.t }
func (a *arraySubExpr) kids() []expr    { return a.q.kids() }
func (a *arraySubExpr) eval(e *env) (types.Value, error) {
	rows, err := a.q.rows(e)
	if err != nil {
		return types.Value{}, err
	}
	vs := make([]types.Value, len(rows))
	for i, r := range rows {
		vs[i] = r[0]
	}
	if a.t == types.TText {
		return types.Text(formatTextArray(vs)), nil
	}
	return types.MakeArray(a.t, vs)
}

// catalogRangeFunction plans the catalog functions psql calls in FROM:
// pg_partition_ancestors(rel) [WITH ORDINALITY] (a table that is no
// partition: itself, at depth 1).
func (s *Session) catalogRangeFunction(rf *pg.RangeFunction, c *compiler) (virtRows, []catalog.Column, string, bool, error) {
	if len(rf.Functions) != 1 || rf.IsRowsfrom || rf.Lateral || len(rf.Coldeflist) > 0 {
		return nil, nil, "", false, nil
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) == 0 || items[0].GetFuncCall() == nil {
		return nil, nil, "", false, nil
	}
	fc := items[0].GetFuncCall()
	names := strs(fc.Funcname)
	if names[len(names)-1] != "pg_partition_ancestors" || (len(names) == 2 && names[0] != "pg_catalog") || len(fc.Args) != 1 {
		return nil, nil, "", false, nil
	}
	arg, err := c.compile(fc.Args[0], types.TInt8)
	if err != nil {
		return nil, nil, "", true, err
	}
	if arg, err = c.coerce(arg, types.TInt8); err != nil {
		return nil, nil, "", true, err
	}
	if !types.IsInt(arg.typ()) {
		return nil, nil, "", true, pgerror.Errorf(pgerror.CodeUndefinedFunction, "function pg_partition_ancestors(%s) does not exist", arg.typ()).At(fc.Location)
	}
	out := []catalog.Column{syscat.ColOID("relid")}
	if rf.Ordinality {
		out = append(out, syscat.ColInt8("ordinality"))
	}
	rel := "pg_partition_ancestors"
	if rf.Alias != nil {
		rel = rf.Alias.Aliasname
		var err error
		if out, err = aliasCols(out, rf.Alias); err != nil {
			return nil, nil, "", true, err
		}
	}
	virt := func(e *env) ([][]types.Value, error) {
		v, err := arg.eval(e)
		if err != nil || v.Null {
			return nil, err
		}
		row := []types.Value{types.Int8(v.I)}
		if rf.Ordinality {
			row = append(row, types.Int8(1))
		}
		return [][]types.Value{row}, nil
	}
	return virt, out, rel, true, nil
}
