package types

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/tupled/tupled/sql/pgerror"
)

// Enum types (CREATE TYPE name AS ENUM): unlike the built-in types, they
// are made at run time, so each gets a Type number of its own from
// FirstEnum up when it is created or loaded (never stored: a column of an
// enum type stores its OID, and the catalog maps it back at load). The
// registry below maps those numbers to their definitions; a definition
// is never changed in place (ALTER TYPE installs a new one with SetEnum).
//
// A value of an enum type holds its label in S and its sort position in
// I: OrderKey of its float4 sort order (pg_enum.enumsortorder), an
// integer that sorts as the order does, so Compare, keys and the row
// encoding use I and a renamed label changes no stored row.

// firstEnumOID is the first OID given to an enum type: above the range
// sqlfe derives the OIDs of tables and constraints from their names
// ([16384, 2^30+16384)), so they never meet.
const firstEnumOID = 1<<30 + 1<<20

// FirstEnum is the first Type number given to an enum type.
const FirstEnum Type = 1024

// Enum is an enum type's definition (its catalog entry's JSON).
type Enum struct {
	Type     Type        `json:"-"`
	Name     string      `json:"name"`
	OID      uint32      `json:"oid"`
	ArrayOID uint32      `json:"array_oid"`
	Labels   []EnumLabel `json:"labels"` // in sort order
	Comment  string      `json:"comment,omitempty"`
	// Dropped: a DROP TYPE (or a rolled-back CREATE TYPE) ended it;
	// LookupEnum passes over it
	Dropped bool `json:"-"`
}

// EnumLabel is one value of an enum: pg_enum's enumlabel and
// enumsortorder.
type EnumLabel struct {
	Label string  `json:"label"`
	Sort  float32 `json:"sort"`
	// OID is pg_enum.oid: a CREATE TYPE's labels get consecutive ones in
	// their order, as PostgreSQL's EnumValuesCreate gives them (clients
	// order labels by it), an added one the next free
	OID uint32 `json:"oid,omitempty"`
	// Pending: added by ALTER TYPE ADD VALUE in a transaction still open
	// to a type older than it; its input is 55P04 until the commit
	// (never stored)
	Pending bool `json:"-"`
}

var enums struct {
	sync.RWMutex
	byType  map[Type]*Enum
	next    Type
	nextOID uint32
}

// IsEnum reports whether t is an enum type. Enum types have the even
// numbers from FirstEnum, each one's array type the next (odd) number.
func IsEnum(t Type) bool { return t >= FirstEnum && (t-FirstEnum)&1 == 0 }

// isEnumArray reports whether t is the array type of an enum type (t-1).
func isEnumArray(t Type) bool { return t >= FirstEnum && (t-FirstEnum)&1 == 1 }

// NewEnumType gives a new enum type its Type number (and its array type
// the next). The numbers are never reused in a process: past the last
// (some 32000 CREATE TYPEs and loads) it is 54000.
func NewEnumType() (Type, error) {
	enums.Lock()
	defer enums.Unlock()
	if enums.next < FirstEnum {
		enums.next = FirstEnum
	}
	if enums.next > math.MaxUint16-2 {
		return 0, pgerror.Errorf(pgerror.CodeProgramLimit, "too many enum types created since the server started")
	}
	t := enums.next
	enums.next += 2
	return t, nil
}

// NewEnumOIDs gives n consecutive OIDs, for an enum type, its array type
// and its labels, above every enum OID this process has seen
// (NoteEnumOID).
func NewEnumOIDs(n int) uint32 {
	enums.Lock()
	defer enums.Unlock()
	if enums.nextOID < firstEnumOID {
		enums.nextOID = firstEnumOID
	}
	oid := enums.nextOID
	enums.nextOID += uint32(n)
	return oid
}

// NoteEnumOID records OIDs loaded from a catalog, so that new ones differ.
func NoteEnumOID(oids ...uint32) {
	enums.Lock()
	defer enums.Unlock()
	for _, o := range oids {
		if o >= enums.nextOID {
			enums.nextOID = o + 1
		}
	}
}

