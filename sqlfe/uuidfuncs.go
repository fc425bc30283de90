package sqlfe

import (
	"crypto/rand"

	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// uuid: a 128-bit identifier, held in S as PostgreSQL prints it (32
// lower-case hex digits hyphenated 8-4-4-4-12), which sorts as the 16
// bytes do (PostgreSQL's uuid_cmp is memcmp), so a uuid column can be a
// key and compares by its text. Input is PostgreSQL's string_to_uuid:
// upper or lower case, optionally in braces, with a hyphen allowed after
// any group of four digits. On the wire in binary: the 16 bytes (OID 2950).

func init() {
	builtins["gen_random_uuid"] = builtin{nil, types.TUUID, func(*env, []types.Value) (types.Value, error) {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return types.Value{}, pgerror.Errorf(pgerror.CodeInternal, "could not generate random values: %v", err)
		}
		b[6] = b[6]&0x0f | 0x40 // version 4
		b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
		return types.UUIDValue(b[:]), nil
	}}
}
