package sqlfe

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Set-returning functions: generate_series (series.go), unnest of an
// integer array, json[b]_array_elements[_text] and json[b]_object_keys.
//
// In FROM each is a relation of one column, its rows made once per
// execution (srfInFrom). In the select list they follow PostgreSQL 10's
// ProjectSet: a projectSetNode sits where the projection would, between
// the aggregation and window functions below it and DISTINCT, ORDER BY
// and LIMIT above; for each input row it calls every set-returning
// function of the select list (and of ORDER BY items computed beside it)
// over that row, then emits as many rows as the longest result, the
// functions in lockstep and a shorter one's value NULL once it has run
// out; a row whose functions all return nothing emits nothing. An
// srfColumn reads its function's current value from env.srf.
//
// Invariants:
//   - The functions are strict: a NULL argument is an empty result.
//   - A set-returning call is allowed only where a select list is
//     compiled (compiler.srf set); elsewhere it is PostgreSQL's 0A000
//     ("not allowed in WHERE", "... in CASE", "aggregate function calls
//     cannot contain set-returning function calls"). A set-returning call
//     in another's arguments, which PostgreSQL plans as stacked
//     ProjectSets, is 0A000 too.

// srfSpec is one set-returning call, compiled.
type srfSpec struct {
	name string
	args []expr
	t    types.Type
	// gen makes the call's values from its arguments' (none NULL)
	gen func(args []types.Value) ([]types.Value, error)
}

// srfFunc describes a set-returning function: compile compiles a call
// of it; outCol names its column in FROM when the function's OUT
// parameter does (jsonb_array_elements' value): an alias then names only
// the relation.
type srfFunc struct {
	compile func(c *compiler, f *pg.FuncCall) (*srfSpec, error)
	outCol  string
}

var srfFuncs map[string]srfFunc

func init() { // an init: the functions compile expressions, which may hold set-returning calls
	srfFuncs = map[string]srfFunc{
		"generate_series":           {compile: generateSeries},
		"unnest":                    {compile: unnestSRF},
		"jsonb_array_elements":      {compile: jsonElementsSRF(types.TJSONB, false), outCol: "value"},
		"json_array_elements":       {compile: jsonElementsSRF(types.TJSON, false), outCol: "value"},
		"jsonb_array_elements_text": {compile: jsonElementsSRF(types.TJSONB, true), outCol: "value"},
		"json_array_elements_text":  {compile: jsonElementsSRF(types.TJSON, true), outCol: "value"},
		"jsonb_object_keys":         {compile: jsonKeysSRF(types.TJSONB)},
		"regexp_matches":            {compile: regexpMatchesSRF},
		"json_object_keys":          {compile: jsonKeysSRF(types.TJSON)},
	}
}

// srfOf returns the set-returning function f calls, if it calls one.
func srfOf(f *pg.FuncCall) (string, srfFunc, bool) {
	names := strs(f.Funcname)
	if len(names) > 2 || (len(names) == 2 && names[0] != "pg_catalog") || f.Over != nil {
		return "", srfFunc{}, false
	}
	name := names[len(names)-1]
	sf, ok := srfFuncs[name]
	return name, sf, ok
}

// srfCtx collects the set-returning calls of a select list.
type srfCtx struct {
	specs []*srfSpec
}

// nestedSRF is the srfCtx of a set-returning call's arguments, where
// another is 0A000.
var nestedSRF = &srfCtx{}

// srfColumn is a set-returning call's current value in a projectSetNode.
type srfColumn struct {
	k int
	t types.Type
}

func (c *srfColumn) eval(e *env) (types.Value, error) { return e.srf[c.k], nil }
func (c *srfColumn) typ() types.Type                  { return c.t }
func (c *srfColumn) kids() []expr                     { return nil }

// srfCall compiles f, a set-returning call, where c compiles.
func (c *compiler) srfCall(f *pg.FuncCall) (expr, error) {
	name, sf, _ := srfOf(f)
	if c.srf == nestedSRF {
		return nil, pgerror.NotSupported("a set-returning function in the arguments of another is not supported").At(f.Location)
	}
	if c.srf == nil {
		switch c.clause {
		case "":
			return nil, pgerror.NotSupported("set-returning functions are not supported here").At(f.Location)
		case "aggregate function calls", "window function calls":
			return nil, pgerror.NotSupported("%s cannot contain set-returning function calls", c.clause).At(f.Location)
		}
		return nil, pgerror.NotSupported("set-returning functions are not allowed in %s", c.clause).At(f.Location)
	}
	if f.AggStar || f.AggDistinct || len(f.AggOrder) > 0 || f.AggFilter != nil {
		return nil, pgerror.Errorf(pgerror.CodeWrongObjectType, "%s is not an aggregate function", name).At(f.Location)
	}
	in := *c
	in.srf = nestedSRF
	sp, err := sf.compile(&in, f)
	if err != nil {
		return nil, err
	}
	c.srf.specs = append(c.srf.specs, sp)
	return &srfColumn{k: len(c.srf.specs) - 1, t: sp.t}, nil
}

