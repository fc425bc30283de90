package types

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tupled/tupled/sql/pgerror"
)

// bytea: a byte string, held in S as its bytes, which sort as PostgreSQL's
// byteacmp (memcmp, then length) orders them, so a bytea can be a key and
// compares by S. Output is the hex format (\x0102), PostgreSQL 15's default
// bytea_output; input takes the hex format (whitespace between digit
// pairs) and the escape format (\\ a backslash, \ooo an octal byte, other
// bytes themselves), as byteain does. On the wire in binary: the bytes
// (OID 17). EncodeBytes and DecodeBytes are encode and decode (hex, base64,
// escape); the SQL functions are sqlfe's (byteafuncs.go).

// OIDBytea is bytea's type OID.
const OIDBytea = 17

func init() {
	ExtTypes[TBytea] = &extType{Name: "bytea", Typname: "bytea", OID: OIDBytea, Size: -1, key: true,
		parse:     parseBytea,
		out:       func(v Value) string { return `\x` + hex.EncodeToString([]byte(v.S)) },
		appendBin: func(dst []byte, v Value) []byte { return append(dst, v.S...) },
		parseBin:  func(b []byte) (Value, error) { return Value{T: TBytea, S: string(b)}, nil },
	}
}

func parseBytea(s string) (Value, error) {
	if strings.HasPrefix(s, `\x`) {
		var b []byte
		p := s[2:]
		for len(p) > 0 {
			if strings.IndexByte(" \t\n\r", p[0]) >= 0 {
				p = p[1:]
				continue
			}
			if len(p) < 2 || strings.IndexByte(" \t\n\r", p[1]) >= 0 {
				if _, err := hex.DecodeString(p[:1] + "0"); err != nil {
					return Value{}, pgerror.Errorf(pgerror.CodeInvalidParamValue, "invalid hexadecimal digit: %q", p[:1])
				}
				return Value{}, pgerror.Errorf(pgerror.CodeInvalidParamValue, "invalid hexadecimal data: odd number of digits")
			}
			x, err := hex.DecodeString(p[:2])
			if err != nil {
				bad := p[:1]
				if _, err := hex.DecodeString(bad + "0"); err == nil {
					bad = p[1:2]
				}
				return Value{}, pgerror.Errorf(pgerror.CodeInvalidParamValue, "invalid hexadecimal digit: %q", bad)
			}
			b = append(b, x[0])
			p = p[2:]
		}
		return Value{T: TBytea, S: string(b)}, nil
	}
	b, ok := unescapeBytes(s)
	if !ok {
		return Value{}, pgerror.Errorf(pgerror.CodeInvalidText, "invalid input syntax for type bytea")
	}
	return Value{T: TBytea, S: b}, nil
}

// unescapeBytes reads the escape format (byteain's, and decode's 'escape').
func unescapeBytes(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case i+1 < len(s) && s[i+1] == '\\':
			b.WriteByte('\\')
			i++
		case i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '3' && isOctal(s[i+2]) && isOctal(s[i+3]):
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
		default:
			return "", false
		}
	}
	return b.String(), true
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// EncodeBytes is encode(bytea, format).
func EncodeBytes(b, format string) (Value, error) {
	switch strings.ToLower(format) {
	case "hex":
		return Text(hex.EncodeToString([]byte(b))), nil
	case "base64": // lines of 76 characters, as PostgreSQL's pg_base64_encode
		e := base64.StdEncoding.EncodeToString([]byte(b))
		var out strings.Builder
		for len(e) > 76 {
			out.WriteString(e[:76])
			out.WriteByte('\n')
			e = e[76:]
		}
		out.WriteString(e)
		return Text(out.String()), nil
	case "escape": // NUL and bytes with the high bit set as \ooo, \ as \\
		var out strings.Builder
		for i := 0; i < len(b); i++ {
			switch c := b[i]; {
			case c == '\\':
				out.WriteString(`\\`)
			case c == 0 || c >= 0x80:
				fmt.Fprintf(&out, `\%03o`, c)
			default:
				out.WriteByte(c)
			}
		}
		if !utf8.ValidString(out.String()) {
			return Value{}, pgerror.Errorf(pgerror.CodeInvalidText, "invalid byte sequence")
		}
		return Text(out.String()), nil
	}
	return Value{}, pgerror.Errorf(pgerror.CodeInvalidParamValue, "unrecognized encoding: %q", format)
}

// DecodeBytes is decode(text, format).
func DecodeBytes(s, format string) (Value, error) {
	switch strings.ToLower(format) {
	case "hex":
		v, err := parseBytea(`\x` + s)
		if err != nil {
			return Value{}, err
		}
		return v, nil
	case "base64":
		t := strings.Map(func(r rune) rune {
			if strings.ContainsRune(" \t\n\r", r) {
				return -1
			}
			return r
		}, s)
		b, err := base64.StdEncoding.DecodeString(t)
		if err != nil {
			return Value{}, pgerror.Errorf(pgerror.CodeInvalidParamValue, "invalid base64 end sequence")
		}
		return Value{T: TBytea, S: string(b)}, nil
	case "escape":
		b, ok := unescapeBytes(s)
		if !ok {
			return Value{}, pgerror.Errorf(pgerror.CodeInvalidText, "invalid input syntax for type bytea")
		}
		return Value{T: TBytea, S: b}, nil
	}
	return Value{}, pgerror.Errorf(pgerror.CodeInvalidParamValue, "unrecognized encoding: %q", format)
}
