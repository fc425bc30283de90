package sqlfe

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// The functions and operators of one-dimensional arrays (types/array.go
// holds the values): array_length, cardinality, array_upper, array_lower,
// array_to_string, string_to_array, array_cat, array_append,
// array_prepend, array_position, array_remove, and ||, @>, <@ and &&
// (arrayOp). Here their arguments are resolved; what they compute is
// sql/eval's (array.go).

func init() {
	for name, f := range map[string]polyFunc{
		"array_length":    arrayDimFunc("array_length", func(n int) int { return n }),
		"array_upper":     arrayDimFunc("array_upper", func(n int) int { return n }),
		"array_lower":     arrayDimFunc("array_lower", func(int) int { return 1 }),
		"cardinality":     cardinalityFunc,
		"array_to_string": arrayToStringFunc,
		"string_to_array": stringToArrayFunc,
		"array_cat":       arrayConcatFunc("array_cat", -1),
		"array_append":    arrayConcatFunc("array_append", 1),
		"array_prepend":   arrayConcatFunc("array_prepend", 0),
		"array_position":  arrayPositionFunc,
		"array_remove":    arrayRemoveFunc,
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
		return strict(name, types.TInt4, []expr{a, dim}, func(v []types.Value) (types.Value, error) { return eval.ArrayDim(v, of) }), nil
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
	return strict("cardinality", types.TInt4, []expr{a}, eval.Cardinality), nil
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
	return &funcExpr{name: "array_to_string", t: types.TText, args: xs, fn: pure(eval.ArrayToString)}, nil
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
	return &funcExpr{name: "string_to_array", t: types.TTextArray, args: xs, fn: pure(eval.StringToArray)}, nil
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
	switch {
	case !la && !ra && op == "||":
		x, err := c.concatExprs(a, l, r) // compile.go: text || text
		return x, true, err
	case !la && !ra:
		return nil, false, nil // jsonb's @>, <@ (jsonfuncs.go)
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
	if op != "||" {
		if !la || !ra || l.typ() != r.typ() && !(types.IsIntArray(l.typ()) && types.IsIntArray(r.typ())) {
			return nope()
		}
		return &funcExpr{name: op, t: types.TBool, args: []expr{l, r}, fn: func(_ *env, v []types.Value) (types.Value, error) {
			return eval.ArrayCompare(op, v)
		}}, true, nil
	}
	x, ok := arrayConcat("||", l, r)
	if !ok {
		return nope()
	}
	return x, true, nil
}

// arrayConcat is l || r (array_cat, array_append, array_prepend) of typed
// operands, one at least an array; false if their types do not fit.
func arrayConcat(name string, l, r expr) (expr, bool) {
	la, ra := types.IsArray(l.typ()), types.IsArray(r.typ())
	t := l.typ()
	if !la {
		t = r.typ()
	}
	et := types.ElemType(t)
	switch {
	case types.IsIntArray(l.typ()) && types.IsIntArray(r.typ()):
		if l.typ() != r.typ() {
			t = types.TInt8Array
		}
	case la && ra && l.typ() == r.typ():
	case la && !ra && comparable(r.typ(), et), ra && !la && comparable(l.typ(), et):
	case la && !ra && types.IsString(r.typ()) && et == types.TText, ra && !la && types.IsString(l.typ()) && et == types.TText:
	default:
		return nil, false
	}
	isArr := []bool{la, ra}
	return &funcExpr{name: name, t: t, args: []expr{l, r}, fn: func(_ *env, v []types.Value) (types.Value, error) {
		return eval.ArrayConcat(v, t, isArr)
	}}, true
}

// arrayConcatFunc is array_cat(a, b), array_append(a, e) or
// array_prepend(e, a): || with the element's side an element (an untyped
// literal there is of the array's element type).
func arrayConcatFunc(name string, elem int) polyFunc {
	return func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		if len(args) != 2 {
			return nil, noSuchFunc(f, args)
		}
		arr := 1 - elem
		if elem < 0 {
			arr = 0
		}
		a, err := arrayArg(c, f, args, arr)
		if err != nil {
			return nil, err
		}
		xs := []expr{args[0], args[1]}
		xs[arr] = a
		other := 1 - arr
		want := a.typ()
		if elem >= 0 {
			want = types.ElemType(a.typ())
		}
		if xs[other], err = c.coerce(xs[other], want); err != nil {
			return nil, err
		}
		if elem >= 0 && types.IsArray(xs[other].typ()) || elem < 0 && !types.IsArray(xs[other].typ()) {
			return nil, noSuchFunc(f, args)
		}
		x, ok := arrayConcat(name, xs[0], xs[1])
		if !ok {
			return nil, noSuchFunc(f, args)
		}
		return x, nil
	}
}

// arrayElemArgs compiles (array, element) arguments: an untyped element is
// of the array's element type, which a typed one must compare with.
func arrayElemArgs(c *compiler, f *pg.FuncCall, args []expr) (expr, expr, error) {
	a, err := arrayArg(c, f, args, 0)
	if err != nil {
		return nil, nil, err
	}
	et := types.ElemType(a.typ())
	e, err := c.coerce(args[1], et)
	if err != nil {
		return nil, nil, err
	}
	if !comparable(e.typ(), et) && !(types.IsString(e.typ()) && et == types.TText) {
		return nil, nil, noSuchFunc(f, args)
	}
	return a, e, nil
}

// arrayPositionFunc is array_position(a, e): the subscript of e's first
// occurrence (IS NOT DISTINCT FROM: NULL finds a NULL), NULL if none.
func arrayPositionFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) != 2 {
		return nil, noSuchFunc(f, args)
	}
	a, e, err := arrayElemArgs(c, f, args)
	if err != nil {
		return nil, err
	}
	return &funcExpr{name: "array_position", t: types.TInt4, args: []expr{a, e}, fn: pure(eval.ArrayPosition)}, nil
}

// arrayRemoveFunc is array_remove(a, e): a without the elements equal to
// e (IS NOT DISTINCT FROM).
func arrayRemoveFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) != 2 {
		return nil, noSuchFunc(f, args)
	}
	a, e, err := arrayElemArgs(c, f, args)
	if err != nil {
		return nil, err
	}
	t := a.typ()
	return &funcExpr{name: "array_remove", t: t, args: []expr{a, e}, fn: func(_ *env, v []types.Value) (types.Value, error) {
		return eval.ArrayRemove(v, t)
	}}, nil
}