// SetEnum installs e as the definition of its Type.
func SetEnum(e *Enum) {
	enums.Lock()
	defer enums.Unlock()
	if enums.byType == nil {
		enums.byType = map[Type]*Enum{}
	}
	enums.byType[e.Type] = e
}

// EnumOf is t's definition (nil if t is not an enum type).
func EnumOf(t Type) *Enum {
	if !IsEnum(t) {
		return nil
	}
	enums.RLock()
	defer enums.RUnlock()
	return enums.byType[t]
}

// LookupEnum is the newest enum type named name that is not dropped (nil
// if none): the type of a name where no session resolves it (a CHECK or
// DEFAULT expression compiled from a table's definition).
func LookupEnum(name string) *Enum {
	enums.RLock()
	defer enums.RUnlock()
	var best *Enum
	for _, e := range enums.byType {
		if e.Name == name && !e.Dropped && (best == nil || e.Type > best.Type) {
			best = e
		}
	}
	return best
}

// enumByOID is the enum type (or the array type of the enum type) of OID
// oid (TUnknown if none).
func enumByOID(oid uint32) Type {
	enums.RLock()
	defer enums.RUnlock()
	for t, e := range enums.byType {
		switch oid {
		case e.OID:
			return t
		case e.ArrayOID:
			return t + 1
		}
	}
	return TUnknown
}

// enumArrayOID is the OID of enum array type t.
func enumArrayOID(t Type) uint32 {
	if e := EnumOf(t - 1); e != nil {
		return e.ArrayOID
	}
	return OIDText
}

// OrderKey is the integer that sorts as the float4 sort order f does.
func OrderKey(f float32) int64 {
	u := math.Float32bits(f)
	if u&(1<<31) != 0 {
		u = ^u
	} else {
		u |= 1 << 31
	}
	return int64(u)
}

// Value is label l of e as a value.
func (e *Enum) Value(l EnumLabel) Value { return Value{T: e.Type, S: l.Label, I: OrderKey(l.Sort)} }

// Label is the index of label s in e.Labels, -1 if none.
func (e *Enum) Label(s string) int {
	for i, l := range e.Labels {
		if l.Label == s {
			return i
		}
	}
	return -1
}

// ByKey is the value of e whose OrderKey is k (a stored value).
func (e *Enum) ByKey(k int64) (Value, bool) {
	i := sort.Search(len(e.Labels), func(i int) bool { return OrderKey(e.Labels[i].Sort) >= k })
	if i == len(e.Labels) || OrderKey(e.Labels[i].Sort) != k {
		return Value{}, false
	}
	return e.Value(e.Labels[i]), true
}

// EnumByKey is the value of enum type t whose OrderKey is k; false if t
// has no such value (a corrupt row).
func EnumByKey(t Type, k int64) (Value, bool) {
	e := EnumOf(t)
	if e == nil {
		return Value{}, false
	}
	return e.ByKey(k)
}

// parseEnum is enum_in: the label s of t.
func parseEnum(t Type, s string) (Value, error) {
	e := EnumOf(t)
	if e == nil {
		return Value{}, pgerror.Errorf(pgerror.CodeInternal, "unknown type %d", t)
	}
	if i := e.Label(s); i >= 0 {
		if e.Labels[i].Pending {
			return Value{}, &pgerror.Error{Code: "55P04", Message: fmt.Sprintf("unsafe use of new value %q of enum type %s", s, enumName(t)),
				Hint: "New enum values must be committed before they can be used."}
		}
		return e.Value(e.Labels[i]), nil
	}
	return Value{}, pgerror.Errorf(pgerror.CodeInvalidText, "invalid input value for enum %s: %q", enumName(t), s)
}

// enumName is format_type's name of enum type t: its name, in double
// quotes unless it is lower-case letters, digits and underscores
// (PostgreSQL's quote_identifier, but for its keywords).
func enumName(t Type) string {
	e := EnumOf(t)
	if e == nil {
		return "unknown"
	}
	plain := e.Name != "" && !(e.Name[0] >= '0' && e.Name[0] <= '9')
	for _, c := range e.Name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			plain = false
		}
	}
	if plain {
		return e.Name
	}
	return `"` + strings.ReplaceAll(e.Name, `"`, `""`) + `"`
}
