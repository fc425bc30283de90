package sqlfe

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/pgerror"
)

// Finding 4: a 30,000-term expression killed the process inside the C
// parser. Now it gets PostgreSQL's 54001 and the session goes on.
func TestNestingDepthLimit(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE t (k int PRIMARY KEY, v int)", "CREATE TABLE")
	sum := "SELECT 1" + strings.Repeat("+1", 30000)
	mustFail(t, s, sum, pgerror.CodeStackDepth, "stack depth limit exceeded")
	mustRun(t, s, "SELECT 1", "1\nSELECT 1")
	// the extended protocol's Parse goes through the same check
	if _, err := s.Prepare(sum, nil); err == nil || ToError(err).Code != pgerror.CodeStackDepth {
		t.Fatalf("Prepare: %v", err)
	}
	// redundant parentheses make no parse-tree level: they are bounded by
	// the parser's own stack, as in PostgreSQL 15.18 (9993 accepted, then
	// 42601 "memory exhausted", the same words), not by the depth guard
	parens := func(n int, inner string) string {
		return "SELECT " + strings.Repeat("(", n) + inner + strings.Repeat(")", n)
	}
	mustRun(t, s, parens(9993, "1"), "1\nSELECT 1")
	mustFail(t, s, parens(9994, "1"), pgerror.CodeSyntax, `memory exhausted at or near ")"`)
	mustFail(t, s, parens(100000, "1"), pgerror.CodeSyntax, `memory exhausted at or near "("`)
	mustRun(t, s, "SELECT k FROM t WHERE "+strings.Repeat("(", 5000)+"k = 1"+strings.Repeat(")", 5000), "SELECT 0")
	mustRun(t, s, parens(5000, "1"+strings.Repeat("+1", maxExprDepth-4)), strconv.Itoa(maxExprDepth-3)+"\nSELECT 1")
	mustFail(t, s, parens(5000, "1"+strings.Repeat("+1", maxExprDepth)), pgerror.CodeStackDepth, "stack depth limit exceeded")
	// parentheses that do make a level still count
	mustFail(t, s, "SELECT "+strings.Repeat("(1+", 2000)+"1"+strings.Repeat(")", 2000), pgerror.CodeStackDepth, "")
	mustFail(t, s, "SELECT "+strings.Repeat("(1, ", 2000)+"1"+strings.Repeat(")", 2000), pgerror.CodeStackDepth, "")
	mustFail(t, s, "SELECT "+strings.Repeat("((SELECT ", 1000)+"1"+strings.Repeat("))", 1000), pgerror.CodeStackDepth, "")
	mustFail(t, s, strings.Repeat("SELECT 1 UNION ", 20000)+"SELECT 1", pgerror.CodeStackDepth, "")
	mustFail(t, s, "SELECT 1"+strings.Repeat("::int", 20000), pgerror.CodeStackDepth, "")
	mustFail(t, s, "SELECT 'a'"+strings.Repeat(" || 'a'", 20000), pgerror.CodeStackDepth, "")
	// inside a transaction block the error fails the block, like any other
	mustRun(t, s, "BEGIN", "BEGIN")
	mustFail(t, s, sum, pgerror.CodeStackDepth, "")
	mustFail(t, s, "SELECT 1", pgerror.CodeInFailedTx, "")
	mustRun(t, s, "ROLLBACK", "ROLLBACK")

	// at and one past the limit
	at := "SELECT 1" + strings.Repeat("+1", maxExprDepth-1)
	if b := scanDepth(at, math.MaxInt); b != maxExprDepth {
		t.Fatalf("bound of the %d-term sum: %d, want %d", maxExprDepth, b, maxExprDepth)
	}
	mustRun(t, s, at, strconv.Itoa(maxExprDepth)+"\nSELECT 1")
	mustFail(t, s, at+"+1", pgerror.CodeStackDepth, "")

	// realistic statements are far from the limit
	var in, vals, or []string
	for i := 0; i < 1000; i++ {
		in = append(in, strconv.Itoa(i))
		vals = append(vals, fmt.Sprintf("(%d, %d)", i, i*2))
		or = append(or, fmt.Sprintf("k = %d", i))
	}
	mustRun(t, s, "INSERT INTO t VALUES "+strings.Join(vals, ", "), "INSERT 0 1000")
	mustRun(t, s, "SELECT k FROM t WHERE k IN ("+strings.Join(in, ", ")+") AND v > 1995", "998\n999\nSELECT 2")
	mustRun(t, s, "SELECT k FROM t WHERE "+strings.Join(or, " OR ")+" ORDER BY k DESC LIMIT 1", "999\nSELECT 1")
	long := "SELECT '" + strings.Repeat("((+-*/", 20000) + "' || $x$ ((((( $x$ || E'\\'(((' || \"k\" FROM t WHERE k = 1 -- ((((\n/* ((( /* ((( */ */"
	mustRun(t, s, long, strings.Repeat("((+-*/", 20000)+" ((((( '(((1\nSELECT 1")
}

