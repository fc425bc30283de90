package sqlfe

import (
	"math"
	"math/rand/v2"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// The ordinary string and math functions whose signatures the fixed table
// of funcs.go cannot say: optional arguments (substr, trim's set of
// characters, round's places), variadic ones (concat, concat_ws) and
// results of the argument's type (abs, round). Each is compiled by a
// polyFunc that checks the argument types as PostgreSQL resolves them
// among our types and returns the expression; a NULL argument gives NULL
// (they are strict) except for concat and concat_ws, as in PostgreSQL.
// What each computes is sql/eval's (text.go, math.go, date.go).

type polyFunc func(c *compiler, f *pg.FuncCall, args []expr) (expr, error)

// polyFuncs is filled by init functions (this file's and the type files'),
// in any order.
var polyFuncs = map[string]polyFunc{}

func init() {
	for name, f := range map[string]polyFunc{
		"substr":       substrFunc,
		"substring":    substrFunc,
		"btrim":        trimFunc(true, true),
		"ltrim":        trimFunc(true, false),
		"rtrim":        trimFunc(false, true),
		"strpos":       strictText("strpos", types.TInt4, 2, eval.StrPos),
		"position":     strictText("position", types.TInt4, 2, eval.StrPos), // the grammar puts position(sub IN s)'s string first
		"replace":      strictText("replace", types.TText, 3, eval.Replace),
		"reverse":      strictText("reverse", types.TText, 1, eval.Reverse),
		"md5":          strictText("md5", types.TText, 1, eval.MD5),
		"starts_with":  strictText("starts_with", types.TBool, 2, eval.StartsWith),
		"char_length":  strictText("char_length", types.TInt4, 1, eval.CharLength),
		"octet_length": strictText("octet_length", types.TInt4, 1, eval.OctetLength),
		"initcap":      strictText("initcap", types.TText, 1, eval.Initcap),
		"left":         leftRight(true),
		"right":        leftRight(false),
		"repeat":       repeatFunc,
		"split_part":   splitPart,
		"concat":       concatFunc(false),
		"concat_ws":    concatFunc(true),
		"abs":          absFunc,
		"round":        roundFunc("round"),
		"trunc":        roundFunc("trunc"),
		"ceil":         ceilFloor(true),
		"ceiling":      ceilFloor(true),
		"floor":        ceilFloor(false),
		"sign":         signFunc,
		"mod":          modFunc,
		"extract":      extractFunc,
		"sqrt": float1("sqrt", math.Sqrt, func(x float64) error {
			if x < 0 {
				return pgerror.Errorf(pgerror.CodeInvalidArgument, "cannot take square root of a negative number")
			}
			return nil
		}, types.NumericSqrt),
		"exp":        float1("exp", math.Exp, nil, types.NumericExp),
		"ln":         float1("ln", math.Log, eval.LogCheck, types.NumericLn),
		"log":        logFunc,
		"log10":      float1("log10", math.Log10, eval.LogCheck, eval.NumericLog10),
		"power":      powerFunc,
		"pow":        powerFunc,
		"random":     randomFunc,
		"pi":         piFunc,
		"date_trunc": dateTruncFunc,
	} {
		if polyFuncs[name] == nil { // a type file's overload (bytea.go's octet_length) comes first
			polyFuncs[name] = f
		}
	}
	polyFuncs["character_length"] = polyFuncs["char_length"]
}

// noSuchFunc is PostgreSQL's 42883 for a call no signature matches.
func noSuchFunc(f *pg.FuncCall, args []expr) error {
	names := strs(f.Funcname)
	var types []string
	for _, a := range args {
		types = append(types, a.typ().String())
	}
	return &pgerror.Error{Code: pgerror.CodeUndefinedFunction, Message: "function " + strings.Join(names, ".") + "(" + strings.Join(types, ", ") + ") does not exist",
		Hint: "No function matches the given name and argument types. You might need to add explicit type casts.", Position: f.Location + 1}
}

// wantTypes coerces args to want (unknowns resolved, integers widened,
// numbers made double precision, character(n) read as text) or reports
// 42883.
func wantTypes(c *compiler, f *pg.FuncCall, args []expr, want ...types.Type) ([]expr, error) {
	if len(args) != len(want) {
		return nil, noSuchFunc(f, args)
	}
	out := make([]expr, len(args))
	for i, a := range args {
		x, err := c.coerce(a, want[i])
		if err != nil {
			return nil, err
		}
		switch {
		case x.typ() == want[i]:
		case types.IsInt(x.typ()) && (types.IsInt(want[i]) || want[i] == types.TNumeric), x.typ() == types.TBpchar && want[i] == types.TText,
			eval.IsNumeric(x.typ()) && types.IsFloat(want[i]):
			x = &castExpr{arg: x, t: want[i]}
		default:
			return nil, noSuchFunc(f, args)
		}
		out[i] = x
	}
	return out, nil
}

// strict wraps fn: NULL if any argument is NULL.
func strict(name string, t types.Type, args []expr, fn func([]types.Value) (types.Value, error)) expr {
	return &funcExpr{name: name, t: t, args: args, fn: func(_ *env, a []types.Value) (types.Value, error) {
		for _, v := range a {
			if v.Null {
				return types.Null(t), nil
			}
		}
		return fn(a)
	}}
}

func strictText(name string, t types.Type, n int, fn func([]types.Value) (types.Value, error)) polyFunc {
	return func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		want := make([]types.Type, n)
		for i := range want {
			want[i] = types.TText
		}
		xs, err := wantTypes(c, f, args, want...)
		if err != nil {
			return nil, err
		}
		return strict(name, t, xs, fn), nil
	}
}

func substrFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	want := []types.Type{types.TText, types.TInt4, types.TInt4}[:len(args)]
	if len(args) < 2 || len(args) > 3 {
		return nil, noSuchFunc(f, args)
	}
	if t := args[1].typ(); types.IsString(t) || t == types.TUnknown {
		// substring(text FROM pattern [FOR escape]): PostgreSQL resolves a
		// text (or untyped) second argument to the regular-expression forms
		return substringPattern(c, f, args) // conditional.go
	}
	xs, err := wantTypes(c, f, args, want...)
	if err != nil {
		return nil, err
	}
	return strict("substr", types.TText, xs, eval.Substr), nil
}

func trimFunc(left, right bool) polyFunc {
	fn := eval.Btrim
	if !right {
		fn = eval.Ltrim
	} else if !left {
		fn = eval.Rtrim
	}
	return func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		if len(args) == 1 {
			args = append(args, &constExpr{types.Text(" ")})
		}
		xs, err := wantTypes(c, f, args, types.TText, types.TText)
		if err != nil {
			return nil, err
		}
		return strict(strs(f.Funcname)[len(strs(f.Funcname))-1], types.TText, xs, fn), nil
	}
}

func leftRight(left bool) polyFunc {
	fn := eval.Right
	if left {
		fn = eval.Left
	}
	return func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		xs, err := wantTypes(c, f, args, types.TText, types.TInt4)
		if err != nil {
			return nil, err
		}
		return strict("left", types.TText, xs, fn), nil
	}
}

func repeatFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	xs, err := wantTypes(c, f, args, types.TText, types.TInt4)
	if err != nil {
		return nil, err
	}
	return strict("repeat", types.TText, xs, eval.Repeat), nil
}

func splitPart(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	xs, err := wantTypes(c, f, args, types.TText, types.TText, types.TInt4)
	if err != nil {
		return nil, err
	}
	return strict("split_part", types.TText, xs, eval.SplitPart), nil
}

func concatFunc(ws bool) polyFunc {
	return func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		if len(args) == 0 || (ws && len(args) < 2) {
			return nil, noSuchFunc(f, args)
		}
		for i, a := range args {
			x, err := c.coerce(a, types.TText)
			if err != nil {
				return nil, err
			}
			args[i] = x
		}
		name, fn := "concat", eval.Concat
		if ws {
			name, fn = "concat_ws", eval.ConcatWS
		}
		return &funcExpr{name: name, t: types.TText, args: args, fn: pure(fn)}, nil
	}
}

