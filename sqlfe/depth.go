package sqlfe

import (
	"fmt"

	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// Nesting depth: a guard in front of PostgreSQL's C parser.
//
// pg_query_go runs PostgreSQL's grammar in C on the calling thread's stack.
// The grammar itself is iterative (bison's stack is capped at 10000 states:
// "memory exhausted"), but left-associative chains such as 1+1+…, x::int::int…
// or SELECT … UNION SELECT … UNION … build a parse tree whose depth grows
// with the length of the chain while bison's stack stays small, and
// libpg_query then walks that tree recursively, without PostgreSQL's
// check_stack_depth, to hand it to Go. A 30,000-term sum overflows an 8 MB
// thread stack (about 350 bytes per level; a nested subquery costs about
// 1 KB per level) and the process dies with SIGSEGV: Go cannot recover from
// a fault on a C stack. PostgreSQL itself answers such a statement with
// 54001 "stack depth limit exceeded" (its max_stack_depth of 2 MB is reached
// near 3,000-5,000 terms).
//
// So before any text reaches the C parser, checkDepth scans it once in Go
// with a lexer that follows scan.l where it matters (string literals with ''
// doubling, E'' strings with backslash escapes and quote continuation,
// dollar quoting, quoted identifiers, nested /* */ and -- comments) and
// computes an upper bound of the parse tree's depth:
//
//   - every operator character, every word (keyword or identifier) adds one
//     level to the element being built (a "run"): 1+1+1 is a run of 2;
//   - "(" or "[" or CASE opens a frame nested at the current depth; its
//     closing adds the deepest run inside it, plus one, to the enclosing run
//     (not plus one for a redundant pair of parentheses, the inner one of
//     ((x)): see openParen);
//   - "," and AND, OR, WHEN, THEN, ELSE end an element (list members and the
//     arguments of PostgreSQL's flattened AND/OR are siblings), ";" ends the
//     statement;
//   - UNION, INTERSECT, EXCEPT and JOIN chain statements left-deep across
//     commas and AND/OR: they count in a frame's chain, which never resets;
//   - literals, quoted identifiers and parameters add nothing.
//
// Every level of the real tree needs at least one token that is counted, so
// the bound is never below the real depth (FuzzDepthBound checks this
// against pg_query's own scanner); it overestimates freely. A statement
// whose bound exceeds maxExprDepth is refused with 54001, as PostgreSQL
// refuses it, and never parsed. The bound can exceed neither the length of
// the text, so short statements are not scanned at all.
//
// maxExprDepth is 1000 levels: about 350 KB of C stack for an operator
// chain, 500 KB for nested subqueries — safe on any thread stack of 1 MB or
// more (Go's cgo threads get the RLIMIT_STACK size, 8 MB by default); with a
// smaller stack limit the bound shrinks in proportion (stackDepthLimit).
// Realistic statements come nowhere near it: list members (IN lists, VALUES
// rows, select lists, arguments) and AND/OR terms do not add up.

// maxExprDepth is the largest nesting depth bound accepted.
var maxExprDepth = stackDepthLimit()

const (
	defaultMaxExprDepth = 1000
	bytesPerDepthLevel  = 1024 // measured worst case (nested subqueries), rounded up
)

// depthLimitForStack is the depth limit for a thread stack of size bytes (0:
// unknown or unlimited).
func depthLimitForStack(size uint64) int {
	if size == 0 || size >= defaultMaxExprDepth*bytesPerDepthLevel {
		return defaultMaxExprDepth
	}
	n := int(size / bytesPerDepthLevel)
	if n < 64 {
		n = 64
	}
	return n
}

func errStackDepth() *pgerror.Error {
	return &pgerror.Error{Code: pgerror.CodeStackDepth, Message: "stack depth limit exceeded",
		Hint: fmt.Sprintf("tupled refuses statements nested deeper than %d levels (a chain of operators such as 1+1+…, parentheses, function calls, subqueries); simplify the statement.", maxExprDepth)}
}

// checkText refuses query text PostgreSQL would refuse before parsing it: a
// NUL byte or invalid UTF-8 (22021), nesting too deep for the parser (54001).
func checkText(sql string) *pgerror.Error {
	if err := types.CheckEncoding(sql); err != nil {
		return err
	}
	if depthBound(sql, maxExprDepth) > maxExprDepth {
		return errStackDepth()
	}
	return nil
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isIdentCont(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' || c == '$' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isOpChar(c byte) bool {
	switch c {
	case '~', '!', '@', '#', '^', '&', '|', '`', '?', '+', '-', '*', '/', '%', '<', '>', '=', ':', '.', '\\', '$':
		return true
	}
	return false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// depthCounter accumulates the depth bound from a stream of token classes;
// depthBound feeds it from its own lexer, the tests from pg_query's scanner.
type depthCounter struct {
	frames []depthFrame
	max    int
}

type depthFrame struct {
	base, run, maxRun int
	chain             int // set operations and joins: never reset
	isCase            bool
	// redundant parentheses (see openParen): cand is a "(" right after a
	// "("; own is set by any counted token or sibling at this frame's own
	// level; nested counts the frames closed inside it
	paren, cand, own bool
	nested           int
}

func (d *depthCounter) cur() *depthFrame {
	if len(d.frames) == 0 {
		d.frames = append(d.frames, depthFrame{})
	}
	return &d.frames[len(d.frames)-1]
}

func (d *depthCounter) note(f *depthFrame) {
	if f.chain+f.run > f.maxRun {
		f.maxRun = f.chain + f.run
	}
	if f.base+f.chain+f.run > d.max {
		d.max = f.base + f.chain + f.run
	}
}

// level: an operator character or a word.
func (d *depthCounter) level() { f := d.cur(); f.run++; f.own = true; d.note(f) }

// chainLevel: UNION, INTERSECT, EXCEPT, JOIN. They nest the statement
// left-deep across commas and AND/OR (SELECT 1, 2 UNION SELECT 1, 2 …;
// a JOIN b ON x AND y JOIN …), so their count never resets within a frame.
func (d *depthCounter) chainLevel() { f := d.cur(); f.chain++; f.own = true; d.note(f) }

// sibling: the element being built ends ("," AND OR WHEN THEN ELSE).
func (d *depthCounter) sibling() { f := d.cur(); f.run = 0; f.own = true }

// open: "[" or CASE (isCase); the frame adds a level when it closes.
func (d *depthCounter) open(isCase bool) {
	f := d.cur()
	d.frames = append(d.frames, depthFrame{base: f.base + f.chain + f.run + 1, isCase: isCase})
	d.note(&d.frames[len(d.frames)-1])
}

// openParen: "(". A pair of parentheses directly inside another, around
// nothing but literals and at most one further parenthesised element —
// the inner pair of ((x)) — is redundant: the grammar returns what it
// encloses ('(' a_expr ')' and '(' select_with_parens ')' make no node),
// so it adds no level. Such a frame is a candidate when it opens (its
// enclosing "(" has seen nothing yet) and opens at its enclosing frame's
// base; if it turns out not to be redundant (a word, an operator, a comma
// at its level: a row, a subquery, an expression), its level is added when
// it closes. This lets PostgreSQL's pure parenthesis nesting through (it is
// bounded by the parser's own stack of 10000 states, "memory exhausted",
// 42601, as in PostgreSQL) without letting anything deeper through: every
// frame that can be a node still counts, function calls and subqueries
// included.
func (d *depthCounter) openParen() {
	f := d.cur()
	cand := f.paren && !f.own && f.nested == 0
	base := f.base + f.chain + f.run + 1
	if cand {
		base-- // f.chain and f.run are 0: nothing counted in f yet
	}
	d.frames = append(d.frames, depthFrame{base: base, paren: true, cand: cand})
	d.note(&d.frames[len(d.frames)-1])
}

// close ends the innermost frame (if it is a CASE frame when isCase); a
// stray close is a syntax error for the parser and is ignored here.
func (d *depthCounter) close(isCase bool) bool {
	if len(d.frames) < 2 || d.frames[len(d.frames)-1].isCase != isCase {
		return false
	}
	in := d.frames[len(d.frames)-1]
	d.frames = d.frames[:len(d.frames)-1]
	f := d.cur()
	add := in.maxRun + 1
	if in.cand && !in.own && in.nested <= 1 {
		add-- // redundant parentheses
	}
	f.run += add
	f.nested++
	d.note(f)
	return true
}

// end: ";" ends the statement.
func (d *depthCounter) end() { d.frames = d.frames[:0] }

// depthBound returns an upper bound of the parse-tree depth of the
// statements in sql, or a value above limit as soon as the bound exceeds it.
func depthBound(sql string, limit int) int {
	if len(sql) <= limit {
		return len(sql) // a level needs at least one byte
	}
	return scanDepth(sql, limit)
}

// scanDepth computes the bound, stopping once it exceeds stop.
func scanDepth(sql string, stop int) int {
	limit := stop
	d := depthCounter{frames: make([]depthFrame, 1, 16)}
	i, n := 0, len(sql)
	for i < n && d.max <= limit {
		c := sql[i]
		switch {
		case isSpace(c):
			i++
		case c == '-' && i+1 < n && sql[i+1] == '-':
			for i < n && sql[i] != '\n' && sql[i] != '\r' {
				i++
			}
		case c == '/' && i+1 < n && sql[i+1] == '*':
			i = skipBlockComment(sql, i)
		case c == '\'':
			i = skipQuoted(sql, i, false)
		case c == '"':
			i = skipDoubled(sql, i, '"')
		case c == '$' && i+1 < n && isDigit(sql[i+1]):
			for i++; i < n && isDigit(sql[i]); i++ {
			}
		case c == '$':
			if end, ok := skipDollarQuoted(sql, i); ok {
				i = end
			} else {
				d.level()
				i++
			}
		case isDigit(c) || c == '.' && i+1 < n && isDigit(sql[i+1]):
			// digits, at most one '.' (not "..": 1..2 is 1, "..", 2)
			for i < n && (isDigit(sql[i]) || sql[i] == '_') {
				i++
			}
			if i < n && sql[i] == '.' && !(i+1 < n && sql[i+1] == '.') {
				for i++; i < n && (isDigit(sql[i]) || sql[i] == '_'); i++ {
				}
			}
			if i < n && (sql[i] == 'e' || sql[i] == 'E') {
				j := i + 1
				if j < n && (sql[j] == '+' || sql[j] == '-') {
					j++
				}
				if j < n && isDigit(sql[j]) {
					for i = j; i < n && isDigit(sql[i]); i++ {
					}
				}
			}
		case isIdentStart(c):
			j := i
			for j < n && isIdentCont(sql[j]) {
				j++
			}
			w := sql[i:j]
			if j < n && sql[j] == '\'' && len(w) == 1 {
				switch w[0] {
				case 'e', 'E':
					i = skipQuoted(sql, j, true)
					continue
				case 'b', 'B', 'x', 'X':
					i = skipQuoted(sql, j, false)
					continue
				}
				// N'…' is the keyword NCHAR (a cast: one level) and a
				// standard string: counted as the word, then the string
				// below
			}
			i = j
			switch {
			case eqFold(w, "and"), eqFold(w, "or"), eqFold(w, "when"), eqFold(w, "then"), eqFold(w, "else"):
				d.level()
				d.sibling()
			case eqFold(w, "union"), eqFold(w, "intersect"), eqFold(w, "except"), eqFold(w, "join"):
				d.chainLevel()
			case eqFold(w, "case"):
				d.level()
				d.open(true)
			case eqFold(w, "end"):
				if !d.close(true) {
					d.level()
				}
			default:
				d.level()
			}
		case c == '(':
			d.openParen()
			i++
		case c == '[':
			d.open(false)
			i++
		case c == ')' || c == ']':
			d.close(false)
			i++
		case c == ',':
			d.sibling()
			i++
		case c == ';':
			d.end()
			i++
		default:
			d.level() // an operator character (each counts: "+-" may be two operators)
			i++
		}
	}
	return d.max
}

func eqFold(w, kw string) bool {
	if len(w) != len(kw) {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != kw[i] {
			return false
		}
	}
	return true
}

// skipBlockComment skips a /* */ comment at i; they nest, as in PostgreSQL.
func skipBlockComment(s string, i int) int {
	depth := 0
	for i < len(s) {
		switch {
		case s[i] == '/' && i+1 < len(s) && s[i+1] == '*':
			depth++
			i += 2
		case s[i] == '*' && i+1 < len(s) && s[i+1] == '/':
			depth--
			i += 2
			if depth == 0 {
				return i
			}
		default:
			i++
		}
	}
	return i
}

// skipDoubled skips a literal opened by q at i in which qq stands for q.
func skipDoubled(s string, i int, q byte) int {
	for i++; i < len(s); i++ {
		if s[i] == q {
			if i+1 < len(s) && s[i+1] == q {
				i++
				continue
			}
			return i + 1
		}
	}
	return i
}

// skipQuoted skips a string literal whose opening quote is at i: a doubled
// quote stands for a quote and, in an E-string (esc), so does a backslash
// and the quote after it. Quote continuation ('a' <newline> 'b' is one
// literal) keeps the E-string rules for the continued part, as scan.l does.
func skipQuoted(s string, i int, esc bool) int {
	for {
		i++
		for i < len(s) {
			c := s[i]
			if esc && c == '\\' {
				i += 2
				continue
			}
			if c == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					i += 2
					continue
				}
				break
			}
			i++
		}
		if i >= len(s) {
			return len(s)
		}
		i++ // past the closing quote
		j, ok := quoteContinues(s, i)
		if !ok {
			return i
		}
		i = j // at the continuing quote
	}
}

// quoteContinues reports whether a string literal ending before i continues
// and where its quote is: horizontal space, a newline, any space, a quote
// ('a' <newline> 'b' is 'ab'). Comments do not continue a literal in the
// scanner pg_query_go runs (PostgreSQL 17's): FuzzDepthBound found it.
func quoteContinues(s string, i int) (int, bool) {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\f' || s[i] == '\v') {
		i++
	}
	if i >= len(s) || (s[i] != '\n' && s[i] != '\r') {
		return 0, false
	}
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i < len(s) && s[i] == '\'' {
		return i, true
	}
	return 0, false
}

// skipDollarQuoted skips a $tag$…$tag$ literal at i; ok is false when i does
// not start a dollar-quote delimiter.
func skipDollarQuoted(s string, i int) (int, bool) {
	j := i + 1
	if j < len(s) && isIdentStart(s[j]) {
		for j < len(s) && isIdentCont(s[j]) && s[j] != '$' {
			j++
		}
	}
	if j >= len(s) || s[j] != '$' {
		return 0, false
	}
	delim := s[i : j+1]
	rest := s[j+1:]
	for k := 0; k+len(delim) <= len(rest); k++ {
		if rest[k] == '$' && rest[k:k+len(delim)] == delim {
			return j + 1 + k + len(delim), true
		}
	}
	return len(s), true
}
