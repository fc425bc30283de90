package sqlfe

import (
	"crypto/sha256"
	"crypto/sha512"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// More of PostgreSQL's string functions than strfuncs.go's: lpad and rpad,
// format, regexp_replace and the sha2 digests (the array functions are in
// arrayfuncs.go). Strict, like PostgreSQL's (format is not: a NULL
// argument is an empty %s).

// maxAllocSize is PostgreSQL's MaxAllocSize, the largest value a
// function may build.
const maxAllocSize = 1<<30 - 1

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
	name := "rpad"
	if left {
		name = "lpad"
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
		return strict(name, types.TText, xs, func(a []types.Value) (types.Value, error) {
			s, n, fill := a[0].S, a[1].I, " "
			if len(a) == 3 {
				fill = a[2].S
			}
			// PostgreSQL's bound: n characters of the encoding's widest
			// (4 bytes in UTF8) must fit one allocation (MaxAllocSize)
			if n > (maxAllocSize-4)/4 {
				return types.Value{}, pgerror.Errorf(pgerror.CodeProgramLimit, "requested length too large")
			}
			have := int64(utf8.RuneCountInString(s))
			if n <= 0 {
				return types.Text(""), nil
			}
			if have >= n {
				rs := []rune(s)
				return types.Text(string(rs[:n])), nil
			}
			if fill == "" {
				return types.Text(s), nil
			}
			fr := []rune(fill)
			var b strings.Builder
			for i := int64(0); i < n-have; i++ {
				b.WriteRune(fr[i%int64(len(fr))])
			}
			if left {
				return types.Text(b.String() + s), nil
			}
			return types.Text(s + b.String()), nil
		}), nil
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
	return &funcExpr{name: "format", t: types.TText, args: xs, fn: func(_ *env, a []types.Value) (types.Value, error) {
		if a[0].Null {
			return types.Null(types.TText), nil
		}
		return formatValues(a[0].S, a[1:])
	}}, nil
}

func formatValues(fs string, args []types.Value) (types.Value, error) {
	unterminated := func() error {
		return pgerror.Errorf(pgerror.CodeInvalidParamValue, "unterminated format() type specifier").WithHint(`For a single "%" use "%%".`)
	}
	var b strings.Builder
	next := 0 // the next argument, 0-based (PostgreSQL's arg - 1)
	for i := 0; i < len(fs); i++ {
		if fs[i] != '%' {
			b.WriteByte(fs[i])
			continue
		}
		i++
		if i == len(fs) {
			return types.Value{}, unterminated()
		}
		if fs[i] == '%' {
			b.WriteByte('%')
			continue
		}
		spec, n, err := parseFormatSpec(fs[i:])
		if err != nil {
			return types.Value{}, err
		}
		i += n
		if i == len(fs) {
			return types.Value{}, unterminated()
		}
		conv := fs[i]
		if conv != 's' && conv != 'I' && conv != 'L' {
			return types.Value{}, pgerror.Errorf(pgerror.CodeInvalidParamValue, "unrecognized format() type specifier %q", string(conv)).WithHint(`For a single "%" use "%%".`)
		}
		width, left := spec.width, spec.left
		if spec.widthArg >= 0 { // * or *n$: the width is an argument
			if spec.widthArg > 0 {
				next = spec.widthArg - 1
			}
			if next >= len(args) {
				return types.Value{}, pgerror.Errorf(pgerror.CodeInvalidParamValue, "too few arguments for format()")
			}
			w := args[next]
			next++
			width = 0
			if !w.Null {
				n, err := types.Cast(w, types.TInt4)
				if err != nil {
					return types.Value{}, err
				}
				width = n.I
			}
		}
		if spec.arg > 0 {
			next = spec.arg - 1
		}
		if next >= len(args) {
			return types.Value{}, pgerror.Errorf(pgerror.CodeInvalidParamValue, "too few arguments for format()")
		}
		v := args[next]
		next++
		var out string
		switch conv {
		case 's':
			if !v.Null {
				out = types.TextOut(v)
			}
		case 'I':
			if v.Null {
				return types.Value{}, pgerror.Errorf(pgerror.CodeNullValueNotAllowed, "null values cannot be formatted as an SQL identifier")
			}
			out = quoteIdent(types.TextOut(v))
		case 'L':
			out = "NULL"
			if !v.Null {
				out = quoteLiteral(types.TextOut(v))
			}
		}
		if width < 0 { // a negative width is the - flag
			if width == math.MinInt32 {
				return types.Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "number is out of range")
			}
			width, left = -width, true
		}
		pad := int(width) - utf8.RuneCountInString(out)
		if pad > 0 && !left {
			b.WriteString(strings.Repeat(" ", pad))
		}
		b.WriteString(out)
		if pad > 0 && left {
			b.WriteString(strings.Repeat(" ", pad))
		}
	}
	return types.Text(b.String()), nil
}

// formatSpec is a format() specifier's %[n$][-][width|*|*m$]: arg is the
// argument position n (0: the next), widthArg the width's argument
// position m (0: the next; -1: no * ), width a direct width.
type formatSpec struct {
	arg, widthArg int
	width         int64
	left          bool
}

