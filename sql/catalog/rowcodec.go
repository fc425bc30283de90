package catalog

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"

	"github.com/tupled/tupled/keys"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// AppendKey appends the order-preserving encoding of t's non-NULL key v in
// t's key format: keys.AppendInt for integers, keys.AppendString for text,
// keys.AppendBool (KeyFormatTuple), and in KeyFormatTyped the ordered
// forms of dates, timestamps, floats, numeric and interval (appendTypedKey);
// or integers big-endian with the sign bit flipped, text its bytes, bool
// one byte (KeyFormatRaw). A character(n)
// key is encoded without its trailing spaces, so that 'ab' and 'ab  ' are
// one key, as bpchar's btree opclass has it. Byte order of the encodings
// is the SQL order of the values.
func AppendKey(dst []byte, t *Table, v types.Value) []byte {
	if t.tupleKeys() {
		switch v.T {
		case types.TBpchar:
			return keys.AppendString(dst, types.BpcharTrim(v.S))
		case types.TInt4, types.TInt8:
			return keys.AppendInt(dst, v.I)
		case types.TBool:
			return keys.AppendBool(dst, v.I != 0)
		}
		if t.KeyFormat == KeyFormatTyped && typedKey(v.T) {
			return appendTypedKey(dst, v)
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

// appendTypedKey appends KeyFormatTyped's element for a value of a
// typedKey type: dates and timestamps as integers, floats as floats,
// numeric and interval as NumericKey's and IntervalKey's bytes.
func appendTypedKey(dst []byte, v types.Value) []byte {
	if types.IsEnum(v.T) {
		return keys.AppendInt(dst, v.I) // its sort position (types' enum.go)
	}
	if n, ok := types.KeyInt(v); ok {
		return keys.AppendInt(dst, n)
	}
	if types.IsFloat(v.T) {
		return keys.AppendFloat(dst, types.KeyFloat(v))
	}
	var buf [32]byte
	if v.T == types.TInterval {
		return keys.AppendBytes(dst, types.IntervalKey(buf[:0], v))
	}
	return keys.AppendBytes(dst, types.NumericKey(buf[:0], v.S))
}

// DecodeKey is AppendKey's inverse for t's key column: a character(n) key
// gets its padding back. (A bpchar key without a length comes back without
// trailing spaces: DecodeRow restores them from the row value.)
func DecodeKey(t *Table, b []byte) (types.Value, error) {
	c := t.Cols[t.Key]
	if t.tupleKeys() {
		return decodeTupleKey(c, b, t.KeyFormat == KeyFormatTyped)
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

func decodeTupleKey(c Column, b []byte, typed bool) (types.Value, error) {
	r := keys.NewReader(b)
	v, err := readKeyElem(r, c, typed)
	if err != nil {
		return types.Value{}, err
	}
	if !r.Done() {
		return types.Value{}, ErrCorrupt
	}
	return v, nil
}

// readKeyElem reads the next tuple element of a key as column c's value;
// typed says the key is in KeyFormatTyped (else a typedKey type's element
// is its text).
func readKeyElem(r *keys.Reader, c Column, typed bool) (types.Value, error) {
	var v types.Value
	ty := c.Type
	if !typed && typedKey(ty) {
		ty = types.TText // its text (an index made before KeyFormatTyped)
	}
	switch ty {
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
	case types.TDate, types.TTimestamp, types.TTimestamptz: // KeyFormatTyped only
		n, err := r.Int()
		if err != nil {
			return types.Value{}, ErrCorrupt
		}
		v = types.KeyIntValue(c.Type, n)
	case types.TFloat4, types.TFloat8:
		f, err := r.Float()
		if err != nil {
			return types.Value{}, ErrCorrupt
		}
		v = types.FloatValue(f, c.Type)
	case types.TNumeric:
		b, err := r.Bytes()
		if err != nil {
			return types.Value{}, ErrCorrupt
		}
		var ok bool
		if v, ok = types.NumericFromKey(b); !ok {
			return types.Value{}, ErrCorrupt
		}
	case types.TInterval:
		b, err := r.Bytes()
		if err != nil {
			return types.Value{}, ErrCorrupt
		}
		var ok bool
		if v, ok = types.IntervalFromKey(b); !ok {
			return types.Value{}, ErrCorrupt
		}
	default:
		if types.IsEnum(ty) { // KeyFormatTyped only: its sort position
			n, err := r.Int()
			if err != nil {
				return types.Value{}, ErrCorrupt
			}
			var ok bool
			if v, ok = types.EnumByKey(ty, n); !ok {
				return types.Value{}, ErrCorrupt
			}
			return v, nil
		}
		s, err := r.String()
		if err != nil {
			return types.Value{}, ErrCorrupt
		}
		switch {
		case c.Type == types.TBpchar:
			v = types.Value{T: types.TBpchar, S: types.BpcharPad(s, c.MaxLen)}
		case types.ExtTypes[c.Type] != nil || typedKey(c.Type): // uuid, bytea, an old index's numeric…: their S as stored
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
// whose key does not give back its text (keyTextCols, in key order), what
// the key dropped: a bpchar's number of trailing spaces (uvarint), the
// text of a numeric, a float or an interval (uvarint length + bytes), so that it reads
// back as it was written.
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
		case types.TInt4Array, types.TInt8Array:
			text := v.String() // array_out's text, as every other array is held
			out = binary.AppendUvarint(out, uint64(len(text)))
			out = append(out, text...)
		default:
			if c.Type >= types.FirstEnum { // (one comparison for the other types)
				if types.IsEnum(c.Type) { // its sort position, so a renamed label changes no row
					out = binary.BigEndian.AppendUint32(out, uint32(v.I))
				} else { // an enum's array: its elements' sort positions (enum.go)
					out = appendEnumArray(out, v)
				}
				continue
			}
			out = binary.AppendUvarint(out, uint64(len(v.S)))
			out = append(out, v.S...)
		}
	}
	for _, c := range keyTextCols(t) {
		k := row[c].S
		if t.Cols[c].Type == types.TBpchar {
			out = binary.AppendUvarint(out, uint64(len(k)-len(types.BpcharTrim(k))))
			continue
		}
		out = binary.AppendUvarint(out, uint64(len(k)))
		out = append(out, k...)
	}
	return out
}

// DecodeRow decodes a stored row (key and value) into dst (len(t.Cols)).
func DecodeRow(t *Table, key, val []byte, dst []types.Value) error {
	return DecodeRowCols(t, key, val, dst, nil)
}

// DecodeRowCols is DecodeRow for a reader of some columns only: a non-key
// column i with read[i] false is stepped over, not decoded (no string is
// made of it), and set to NULL of its type; the key columns are always
// decoded. read nil (or as long as t.Cols and all true) is DecodeRow. The
// whole value is still checked to be well formed.
func DecodeRowCols(t *Table, key, val []byte, dst []types.Value, read []bool) error {
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
		skip := read != nil && !read[i]
		if skip {
			dst[i] = types.Null(c.Type)
		}
		switch c.Type {
		case types.TInt4:
			if len(p) < 4 {
				return ErrCorrupt
			}
			if !skip {
				dst[i] = types.Int4(int32(binary.BigEndian.Uint32(p)))
			}
			p = p[4:]
		case types.TInt8:
			if len(p) < 8 {
				return ErrCorrupt
			}
			if !skip {
				dst[i] = types.Int8(int64(binary.BigEndian.Uint64(p)))
			}
			p = p[8:]
		case types.TBool:
			if len(p) < 1 {
				return ErrCorrupt
			}
			if !skip {
				dst[i] = types.Bool(p[0] != 0)
			}
			p = p[1:]
		default:
			if c.Type >= types.FirstEnum && !types.IsEnum(c.Type) { // an enum's array
				v, rest, err := decodeEnumArray(c.Type, p, skip) // enum.go
				if err != nil {
					return err
				}
				if !skip {
					dst[i] = v
				}
				p = rest
				continue
			}
			if c.Type >= types.FirstEnum {
				if len(p) < 4 {
					return ErrCorrupt
				}
				if !skip {
					v, ok := types.EnumByKey(c.Type, int64(binary.BigEndian.Uint32(p)))
					if !ok {
						return ErrCorrupt
					}
					dst[i] = v
				}
				p = p[4:]
				continue
			}
			l, k := binary.Uvarint(p)
			if k <= 0 || uint64(len(p)-k) < l {
				return ErrCorrupt
			}
			if !skip {
				dst[i] = types.Value{T: c.Type, S: string(p[k : k+int(l)])}
				if types.IsIntArray(c.Type) {
					v, err := types.ParseText(c.Type, dst[i].S)
					if err != nil {
						return ErrCorrupt
					}
					dst[i] = v
				}
			}
			p = p[k+int(l):]
		}
	}
	for _, c := range keyTextCols(t) {
		l, k := binary.Uvarint(p)
		if t.Cols[c].Type == types.TBpchar {
			if k <= 0 || l > types.MaxCharLength {
				return ErrCorrupt
			}
			dst[c].S += strings.Repeat(" ", int(l))
			p = p[k:]
			continue
		}
		if k <= 0 || uint64(len(p)-k) < l {
			return ErrCorrupt
		}
		// the text must be a value's own (canonical) text, of the key's value
		text := string(p[k : k+int(l)])
		v, err := types.ParseText(t.Cols[c].Type, text)
		if err != nil || v.S != text || !bytes.Equal(AppendKey(nil, t, v), AppendKey(nil, t, dst[c])) {
			return ErrCorrupt
		}
		dst[c] = v
		p = p[k+int(l):]
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
		if c := t.Cols[t.Key]; t.KeyFormat == KeyFormatTuple && (c.Type == types.TInt4 || c.Type == types.TInt8) {
			// The common key, an integer, decoded in place (readKeyElem's
			// checks): a scan decodes one per row.
			r := keys.NewReader(b)
			n, err := r.Int()
			if err != nil || !r.Done() || (c.Type == types.TInt4 && (n < math.MinInt32 || n > math.MaxInt32)) {
				return ErrCorrupt
			}
			dst[t.Key] = types.Value{T: c.Type, I: n}
			return nil
		}
		v, err := DecodeKey(t, b)
		if err != nil {
			return err
		}
		dst[t.Key] = v
		return nil
	}
	r := keys.NewReader(b)
	for _, c := range t.KeyCols {
		v, err := readKeyElem(r, t.Cols[c], t.KeyFormat == KeyFormatTyped)
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

// keyTextCols are t's key columns whose key does not give back their
// text, in key order: a character(n) without a length (its trailing
// spaces), numeric (its display scale: 1.50 and 1.5 are one key), the
// floats (-0 is 0's key) and interval ('1 day' is '24 hours' key). The row value carries what the key drops: the
// number of trailing spaces, or the whole text.
func keyTextCols(t *Table) []int {
	lossy := func(c Column) bool {
		return (c.Type == types.TBpchar && c.MaxLen == 0) || c.Type == types.TNumeric || types.IsFloat(c.Type) || c.Type == types.TInterval
	}
	if len(t.KeyCols) == 0 {
		if lossy(t.Cols[t.Key]) {
			return []int{t.Key}
		}
		return nil // (no allocation for a row of the common table)
	}
	var out []int
	for _, c := range t.KeyCols {
		if lossy(t.Cols[c]) {
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
