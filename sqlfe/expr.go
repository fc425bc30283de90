package sqlfe

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tupled/tupled/sql/pgerror"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// env is what an expression sees when evaluated: the current row (nil when
// there is no FROM), the statement's parameters, the session.
type env struct {
	ctx    context.Context
	s      *Session
	row    []Value
	params []Value
	// exec identifies one execution of a statement: what is computed once
	// per execution (an uncorrelated subquery's rows) is kept under it;
	// nil: nothing is kept
	exec *execRun
	// outer is the enclosing query's env while a correlated subquery
	// runs: what its outerExprs read
	outer *env
}

// outerExpr reads x, a column of an enclosing query, from the outer env.
// It has no kids: to the subquery it is a value fixed while it runs (so a
// key lookup may be bounded by it).
type outerExpr struct{ x expr }

func (o *outerExpr) typ() Type    { return o.x.typ() }
func (o *outerExpr) kids() []expr { return nil }
func (o *outerExpr) eval(e *env) (Value, error) {
	if e.outer == nil {
		return Value{}, pgerror.Errorf(pgerror.CodeInternal, "an outer reference evaluated outside its subquery")
	}
	return o.x.eval(e.outer)
}

// execRun is one execution of a statement (see env.exec).
type execRun struct{ _ byte }

// expr is a compiled, typed expression.
type expr interface {
	eval(e *env) (Value, error)
	typ() Type
	kids() []expr
}

// usesRow reports whether x reads a column (so it cannot be a key bound).
func usesRow(x expr) bool {
	if _, ok := x.(*colExpr); ok {
		return true
	}
	for _, k := range x.kids() {
		if usesRow(k) {
			return true
		}
	}
	return false
}

type constExpr struct{ v Value }

func (c *constExpr) eval(*env) (Value, error) { return c.v, nil }
func (c *constExpr) typ() Type                { return c.v.T }
func (c *constExpr) kids() []expr             { return nil }

type colExpr struct {
	idx int
	t   Type
	m   typeMod // the column's declared modifier
}

// exprMod is the type modifier x's values are known to have: a column's
// declared one, a cast's.
func exprMod(x expr) typeMod {
	switch y := x.(type) {
	case *colExpr:
		return y.m
	case *modExpr:
		return y.m
	case *aggColumn:
		return y.m
	case *outerExpr:
		return exprMod(y.x)
	}
	return typeMod{}
}

func (c *colExpr) eval(e *env) (Value, error) { return e.row[c.idx], nil }
func (c *colExpr) typ() Type                  { return c.t }
func (c *colExpr) kids() []expr               { return nil }

type paramExpr struct {
	n     int // 0-based
	types *[]Type
}

func (p *paramExpr) eval(e *env) (Value, error) {
	if p.n >= len(e.params) {
		return Value{}, pgerror.Errorf(pgerror.CodeProtocolViolation, "there is no parameter $%d", p.n+1)
	}
	v := e.params[p.n]
	t := p.typ()
	if v.T != t && t != TUnknown {
		return castValue(v, t)
	}
	return v, nil
}
func (p *paramExpr) typ() Type    { return (*p.types)[p.n] }
func (p *paramExpr) kids() []expr { return nil }

// castExpr converts its argument to t at run time.
type castExpr struct {
	arg expr
	t   Type
}

func (c *castExpr) eval(e *env) (Value, error) {
	v, err := c.arg.eval(e)
	if err != nil {
		return v, err
	}
	return castValue(v, c.t)
}
func (c *castExpr) typ() Type    { return c.t }
func (c *castExpr) kids() []expr { return []expr{c.arg} }

