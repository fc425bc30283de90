package keys

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Reader decodes a packed tuple element by element, with the type each
// element is expected to have.
//
//	r := keys.NewReader(key)
//	customer, err := r.String()
//	...
//	order, err := r.Int()
type Reader struct {
	b   []byte
	off int
}

// NewReader returns a Reader of the packed tuple b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Done reports whether every element has been read.
func (r *Reader) Done() bool { return r.off >= len(r.b) }

// Rest is the part of the key not read yet.
func (r *Reader) Rest() []byte { return r.b[r.off:] }

func (r *Reader) corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", ErrCorrupt, r.off, fmt.Sprintf(format, args...))
}

func (r *Reader) peek() (byte, error) {
	if r.Done() {
		return 0, fmt.Errorf("%w: at byte %d: no element left", ErrCorrupt, r.off)
	}
	return r.b[r.off], nil
}

// Next decodes the next element as Unpack would.
func (r *Reader) Next() (any, error) {
	c, err := r.peek()
	if err != nil {
		return nil, err
	}
	switch {
	case c == codeNil:
		r.off++
		return nil, nil
	case c == codeBytes:
		return r.Bytes()
	case c == codeString:
		return r.String()
	case c >= codeIntMin && c <= codeIntZ:
		return r.Int()
	case c > codeIntZ && c <= codeIntMax:
		u, err := r.Uint()
		if err != nil || u > math.MaxInt64 {
			return u, err
		}
		return int64(u), nil
	case c == codeFloat:
		return r.Float()
	case c == codeFalse || c == codeTrue:
		return r.Bool()
	}
	return nil, r.corrupt("unknown type code 0x%02x", c)
}

func (r *Reader) want(what string, ok func(byte) bool) (byte, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	if !ok(c) {
		return 0, r.corrupt("type code 0x%02x, want %s", c, what)
	}
	return c, nil
}

// Bytes decodes a []byte element (a fresh slice).
func (r *Reader) Bytes() ([]byte, error) {
	if _, err := r.want("bytes", func(c byte) bool { return c == codeBytes }); err != nil {
		return nil, err
	}
	return r.escaped()
}

// String decodes a string element.
func (r *Reader) String() (string, error) {
	if _, err := r.want("a string", func(c byte) bool { return c == codeString }); err != nil {
		return "", err
	}
	b, err := r.escaped()
	return string(b), err
}

// escaped reads the escaped bytes after a type code up to the terminator.
func (r *Reader) escaped() ([]byte, error) {
	start := r.off
	out := []byte{}
	for i := r.off + 1; i < len(r.b); i++ {
		if r.b[i] != 0x00 {
			out = append(out, r.b[i])
			continue
		}
		if i+1 < len(r.b) && r.b[i+1] == 0xFF {
			out = append(out, 0x00)
			i++
			continue
		}
		r.off = i + 1
		return out, nil
	}
	r.off = start
	return nil, r.corrupt("unterminated string or bytes")
}

// Int decodes an integer element that fits an int64.
func (r *Reader) Int() (int64, error) {
	c, err := r.want("an integer", func(c byte) bool { return c >= codeIntMin && c <= codeIntMax })
	if err != nil {
		return 0, err
	}
	if c >= codeIntZ {
		u, err := r.Uint()
		if err == nil && u > math.MaxInt64 {
			r.off -= 1 + int(c-codeIntZ)
			return 0, r.corrupt("integer %d is out of the range of int64", u)
		}
		return int64(u), err
	}
	n := int(codeIntZ - c)
	m, err := r.magnitude(n, true)
	if err != nil {
		return 0, err
	}
	if m > 1<<63 {
		r.off -= 1 + n
		return 0, r.corrupt("integer -%d is out of the range of int64", m)
	}
	return -int64(m-1) - 1, nil
}

// Uint decodes a non-negative integer element.
func (r *Reader) Uint() (uint64, error) {
	c, err := r.want("a non-negative integer", func(c byte) bool { return c >= codeIntZ && c <= codeIntMax })
	if err != nil {
		return 0, err
	}
	return r.magnitude(int(c-codeIntZ), false)
}

// magnitude reads the n bytes of an integer after its code: |v|,
// complemented for negative ones, and checks n is the fewest bytes.
func (r *Reader) magnitude(n int, negative bool) (uint64, error) {
	if r.off+1+n > len(r.b) {
		return 0, r.corrupt("integer of %d bytes cut short", n)
	}
	var b [8]byte
	copy(b[8-n:], r.b[r.off+1:r.off+1+n])
	u := binary.BigEndian.Uint64(b[:])
	if negative {
		u = ^u
		if n < 8 {
			u &= 1<<(8*n) - 1
		}
	}
	if byteLen(u) != n {
		return 0, r.corrupt("integer %d written in %d bytes, not the fewest", u, n)
	}
	r.off += 1 + n
	return u, nil
}

// Float decodes a float64 element.
func (r *Reader) Float() (float64, error) {
	if _, err := r.want("a float64", func(c byte) bool { return c == codeFloat }); err != nil {
		return 0, err
	}
	if r.off+9 > len(r.b) {
		return 0, r.corrupt("float64 cut short")
	}
	u := binary.BigEndian.Uint64(r.b[r.off+1:])
	if u>>63 == 1 {
		u ^= 1 << 63
	} else {
		u = ^u
	}
	r.off += 9
	return math.Float64frombits(u), nil
}

// Bool decodes a bool element.
func (r *Reader) Bool() (bool, error) {
	c, err := r.want("a bool", func(c byte) bool { return c == codeFalse || c == codeTrue })
	if err != nil {
		return false, err
	}
	r.off++
	return c == codeTrue, nil
}

// Nil consumes a nil element.
func (r *Reader) Nil() error {
	if _, err := r.want("nil", func(c byte) bool { return c == codeNil }); err != nil {
		return err
	}
	r.off++
	return nil
}
