package sqlfe

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// json and jsonb's operators and functions over the node tree of
// sql/types' json.go (which holds the types, their I/O and their order).
//
// Operators: -> and ->> (an object's key, an array's index, negative from
// the end), #> and #>> (a path given as a text-array literal), and for
// jsonb @>, <@ and ? (a key, an array's string element). Functions:
// json[b]_build_object, to_json[b], json[b]_typeof, jsonb_set,
// row_to_json; json[b]_agg's element text (agg.go accumulates it). A FROM
// item's whole row (row_to_json(t), json_agg(t)) is a rowExpr, compiled
// only where these functions take one (compiler.wholeRow): tupled has no
// composite values otherwise. The set-returning json[b]_array_elements
// and json[b]_object_keys are srf.go's. What each computes is sql/eval's (json.go).

func init() {
	polyFuncs["jsonb_build_object"] = buildObjectFunc(types.TJSONB)
	polyFuncs["json_build_object"] = buildObjectFunc(types.TJSON)
	polyFuncs["to_jsonb"] = toJSONFunc(types.TJSONB)
	polyFuncs["to_json"] = toJSONFunc(types.TJSON)
	polyFuncs["jsonb_typeof"] = typeofFunc(types.TJSONB)
	polyFuncs["json_typeof"] = typeofFunc(types.TJSON)
}

// jsonOpExpr is one of json's binary operators.
type jsonOpExpr struct {
	op   string
	l, r expr
	t    types.Type
}

func (j *jsonOpExpr) typ() types.Type { return j.t }
func (j *jsonOpExpr) kids() []expr    { return []expr{j.l, j.r} }
func (j *jsonOpExpr) eval(e *env) (types.Value, error) {
	a, err := j.l.eval(e)
	if err != nil {
		return a, err
	}
	b, err := j.r.eval(e)
	if err != nil {
		return b, err
	}
	if a.Null || b.Null {
		return types.Null(j.t), nil
	}
	return eval.JSONOp(j.op, a, b, j.t)
}

// jsonOp compiles json's operators; ok is false when op is not one or the
// left side is not json.
func (c *compiler) jsonOp(a *pg.A_Expr, op string) (expr, bool, error) {
	switch op {
	case "->", "->>", "#>", "#>>", "@>", "<@", "?":
	default:
		return nil, false, nil
	}
	l, err := c.compile1(a.Lexpr, types.TUnknown)
	if err != nil {
		return nil, true, err
	}
	lt := l.typ()
	if !types.IsJSON(lt) && !(lt == types.TUnknown && (op == "@>" || op == "<@")) {
		return nil, false, nil
	}
	r, err := c.compile1(a.Rexpr, types.TUnknown)
	if err != nil {
		return nil, true, err
	}
	rt := r.typ()
	if lt == types.TUnknown { // 'literal' <@ jsonb
		if rt != types.TJSONB {
			return nil, false, nil
		}
		if l, err = c.coerce(l, types.TJSONB); err != nil {
			return nil, true, err
		}
		lt = types.TJSONB
	}
	noOp := func() (expr, bool, error) {
		return nil, true, &pgerror.Error{Code: pgerror.CodeUndefinedFunction, Message: fmt.Sprintf("operator does not exist: %s %s %s", lt, op, rt),
			Hint: "No operator matches the given name and argument types. You might need to add explicit type casts.", Position: a.Location + 1}
	}
	want, res := types.TText, lt
	switch op {
	case "->", "->>":
		if types.IsInt(rt) {
			want = rt
		}
	case "@>", "<@":
		if lt != types.TJSONB {
			return noOp()
		}
		want, res = types.TJSONB, types.TBool
	case "?":
		if lt != types.TJSONB {
			return noOp()
		}
		res = types.TBool
	}
	if op == "->>" || op == "#>>" {
		res = types.TText
	}
	if r, err = c.coerce(r, want); err != nil {
		return nil, true, err
	}
	if r.typ() == types.TBpchar {
		r = &castExpr{arg: r, t: types.TText}
	}
	if r.typ() != want {
		return noOp()
	}
	return &jsonOpExpr{op: op, l: l, r: r, t: res}, true, nil
}

// jsonArgs compiles the arguments of a function taking "any": an untyped
// literal is text.
func jsonArgs(c *compiler, args []expr) ([]expr, error) {
	out := make([]expr, len(args))
	for i, a := range args {
		x, err := c.coerce(a, types.TText)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func toJSONFunc(t types.Type) polyFunc {
	return func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		if len(args) != 1 {
			return nil, noSuchFunc(f, args)
		}
		xs, err := jsonArgs(c, args)
		if err != nil {
			return nil, err
		}
		return strict(t.String(), t, xs, func(a []types.Value) (types.Value, error) { return eval.ToJSON(a, t) }), nil
	}
}

func buildObjectFunc(t types.Type) polyFunc {
	return func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		if len(args)%2 != 0 {
			return nil, &pgerror.Error{Code: pgerror.CodeInvalidParamValue, Message: "argument list must have even number of elements",
				Hint: fmt.Sprintf("The arguments of %s() must consist of alternating keys and values.", t.String()+"_build_object")}
		}
		xs, err := jsonArgs(c, args)
		if err != nil {
			return nil, err
		}
		return &funcExpr{name: t.String() + "_build_object", t: t, args: xs, fn: func(_ *env, a []types.Value) (types.Value, error) {
			return eval.BuildObject(a, t)
		}}, nil
	}
}

