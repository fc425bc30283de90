package sqlfe

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// The functions and operators of one-dimensional arrays (types/array.go
// holds the values): array_length, cardinality, array_upper, array_lower,
// array_to_string, string_to_array, and ||, @>, <@ and && (arrayOp).

func init() {
	for name, f := range map[string]polyFunc{
		"array_length":    arrayDimFunc("array_length", func(n int) int { return n }),
		"array_upper":     arrayDimFunc("array_upper", func(n int) int { return n }),
		"array_lower":     arrayDimFunc("array_lower", func(int) int { return 1 }),
		"cardinality":     cardinalityFunc,
		"array_to_string": arrayToStringFunc,
		"string_to_array": stringToArrayFunc,
	} {
		polyFuncs[name] = f
	}
}

// arrayArg is args[i] as an array: an untyped literal becomes a text[].
func arrayArg(c *compiler, f *pg.FuncCall, args []expr, i int) (expr, error) {
	x, err := c.coerce(args[i], types.TTextArray)
	if err != nil {
		return nil, err
	}
	if !types.IsArray(x.typ()) {
		return nil, noSuchFunc(f, args)
	}
	return x, nil
}

// arrayDimFunc is array_length(a, dim), array_upper or array_lower of a
// one-dimensional array: of(its length) for dim 1, NULL for another
// dimension or an empty array.
func arrayDimFunc(name string, of func(int) int) polyFunc {
	return func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		if len(args) != 2 {
			return nil, noSuchFunc(f, args)
		}
		a, err := arrayArg(c, f, args, 0)
		if err != nil {
			return nil, err
		}
		dim, err := c.coerce(args[1], types.TInt4)
		if err != nil || !types.IsInt(dim.typ()) {
			return nil, noSuchFunc(f, args)
		}
		return strict(name, types.TInt4, []expr{a, dim}, func(v []types.Value) (types.Value, error) {
			els, err := types.ArrayElems(v[0])
			if err != nil || v[1].I != 1 || len(els) == 0 {
				return types.Null(types.TInt4), err
			}
			return types.Int4(int32(of(len(els)))), nil
		}), nil
	}
}

// cardinalityFunc is cardinality(a): the number of elements.
func cardinalityFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) != 1 {
		return nil, noSuchFunc(f, args)
	}
	a, err := arrayArg(c, f, args, 0)
	if err != nil {
		return nil, err
	}
	return strict("cardinality", types.TInt4, []expr{a}, func(v []types.Value) (types.Value, error) {
		els, err := types.ArrayElems(v[0])
		return types.Int4(int32(len(els))), err
	}), nil
}

// arrayToStringFunc is array_to_string(a, sep [, null]): the non-NULL
// elements' text joined by sep, NULLs as null when given. A text argument
// is read as a text[]'s literal (the catalog's arrays psql reads).
func arrayToStringFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) != 2 && len(args) != 3 {
		return nil, noSuchFunc(f, args)
	}
	a := args[0]
	if !types.IsString(a.typ()) {
		var err error
		if a, err = arrayArg(c, f, args, 0); err != nil {
			return nil, err
		}
	}
	xs := []expr{a}
	for _, x := range args[1:] {
		y, err := c.coerce(x, types.TText)
		if err != nil {
			return nil, err
		}
		if !types.IsString(y.typ()) {
			return nil, noSuchFunc(f, args)
		}
		xs = append(xs, y)
	}
	return &funcExpr{name: "array_to_string", t: types.TText, args: xs, fn: func(_ *env, v []types.Value) (types.Value, error) {
		if v[0].Null || v[1].Null {
			return nullText, nil
		}
		var els []types.Value
		var err error
		if types.IsArray(v[0].T) {
			els, err = types.ArrayElems(v[0])
		} else {
			els, err = parseTextArray(v[0].S)
		}
		if err != nil {
			return types.Value{}, err
		}
		var out []string
		for _, e := range els {
			switch {
			case !e.Null:
				out = append(out, e.String())
			case len(v) > 2 && !v[2].Null:
				out = append(out, v[2].S)
			}
		}
		return types.Text(strings.Join(out, v[1].S)), nil
	}}, nil
}

// stringToArrayFunc is string_to_array(s, sep [, null]): s split at each
// sep (a NULL sep: into characters, an empty one: s whole), the pieces
// equal to null made NULL; an empty s gives an empty array.
func stringToArrayFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) != 2 && len(args) != 3 {
		return nil, noSuchFunc(f, args)
	}
	want := make([]types.Type, len(args))
	for i := range want {
		want[i] = types.TText
	}
	xs, err := wantTypes(c, f, args, want...)
	if err != nil {
		return nil, err
	}
	return &funcExpr{name: "string_to_array", t: types.TTextArray, args: xs, fn: func(_ *env, v []types.Value) (types.Value, error) {
		if v[0].Null {
			return types.Null(types.TTextArray), nil
		}
		var parts []string
		switch {
		case v[0].S == "":
		case v[1].Null:
			for _, r := range v[0].S {
				parts = append(parts, string(r))
			}
		case v[1].S == "":
			parts = []string{v[0].S}
		default:
			parts = strings.Split(v[0].S, v[1].S)
		}
		els := make([]types.Value, len(parts))
		for i, p := range parts {
			els[i] = types.Text(p)
			if len(v) > 2 && !v[2].Null && p == v[2].S {
				els[i] = nullText
			}
		}
		return types.MakeArray(types.TTextArray, els)
	}}, nil
}