// parseFormatSpec reads the specifier at the start of s, up to its type
// character, as PostgreSQL's text_format_parse_format does; n is the
// bytes it used.
func parseFormatSpec(s string) (spec formatSpec, n int, err error) {
	spec.widthArg = -1
	digits := func() (int64, bool, error) {
		j := n
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == n {
			return 0, false, nil
		}
		v, perr := strconv.ParseInt(s[n:j], 10, 32)
		if perr != nil {
			return 0, false, pgerror.Errorf(pgerror.CodeNumericRange, "number is out of range")
		}
		n = j
		return v, true, nil
	}
	argZero := pgerror.Errorf(pgerror.CodeInvalidParamValue, "format specifies argument 0, but arguments are numbered from 1")
	v, ok, err := digits()
	if err != nil {
		return spec, n, err
	}
	if ok {
		if n >= len(s) || s[n] != '$' {
			spec.width = v // just a width
			return spec, n, nil
		}
		if v == 0 {
			return spec, n, argZero
		}
		spec.arg = int(v)
		n++
	}
	for n < len(s) && s[n] == '-' {
		spec.left = true
		n++
	}
	if n < len(s) && s[n] == '*' {
		n++
		v, ok, err := digits()
		if err != nil {
			return spec, n, err
		}
		spec.widthArg = 0
		if ok {
			if n >= len(s) || s[n] != '$' {
				return spec, n, pgerror.Errorf(pgerror.CodeInvalidParamValue, `width argument position must be ended by "$"`)
			}
			if v == 0 {
				return spec, n, argZero
			}
			spec.widthArg = int(v)
			n++
		}
		return spec, n, nil
	}
	if v, ok, err := digits(); err != nil {
		return spec, n, err
	} else if ok {
		spec.width = v
	}
	return spec, n, nil
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
	return strict("regexp_replace", types.TText, xs, func(a []types.Value) (types.Value, error) {
		flags := ""
		if len(a) == 4 {
			flags = a[3].S
		}
		re, global, err := compileRegexFlags(a[1].S, flags)
		if err != nil {
			return types.Value{}, err
		}
		repl := a[2].S
		src := a[0].S
		var b strings.Builder
		last := 0
		for _, m := range re.FindAllStringSubmatchIndex(src, -1) {
			b.WriteString(src[last:m[0]])
			for i := 0; i < len(repl); i++ {
				ch := repl[i]
				if ch == '\\' && i+1 < len(repl) {
					n := repl[i+1]
					switch {
					case n >= '1' && n <= '9':
						if g := int(n - '0'); 2*g+1 < len(m) && m[2*g] >= 0 {
							b.WriteString(src[m[2*g]:m[2*g+1]])
						}
						i++
						continue
					case n == '&':
						b.WriteString(src[m[0]:m[1]])
						i++
						continue
					case n == '\\':
						b.WriteByte('\\')
						i++
						continue
					}
				}
				b.WriteByte(ch)
			}
			last = m[1]
			if !global {
				break
			}
		}
		b.WriteString(src[last:])
		return types.Text(b.String()), nil
	}), nil
}

// compileRegexFlags compiles pattern with the regexp functions' flags: g
// (every match: global), i (case-insensitive), c (case-sensitive, the
// default); another flag is 22023.
func compileRegexFlags(pattern, flags string) (re *regexp.Regexp, global bool, err error) {
	prefix := ""
	for _, fl := range flags {
		switch fl {
		case 'g':
			global = true
		case 'i':
			prefix = "(?i)"
		case 'c':
			prefix = ""
		default:
			return nil, false, pgerror.Errorf(pgerror.CodeInvalidParamValue, "invalid regular expression option: %q", string(fl))
		}
	}
	if re, err = regexp.Compile(prefix + pattern); err != nil {
		return nil, false, pgerror.Errorf(pgerror.CodeInvalidRegex, "invalid regular expression: %v", err)
	}
	return re, global, nil
}

// regexpMatchArray is one match m of re in src as regexp_match[es]
// returns it: a text[] of the parenthesised subexpressions (NULL for one
// that took no part), or of the whole match when there are none.
func regexpMatchArray(re *regexp.Regexp, src string, m []int) (types.Value, error) {
	var els []types.Value
	if re.NumSubexp() == 0 {
		els = []types.Value{types.Text(src[m[0]:m[1]])}
	}
	for g := 1; g <= re.NumSubexp(); g++ {
		if m[2*g] < 0 {
			els = append(els, types.Null(types.TText))
		} else {
			els = append(els, types.Text(src[m[2*g]:m[2*g+1]]))
		}
	}
	return types.MakeArray(types.TTextArray, els)
}

// regexpMatchFunc is regexp_match(string, pattern [, flags]): the first
// match's text[] (regexpMatchArray), NULL without one; flag g is 22023.
func regexpMatchFunc(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
	if len(args) != 2 && len(args) != 3 {
		return nil, noSuchFunc(f, args)
	}
	xs, err := wantTypes(c, f, args, []types.Type{types.TText, types.TText, types.TText}[:len(args)]...)
	if err != nil {
		return nil, err
	}
	return strict("regexp_match", types.TTextArray, xs, func(a []types.Value) (types.Value, error) {
		flags := ""
		if len(a) == 3 {
			flags = a[2].S
		}
		re, global, err := compileRegexFlags(a[1].S, flags)
		if err != nil {
			return types.Value{}, err
		}
		if global {
			return types.Value{}, pgerror.Errorf(pgerror.CodeInvalidParamValue, `regexp_match() does not support the "global" option`).WithHint("Use the regexp_matches function instead.")
		}
		m := re.FindStringSubmatchIndex(a[0].S)
		if m == nil {
			return types.Null(types.TTextArray), nil
		}
		return regexpMatchArray(re, a[0].S, m)
	}), nil
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