func typeofFunc(t types.Type) polyFunc {
	return func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		xs, err := wantTypes(c, f, args, t)
		if err != nil {
			return nil, err
		}
		return strict(t.String()+"_typeof", types.TText, xs, eval.JSONTypeof), nil
	}
}

// ---- whole rows, json[b]_agg, row_to_json, jsonb_set ----

// wholeRowFuncs take a FROM item's whole row as an argument (a
// compiler's wholeRow): row_to_json(t), to_json(t), to_jsonb(t).
var wholeRowFuncs = map[string]bool{"row_to_json": true, "to_json": true, "to_jsonb": true}

// rowExpr is a FROM item's whole row where a JSON function takes one: its
// value is the row as json, composite_to_json's text ({"a":1,"b":"x"}).
type rowExpr struct {
	names []string
	args  []expr
	sep   string // between fields: "," (row_to_json's pretty form: ",\n ")
}

func (r *rowExpr) typ() types.Type { return types.TJSON }
func (r *rowExpr) kids() []expr    { return r.args }
func (r *rowExpr) eval(e *env) (types.Value, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, x := range r.args {
		v, err := x.eval(e)
		if err != nil {
			return types.Value{}, err
		}
		if i > 0 {
			b.WriteString(r.sep)
		}
		types.WriteJSONString(&b, r.names[i])
		b.WriteByte(':')
		b.WriteString(eval.JSONDatumText(v))
	}
	b.WriteByte('}')
	return types.Value{T: types.TJSON, S: b.String()}, nil
}

// wholeRowRef resolves cr (t or t.*) as the whole row of FROM item t.
func (c *compiler) wholeRowRef(cr *pg.ColumnRef) (*rowExpr, bool) {
	f := strs(cr.Fields)
	if len(f) == 2 && f[1] == "*" {
		f = f[:1]
	}
	if len(f) != 1 {
		return nil, false
	}
	r := &rowExpr{sep: ","}
	switch {
	case c.scope != nil:
		names, xs, err := c.scope.star(f[0], cr.Location)
		if err != nil {
			return nil, false
		}
		r.names, r.args = names, xs
	case c.cols != nil && c.rel == f[0]:
		for i, col := range c.cols {
			if !col.Hidden {
				r.names = append(r.names, col.Name)
				r.args = append(r.args, &colExpr{idx: i, t: col.Type, m: col.Mod()})
			}
		}
	default:
		return nil, false
	}
	return r, true
}

func init() {
	polyFuncs["row_to_json"] = rowToJSONFunc
	polyFuncs["jsonb_set"] = jsonbSetFunc
}

// rowToJSONFunc is row_to_json(record [, pretty]).
func rowToJSONFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) == 0 || len(args) > 2 {
		return nil, noSuchFunc(f, args)
	}
	r, ok := args[0].(*rowExpr)
	if !ok {
		return nil, noSuchFunc(f, args)
	}
	if len(args) == 1 {
		return r, nil
	}
	pretty, err := wantTypes(c, f, args[1:], types.TBool)
	if err != nil {
		return nil, err
	}
	compact, spaced := *r, *r
	spaced.sep = ",\n "
	return &funcExpr{name: "row_to_json", t: types.TJSON, args: []expr{pretty[0]}, fn: func(e *env, a []types.Value) (types.Value, error) {
		if a[0].Null {
			return types.Null(types.TJSON), nil
		}
		if a[0].I != 0 {
			return spaced.eval(e)
		}
		return compact.eval(e)
	}}, nil
}

// jsonbSetFunc is jsonb_set(target, path text[], new_value [,
// create_if_missing]), as PostgreSQL's setPath with JB_PATH_CREATE or
// JB_PATH_REPLACE: the path's last step replaces (or, creating, adds) an
// object's key or an array's element (a negative index counts from the
// end; past either end, creating prepends or appends); a step that finds
// nothing leaves target as it is.
func jsonbSetFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) == 3 {
		args = append(args, &constExpr{types.Bool(true)})
	}
	if len(args) != 4 {
		return nil, noSuchFunc(f, args)
	}
	xs, err := wantTypes(c, f, args, types.TJSONB, types.TText, types.TJSONB, types.TBool)
	if err != nil {
		return nil, err
	}
	return strict("jsonb_set", types.TJSONB, xs, eval.JSONBSet), nil
}