// numArg resolves a math function's one numeric argument (unknown:
// numeric, as PostgreSQL picks for a literal here).
func numArg(c *compiler, f *pg.FuncCall, args []expr, n int) ([]expr, error) {
	if len(args) < 1 || len(args) > n {
		return nil, noSuchFunc(f, args)
	}
	x, err := c.coerce(args[0], types.TNumeric)
	if err != nil {
		return nil, err
	}
	if !types.IsNumber(x.typ()) && !types.IsFloat(x.typ()) {
		return nil, noSuchFunc(f, args)
	}
	args[0] = x
	for i := 1; i < len(args); i++ {
		y, err := c.coerce(args[i], types.TInt4)
		if err != nil {
			return nil, err
		}
		if !types.IsInt(y.typ()) {
			return nil, noSuchFunc(f, args)
		}
		args[i] = y
	}
	return args, nil
}

func absFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	xs, err := numArg(c, f, args, 1)
	if err != nil {
		return nil, err
	}
	if types.IsFloat(xs[0].typ()) {
		return floatFunc("abs", xs[0], math.Abs), nil
	}
	t := xs[0].typ()
	return strict("abs", t, xs, eval.Abs), nil
}

func signFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	xs, err := numArg(c, f, args, 1)
	if err != nil {
		return nil, err
	}
	if types.IsFloat(xs[0].typ()) {
		return floatFunc("sign", &castExpr{arg: xs[0], t: types.TFloat8}, func(x float64) float64 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return 0
		}), nil
	}
	if types.IsInt(xs[0].typ()) {
		xs[0] = &castExpr{arg: xs[0], t: types.TNumeric}
	}
	return strict("sign", types.TNumeric, xs, eval.NumericSign), nil
}

func modFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) != 2 {
		return nil, noSuchFunc(f, args)
	}
	l, r, err := c.binaryExprs(args[0], args[1])
	if err != nil {
		return nil, err
	}
	if !types.IsNumber(l.typ()) || !types.IsNumber(r.typ()) {
		return nil, noSuchFunc(f, args)
	}
	t := types.TInt4
	switch {
	case l.typ() == types.TNumeric || r.typ() == types.TNumeric:
		t = types.TNumeric
	case l.typ() == types.TInt8 || r.typ() == types.TInt8:
		t = types.TInt8
	}
	return &arithExpr{op: '%', l: l, r: r, t: t}, nil
}

// binaryExprs gives two compiled arguments one type when one is untyped.
func (c *compiler) binaryExprs(l, r expr) (expr, expr, error) {
	var err error
	if l.typ() == types.TUnknown && r.typ() != types.TUnknown {
		l, err = c.coerce(l, r.typ())
	} else if r.typ() == types.TUnknown && l.typ() != types.TUnknown {
		r, err = c.coerce(r, l.typ())
	} else if l.typ() == types.TUnknown {
		if l, err = c.coerce(l, types.TNumeric); err == nil {
			r, err = c.coerce(r, types.TNumeric)
		}
	}
	return l, r, err
}

// roundFunc is round (half away from zero) or trunc of a numeric to a
// number of places (0 by default); of an integer argument, a numeric.
func roundFunc(name string) polyFunc {
	return func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		xs, err := numArg(c, f, args, 2)
		if err != nil {
			return nil, err
		}
		if types.IsFloat(xs[0].typ()) {
			if len(xs) == 2 {
				return nil, noSuchFunc(f, xs) // round(double precision, integer) does not exist
			}
			fn := math.RoundToEven // rint
			if name == "trunc" {
				fn = math.Trunc
			}
			return floatFunc(name, &castExpr{arg: xs[0], t: types.TFloat8}, fn), nil
		}
		if types.IsInt(xs[0].typ()) {
			xs[0] = &castExpr{arg: xs[0], t: types.TNumeric}
		}
		fn := eval.Round
		if name == "trunc" {
			fn = eval.Trunc
		}
		return strict(name, types.TNumeric, xs, fn), nil
	}
}