// srfConditional is PostgreSQL's error for a set-returning call inside
// CASE or COALESCE of a select list (their branches would not be lazy).
func (c *compiler) srfConditional(n *pg.Node) error {
	what, loc := "CASE", int32(-1)
	if ce := n.GetCaseExpr(); ce != nil {
		loc = ce.Location
	} else if co := n.GetCoalesceExpr(); co != nil {
		what, loc = "COALESCE", co.Location
	} else {
		return nil
	}
	if !hasSRF(n.ProtoReflect()) {
		return nil
	}
	return &pgerror.Error{Code: pgerror.CodeFeatureNotSupp, Message: "set-returning functions are not allowed in " + what,
		Hint: "You might be able to move the set-returning function into a LATERAL FROM item.", Position: loc + 1}
}

// hasSRF reports whether m holds a set-returning call outside a subquery.
func hasSRF(m protoreflect.Message) bool {
	return inTree(m, func(m protoreflect.Message) bool {
		f, ok := m.Interface().(*pg.FuncCall)
		if !ok {
			return false
		}
		_, _, ok = srfOf(f)
		return ok
	})
}

// values evaluates sp over e: nil when an argument is NULL.
func (sp *srfSpec) values(e *env) ([]types.Value, error) {
	vs := make([]types.Value, len(sp.args))
	for i, a := range sp.args {
		v, err := a.eval(e)
		if err != nil {
			return nil, err
		}
		if v.Null {
			return nil, nil
		}
		vs[i] = v
	}
	return sp.gen(vs)
}

// srfInFrom is a set-returning function in FROM: one column, named by
// the alias (a scalar function's column takes the alias's name, as in
// PostgreSQL) unless the function names it.
func srfInFrom(rf *pg.RangeFunction, fc *pg.FuncCall, c *compiler) (virtRows, []catalog.Column, string, error) {
	sp, cols, rel, err := srfSpecInFrom(rf, fc, c)
	if err != nil {
		return nil, nil, "", err
	}
	return sp.rows, cols, rel, nil
}

// srfSpecInFrom compiles srfInFrom's call: its spec, column and name.
func srfSpecInFrom(rf *pg.RangeFunction, fc *pg.FuncCall, c *compiler) (*srfSpec, []catalog.Column, string, error) {
	name, sf, _ := srfOf(fc)
	rel, col := name, name
	if sf.outCol != "" {
		col = sf.outCol
	}
	if rf.Alias != nil {
		rel = rf.Alias.Aliasname
		if sf.outCol == "" {
			col = rel
		}
		if cn := strs(rf.Alias.Colnames); len(cn) == 1 {
			col = cn[0]
		} else if len(cn) > 1 {
			return nil, nil, "", pgerror.Errorf(pgerror.CodeSyntax, "too many column aliases specified for function %s", name)
		}
	}
	in := *c
	in.srf = nestedSRF
	sp, err := sf.compile(&in, fc)
	if err != nil {
		return nil, nil, "", err
	}
	return sp, []catalog.Column{{Name: col, Type: sp.t}}, rel, nil
}

// rows is sp's values over e as one-column rows.
func (sp *srfSpec) rows(e *env) ([][]types.Value, error) {
	vs, err := sp.values(e)
	if err != nil {
		return nil, err
	}
	rows := make([][]types.Value, len(vs))
	for i, v := range vs {
		rows[i] = []types.Value{v}
	}
	return rows, nil
}

// projectSetNode is the select list with set-returning calls (see the
// top of this file).
type projectSetNode struct {
	in    relNode
	srf   *srfCtx
	exprs []expr
}

func (n *projectSetNode) explain(w *strings.Builder, depth int) {
	explainLine(w, depth, "ProjectSet")
	n.in.explain(w, depth+1)
}

