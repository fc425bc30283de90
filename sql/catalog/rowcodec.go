package catalog

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/tupled/tupled/keys"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// AppendKey appends the order-preserving encoding of t's non-NULL key v in
// t's key format: keys.AppendInt for integers, keys.AppendString for text,
// keys.AppendBool (KeyFormatTuple); or integers big-endian with the sign
// bit flipped, text its bytes, bool one byte (KeyFormatRaw). A character(n)
// key is encoded without its trailing spaces, so that 'ab' and 'ab  ' are
// one key, as bpchar's btree opclass has it. Byte order of the encodings
// is the SQL order of the values.
func AppendKey(dst []byte, t *Table, v types.Value) []byte {
	if t.KeyFormat == KeyFormatTuple {
		switch v.T {
		case types.TBpchar:
			return keys.AppendString(dst, types.BpcharTrim(v.S))
		case types.TInt4, types.TInt8:
			return keys.AppendInt(dst, v.I)
		case types.TBool:
			return keys.AppendBool(dst, v.I != 0)
		}
		return keys.AppendString(dst, v.S)
	}
	switch v.T {
	case types.TBpchar:
		return append(dst, types.BpcharTrim(v.S)...)
	case types.TInt4:
		return binary.BigEndian.AppendUint32(dst, uint32(int32(v.I))^(1<<31))
	case types.TInt8:
		return binary.BigEndian.AppendUint64(dst, uint64(v.I)^(1<<63))
	case types.TBool:
		return append(dst, byte(v.I))
	}
	return append(dst, v.S...)
}

// DecodeKey is AppendKey's inverse for t's key column: a character(n) key
// gets its padding back. (A bpchar key without a length comes back without
// trailing spaces: DecodeRow restores them from the row value.)
func DecodeKey(t *Table, b []byte) (types.Value, error) {
	c := t.Cols[t.Key]
	if t.KeyFormat == KeyFormatTuple {
		return decodeTupleKey(c, b)
	}
	switch c.Type {
	case types.TBpchar:
		return types.Value{T: types.TBpchar, S: types.BpcharPad(string(b), c.MaxLen)}, nil
	case types.TInt4:
		if len(b) != 4 {
			return types.Value{}, ErrCorrupt
		}
		return types.Int4(int32(binary.BigEndian.Uint32(b) ^ (1 << 31))), nil
	case types.TInt8:
		if len(b) != 8 {
			return types.Value{}, ErrCorrupt
		}
		return types.Int8(int64(binary.BigEndian.Uint64(b) ^ (1 << 63))), nil
	case types.TBool:
		if len(b) != 1 {
			return types.Value{}, ErrCorrupt
		}
		return types.Bool(b[0] != 0), nil
	}
	if types.ExtTypes[c.Type] != nil {
		return types.Value{T: c.Type, S: string(b)}, nil
	}
	return types.Text(string(b)), nil
}

func decodeTupleKey(c Column, b []byte) (types.Value, error) {
	r := keys.NewReader(b)
	v, err := readKeyElem(r, c)
	if err != nil {
		return types.Value{}, err
	}
	if !r.Done() {
		return types.Value{}, ErrCorrupt
	}
	return v, nil
}

// readKeyElem reads the next tuple element of a key as column c's value.
func readKeyElem(r *keys.Reader, c Column) (types.Value, error) {
	var v types.Value
	switch c.Type {
	case types.TInt4:
		n, err := r.Int()
		if err != nil || n < math.MinInt32 || n > math.MaxInt32 {
			return types.Value{}, ErrCorrupt
		}
		v = types.Int4(int32(n))
	case types.TInt8:
		n, err := r.Int()
		if err != nil {
			return types.Value{}, ErrCorrupt
		}
		v = types.Int8(n)
	case types.TBool:
		x, err := r.Bool()
		if err != nil {
			return types.Value{}, ErrCorrupt
		}
		v = types.Bool(x)
	default:
		s, err := r.String()
		if err != nil {
			return types.Value{}, ErrCorrupt
		}
		switch {
		case c.Type == types.TBpchar:
			v = types.Value{T: types.TBpchar, S: types.BpcharPad(s, c.MaxLen)}
		case types.ExtTypes[c.Type] != nil: // uuid, bytea: their S as stored
			v = types.Value{T: c.Type, S: s}
		default:
			v = types.Text(s)
		}
	}
	return v, nil
}

// ErrCorrupt is the error of a stored row or key that does not decode as
// its table's columns say (XX001, data_corrupted).
var ErrCorrupt = pgerror.Errorf(pgerror.CodeDataCorrupted, "stored row does not match the table's columns")

// EncodeRow encodes the non-key columns of row: a NULL bitmap (one bit per
// non-key column), then each non-NULL column (int: 4 or 8 bytes big-endian,
// bool: 1 byte, text: uvarint length + bytes), then, for each key column
// that is a bpchar without a length (in key order), the number of trailing
// spaces its key encoding dropped (uvarint), so that it reads back as it
// was written.
func EncodeRow(t *Table, row []types.Value) []byte {
	n := len(t.Cols) - t.NKeyCols()
	return AppendRow(make([]byte, 0, (n+7)/8+8*n), t, row)
}

