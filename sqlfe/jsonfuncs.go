package sqlfe

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// json and jsonb's operators and functions over the node tree of
// sql/types' json.go (which holds the types, their I/O and their order).
//
// Operators: -> and ->> (an object's key, an array's index, negative from
// the end), #> and #>> (a path given as a text-array literal), and for
// jsonb @>, <@ and ? (a key, an array's string element). Functions:
// json[b]_build_object, to_json[b], json[b]_typeof.

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
	x := types.MustJSON(a)
	var m *types.JSONNode
	switch j.op {
	case "@>", "<@":
		y := types.MustJSON(b)
		if j.op == "<@" {
			x, y = y, x
		}
		return types.Bool(types.JSONContains(x, y, true)), nil
	case "?":
		return types.Bool(x.HasKey(b.S)), nil
	case "->", "->>":
		m = x.Field(b.S, b.I, types.IsInt(b.T))
	default: // #> #>>
		steps, err := types.ParsePathLiteral(b.S)
		if err != nil {
			return types.Value{}, err
		}
		m = x.Path(steps)
	}
	if m == nil {
		return types.Null(j.t), nil
	}
	if j.t == types.TText {
		return types.JSONText(m, a.T), nil
	}
	return types.JSONOut(m, a.T), nil
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
		return strict(t.String(), t, xs, func(a []types.Value) (types.Value, error) {
			n := types.ToJSONNode(a[0])
			if t == types.TJSON && types.IsJSON(a[0].T) {
				return types.Value{T: types.TJSON, S: a[0].S}, nil
			}
			return types.JSONOut(n, t), nil
		}), nil
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
			n := &types.JSONNode{Kind: 'o'}
			var b strings.Builder // json's text: PostgreSQL writes "k" : v
			b.WriteByte('{')
			for i := 0; i < len(a); i += 2 {
				if a[i].Null {
					return types.Value{}, &pgerror.Error{Code: pgerror.CodeInvalidParamValue, Message: fmt.Sprintf("argument %d: key must not be null", i+1)}
				}
				k := types.TextOut(a[i])
				v := types.ToJSONNode(a[i+1])
				n.Keys, n.Elems = append(n.Keys, k), append(n.Elems, v)
				if i > 0 {
					b.WriteString(", ")
				}
				types.WriteJSONString(&b, k)
				b.WriteString(" : ")
				if types.IsJSON(a[i+1].T) && !a[i+1].Null {
					b.WriteString(a[i+1].S)
				} else {
					b.WriteString(v.Raw)
				}
			}
			b.WriteByte('}')
			if t == types.TJSON {
				return types.Value{T: types.TJSON, S: b.String()}, nil
			}
			n.Normalise()
			return types.Value{T: types.TJSONB, S: n.JSONBText()}, nil
		}}, nil
	}
}

func typeofFunc(t types.Type) polyFunc {
	return func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		xs, err := wantTypes(c, f, args, t)
		if err != nil {
			return nil, err
		}
		return strict(t.String()+"_typeof", types.TText, xs, func(a []types.Value) (types.Value, error) {
			names := map[byte]string{'o': "object", 'a': "array", 's': "string", 'n': "number", 't': "boolean", 'f': "boolean", 'z': "null"}
			return types.Text(names[types.MustJSON(a[0]).Kind]), nil
		}), nil
	}
}