func (n *projectSetNode) run(q *qctx, fn func(row []types.Value) error) error {
	e := q.env(nil)
	out := make([]types.Value, len(n.exprs))
	results := make([][]types.Value, len(n.srf.specs))
	cur := make([]types.Value, len(n.srf.specs))
	return n.in.run(q, func(row []types.Value) error {
		e.row, e.srf = row, nil
		most := 0
		for k, sp := range n.srf.specs {
			vs, err := sp.values(e)
			if err != nil {
				return err
			}
			results[k] = vs
			most = max(most, len(vs))
		}
		for i := 0; i < most; i++ {
			for k, sp := range n.srf.specs {
				if i < len(results[k]) {
					cur[k] = results[k][i]
				} else {
					cur[k] = types.Null(sp.t)
				}
			}
			e.srf = cur
			if err := projectInto(e, n.exprs, out); err != nil {
				return err
			}
			if err := fn(out); err != nil {
				return err
			}
		}
		return nil
	})
}

// unnestSRF is unnest(anyarray): the array's elements, in order.
func unnestSRF(c *compiler, f *pg.FuncCall) (*srfSpec, error) {
	var args []expr
	for _, a := range f.Args {
		x, err := c.compile(a, types.TUnknown)
		if err != nil {
			return nil, err
		}
		args = append(args, x)
	}
	if len(args) != 1 {
		if len(args) > 1 {
			return nil, pgerror.NotSupported("unnest of several arrays is not supported").At(f.Location)
		}
		return nil, noSuchFunc(f, args)
	}
	t := types.ElemType(args[0].typ())
	switch {
	case args[0].typ() == types.TUnknown:
		return nil, &pgerror.Error{Code: "42725", Message: "function unnest(unknown) is not unique",
			Hint: "Could not choose a best candidate function. You might need to add explicit type casts.", Position: f.Location + 1}
	case !types.IsArray(args[0].typ()):
		return nil, noSuchFunc(f, args)
	}
	gen := func(vs []types.Value) ([]types.Value, error) {
		return types.ArrayElems(vs[0])
	}
	return &srfSpec{name: "unnest", args: args, t: t, gen: gen}, nil
}

// regexpMatchesSRF is regexp_matches(string, pattern [, flags]): a text[]
// per match (sql/eval's RegexpMatchArray), the first one only without
// flag g.
func regexpMatchesSRF(c *compiler, f *pg.FuncCall) (*srfSpec, error) {
	var args []expr
	for _, a := range f.Args {
		x, err := c.compile(a, types.TText)
		if err != nil {
			return nil, err
		}
		args = append(args, x)
	}
	if len(args) != 2 && len(args) != 3 {
		return nil, noSuchFunc(f, args)
	}
	xs, err := wantTypes(c, f, args, []types.Type{types.TText, types.TText, types.TText}[:len(args)]...)
	if err != nil {
		return nil, err
	}
	gen := eval.RegexpMatches
	return &srfSpec{name: "regexp_matches", args: xs, t: types.TTextArray, gen: gen}, nil
}

// jsonSRF compiles a set-returning function of one json (or jsonb)
// argument of type t, returning rt: gen makes its values from the
// argument's parsed tree.
func jsonSRF(name string, t, rt types.Type, gen func(n *types.JSONNode) ([]types.Value, error)) func(c *compiler, f *pg.FuncCall) (*srfSpec, error) {
	return func(c *compiler, f *pg.FuncCall) (*srfSpec, error) {
		var args []expr
		for _, a := range f.Args {
			x, err := c.compile(a, t)
			if err != nil {
				return nil, err
			}
			args = append(args, x)
		}
		if len(args) != 1 || args[0].typ() != t {
			return nil, noSuchFunc(f, args)
		}
		return &srfSpec{name: name, args: args, t: rt, gen: func(vs []types.Value) ([]types.Value, error) {
			return gen(types.MustJSON(vs[0]))
		}}, nil
	}
}

// jsonElementsSRF is json[b]_array_elements (asText: ..._text): an
// array's elements, in order.
func jsonElementsSRF(t types.Type, asText bool) func(c *compiler, f *pg.FuncCall) (*srfSpec, error) {
	name, rt := t.String()+"_array_elements", t
	if asText {
		name, rt = name+"_text", types.TText
	}
	return jsonSRF(name, t, rt, func(n *types.JSONNode) ([]types.Value, error) { return eval.JSONArrayElements(n, t, asText) })
}

// jsonKeysSRF is json[b]_object_keys: an object's keys (jsonb's in its
// order, json's as written, duplicates too).
func jsonKeysSRF(t types.Type) func(c *compiler, f *pg.FuncCall) (*srfSpec, error) {
	name := t.String() + "_object_keys"
	return jsonSRF(name, t, types.TText, func(n *types.JSONNode) ([]types.Value, error) { return eval.JSONObjectKeys(n, name) })
}