func castValue(v Value, t Type) (Value, error) {
	if v.Null {
		return Null(t), nil
	}
	if v.T == t {
		return v, nil
	}
	if r, ok := castDateTime(v, t); ok { // datetime.go
		return r, nil
	}
	if r, ok, err := castFloat(v, t); ok { // float.go
		return r, err
	}
	if isJSON(v.T) && isJSON(t) { // json.go
		return castJSON(v, t)
	}
	switch {
	case t == TText && v.T == TBpchar:
		return Text(bpcharTrim(v.S)), nil // PostgreSQL's rtrim1
	case isString(t) && !isString(v.T) && v.T != TUnknown:
		return Value{T: t, S: textOut(v)}, nil
	case isString(t) && isString(v.T), v.T == TUnknown:
		return ParseText(t, v.S)
	case v.T == TText || v.T == TBpchar:
		return ParseText(t, v.S)
	case isIntArray(v.T) && isIntArray(t):
		if t == TInt4Array {
			for _, x := range v.A {
				if x < math.MinInt32 || x > math.MaxInt32 {
					return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "integer out of range")
				}
			}
		}
		return Value{T: t, A: v.A}, nil
	case isInt(v.T) && isInt(t):
		return intResult(v.I, t)
	case v.T == TInt4 && t == TBool:
		return Bool(v.I != 0), nil
	case v.T == TBool && t == TInt4:
		return Int4(int32(v.I)), nil
	case isInt(v.T) && t == TNumeric:
		return Value{T: TNumeric, S: strconv.FormatInt(v.I, 10)}, nil
	case v.T == TNumeric && isInt(t):
		return numericToInt(v, t)
	}
	return Value{}, pgerror.Errorf(pgerror.CodeCannotCoerce, "cannot cast type %s to %s", v.T, t)
}

// canCast reports whether PostgreSQL has a cast from a to b among our types
// (bool to and from integer, not bigint or smallint; anything to and from
// text).
func canCast(a Type, am typeMod, b Type, bm typeMod) bool {
	switch {
	case a == b && a != TBool && !isInt(a):
		return true
	case a == TUnknown || isString(a) || isString(b):
		return true
	case (isNumber(a) || isFloat(a)) && (isNumber(b) || isFloat(b)):
		return true
	case a == TBool && b == TBool:
		return true
	case isDateTime(a) && isDateTime(b), isIntArray(a) && isIntArray(b), isJSON(a) && isJSON(b):
		return true
	case a == TBool && b == TInt4:
		return !bm.Int2
	case a == TInt4 && b == TBool:
		return !am.Int2
	}
	return false
}

// textOut is the text a value converts to in a cast to text or in ||:
// booleans give "true" and "false" (PostgreSQL's booltext), unlike their
// output format "t" and "f".
func textOut(v Value) string {
	if v.T == TBool {
		if v.I != 0 {
			return "true"
		}
		return "false"
	}
	return v.String()
}

// typeMod narrows a Type: smallint is an integer checked to 16 bits,
// varchar(n) a text of at most n characters, character(n) (a TBpchar) one of
// exactly n, blank-padded.
type typeMod struct {
	Int2   bool
	MaxLen int
	// Varchar marks character varying (with or without a length): a text
	// that clients see as varchar (OID 1043)
	Varchar bool
	// Prec > 0: numeric(Prec, Scale): values are rounded to Scale digits
	// after the point (before it when negative) and must have at most
	// Prec - Scale before it (22003)
	Prec, Scale int
}

func (m typeMod) name(t Type) string {
	switch {
	case m.Int2:
		return "smallint"
	case m.MaxLen > 0 && t == TBpchar:
		return fmt.Sprintf("character(%d)", m.MaxLen)
	case m.MaxLen > 0:
		return fmt.Sprintf("character varying(%d)", m.MaxLen)
	case m.Varchar && t == TText:
		return "character varying"
	case m.Prec > 0:
		return fmt.Sprintf("numeric(%d,%d)", m.Prec, m.Scale)
	}
	return t.String()
}

// bpcharPad blank-pads s to n characters (n = 0: unlimited, s unchanged).
func bpcharPad(s string, n int) string {
	if n == 0 || len(s) >= 4*n {
		return s
	}
	if c := utf8.RuneCountInString(s); c < n {
		return s + strings.Repeat(" ", n-c)
	}
	return s
}