func TestDepthBoundLexer(t *testing.T) {
	deep := strings.Repeat("+1", 3000)
	for _, c := range []struct {
		sql  string
		deep bool
	}{
		{"SELECT 1" + deep, true},
		{"SELECT '" + deep + "'", false},
		{"SELECT E'\\'" + deep + "'", false},
		{"SELECT 'a\\'" + deep, true}, // standard strings have no backslash escapes
		{"SELECT E'a'\n'\\'" + deep + "'", false},
		{"SELECT E'a' '\\'" + deep, true},          // no newline: no continuation
		{"SELECT E'a' -- c\n'\\'" + deep, true},    // comments do not continue a literal
		{"SELECT E'a' /* c */\n'\\'" + deep, true}, // a block comment does not
		{"SELECT E'a'\n -- c\n'\\'" + deep, true},
		{"SELECT E'a'\n \n\t'\\'" + deep + "'", false},
		{"SELECT $$" + deep + "$$", false},
		{"SELECT $a$ $b$ " + deep + "$a$", false},
		{"SELECT a$b$" + deep, true}, // a$b$ is an identifier
		{"SELECT $1" + deep, true},
		{"SELECT \"" + deep + "\"", false},
		{"SELECT 1 /* /* */" + deep + "*/", false},
		{"SELECT 1 -- " + deep, false},
		{"SELECT 1 --" + deep + "\n" + deep, true},
		{"SELECT 1" + strings.Repeat(" AND 1 = 1", 3000), false},
		{"SELECT 1 IN (" + strings.Repeat("1, ", 3000) + "1)", false},
		{"SELECT " + strings.Repeat("CASE WHEN true THEN ", 600) + "1" + strings.Repeat(" END", 600), true},
		{"SELECT CASE " + strings.Repeat("WHEN true THEN 1 ", 3000) + "END", false},
		{"SELECT " + strings.Repeat("f(", 600) + "1" + strings.Repeat(")", 600), true},
		{"SELECT x" + strings.Repeat("[1]", 1000), true},
		{"SELECT " + strings.Repeat("NOT ", 1500) + "true", true},
		{"SELECT 1" + strings.Repeat("+-", 600) + "1", true},
		{strings.Repeat("SELECT 1, 2 WHERE true AND true UNION ", 1000) + "SELECT 1, 2", true},
		{"SELECT * FROM t" + strings.Repeat(" JOIN t ON true AND true", 1000), true},
		{"SELECT * FROM (SELECT 1, 2" + strings.Repeat(" EXCEPT SELECT 1, 2", 1000) + ") s", true},
		// redundant parentheses (the inner pair of ((x))) add nothing; any
		// other pair does
		{"SELECT " + strings.Repeat("(", 9000) + "1" + strings.Repeat(")", 9000), false},
		{"SELECT " + strings.Repeat("(", 5000) + "1" + strings.Repeat("+1", 990) + strings.Repeat(")", 5000), false},
		{"SELECT " + strings.Repeat("(", 5000) + "1" + strings.Repeat("+1", 1000) + strings.Repeat(")", 5000), true},
		{"SELECT " + strings.Repeat("(", 5000) + "x" + strings.Repeat(")", 5000) + strings.Repeat("::int", 999), true},
		{"SELECT " + strings.Repeat("(((1)+", 600) + "1" + strings.Repeat(")", 600), true},
		{"SELECT " + strings.Repeat("(1, ", 1100) + "1" + strings.Repeat(")", 1100), true},
		{"SELECT " + strings.Repeat("((1, ", 600) + "1" + strings.Repeat("))", 600), true},
		{"SELECT " + strings.Repeat("((SELECT ", 600) + "1" + strings.Repeat("))", 600), true},
		{"SELECT " + strings.Repeat("f((", 600) + "1" + strings.Repeat("))", 600), true},
		{"SELECT " + strings.Repeat("((", 600) + "x" + strings.Repeat(")).a", 600), true},
		{"SELECT " + strings.Repeat("((", 600) + "x" + strings.Repeat(")[1])", 600), true},
		{"SELECT " + strings.Repeat("((CASE WHEN true THEN ", 600) + "1" + strings.Repeat(" END))", 600), true},
		{"SELECT " + strings.Repeat("CASE WHEN true THEN ((", 600) + "1" + strings.Repeat(")) END", 600), true},
	} {
		if got := scanDepth(c.sql, math.MaxInt) > defaultMaxExprDepth; got != c.deep {
			t.Errorf("%.60q…: deep %v, want %v (bound %d)", c.sql, got, c.deep, scanDepth(c.sql, math.MaxInt))
		}
	}
	if depthLimitForStack(8<<20) != defaultMaxExprDepth || depthLimitForStack(0) != defaultMaxExprDepth || depthLimitForStack(256<<10) != 256 {
		t.Fatal("depthLimitForStack")
	}
}

