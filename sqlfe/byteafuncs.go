package sqlfe

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/types"
)

// bytea's SQL functions: length and octet_length, encode and decode (hex,
// base64, escape), and bytea || bytea; the type itself, its I/O and the
// encodings are sql/types' (bytea.go), the bodies sql/eval's.

func init() {
	// length and octet_length of a bytea count its bytes; of a string,
	// characters and bytes as text's (builtins' length, strfuncs.go)
	for name, text := range map[string]polyFunc{
		"length":       strictText("length", types.TInt4, 1, eval.CharLength),
		"octet_length": strictText("octet_length", types.TInt4, 1, eval.OctetLength),
	} {
		polyFuncs[name] = func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
			if len(args) == 1 && args[0].typ() == types.TBytea {
				return strict(name, types.TInt4, args, eval.OctetLength), nil // bytes
			}
			return text(c, f, args)
		}
	}
	polyFuncs["encode"] = func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		xs, err := wantTypes(c, f, args, types.TBytea, types.TText)
		if err != nil {
			return nil, err
		}
		return strict("encode", types.TText, xs, func(a []types.Value) (types.Value, error) { return types.EncodeBytes(a[0].S, a[1].S) }), nil
	}
	polyFuncs["decode"] = func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		xs, err := wantTypes(c, f, args, types.TText, types.TText)
		if err != nil {
			return nil, err
		}
		return strict("decode", types.TBytea, xs, func(a []types.Value) (types.Value, error) { return types.DecodeBytes(a[0].S, a[1].S) }), nil
	}
}

// byteaConcat compiles bytea || bytea (an untyped side is bytea); ok is
// false when neither side is a bytea or one is text (then || is text's).
func (c *compiler) byteaConcat(l, r expr) (expr, bool, error) {
	lt, rt := l.typ(), r.typ()
	if !(lt == types.TBytea && (rt == types.TBytea || rt == types.TUnknown) || rt == types.TBytea && lt == types.TUnknown) {
		return nil, false, nil
	}
	l, err := c.coerce(l, types.TBytea)
	if err != nil {
		return nil, true, err
	}
	if r, err = c.coerce(r, types.TBytea); err != nil {
		return nil, true, err
	}
	return &funcExpr{name: "byteacat", t: types.TBytea, args: []expr{l, r}, fn: pure(eval.ByteaConcat)}, true, nil
}