// castMod converts v to type t with modifier m: explicit for a cast (which
// truncates a varchar silently), else an assignment (which refuses to cut
// anything but spaces: 22001).
func castMod(v Value, t Type, m typeMod, explicit bool) (Value, error) {
	if v.Null {
		return Null(t), nil
	}
	if m.Int2 && (isString(v.T) || v.T == TUnknown) {
		i, err := strconv.ParseInt(strings.TrimSpace(v.S), 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "value %q is out of range for type smallint", v.S)
			}
			return Value{}, pgerror.Errorf(pgerror.CodeInvalidText, "invalid input syntax for type smallint: %q", v.S)
		}
		if i < math.MinInt16 || i > math.MaxInt16 {
			return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "value %q is out of range for type smallint", v.S)
		}
		return Int4(int32(i)), nil
	}
	v, err := castValue(v, t)
	if err != nil {
		return v, err
	}
	return applyMod(v, m, explicit)
}

// applyMod checks (or, for a varchar or character, truncates) a value of
// the right type against modifier m, and blank-pads a character(n), as
// PostgreSQL's varchar() and bpchar() length coercions do.
func applyMod(v Value, m typeMod, explicit bool) (Value, error) {
	if v.Null {
		return v, nil
	}
	if m.Int2 && (v.I < math.MinInt16 || v.I > math.MaxInt16) {
		return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "smallint out of range")
	}
	if m.Prec > 0 && v.T == TNumeric {
		return numericTypmod(v, m.Prec, m.Scale)
	}
	if m.MaxLen > 0 && len(v.S) > m.MaxLen && utf8.RuneCountInString(v.S) > m.MaxLen {
		cut, n := 0, 0
		for cut = range v.S {
			if n == m.MaxLen {
				break
			}
			n++
		}
		if !explicit && strings.TrimRight(v.S[cut:], " ") != "" {
			return Value{}, pgerror.Errorf(pgerror.CodeStringTooLong, "value too long for type %s", m.name(v.T))
		}
		v.S = v.S[:cut]
	}
	if v.T == TBpchar {
		v.S = bpcharPad(v.S, m.MaxLen)
	}
	return v, nil
}

// modExpr is a cast to a type with a modifier (smallint, varchar(n)).
type modExpr struct {
	arg      expr
	t        Type
	m        typeMod
	explicit bool
}

func (c *modExpr) eval(e *env) (Value, error) {
	v, err := c.arg.eval(e)
	if err != nil {
		return v, err
	}
	return castMod(v, c.t, c.m, c.explicit)
}
func (c *modExpr) typ() Type    { return c.t }
func (c *modExpr) kids() []expr { return []expr{c.arg} }

func intResult(i int64, t Type) (Value, error) {
	if t == TInt4 && (i < math.MinInt32 || i > math.MaxInt32) {
		return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "integer out of range")
	}
	return Value{T: t, I: i}, nil
}

// cmpValues compares two non-NULL values of comparable types.
func cmpValues(a, b Value) int {
	switch {
	case isFloat(a.T) || isFloat(b.T):
		return floatCmp(a, b)
	case a.T == TNumeric || b.T == TNumeric:
		return numericCmp(a, b)
	case isDateTime(a.T) && isDateTime(b.T):
		return instant(a).Compare(instant(b))
	case a.T == TJSONB:
		return jsonbCmp(a, b) // json.go
	case isInt(a.T) || a.T == TBool:
		switch {
		case a.I < b.I:
			return -1
		case a.I > b.I:
			return 1
		}
		return 0
	case a.T == TBpchar || b.T == TBpchar:
		return strings.Compare(bpcharTrim(a.S), bpcharTrim(b.S)) // bpcharcmp
	}
	return strings.Compare(a.S, b.S)
}

type cmpExpr struct {
	op   string // = <> < <= > >=
	l, r expr
}