// refDepth is the depth bound computed from pg_query's own scanner (the
// tokens the parser sees), with the counting rules of scanDepth.
func refDepth(sql string) (int, bool) {
	r, err := pg.Scan(sql)
	if err != nil {
		return 0, false
	}
	d := depthCounter{frames: make([]depthFrame, 1, 16)}
	for _, tk := range r.Tokens {
		text := sql[tk.Start:tk.End]
		switch tk.Token {
		case pg.Token_ASCII_40:
			d.openParen()
		case pg.Token_ASCII_91:
			d.open(false)
		case pg.Token_ASCII_41, pg.Token_ASCII_93:
			d.close(false)
		case pg.Token_ASCII_44:
			d.sibling()
		case pg.Token_ASCII_59:
			d.end()
		case pg.Token_SQL_COMMENT, pg.Token_C_COMMENT:
		case pg.Token_SCONST, pg.Token_USCONST, pg.Token_BCONST, pg.Token_XCONST, pg.Token_ICONST, pg.Token_FCONST, pg.Token_PARAM:
		case pg.Token_IDENT:
			if !strings.HasPrefix(text, `"`) {
				d.level()
			}
		default:
			if tk.KeywordKind != pg.KeywordKind_NO_KEYWORD {
				switch strings.ToLower(text) {
				case "and", "or", "when", "then", "else":
					d.level()
					d.sibling()
				case "union", "intersect", "except", "join":
					d.chainLevel()
				case "case":
					d.level()
					d.open(true)
				case "end":
					if !d.close(true) {
						d.level()
					}
				default:
					d.level()
				}
				continue
			}
			d.level()
		}
	}
	return d.max, true
}

// FuzzDepthBound checks the Go lexer against PostgreSQL's: for every text
// PostgreSQL's scanner accepts, the bound computed by scanDepth is at least
// the one computed from the real tokens (no text can hide nesting from the
// guard inside what it takes for a literal or a comment).
func FuzzDepthBound(f *testing.F) {
	for _, s := range []string{
		"SELECT 1+1+1", "SELECT 'a''b' || E'c\\'d' || $q$x$q$ || \"i\"\"d\"", "SELECT E'a'\n'\\'+1'", "SELECT E'a'\n-- c\n'\\''",
		"SELECT 1 /* /* */ */ + 1", "SELECT x::int[] FROM t WHERE a IN (1, 2) AND b = $1", "SELECT CASE WHEN a THEN b ELSE c END",
		"SELECT U&'d\\0061t' UESCAPE '!'", "SELECT B'101', X'1f', N'n'", "SELECT 1.5e-3 + .5 + 1_000", "SELECT a$b$c FROM t",
		"SELECT 1 +-- c\n 1", "SELECT (SELECT (SELECT 1))", "SELECT ARRAY[[1],[2]]", "SELECT $1::text", "SELECT 'a' 'b'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		if strings.IndexByte(sql, 0) >= 0 {
			return // the C scanner stops at a NUL; checkText refuses it first
		}
		ref, ok := refDepth(sql)
		if !ok {
			return
		}
		if got := scanDepth(sql, math.MaxInt); got < ref {
			t.Fatalf("%q: bound %d below the scanner's %d", sql, got, ref)
		}
	})
}

