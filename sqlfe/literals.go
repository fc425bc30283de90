package sqlfe

import (
	"strings"
	"unicode/utf8"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/pgerror"
)

// pg_query_go's parser is PostgreSQL 17's, whose lexer reads the numeric
// literals PostgreSQL 16 added: 0x1F, 0o17, 0b101 and digits grouped with
// underscores (1_000). PostgreSQL 15, which this server is, rejects them
// ("trailing junk after numeric literal", 42601), so a client sees the
// same error from both. A literal can only be one of them if a digit is
// followed by one of xXoObB_, so only such texts are scanned.

// checkLiterals reports the first PostgreSQL 16 numeric literal in sql.
func checkLiterals(sql string) *pgerror.Error {
	if !mayHaveNewLiteral(sql) {
		return nil
	}
	res, err := pg.Scan(sql)
	if err != nil {
		return nil // the parser has accepted the text: nothing to add
	}
	for _, tok := range res.Tokens {
		if tok.Token != pg.Token_ICONST && tok.Token != pg.Token_FCONST {
			continue
		}
		text := sql[tok.Start:tok.End]
		lower := strings.ToLower(text)
		if strings.Contains(text, "_") || strings.HasPrefix(lower, "0x") || strings.HasPrefix(lower, "0o") || strings.HasPrefix(lower, "0b") {
			return &pgerror.Error{Code: pgerror.CodeSyntax, Message: "trailing junk after numeric literal at or near \"" + text + "\"",
				Position: int32(utf8.RuneCountInString(sql[:tok.Start])) + 1}
		}
	}
	return nil
}

// mayHaveNewLiteral reports whether a number in s (digits not preceded by
// an identifier's character: user0_ is a name) starts with 0x, 0o or 0b,
// or has an underscore after its digits.
func mayHaveNewLiteral(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] < '0' || s[i] > '9' || (i > 0 && isIdentByte(s[i-1])) {
			continue
		}
		if s[i] == '0' && strings.IndexByte("xXoObB", s[i+1]) >= 0 {
			return true
		}
		j := i
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == 'e' || s[j] == 'E') {
			j++
		}
		if j < len(s) && s[j] == '_' {
			return true
		}
		i = j
	}
	return false
}

func isIdentByte(b byte) bool {
	return b == '_' || b == '$' || b >= 0x80 || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
