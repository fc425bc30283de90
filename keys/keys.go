package keys

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// Type codes; see the package documentation.
const (
	codeNil    = 0x00
	codeBytes  = 0x01
	codeString = 0x02
	codeIntMin = 0x0C // -8 bytes
	codeIntZ   = 0x14
	codeIntMax = 0x1C // +8 bytes
	codeFloat  = 0x21
	codeFalse  = 0x26
	codeTrue   = 0x27
)

// Tuple is an unpacked key: its elements are nil, []byte, string, int64
// (every integer that fits), uint64 (those above math.MaxInt64), float64 and
// bool.
type Tuple []any

// ErrCorrupt is wrapped by every error Unpack and Reader return for bytes
// that are not a packed tuple.
var ErrCorrupt = errors.New("keys: not a packed tuple")

// AppendNil appends a nil element.
func AppendNil(dst []byte) []byte { return append(dst, codeNil) }

// AppendBool appends a bool element.
func AppendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, codeTrue)
	}
	return append(dst, codeFalse)
}

// AppendBytes appends a []byte element.
func AppendBytes(dst, v []byte) []byte { return appendEscaped(append(dst, codeBytes), v) }

// AppendString appends a string element.
func AppendString(dst []byte, v string) []byte { return appendEscaped(append(dst, codeString), v) }

func appendEscaped[S []byte | string](dst []byte, v S) []byte {
	for {
		i := index0(v)
		if i < 0 {
			return append(append(dst, v...), 0x00)
		}
		dst = append(append(dst, v[:i+1]...), 0xFF)
		v = v[i+1:]
	}
}

func index0[S []byte | string](v S) int {
	switch v := any(v).(type) {
	case string:
		return strings.IndexByte(v, 0)
	case []byte:
		return bytes.IndexByte(v, 0)
	}
	return -1
}

// AppendInt appends a signed integer element.
func AppendInt(dst []byte, v int64) []byte {
	if v >= 0 {
		return AppendUint(dst, uint64(v))
	}
	m := uint64(-(v + 1)) + 1 // |v|, also for math.MinInt64
	n := byteLen(m)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], ^m)
	return append(append(dst, byte(codeIntZ-n)), b[8-n:]...)
}

// AppendUint appends an unsigned integer element.
func AppendUint(dst []byte, v uint64) []byte {
	n := byteLen(v)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return append(append(dst, byte(codeIntZ+n)), b[8-n:]...)
}

// byteLen is the number of bytes v needs (0 for 0).
func byteLen(v uint64) int { return (bits.Len64(v) + 7) / 8 }

// AppendFloat appends a float64 element.
func AppendFloat(dst []byte, v float64) []byte {
	u := math.Float64bits(v)
	if u>>63 == 1 {
		u = ^u
	} else {
		u ^= 1 << 63
	}
	return binary.BigEndian.AppendUint64(append(dst, codeFloat), u)
}

// Append appends the elements to dst. An element may be nil, []byte,
// string, bool, float64 or float32, any integer type, or a Tuple (its
// elements are appended in place: the result is the concatenation);
// another type is an error naming it.
func Append(dst []byte, elems ...any) ([]byte, error) {
	for i, e := range elems {
		switch v := e.(type) {
		case nil:
			dst = AppendNil(dst)
		case []byte:
			dst = AppendBytes(dst, v)
		case string:
			dst = AppendString(dst, v)
		case bool:
			dst = AppendBool(dst, v)
		case int:
			dst = AppendInt(dst, int64(v))
		case int8:
			dst = AppendInt(dst, int64(v))
		case int16:
			dst = AppendInt(dst, int64(v))
		case int32:
			dst = AppendInt(dst, int64(v))
		case int64:
			dst = AppendInt(dst, v)
		case uint:
			dst = AppendUint(dst, uint64(v))
		case uint8:
			dst = AppendUint(dst, uint64(v))
		case uint16:
			dst = AppendUint(dst, uint64(v))
		case uint32:
			dst = AppendUint(dst, uint64(v))
		case uint64:
			dst = AppendUint(dst, v)
		case float32:
			dst = AppendFloat(dst, float64(v))
		case float64:
			dst = AppendFloat(dst, v)
		case Tuple:
			var err error
			if dst, err = Append(dst, v...); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("keys: element %d is a %T, which has no key encoding", i, e)
		}
	}
	return dst, nil
}

// Pack encodes the elements as one key (see Append for the types).
func Pack(elems ...any) ([]byte, error) { return Append(nil, elems...) }

// MustPack is Pack for elements whose types are known to be supported,
// such as literals; it panics where Pack returns an error.
func MustPack(elems ...any) []byte {
	b, err := Pack(elems...)
	if err != nil {
		panic(err)
	}
	return b
}

// Range is the half-open key range [start, end) of the packed tuple prefix
// and every tuple that extends it, for ScanOptions.Start and End. (With
// ScanOptions.Prefix, the packed prefix alone does the same.)
func Range(prefix ...any) (start, end []byte, err error) {
	start, err = Pack(prefix...)
	if err != nil {
		return nil, nil, err
	}
	return start, append(start[:len(start):len(start)], 0xFF), nil
}

// Unpack decodes a packed tuple.
func Unpack(b []byte) (Tuple, error) {
	r := NewReader(b)
	var t Tuple
	for !r.Done() {
		e, err := r.Next()
		if err != nil {
			return nil, err
		}
		t = append(t, e)
	}
	return t, nil
}
