package eval

import (
	"regexp"
	"strings"
	"sync"

	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// Pattern is LIKE / ILIKE (Like, with Fold; as a regular expression),
// SIMILAR TO (Similar) or a POSIX regular expression match (neither),
// translated to Go's RE2. It keeps the last pattern it compiled, so a
// constant pattern is compiled once; safe for concurrent use. sqlfe's
// conditional.go compiles the operators and substring(... FROM ...).
type Pattern struct {
	Like    bool // LIKE syntax (% _ and the escape), else a POSIX regex
	Similar bool // SIMILAR TO's SQL regex
	Fold    bool // case-insensitive
	mu      sync.Mutex
	last    string // the pattern and escape re was compiled from
	lastEsc string
	re      *regexp.Regexp
	// trailing: the LIKE pattern re was made from ends with its escape;
	// re matches the texts that make that an error
	trailing bool
}

// Regexp is pat (with escape esc: LIKE's ESCAPE, SIMILAR TO's) as a
// regular expression; trailing: a LIKE pattern ending with its escape,
// whose regexp matches the texts that make that an error.
func (p *Pattern) Regexp(pat, esc string) (_ *regexp.Regexp, trailing bool, _ error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.re != nil && p.last == pat && p.lastEsc == esc {
		return p.re, p.trailing, nil
	}
	src := pat
	if p.Like || p.Similar {
		e, err := escapeRune(esc)
		if err != nil {
			return nil, false, err
		}
		if p.Like {
			src, p.trailing, err = likeToRegexp(pat, e)
		} else {
			src, err = similarToRegexp(pat, e)
		}
		if err != nil {
			return nil, false, err
		}
	}
	if p.Fold {
		src = "(?i)" + src
	}
	re, err := regexp.Compile("(?s)" + src)
	if err != nil {
		return nil, false, pgerror.Errorf(pgerror.CodeInvalidRegex, "invalid regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	p.re, p.last, p.lastEsc = re, pat, esc
	return re, p.trailing, nil
}

// Match is v ~ pat (LIKE, SIMILAR TO, ...), negated for not, of non-NULL
// v (a text or a character(n), whose trailing spaces do not count).
func (p *Pattern) Match(v types.Value, pat, esc string, not bool) (types.Value, error) {
	re, trailing, err := p.Regexp(pat, esc)
	if err != nil {
		return types.Value{}, err
	}
	s := v.S
	if v.T == types.TBpchar {
		s = types.BpcharTrim(s)
	}
	if trailing { // a LIKE pattern ending with its escape matches nothing
		if re.MatchString(s) {
			return types.Value{}, pgerror.Errorf(pgerror.CodeInvalidEscape, "LIKE pattern must not end with escape character")
		}
		return types.Bool(not), nil
	}
	return types.Bool(re.MatchString(s) != not), nil
}

// Substring is substring(text FROM pattern), the part of the text the
// POSIX regular expression matches (its first parenthesised
// subexpression's, if it has one; NULL without a match), and
// substring(text FROM pattern FOR escape) (p Similar), the part of a
// whole-string SIMILAR TO match between the pattern's two
// escape-double-quote separators (all of it without them).
func (p *Pattern) Substring(a []types.Value) (types.Value, error) {
	esc := ""
	if len(a) == 3 {
		esc = a[2].S
	}
	re, _, err := p.Regexp(a[1].S, esc)
	if err != nil {
		return types.Value{}, err
	}
	m := re.FindStringSubmatchIndex(a[0].S)
	switch {
	case m == nil:
		return types.Null(types.TText), nil
	case len(m) > 2: // the first subexpression, NULL if it took no part
		if m[2] < 0 {
			return types.Null(types.TText), nil
		}
		return types.Text(a[0].S[m[2]:m[3]]), nil
	}
	return types.Text(a[0].S[m[0]:m[1]]), nil
}

// escapeRune is the escape character of an ESCAPE string: -1 for the
// empty string (no escape), else its one character (22025 otherwise).
func escapeRune(esc string) (rune, error) {
	rs := []rune(esc)
	switch len(rs) {
	case 0:
		return -1, nil
	case 1:
		return rs[0], nil
	}
	return 0, &pgerror.Error{Code: pgerror.CodeInvalidEscape, Message: "invalid escape string", Hint: "Escape string must be empty or one character."}
}

// likeToRegexp translates a LIKE pattern: % any string, _ any character,
// esc (-1: none) escapes the next character; it must match the whole
// string. A pattern ending with esc is an error only where PostgreSQL's
// matcher reaches that end with text left over: no string matches it, and
// the regexp returned (trailing true) matches the strings that are the
// error (the rest of the pattern, then at least one character).
func likeToRegexp(pat string, esc rune) (src string, trailing bool, err error) {
	var b strings.Builder
	b.WriteString("^")
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == esc:
			if i+1 == len(rs) {
				b.WriteString(".+$")
				return b.String(), true, nil
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case r == '%':
			b.WriteString(".*")
		case r == '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return b.String(), false, nil
}

// similarToRegexp translates a SIMILAR TO pattern (SQL's regular
// expressions), as PostgreSQL's similar_to_escape does: % and _ are .* and
// ., the regex metacharacters | * + ? {m,n} ( ) [ ] keep their meaning
// (a group does not capture), . ^ $ are literal, esc (-1: none) makes the
// next character literal, and esc" separates the part substring() returns
// (the only capturing group); it must match the whole string.
func similarToRegexp(pat string, esc rune) (string, error) {
	var b strings.Builder
	b.WriteString("^(?:")
	rs := []rune(pat)
	inBracket := false
	quotes := 0
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == esc:
			if i+1 == len(rs) {
				break // a trailing escape is dropped, as PostgreSQL's similar_to_escape does
			}
			i++
			if rs[i] == '"' { // an escape-double-quote separator: substring's part
				switch quotes++; quotes {
				case 1:
					b.WriteString("){1,1}?(")
				case 2:
					b.WriteString("){1,1}(?:")
				default:
					return "", pgerror.Errorf(pgerror.CodeInvalidEscapeUse, "SQL regular expression may not contain more than two escape-double-quote separators")
				}
				continue
			}
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case inBracket:
			if r == ']' {
				inBracket = false
			}
			if r == '\\' {
				b.WriteString(`\\`)
				continue
			}
			b.WriteRune(r)
		case r == '[':
			inBracket = true
			b.WriteRune(r)
			if i+1 < len(rs) && rs[i+1] == '^' { // [^…]: the ^ is the bracket's
				i++
				b.WriteRune('^')
			}
			if i+1 < len(rs) && rs[i+1] == ']' { // []…]: a literal ]
				i++
				b.WriteString(`\]`)
			}
		case r == '%':
			b.WriteString(".*")
		case r == '_':
			b.WriteString(".")
		case r == '(':
			b.WriteString("(?:")
		case strings.ContainsRune("|*+?{})", r):
			b.WriteRune(r)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(")$")
	return b.String(), nil
}
