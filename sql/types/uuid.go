package types

import (
	"encoding/hex"
	"strings"

	"github.com/tupled/tupled/sql/pgerror"
)

// uuid: a 128-bit identifier, held in S as PostgreSQL prints it (32
// lower-case hex digits hyphenated 8-4-4-4-12), which sorts as the 16
// bytes do (PostgreSQL's uuid_cmp is memcmp), so a uuid column can be a
// key and compares by its text. Input is PostgreSQL's string_to_uuid:
// upper or lower case, optionally in braces, with a hyphen allowed after
// any group of four digits. On the wire in binary: the 16 bytes (OID 2950).

// OIDUUID is uuid's type OID.
const OIDUUID = 2950

func init() {
	ExtTypes[TUUID] = &extType{Name: "uuid", Typname: "uuid", OID: OIDUUID, Size: 16, key: true,
		parse: parseUUID,
		appendBin: func(dst []byte, v Value) []byte {
			b, _ := hex.DecodeString(strings.ReplaceAll(v.S, "-", ""))
			return append(dst, b...)
		},
		parseBin: func(b []byte) (Value, error) {
			if len(b) != 16 {
				return Value{}, pgerror.Errorf(pgerror.CodeInvalidBinary, "incorrect binary data format for type uuid")
			}
			return UUIDValue(b), nil
		},
	}
}

// UUIDValue is the uuid of 16 bytes.
func UUIDValue(b []byte) Value {
	h := hex.EncodeToString(b)
	return Value{T: TUUID, S: h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]}
}

// parseUUID reads a uuid's text as PostgreSQL's string_to_uuid does.
func parseUUID(s string) (Value, error) {
	bad := func() (Value, error) {
		return Value{}, pgerror.Errorf(pgerror.CodeInvalidText, "invalid input syntax for type uuid: %q", s)
	}
	p := s
	braces := strings.HasPrefix(p, "{")
	if braces {
		p = p[1:]
	}
	var b [16]byte
	for i := 0; i < 16; i++ {
		if len(p) < 2 {
			return bad()
		}
		x, err := hex.DecodeString(p[:2])
		if err != nil {
			return bad()
		}
		b[i] = x[0]
		p = p[2:]
		if i%2 == 1 && i < 15 && strings.HasPrefix(p, "-") {
			p = p[1:]
		}
	}
	if braces {
		if !strings.HasPrefix(p, "}") {
			return bad()
		}
		p = p[1:]
	}
	if p != "" {
		return bad()
	}
	return UUIDValue(b[:]), nil
}