// The limit is below the depth at which pg_query_go's C code overflows its
// stack: in a child process with a 1 MB stack limit (maxExprDepth is then
// still 1000), the deepest statement of each kind the guard lets through is
// parsed without the guard. The same child dies on the 30,000-term sum, so
// the harness does see a crash. The kinds with redundant parentheses wrap
// 5,000 of them around the deepest chain, or add them at every level of a
// nesting (the guard does not count them): the parser's stack is on the
// heap and the tree gets no level from them.
func TestDepthLimitBelowCrash(t *testing.T) {
	if kind := os.Getenv("TUPLED_DEPTH_CHILD"); kind != "" {
		sql := deepestAccepted(kind)
		if kind == "crash" {
			sql = "SELECT 1" + strings.Repeat("+1", 30000)
		}
		_, err := pg.Parse(sql)
		fmt.Printf("parsed %s (%d bytes, bound %d, limit %d): %v\n", kind, len(sql), scanDepth(sql, math.MaxInt), maxExprDepth, err)
		return
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to set the child's stack limit")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"plus", "cast", "sub", "func", "array", "not", "union", "case", "join", "joinon", "unionlist", "parens", "parensplus", "parenssub", "parensfunc", "parensrow", "parensfield", "parenssubscript", "crash"} {
		cmd := exec.Command("sh", "-c", `ulimit -s 1024 && exec "$0" -test.run '^TestDepthLimitBelowCrash$' -test.v`, exe)
		cmd.Env = append(os.Environ(), "TUPLED_DEPTH_CHILD="+kind)
		out, err := cmd.CombinedOutput()
		if kind == "crash" {
			if err == nil {
				t.Fatalf("the 30,000-term sum did not crash the unguarded parser: the harness proves nothing\n%s", out)
			}
			continue
		}
		if err != nil || !strings.Contains(string(out), "parsed "+kind) {
			t.Fatalf("%s: the child died: %v\n%.2000s", kind, err, out)
		}
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "parsed ") {
				t.Log(l)
			}
		}
	}
}

// deepestAccepted builds the deepest statement of a kind whose bound is
// still within maxExprDepth.
func deepestAccepted(kind string) string {
	build := func(n int) string {
		switch kind {
		case "plus":
			return "SELECT 1" + strings.Repeat("+1", n)
		case "cast":
			return "SELECT 1" + strings.Repeat("::int", n)
		case "sub":
			return strings.Repeat("SELECT (", n) + "1" + strings.Repeat(")", n)
		case "func":
			return "SELECT " + strings.Repeat("f(", n) + "1" + strings.Repeat(")", n)
		case "array":
			return "SELECT ARRAY" + strings.Repeat("[", n) + "1" + strings.Repeat("]", n)
		case "not":
			return "SELECT " + strings.Repeat("NOT ", n) + "true"
		case "union":
			return strings.Repeat("SELECT 1 UNION ", n) + "SELECT 1"
		case "case":
			return "SELECT " + strings.Repeat("CASE WHEN true THEN ", n) + "1" + strings.Repeat(" END", n)
		case "join":
			return "SELECT * FROM t" + strings.Repeat(" JOIN t USING (k)", n)
		case "joinon":
			return "SELECT * FROM t" + strings.Repeat(" JOIN t ON true AND true", n)
		case "unionlist":
			return strings.Repeat("SELECT 1, 2 WHERE true OR true UNION ", n) + "SELECT 1, 2"
		case "parensplus":
			return "SELECT " + strings.Repeat("(", 5000) + "1" + strings.Repeat("+1", n) + strings.Repeat(")", 5000)
		case "parenssub":
			return strings.Repeat("SELECT ((((", n) + "1" + strings.Repeat("))))", n)
		case "parensfunc":
			return "SELECT " + strings.Repeat("f(((", n) + "1" + strings.Repeat(")))", n)
		case "parensfield": // (("x").a), nested: A_Indirection on a parenthesised frame
			return "SELECT " + strings.Repeat("((", n) + `"x"` + strings.Repeat(").a)", n)
		case "parenssubscript":
			return "SELECT " + strings.Repeat("((", n) + `"x"` + strings.Repeat(")[1])", n)
		case "parensrow":
			return "SELECT " + strings.Repeat("(((1, ", n) + "1" + strings.Repeat(")))", n)
		}
		panic(kind)
	}
	if kind == "parens" {
		return "SELECT " + strings.Repeat("(", 9993) + "1" + strings.Repeat(")", 9993) // the parser's own limit
	}
	n := 1
	for scanDepth(build(n+1), math.MaxInt) <= maxExprDepth {
		n++
	}
	return build(n)
}
