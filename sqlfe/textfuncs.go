package sqlfe

import (
	"crypto/sha256"
	"crypto/sha512"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/types"
)

// More of PostgreSQL's string functions than strfuncs.go's: lpad and rpad,
// format, regexp_replace and the sha2 digests (the array functions are in
// arrayfuncs.go). Strict, like PostgreSQL's (format is not: a NULL
// argument is an empty %s). Here their arguments are resolved; their
// bodies are sql/eval's (text.go).

func init() {
	for name, f := range map[string]polyFunc{
		"lpad":           padFunc(true),
		"rpad":           padFunc(false),
		"format":         formatFunc,
		"regexp_match":   regexpMatchFunc,
		"regexp_replace": regexpReplaceFunc,
		"sha224":         shaFunc("sha224", func(b []byte) []byte { h := sha256.Sum224(b); return h[:] }),
		"sha256":         shaFunc("sha256", func(b []byte) []byte { h := sha256.Sum256(b); return h[:] }),
		"sha384":         shaFunc("sha384", func(b []byte) []byte { h := sha512.Sum384(b); return h[:] }),
		"sha512":         shaFunc("sha512", func(b []byte) []byte { h := sha512.Sum512(b); return h[:] }),
	} {
		polyFuncs[name] = f
	}
}

// padFunc is lpad/rpad(s, n [, fill]): s cut or filled (with fill, a
// space by default) to n characters; an empty fill leaves s as it is.
func padFunc(left bool) polyFunc {
	name, fn := "rpad", eval.Rpad
	if left {
		name, fn = "lpad", eval.Lpad
	}
	return func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		want := []types.Type{types.TText, types.TInt4, types.TText}
		if len(args) != 2 && len(args) != 3 {
			return nil, noSuchFunc(f, args)
		}
		xs, err := wantTypes(c, f, args, want[:len(args)]...)
		if err != nil {
			return nil, err
		}
		return strict(name, types.TText, xs, fn), nil
	}
}

// formatFunc is format(fmt, args...): %s (the argument's text, NULL
// empty), %I (quote_ident), %L (quote_literal, NULL unquoted NULL), %%,
// each optionally with a position n$; widths and the - flag are not
// supported (0A000).
func formatFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) == 0 {
		return nil, noSuchFunc(f, args)
	}
	var xs []expr
	for i, a := range args {
		want := types.TUnknown
		if i == 0 || a.typ() == types.TUnknown {
			want = types.TText
		}
		x, err := c.coerce(a, want)
		if err != nil {
			return nil, err
		}
		xs = append(xs, x)
	}
	if !types.IsString(xs[0].typ()) {
		return nil, noSuchFunc(f, args)
	}
	return &funcExpr{name: "format", t: types.TText, args: xs, fn: pure(eval.Format)}, nil
}

// regexpReplaceFunc is regexp_replace(source, pattern, replacement [,
// flags]): the first match replaced (every one with flag g; i for a
// case-insensitive match), \1..\9 and \& in the replacement naming the
// groups and the match. The pattern is Go's RE2, which reads PostgreSQL's
// common regular expressions the same; back-references in the pattern
// are refused (2201B).
func regexpReplaceFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) != 3 && len(args) != 4 {
		return nil, noSuchFunc(f, args)
	}
	want := []types.Type{types.TText, types.TText, types.TText, types.TText}
	xs, err := wantTypes(c, f, args, want[:len(args)]...)
	if err != nil {
		return nil, err
	}
	return strict("regexp_replace", types.TText, xs, eval.RegexpReplace), nil
}

// regexpMatchFunc is regexp_match(string, pattern [, flags]): the first
// match's text[] (eval.RegexpMatchArray), NULL without one; flag g is 22023.
func regexpMatchFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) != 2 && len(args) != 3 {
		return nil, noSuchFunc(f, args)
	}
	xs, err := wantTypes(c, f, args, []types.Type{types.TText, types.TText, types.TText}[:len(args)]...)
	if err != nil {
		return nil, err
	}
	return strict("regexp_match", types.TTextArray, xs, eval.RegexpMatch), nil
}

// shaFunc is a sha2 digest of a bytea (an untyped literal is a bytea).
func shaFunc(name string, sum func([]byte) []byte) polyFunc {
	return func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		xs, err := wantTypes(c, f, args, types.TBytea)
		if err != nil {
			return nil, err
		}
		return strict(name, types.TBytea, xs, func(a []types.Value) (types.Value, error) {
			return types.Value{T: types.TBytea, S: string(sum([]byte(a[0].S)))}, nil
		}), nil
	}
}