// ceilFloor is ceil/ceiling or floor: of a numeric, a numeric of scale 0;
// of an integer, the integer's value as numeric.
func ceilFloor(ceil bool) polyFunc {
	return func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		xs, err := numArg(c, f, args, 1)
		if err != nil {
			return nil, err
		}
		if types.IsFloat(xs[0].typ()) {
			fn := math.Floor
			if ceil {
				fn = math.Ceil
			}
			return floatFunc("ceil", &castExpr{arg: xs[0], t: types.TFloat8}, fn), nil
		}
		if types.IsInt(xs[0].typ()) {
			xs[0] = &castExpr{arg: xs[0], t: types.TNumeric}
		}
		fn := eval.Floor
		if ceil {
			fn = eval.Ceil
		}
		return strict("ceil", types.TNumeric, xs, fn), nil
	}
}

// booleanTest is IS [NOT] TRUE / FALSE / UNKNOWN: never NULL.
type booleanTest struct {
	arg  expr
	test pg.BoolTestType
}

func (b *booleanTest) typ() types.Type { return types.TBool }
func (b *booleanTest) kids() []expr    { return []expr{b.arg} }
func (b *booleanTest) eval(e *env) (types.Value, error) {
	v, err := b.arg.eval(e)
	if err != nil {
		return v, err
	}
	isTrue, isFalse := !v.Null && v.I != 0, !v.Null && v.I == 0
	switch b.test {
	case pg.BoolTestType_IS_TRUE:
		return types.Bool(isTrue), nil
	case pg.BoolTestType_IS_NOT_TRUE:
		return types.Bool(!isTrue), nil
	case pg.BoolTestType_IS_FALSE:
		return types.Bool(isFalse), nil
	case pg.BoolTestType_IS_NOT_FALSE:
		return types.Bool(!isFalse), nil
	case pg.BoolTestType_IS_UNKNOWN:
		return types.Bool(v.Null), nil
	}
	return types.Bool(!v.Null), nil // IS NOT UNKNOWN
}

// extractFunc is extract(field FROM x) (the grammar's extract('field', x))
// and date_part('field', x), on a date, timestamp or timestamptz.
func extractFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) != 2 {
		return nil, noSuchFunc(f, args)
	}
	field, err := c.coerce(args[0], types.TText)
	if err != nil {
		return nil, err
	}
	if t := args[1].typ(); (t == types.TInterval || t == types.TTime) && types.IsString(field.typ()) {
		return strict("extract", types.TNumeric, []expr{field, args[1]}, eval.ExtractIntervalTime), nil
	}
	x, err := c.coerce(args[1], types.TTimestamptz)
	if err != nil {
		return nil, err
	}
	if !types.IsString(field.typ()) || !types.IsDateTime(x.typ()) {
		return nil, noSuchFunc(f, args)
	}
	return strict("extract", types.TNumeric, []expr{field, x}, eval.Extract), nil
}

// dateTruncFunc is date_trunc(unit, x): a timestamp or timestamptz of x's
// type (a date becomes a timestamptz, as PostgreSQL resolves it).
func dateTruncFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) != 2 {
		return nil, noSuchFunc(f, args)
	}
	unit, err := c.coerce(args[0], types.TText)
	if err != nil {
		return nil, err
	}
	if args[1].typ() == types.TInterval && types.IsString(unit.typ()) {
		return strict("date_trunc", types.TInterval, []expr{unit, args[1]}, eval.DateTruncInterval), nil
	}
	x, err := c.coerce(args[1], types.TTimestamptz)
	if err != nil {
		return nil, err
	}
	if !types.IsString(unit.typ()) || !types.IsDateTime(x.typ()) {
		return nil, noSuchFunc(f, args)
	}
	t := x.typ()
	if t == types.TDate {
		t = types.TTimestamptz
	}
	return strict("date_trunc", t, []expr{unit, x}, func(a []types.Value) (types.Value, error) { return eval.DateTrunc(a, t) }), nil
}