func (c *cmpExpr) typ() Type    { return TBool }
func (c *cmpExpr) kids() []expr { return []expr{c.l, c.r} }
func (c *cmpExpr) eval(e *env) (Value, error) {
	a, err := c.l.eval(e)
	if err != nil {
		return a, err
	}
	b, err := c.r.eval(e)
	if err != nil {
		return b, err
	}
	if a.Null || b.Null {
		return Null(TBool), nil
	}
	return Bool(cmpOp(c.op, cmpValues(a, b))), nil
}

func cmpOp(op string, d int) bool {
	switch op {
	case "=":
		return d == 0
	case "<>":
		return d != 0
	case "<":
		return d < 0
	case "<=":
		return d <= 0
	case ">":
		return d > 0
	case ">=":
		return d >= 0
	}
	return false
}

type distinctExpr struct {
	not  bool // IS NOT DISTINCT FROM
	l, r expr
}

func (c *distinctExpr) typ() Type    { return TBool }
func (c *distinctExpr) kids() []expr { return []expr{c.l, c.r} }
func (c *distinctExpr) eval(e *env) (Value, error) {
	a, err := c.l.eval(e)
	if err != nil {
		return a, err
	}
	b, err := c.r.eval(e)
	if err != nil {
		return b, err
	}
	var distinct bool
	switch {
	case a.Null && b.Null:
		distinct = false
	case a.Null || b.Null:
		distinct = true
	default:
		distinct = cmpValues(a, b) != 0
	}
	return Bool(distinct != c.not), nil
}

type arithExpr struct {
	op   byte // + - * / %
	l, r expr
	t    Type
}

func (a *arithExpr) typ() Type    { return a.t }
func (a *arithExpr) kids() []expr { return []expr{a.l, a.r} }
func (a *arithExpr) eval(e *env) (Value, error) {
	x, err := a.l.eval(e)
	if err != nil {
		return x, err
	}
	y, err := a.r.eval(e)
	if err != nil {
		return y, err
	}
	if x.Null || y.Null {
		return Null(a.t), nil
	}
	if a.t == TNumeric {
		return numericArith(a.op, x, y)
	}
	if isFloat(a.t) {
		return floatArith(a.op, x, y, a.t) // float.go
	}
	i, j := x.I, y.I
	var r int64
	overflow := false
	switch a.op {
	case '+':
		r = i + j
		overflow = (j > 0 && r < i) || (j < 0 && r > i)
	case '-':
		r = i - j
		overflow = (j < 0 && r < i) || (j > 0 && r > i)
	case '*':
		r = i * j
		overflow = i != 0 && (r/i != j || (i == -1 && j == math.MinInt64))
	case '/', '%':
		if j == 0 {
			return Value{}, pgerror.Errorf(pgerror.CodeDivisionByZero, "division by zero")
		}
		if j == -1 {
			if a.op == '%' {
				return Value{T: a.t}, nil
			}
			r = -i
			overflow = i == math.MinInt64
		} else if a.op == '/' {
			r = i / j
		} else {
			r = i % j
		}
	}
	if overflow || (a.t == TInt4 && (r < math.MinInt32 || r > math.MaxInt32)) {
		if a.t == TInt8 {
			return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "bigint out of range")
		}
		return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "integer out of range")
	}
	return Value{T: a.t, I: r}, nil
}

type negExpr struct{ arg expr }

func (n *negExpr) typ() Type    { return n.arg.typ() }
func (n *negExpr) kids() []expr { return []expr{n.arg} }
func (n *negExpr) eval(e *env) (Value, error) {
	v, err := n.arg.eval(e)
	if err != nil || v.Null {
		return v, err
	}
	return negate(v)
}

// negate is integer negation (int4um, int8um): -(-2147483648) overflows.
func negate(v Value) (Value, error) {
	switch {
	case v.Null:
		return v, nil
	case v.T == TNumeric:
		return numericNeg(v), nil
	case isFloat(v.T):
		return floatValue(-floatOf(v), v.T), nil
	case v.T == TInt8 && v.I == math.MinInt64:
		return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "bigint out of range")
	case v.T == TInt4 && v.I == math.MinInt32:
		return Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "integer out of range")
	}
	v.I = -v.I
	return v, nil
}

