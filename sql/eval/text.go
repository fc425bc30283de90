package eval

import (
	"crypto/md5"
	"encoding/hex"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// The string functions' bodies: sqlfe's strfuncs.go and textfuncs.go
// resolve their arguments (text, integer) and call these on non-NULL
// values but for Format's.

// Lpad is lpad(s, n [, fill]): s cut or filled on the left (with fill,
// a space by default) to n characters; an empty fill leaves s as it is.
func Lpad(a []types.Value) (types.Value, error) { return pad(a, true) }

// Rpad is rpad(s, n [, fill]), Lpad filling on the right.
func Rpad(a []types.Value) (types.Value, error) { return pad(a, false) }

func pad(a []types.Value, left bool) (types.Value, error) {
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
}

// Format is format(fmt, args...): %s (the argument's text, NULL empty), %I
// (quote_ident), %L (quote_literal, NULL unquoted NULL), %%, each optionally
// with a position n$, a width (* an argument) and the - flag. Not strict:
// a NULL fmt is NULL, a NULL argument is formatted.
func Format(a []types.Value) (types.Value, error) {
	if a[0].Null {
		return types.Null(types.TText), nil
	}
	return formatValues(a[0].S, a[1:])
}

// RegexpReplace is regexp_replace(source, pattern, replacement [, flags]):
// the first match replaced (every one with flag g; i for a case-insensitive
// match), \1..\9 and \& in the replacement naming the groups and the match.
// The pattern is Go's RE2, which reads PostgreSQL's common regular
// expressions the same.
func RegexpReplace(a []types.Value) (types.Value, error) {
	re, global, err := regexpOf(a, 4)
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
}

// RegexpMatch is regexp_match(string, pattern [, flags]): the first match's
// text[] (RegexpMatchArray), NULL without one; flag g is 22023.
func RegexpMatch(a []types.Value) (types.Value, error) {
	re, global, err := regexpOf(a, 3)
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
	return RegexpMatchArray(re, a[0].S, m)
}

func formatValues(fs string, args []types.Value) (types.Value, error) {
	unterminated := func() error {
		return pgerror.Errorf(pgerror.CodeInvalidParamValue, "unterminated format() type specifier").WithHint(`For a single "%" use "%%".`)
	}
	var b strings.Builder
	next := 0 // the next argument, 0-based (PostgreSQL's arg - 1)
	// nextArg is the argument at 1-based position pos (0: the next one)
	nextArg := func(pos int) (types.Value, error) {
		if pos > 0 {
			next = pos - 1
		}
		if next >= len(args) {
			return types.Value{}, pgerror.Errorf(pgerror.CodeInvalidParamValue, "too few arguments for format()")
		}
		next++
		return args[next-1], nil
	}
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
			w, err := nextArg(spec.widthArg)
			if err != nil {
				return types.Value{}, err
			}
			width = 0
			if !w.Null {
				n, err := types.Cast(w, types.TInt4)
				if err != nil {
					return types.Value{}, err
				}
				width = n.I
			}
		}
		v, err := nextArg(spec.arg)
		if err != nil {
			return types.Value{}, err
		}
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
			out = QuoteIdent(types.TextOut(v))
		case 'L':
			out = "NULL"
			if !v.Null {
				out = QuoteLiteral(types.TextOut(v))
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

// regexpOf is the regular expression of a regexp function's arguments a:
// the pattern a[1], with the flags a[n-1] if there are n arguments.
func regexpOf(a []types.Value, n int) (*regexp.Regexp, bool, error) {
	flags := ""
	if len(a) == n {
		flags = a[n-1].S
	}
	return compileRegexFlags(a[1].S, flags)
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

// RegexpMatchArray is one match m of re in src as regexp_match[es]
// returns it: a text[] of the parenthesised subexpressions (NULL for one
// that took no part), or of the whole match when there are none.
func RegexpMatchArray(re *regexp.Regexp, src string, m []int) (types.Value, error) {
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

// maxAllocSize is PostgreSQL's MaxAllocSize, the largest value a
// function may build.
const maxAllocSize = 1<<30 - 1

// reservedWords are the keywords quote_ident quotes (PostgreSQL's
// reserved, type/function-name and column-name keywords).
var reservedWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric both case cast check
		collate column constraint create current_catalog current_date current_role current_time
		current_timestamp current_user default deferrable desc distinct do else end except false fetch for
		foreign from grant group having in initially intersect into lateral leading limit localtime
		localtimestamp not null offset on only or order placing primary references returning select
		session_user some symmetric system_user table then to trailing true union unique user using variadic
		when where window with authorization binary collation concurrently cross current_schema freeze full
		ilike inner is isnull join left like natural notnull outer overlaps right similar tablesample verbose
		between bigint bit boolean char character coalesce dec decimal exists extract float greatest grouping
		inout int integer interval least national nchar none normalize nullif numeric out overlay position
		precision real row setof smallint substring time timestamp treat trim values varchar xmlattributes
		xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi xmlroot xmlserialize xmltable`) {
		m[w] = true
	}
	return m
}()

// QuoteIdent is quote_ident: name as is when it needs no quotes.
func QuoteIdent(name string) string {
	plain := name != "" && !reservedWords[name]
	for i, ch := range name {
		if !(ch == '_' || ch >= 'a' && ch <= 'z' || i > 0 && (ch >= '0' && ch <= '9' || ch == '$')) {
			plain = false
			break
		}
	}
	if plain {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// QuoteLiteral is quote_literal.
func QuoteLiteral(s string) string {
	q := "'" + strings.ReplaceAll(s, "'", "''") + "'"
	if strings.Contains(s, `\`) {
		return "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}

// StrPos is strpos(s, sub) and position(sub IN s): the 1-based character
// position of sub in s, 0 if none.
func StrPos(a []types.Value) (types.Value, error) {
	return types.Int4(int32(runePos(a[0].S, a[1].S))), nil
}

// Replace is replace(s, from, to): every from in s replaced by to.
func Replace(a []types.Value) (types.Value, error) {
	return types.Text(strings.ReplaceAll(a[0].S, a[1].S, a[2].S)), nil
}

// Reverse is reverse(s), by characters.
func Reverse(a []types.Value) (types.Value, error) {
	return types.Text(reverseRunes(a[0].S)), nil
}

// MD5 is md5(s): its digest in hex.
func MD5(a []types.Value) (types.Value, error) {
	h := md5.Sum([]byte(a[0].S))
	return types.Text(hex.EncodeToString(h[:])), nil
}

// StartsWith is starts_with(s, prefix).
func StartsWith(a []types.Value) (types.Value, error) {
	return types.Bool(strings.HasPrefix(a[0].S, a[1].S)), nil
}

// CharLength is char_length(s), in characters.
func CharLength(a []types.Value) (types.Value, error) {
	return types.Int4(int32(utf8.RuneCountInString(a[0].S))), nil
}

// OctetLength is octet_length(s), in bytes.
func OctetLength(a []types.Value) (types.Value, error) {
	return types.Int4(int32(len(a[0].S))), nil
}

// Initcap is initcap(s): each word's first letter upper-case, the others
// lower.
func Initcap(a []types.Value) (types.Value, error) {
	return types.Text(initcap(a[0].S)), nil
}

// Substr is substr(s, start [, count]), by characters: start is 1-based,
// and a start before 1 counts toward count; a negative count is 22011.
func Substr(a []types.Value) (types.Value, error) {
	r := []rune(a[0].S)
	start := a[1].I // 1-based; before 1 counts toward the length
	end := int64(len(r)) + 1
	if len(a) == 3 {
		if a[2].I < 0 {
			return types.Value{}, pgerror.Errorf(pgerror.CodeSubstringError, "negative substring length not allowed")
		}
		end = start + a[2].I
	}
	start = max(start, 1)
	end = min(end, int64(len(r))+1)
	if start >= end {
		return types.Text(""), nil
	}
	return types.Text(string(r[start-1 : end-1])), nil
}

// Btrim is btrim(s, chars) (and trim(s)).
func Btrim(a []types.Value) (types.Value, error) { return trim(a, true, true) }

// Ltrim is ltrim(s, chars).
func Ltrim(a []types.Value) (types.Value, error) { return trim(a, true, false) }

// Rtrim is rtrim(s, chars).
func Rtrim(a []types.Value) (types.Value, error) { return trim(a, false, true) }

func trim(a []types.Value, left, right bool) (types.Value, error) {
	s := a[0].S
	if left {
		s = strings.TrimLeft(s, a[1].S)
	}
	if right {
		s = strings.TrimRight(s, a[1].S)
	}
	return types.Text(s), nil
}

// Left is left(s, n) and right(s, n): the first (last) n characters, all
// but the last (first) -n for a negative n.
func Left(a []types.Value) (types.Value, error) { return leftRight(a, true) }

// Right is right(s, n).
func Right(a []types.Value) (types.Value, error) { return leftRight(a, false) }

func leftRight(a []types.Value, left bool) (types.Value, error) {
	r := []rune(a[0].S)
	n := int(a[1].I)
	if n < 0 {
		n = max(len(r)+n, 0)
	}
	n = min(n, len(r))
	if left {
		return types.Text(string(r[:n])), nil
	}
	return types.Text(string(r[len(r)-n:])), nil
}

// Repeat is repeat(s, n): s n times; 54000 beyond PostgreSQL's MaxAllocSize.
func Repeat(a []types.Value) (types.Value, error) {
	if a[1].I <= 0 {
		return types.Text(""), nil
	}
	if int64(len(a[0].S))*a[1].I > 1<<30-1 {
		return types.Value{}, pgerror.Errorf(pgerror.CodeProgramLimit, "requested length too large")
	}
	return types.Text(strings.Repeat(a[0].S, int(a[1].I))), nil
}

// SplitPart is split_part(s, delimiter, n): the nth field (from the end for
// a negative n); 22023 for 0.
func SplitPart(a []types.Value) (types.Value, error) {
	n := a[2].I
	if n == 0 {
		return types.Value{}, pgerror.Errorf(pgerror.CodeInvalidParamValue, "field position must not be zero")
	}
	var parts []string
	if a[1].S == "" {
		parts = []string{a[0].S}
	} else {
		parts = strings.Split(a[0].S, a[1].S)
	}
	if n < 0 {
		n = int64(len(parts)) + n + 1
	}
	if n < 1 || n > int64(len(parts)) {
		return types.Text(""), nil
	}
	return types.Text(parts[n-1]), nil
}

// Concat is concat(args...) and concat_ws(sep, args...): the arguments'
// output texts, NULLs left out (concat_ws is NULL for a NULL sep).
// Not strict.
func Concat(a []types.Value) (types.Value, error) { return concat(a, false) }

// ConcatWS is concat_ws(sep, args...).
func ConcatWS(a []types.Value) (types.Value, error) { return concat(a, true) }

func concat(a []types.Value, ws bool) (types.Value, error) {
	sep := ""
	if ws {
		if a[0].Null {
			return types.Null(types.TText), nil
		}
		sep, a = a[0].S, a[1:]
	}
	var b strings.Builder
	first := true
	for _, v := range a {
		if v.Null {
			continue
		}
		if !first {
			b.WriteString(sep)
		}
		first = false
		b.WriteString(v.String()) // the output function: a boolean is t or f
	}
	return types.Text(b.String()), nil
}

func runePos(s, sub string) int {
	i := strings.Index(s, sub)
	if i < 0 {
		return 0
	}
	return utf8.RuneCountInString(s[:i]) + 1
}

func reverseRunes(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

func initcap(s string) string {
	var b strings.Builder
	start := true
	for _, r := range s {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r >= 0x80
		switch {
		case alnum && start:
			b.WriteString(strings.ToUpper(string(r)))
		case alnum:
			b.WriteString(strings.ToLower(string(r)))
		default:
			b.WriteRune(r)
		}
		start = !alnum
	}
	return b.String()
}

func init() {
	for name, b := range map[string]Builtin{
		// length(text); on a character(n) it counts the characters
		// without the trailing spaces, as PostgreSQL's bpcharlen, since
		// the argument is cast to text
		"length": {[]types.Type{types.TText}, types.TInt4, func(_ Context, a []types.Value) (types.Value, error) {
			if a[0].Null {
				return types.Null(types.TInt4), nil
			}
			return types.Int4(int32(utf8.RuneCountInString(a[0].S))), nil
		}},
		// lower(text), upper(text): as PostgreSQL's under a UTF-8
		// locale (tupled has no other), Unicode case mapping
		"lower": {[]types.Type{types.TText}, types.TText, func(_ Context, a []types.Value) (types.Value, error) {
			if a[0].Null {
				return types.Null(types.TText), nil
			}
			return types.Text(strings.ToLower(a[0].S)), nil
		}},
		"upper": {[]types.Type{types.TText}, types.TText, func(_ Context, a []types.Value) (types.Value, error) {
			if a[0].Null {
				return types.Null(types.TText), nil
			}
			return types.Text(strings.ToUpper(a[0].S)), nil
		}},
	} {
		Builtins[name] = b
	}
}

// SizePretty is pg_size_pretty(n): n bytes in the first unit (bytes, kB,
// MB, ... of 1024 each) in which it is under 10240, rounded half up.
func SizePretty(n int64) string {
	units := []string{"bytes", "kB", "MB", "GB", "TB", "PB"}
	i := 0
	for (n >= 10*1024 || n <= -10*1024) && i < len(units)-1 {
		n = (n + 512) / 1024
		i++
	}
	return strconv.FormatInt(n, 10) + " " + units[i]
}

// ByteaConcat is bytea || bytea (byteacat); NULL if a side is NULL.
func ByteaConcat(a []types.Value) (types.Value, error) {
	if a[0].Null || a[1].Null {
		return types.Null(types.TBytea), nil
	}
	return types.Value{T: types.TBytea, S: a[0].S + a[1].S}, nil
}