// floatFunc applies fn to a float8 argument (the float forms of abs,
// round, ceil, floor, trunc, sign).
func floatFunc(name string, x expr, fn func(float64) float64) expr {
	t := x.typ()
	return strict(name, t, []expr{x}, func(a []types.Value) (types.Value, error) {
		return types.FloatValue(fn(types.FloatOf(a[0])), t), nil
	})
}

// logFunc is log(x), the base-10 logarithm of a double precision or a
// numeric, and log(b, x), of numerics only (integers are cast).
func logFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) == 1 {
		return float1("log", math.Log10, eval.LogCheck, eval.NumericLog10)(c, f, args)
	}
	if len(args) != 2 {
		return nil, noSuchFunc(f, args)
	}
	var xs []expr
	for _, a := range args {
		x, err := c.coerce(a, types.TNumeric)
		if err != nil {
			return nil, err
		}
		if !types.IsNumber(x.typ()) {
			return nil, noSuchFunc(f, args)
		}
		if x.typ() != types.TNumeric {
			x = &castExpr{arg: x, t: types.TNumeric}
		}
		xs = append(xs, x)
	}
	return strict("log", types.TNumeric, xs, eval.NumericLog), nil
}

// float1 is a function of one double precision argument (sqrt, exp, ln,
// log10), with check refusing what PostgreSQL refuses, or of one numeric
// (num), which an integer argument is not.
func float1(name string, fn func(float64) float64, check func(float64) error, num func(types.Value) (types.Value, error)) polyFunc {
	return func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		if len(args) != 1 {
			return nil, noSuchFunc(f, args)
		}
		x, err := c.coerce(args[0], types.TFloat8)
		if err != nil {
			return nil, err
		}
		if !types.IsNumber(x.typ()) && !types.IsFloat(x.typ()) {
			return nil, noSuchFunc(f, args)
		}
		if x.typ() == types.TNumeric {
			return strict(name, types.TNumeric, []expr{x}, func(a []types.Value) (types.Value, error) { return num(a[0]) }), nil
		}
		return strict(name, types.TFloat8, []expr{x}, func(a []types.Value) (types.Value, error) { return eval.Float1(a, fn, check) }), nil
	}
}

func powerFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) != 2 {
		return nil, noSuchFunc(f, args)
	}
	var xs []expr
	for _, a := range args {
		x, err := c.coerce(a, types.TFloat8)
		if err != nil {
			return nil, err
		}
		if !types.IsNumber(x.typ()) && !types.IsFloat(x.typ()) {
			return nil, noSuchFunc(f, args)
		}
		xs = append(xs, x)
	}
	return powerExpr(xs[0], xs[1])
}

// powerExpr is power(x, y) and x ^ y: over double precision, or, with a
// numeric and no float argument, numeric (types.NumericPower).
func powerExpr(l, r expr) (expr, error) {
	xs := []expr{l, r}
	if !types.IsFloat(xs[0].typ()) && !types.IsFloat(xs[1].typ()) && (xs[0].typ() == types.TNumeric || xs[1].typ() == types.TNumeric) {
		return strict("power", types.TNumeric, xs, eval.NumericPower), nil
	}
	for i, x := range xs {
		if !types.IsFloat(x.typ()) {
			xs[i] = &castExpr{arg: x, t: types.TFloat8}
		}
	}
	return strict("power", types.TFloat8, xs, eval.FloatPower), nil
}

func randomFunc(_ *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) != 0 {
		return nil, noSuchFunc(f, args)
	}
	return &funcExpr{name: "random", t: types.TFloat8, fn: func(*env, []types.Value) (types.Value, error) {
		return types.FloatValue(rand.Float64(), types.TFloat8), nil
	}}, nil
}

func piFunc(_ *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) != 0 {
		return nil, noSuchFunc(f, args)
	}
	return &constExpr{types.FloatValue(math.Pi, types.TFloat8)}, nil
}