// AppendRow appends EncodeRow(t, row) to dst: a bulk insert (COPY) encodes
// every row into one buffer, which the engine's insert copies.
func AppendRow(dst []byte, t *Table, row []types.Value) []byte {
	n := len(t.Cols) - t.NKeyCols()
	base := len(dst)
	out := append(dst, make([]byte, (n+7)/8)...) // the NULL bitmap, at out[base:]
	j := 0
	for i, c := range t.Cols {
		if t.IsKeyCol(i) {
			continue
		}
		v := row[i]
		if v.Null {
			out[base+j/8] |= 1 << (j % 8)
			j++
			continue
		}
		j++
		switch c.Type {
		case types.TInt4:
			out = binary.BigEndian.AppendUint32(out, uint32(int32(v.I)))
		case types.TInt8:
			out = binary.BigEndian.AppendUint64(out, uint64(v.I))
		case types.TBool:
			out = append(out, byte(v.I))
		default:
			out = binary.AppendUvarint(out, uint64(len(v.S)))
			out = append(out, v.S...)
		}
	}
	for _, c := range unpaddedKeyCols(t) { // compositekey.go
		k := row[c].S
		out = binary.AppendUvarint(out, uint64(len(k)-len(types.BpcharTrim(k))))
	}
	return out
}

// DecodeRow decodes a stored row (key and value) into dst (len(t.Cols)).
func DecodeRow(t *Table, key, val []byte, dst []types.Value) error {
	if err := DecodeRowKey(t, key, dst); err != nil {
		return err
	}
	n := len(t.Cols) - t.NKeyCols()
	nb := (n + 7) / 8
	if len(val) < nb {
		return ErrCorrupt
	}
	bitmap, p := val[:nb], val[nb:]
	j := 0
	for i, c := range t.Cols {
		if t.IsKeyCol(i) {
			continue
		}
		if bitmap[j/8]&(1<<(j%8)) != 0 {
			dst[i] = types.Null(c.Type)
			j++
			continue
		}
		j++
		switch c.Type {
		case types.TInt4:
			if len(p) < 4 {
				return ErrCorrupt
			}
			dst[i] = types.Int4(int32(binary.BigEndian.Uint32(p)))
			p = p[4:]
		case types.TInt8:
			if len(p) < 8 {
				return ErrCorrupt
			}
			dst[i] = types.Int8(int64(binary.BigEndian.Uint64(p)))
			p = p[8:]
		case types.TBool:
			if len(p) < 1 {
				return ErrCorrupt
			}
			dst[i] = types.Bool(p[0] != 0)
			p = p[1:]
		default:
			l, k := binary.Uvarint(p)
			if k <= 0 || uint64(len(p)-k) < l {
				return ErrCorrupt
			}
			dst[i] = types.Value{T: c.Type, S: string(p[k : k+int(l)])}
			p = p[k+int(l):]
		}
	}
	for _, c := range unpaddedKeyCols(t) {
		l, k := binary.Uvarint(p)
		if k <= 0 || l > types.MaxCharLength {
			return ErrCorrupt
		}
		dst[c].S += strings.Repeat(" ", int(l))
		p = p[k:]
	}
	if len(p) != 0 {
		return ErrCorrupt
	}
	return nil
}

// DecodeRowKey is RowKey's inverse: it stores the key columns' values
// decoded from engine key b into dst.
func DecodeRowKey(t *Table, b []byte, dst []types.Value) error {
	if len(t.KeyCols) == 0 {
		v, err := DecodeKey(t, b)
		if err != nil {
			return err
		}
		dst[t.Key] = v
		return nil
	}
	r := keys.NewReader(b)
	for _, c := range t.KeyCols {
		v, err := readKeyElem(r, t.Cols[c])
		if err != nil {
			return err
		}
		dst[c] = v
	}
	if !r.Done() {
		return ErrCorrupt
	}
	return nil
}

// UnpaddedKeyCols are t's key columns of type bpchar without a length, in
// key order: their trailing spaces are not implied by the key and live in
// the row value.
func unpaddedKeyCols(t *Table) []int {
	if len(t.KeyCols) == 0 {
		if c := t.Cols[t.Key]; c.Type == types.TBpchar && c.MaxLen == 0 {
			return []int{t.Key}
		}
		return nil // (no allocation for a row of the common table)
	}
	var out []int
	for _, c := range t.KeyCols {
		if col := t.Cols[c]; col.Type == types.TBpchar && col.MaxLen == 0 {
			out = append(out, c)
		}
	}
	return out
}

// RowKey appends the engine key of row (whose key columns are not NULL).
func RowKey(dst []byte, t *Table, row []types.Value) []byte {
	if len(t.KeyCols) == 0 {
		return AppendKey(dst, t, row[t.Key])
	}
	for _, c := range t.KeyCols {
		dst = AppendKey(dst, t, row[c])
	}
	return dst
}