// arrayOp compiles l op r for op ||, @>, <@ or && when a side is an array
// (ok false otherwise): || appends an element, prepends one or joins two
// arrays; @> (contains), <@ (is contained by) and && (overlaps) compare
// the elements as sets, a NULL element equal to nothing.
func (c *compiler) arrayOp(a *pg.A_Expr, op string) (expr, bool, error) {
	if op != "||" && op != "@>" && op != "<@" && op != "&&" {
		return nil, false, nil
	}
	l, err := c.compile(a.Lexpr, types.TUnknown)
	if err != nil {
		return nil, true, err
	}
	r, err := c.compile(a.Rexpr, types.TUnknown)
	if err != nil {
		return nil, true, err
	}
	la, ra := types.IsArray(l.typ()), types.IsArray(r.typ())
	if !la && !ra {
		return nil, false, nil
	}
	nope := func() (expr, bool, error) {
		return nil, true, &pgerror.Error{Code: pgerror.CodeUndefinedFunction, Message: "operator does not exist: " + l.typ().String() + " " + op + " " + r.typ().String(),
			Hint: "No operator matches the given name and argument types. You might need to add explicit type casts.", Position: a.Location + 1}
	}
	t := l.typ()
	if !la {
		t = r.typ()
	}
	// an untyped side is an array of the other's type for @>, <@, && and
	// for || (PostgreSQL's anyarray || anyarray wins over the element)
	if l, err = c.coerce(l, t); err != nil {
		return nil, true, err
	}
	if r, err = c.coerce(r, t); err != nil {
		return nil, true, err
	}
	la, ra = types.IsArray(l.typ()), types.IsArray(r.typ())
	et := types.ElemType(t)
	sameArr := la && ra && (l.typ() == r.typ() || types.IsIntArray(l.typ()) && types.IsIntArray(r.typ()))
	if op != "||" {
		if !sameArr {
			return nope()
		}
		return &funcExpr{name: op, t: types.TBool, args: []expr{l, r}, fn: func(_ *env, v []types.Value) (types.Value, error) {
			if v[0].Null || v[1].Null {
				return types.Null(types.TBool), nil
			}
			x, err := types.ArrayElems(v[0])
			if err != nil {
				return types.Value{}, err
			}
			y, err := types.ArrayElems(v[1])
			if err != nil {
				return types.Value{}, err
			}
			switch op {
			case "@>":
				return types.Bool(containsAll(x, y)), nil
			case "<@":
				return types.Bool(containsAll(y, x)), nil
			}
			for _, e := range x {
				if !e.Null && containsAll(y, []types.Value{e}) {
					return types.Bool(true), nil
				}
			}
			return types.Bool(false), nil
		}}, true, nil
	}
	if types.IsIntArray(l.typ()) && types.IsIntArray(r.typ()) && l.typ() != r.typ() {
		t = types.TInt8Array
	}
	switch {
	case sameArr:
	case la && !ra && comparable(r.typ(), et), ra && !la && comparable(l.typ(), et):
	case la && !ra && types.IsString(r.typ()) && et == types.TText, ra && !la && types.IsString(l.typ()) && et == types.TText:
	default:
		return nope()
	}
	return &funcExpr{name: "||", t: t, args: []expr{l, r}, fn: func(_ *env, v []types.Value) (types.Value, error) {
		var els []types.Value
		for i, x := range v {
			switch {
			case []bool{la, ra}[i] && x.Null:
			case []bool{la, ra}[i]:
				xs, err := types.ArrayElems(x)
				if err != nil {
					return types.Value{}, err
				}
				els = append(els, xs...)
			default:
				if !x.Null && x.T != types.ElemType(t) {
					var err error
					if x, err = types.Cast(x, types.ElemType(t)); err != nil {
						return types.Value{}, err
					}
				}
				els = append(els, x)
			}
		}
		if la && ra && v[0].Null && v[1].Null {
			return types.Null(t), nil
		}
		return types.MakeArray(t, els)
	}}, true, nil
}

// containsAll reports whether every element of y equals one of x (a NULL
// element equals nothing).
func containsAll(x, y []types.Value) bool {
	for _, b := range y {
		found := false
		for _, a := range x {
			if !a.Null && !b.Null && types.Compare(a, b) == 0 {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
