package types

import (
	"fmt"
	"unicode/utf8"

	"github.com/tupled/tupled/sql/pgerror"
)

// CheckEncoding reports PostgreSQL's 22021 for the first NUL byte or invalid
// UTF-8 sequence of s (server encoding UTF8).
func CheckEncoding(s string) *pgerror.Error {
	for i := 0; i < len(s); {
		c := s[i]
		if c != 0 && c < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if c == 0 || (r == utf8.RuneError && n <= 1) {
			// PostgreSQL prints the bytes of the sequence the first byte announces
			l := 1
			switch {
			case c&0xe0 == 0xc0:
				l = 2
			case c&0xf0 == 0xe0:
				l = 3
			case c&0xf8 == 0xf0:
				l = 4
			}
			msg := `invalid byte sequence for encoding "UTF8":`
			for j := i; j < i+l && j < len(s); j++ {
				msg += fmt.Sprintf(" 0x%02x", s[j])
			}
			return &pgerror.Error{Code: pgerror.CodeCharacterNotInRepertoire, Message: msg}
		}
		i += n
	}
	return nil
}
