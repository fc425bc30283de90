package sqlfe

import (
	"crypto/rand"

	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// gen_random_uuid(); the uuid type itself is sql/types' (uuid.go).

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