type concatExpr struct{ l, r expr }

func (c *concatExpr) typ() Type    { return TText }
func (c *concatExpr) kids() []expr { return []expr{c.l, c.r} }
func (c *concatExpr) eval(e *env) (Value, error) {
	a, err := c.l.eval(e)
	if err != nil {
		return a, err
	}
	b, err := c.r.eval(e)
	if err != nil {
		return b, err
	}
	if a.Null || b.Null {
		return Null(TText), nil
	}
	return Text(textOut(a) + textOut(b)), nil
}

type boolExpr struct {
	op   pg.BoolExprType
	args []expr
}

func (b *boolExpr) typ() Type    { return TBool }
func (b *boolExpr) kids() []expr { return b.args }
func (b *boolExpr) eval(e *env) (Value, error) {
	switch b.op {
	case pg.BoolExprType_NOT_EXPR:
		v, err := b.args[0].eval(e)
		if err != nil || v.Null {
			return v, err
		}
		return Bool(v.I == 0), nil
	case pg.BoolExprType_AND_EXPR:
		sawNull := false
		for _, a := range b.args {
			v, err := a.eval(e)
			if err != nil {
				return v, err
			}
			if v.Null {
				sawNull = true
			} else if v.I == 0 {
				return Bool(false), nil
			}
		}
		if sawNull {
			return Null(TBool), nil
		}
		return Bool(true), nil
	default: // OR
		sawNull := false
		for _, a := range b.args {
			v, err := a.eval(e)
			if err != nil {
				return v, err
			}
			if v.Null {
				sawNull = true
			} else if v.I != 0 {
				return Bool(true), nil
			}
		}
		if sawNull {
			return Null(TBool), nil
		}
		return Bool(false), nil
	}
}

type inExpr struct {
	not  bool
	l    expr
	list []expr
}

func (in *inExpr) typ() Type    { return TBool }
func (in *inExpr) kids() []expr { return append([]expr{in.l}, in.list...) }
func (in *inExpr) eval(e *env) (Value, error) {
	a, err := in.l.eval(e)
	if err != nil {
		return a, err
	}
	if a.Null {
		return Null(TBool), nil
	}
	sawNull := false
	for _, x := range in.list {
		b, err := x.eval(e)
		if err != nil {
			return b, err
		}
		if b.Null {
			sawNull = true
			continue
		}
		if cmpValues(a, b) == 0 {
			return Bool(!in.not), nil
		}
	}
	if sawNull {
		return Null(TBool), nil
	}
	return Bool(in.not), nil
}

type nullTestExpr struct {
	not bool
	arg expr
}

func (n *nullTestExpr) typ() Type    { return TBool }
func (n *nullTestExpr) kids() []expr { return []expr{n.arg} }
func (n *nullTestExpr) eval(e *env) (Value, error) {
	v, err := n.arg.eval(e)
	if err != nil {
		return v, err
	}
	return Bool(v.Null != n.not), nil
}

type funcExpr struct {
	name string
	args []expr
	t    Type
	fn   func(e *env, args []Value) (Value, error)
}

func (f *funcExpr) typ() Type    { return f.t }
func (f *funcExpr) kids() []expr { return f.args }
func (f *funcExpr) eval(e *env) (Value, error) {
	vals := make([]Value, len(f.args))
	for i, a := range f.args {
		v, err := a.eval(e)
		if err != nil {
			return v, err
		}
		vals[i] = v
	}
	return f.fn(e, vals)
}

// truthy evaluates a WHERE condition: NULL counts as false.
func truthy(x expr, e *env) (bool, error) {
	if x == nil {
		return true, nil
	}
	v, err := x.eval(e)
	if err != nil {
		return false, err
	}
	return !v.Null && v.I != 0, nil
}
