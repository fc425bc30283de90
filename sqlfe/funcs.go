package sqlfe

import (
	"fmt"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// builtin describes a scalar function the front end implements.
type builtin struct {
	args []types.Type
	ret  types.Type
	fn   func(e *env, args []types.Value) (types.Value, error)
}

// builtins is filled by init functions (this file's, and the type files':
// uuid.go, bytea.go, json.go), in any order: the functions that read the
// session. Those that do not are sql/eval's Builtins, looked up after.
var builtins = map[string]builtin{}

func init() {
	for name, b := range map[string]builtin{
		"pg_backend_pid": {nil, types.TInt4, func(e *env, _ []types.Value) (types.Value, error) {
			return types.Int4(e.s.pid), nil
		}},
		"pg_isolation_test_session_is_blocked": {[]types.Type{types.TInt4, types.TInt4Array}, types.TBool, func(e *env, a []types.Value) (types.Value, error) {
			if a[0].Null || a[1].Null {
				return types.Null(types.TBool), nil
			}
			return types.Bool(e.s.eng.isBlocked(int32(a[0].I), a[1].A)), nil
		}},
		"current_setting": {[]types.Type{types.TText}, types.TText, func(e *env, a []types.Value) (types.Value, error) {
			if a[0].Null {
				return types.Null(types.TText), nil
			}
			v, err := e.s.getSetting(a[0].S)
			if err != nil {
				return types.Value{}, err
			}
			return types.Text(v), nil
		}},
		"pg_notify": {[]types.Type{types.TText, types.TText}, types.TVoid, pgNotify}, // notify.go
		"set_config": {[]types.Type{types.TText, types.TText, types.TBool}, types.TText, func(e *env, a []types.Value) (types.Value, error) {
			if a[0].Null {
				return types.Value{}, pgerror.Errorf(pgerror.CodeInvalidParamValue, "SET requires parameter name")
			}
			val := a[1].S
			if a[1].Null {
				val = ""
			}
			if err := e.s.setSetting(a[0].S, val, !a[2].Null && a[2].I != 0); err != nil {
				return types.Value{}, err
			}
			v, err := e.s.getSetting(a[0].S)
			return types.Text(v), err
		}},
		"version": {nil, types.TText, func(*env, []types.Value) (types.Value, error) {
			return types.Text("PostgreSQL " + ServerVersion + " (tupled)"), nil
		}},
		"txid_current": {nil, types.TInt8, func(e *env, _ []types.Value) (types.Value, error) {
			tx, err := e.s.ensureTx(e.ctx)
			if err != nil {
				return types.Value{}, err
			}
			return types.Int8(int64(tx.ID())), nil
		}},
	} {
		builtins[name] = b
	}
	builtins["pg_current_xact_id"] = builtins["txid_current"]
	// now() and transaction_timestamp() are the transaction's start, as
	// in PostgreSQL; statement_timestamp() and clock_timestamp() the
	// present moment (statements have no start time of their own here)
	builtins["now"] = builtin{nil, types.TTimestamptz, func(e *env, _ []types.Value) (types.Value, error) {
		return types.TimestamptzValue(e.s.txStart(e.ctx)), nil
	}}
	builtins["transaction_timestamp"] = builtins["now"]
	builtins["statement_timestamp"] = builtin{nil, types.TTimestamptz, func(*env, []types.Value) (types.Value, error) {
		return types.TimestamptzValue(time.Now().UTC().Truncate(time.Microsecond)), nil
	}}
	builtins["clock_timestamp"] = builtins["statement_timestamp"]
}

func (c *compiler) funcCall(f *pg.FuncCall) (expr, error) {
	names := strs(f.Funcname)
	name := names[len(names)-1]
	if len(names) > 2 {
		return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "function %s does not exist", strings.Join(names, ".")).At(f.Location)
	}
	elsewhere := len(names) == 2 && names[0] != "pg_catalog" // no such schema here
	if len(f.Args) > 100 {
		return nil, pgerror.Errorf(pgerror.CodeTooManyArguments, "cannot pass more than 100 arguments to a function").At(f.Location)
	}
	switch {
	case f.AggStar || f.AggDistinct || len(f.AggOrder) > 0 || f.AggFilter != nil:
		return nil, pgerror.NotSupported("aggregate function %s is not supported", name).At(f.Location)
	case f.Over != nil:
		return nil, pgerror.NotSupported("window function %s is not supported", name).At(f.Location)
	case f.FuncVariadic:
		return nil, pgerror.NotSupported("VARIADIC is not supported").At(f.Location)
	}
	if !elsewhere {
		if x, ok, err := c.catalogFunc(f, name); ok { // catfuncs.go
			return x, err
		}
		if x, ok, err := c.enumFunc(f, name); ok { // enum.go
			return x, err
		}
	}
	if pf, ok := polyFuncs[name]; ok && !elsewhere {
		var args []expr
		in := c
		if wholeRowFuncs[name] {
			wc := *c
			wc.wholeRow = true
			in = &wc
		}
		for _, a := range f.Args {
			x, err := in.compile(a, types.TUnknown)
			if err != nil {
				return nil, err
			}
			args = append(args, x)
		}
		return pf(c, f, args) // strfuncs.go
	}
	b, ok := builtins[name]
	if eb, pure := eval.Builtins[name]; pure && !ok {
		b, ok = builtin{eb.Args, eb.Ret, func(e *env, a []types.Value) (types.Value, error) { return eb.Fn(e, a) }}, true
	}
	alts := advisoryOverloads[name]
	if alts != nil {
		b, ok = alts[len(f.Args)]
	}
	if elsewhere {
		ok = false
	} else if !ok && alts == nil {
		switch name {
		case "count", "sum", "min", "max", "avg":
			return nil, pgerror.NotSupported("aggregate function %s is not supported", name).At(f.Location)
		}
		if pgFunctions[name] {
			return nil, pgerror.NotSupported("function %s() is not supported", name).At(f.Location)
		}
	}
	// PostgreSQL's message names the argument types it looked for
	noSuch := func() (expr, error) {
		var argTypes []string
		for _, a := range f.Args {
			x, err := c.compile1(a, types.TUnknown)
			if err != nil {
				return nil, err
			}
			argTypes = append(argTypes, x.typ().String())
		}
		return nil, &pgerror.Error{Code: pgerror.CodeUndefinedFunction, Message: fmt.Sprintf("function %s(%s) does not exist", strings.Join(names, "."), strings.Join(argTypes, ", ")),
			Hint: "No function matches the given name and argument types. You might need to add explicit type casts.", Position: f.Location + 1}
	}
	if !ok || len(f.Args) != len(b.args) {
		return noSuch()
	}
	out := &funcExpr{name: name, t: b.ret, fn: b.fn}
	for i, a := range f.Args {
		x, err := c.compile(a, b.args[i])
		if err != nil {
			return nil, err
		}
		if x.typ() != b.args[i] {
			if alts != nil && x.typ() == types.TInt8 && b.args[i] == types.TInt4 {
				return noSuch() // overloaded: no implicit bigint -> integer
			}
			if (types.IsInt(x.typ()) && types.IsInt(b.args[i])) || (x.typ() == types.TBpchar && b.args[i] == types.TText) {
				x = &castExpr{arg: x, t: b.args[i]}
			} else {
				return noSuch()
			}
		}
		out.args = append(out.args, x)
	}
	return out, nil
}

var pgFunctions = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(pgFunctionNames) {
		m[n] = true
	}
	return m
}()

// pure is a function body of sql/eval's, which reads nothing of the
// session, as a funcExpr's.
func pure(fn func([]types.Value) (types.Value, error)) func(*env, []types.Value) (types.Value, error) {
	return func(_ *env, a []types.Value) (types.Value, error) { return fn(a) }
}
