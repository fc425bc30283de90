package types

import (
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// TestNumericBinary: the binary format (numeric_send/numeric_recv) agrees
// with pgx's codec both ways.
func TestNumericBinary(t *testing.T) {
	m := pgtype.NewMap()
	for _, s := range []string{"0", "1", "-1", "1.50", "600", "10000", "-0.005", "0.0001", "12345678901234567890.1234", "100000000.000000001"} {
		v, err := ParseText(TNumeric, s)
		if err != nil {
			t.Fatal(err)
		}
		b := v.AppendBinary(nil)
		var n pgtype.Numeric
		if err := m.Scan(OIDNumeric, pgtype.BinaryFormatCode, b, &n); err != nil {
			t.Fatalf("%s: pgx cannot read our binary %x: %v", s, b, err)
		}
		var got pgtype.Numeric
		if err := got.ScanNumeric(n); err != nil {
			t.Fatal(err)
		}
		theirs, err := m.Encode(OIDNumeric, pgtype.BinaryFormatCode, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseBinary(TNumeric, theirs)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if back.String() != s {
			t.Errorf("%s: sent %x, pgx re-encoded %x, read back %s", s, b, theirs, back.String())
		}
	}
	// a zero keeps its display scale (pgx's Numeric does not carry it)
	v, _ := ParseText(TNumeric, "0.00")
	if b := v.AppendBinary(nil); string(b) != "\x00\x00\x00\x00\x00\x00\x00\x02" {
		t.Errorf("0.00: sent %x, want PostgreSQL's 0000000000000002", b)
	} else if back, err := ParseBinary(TNumeric, b); err != nil || back.String() != "0.00" {
		t.Errorf("0.00: read back %v %v", back, err)
	}
}

// TestNumericSpecialBinaryAndKeys: NaN and the infinities in numeric_send's
// form (PostgreSQL's sign words 0xC000, 0xD000, 0xF000, no digits), read
// back, through pgx; and their key forms, in numeric order around finite
// keys.
func TestNumericSpecialBinaryAndKeys(t *testing.T) {
	m := pgtype.NewMap()
	for s, want := range map[string]string{
		"NaN":       "\x00\x00\x00\x00\xc0\x00\x00\x00",
		"Infinity":  "\x00\x00\x00\x00\xd0\x00\x00\x00",
		"-Infinity": "\x00\x00\x00\x00\xf0\x00\x00\x00",
	} {
		v, err := ParseText(TNumeric, s)
		if err != nil || v.S != s {
			t.Fatalf("%s: %v %v", s, v.Debug(), err)
		}
		b := v.AppendBinary(nil)
		if string(b) != want {
			t.Errorf("%s: sent %x, want %x", s, b, want)
		}
		if back, err := ParseBinary(TNumeric, b); err != nil || back.S != s {
			t.Errorf("%s: read back %v %v", s, back.Debug(), err)
		}
		var n pgtype.Numeric
		if err := m.Scan(OIDNumeric, pgtype.BinaryFormatCode, b, &n); err != nil || n.NaN != (s == "NaN") || (s != "NaN" && n.InfinityModifier == pgtype.Finite) {
			t.Errorf("%s: pgx read %+v %v", s, n, err)
		}
	}
	order := []string{"-Infinity", "-1e100", "-1", "0", "0.5", "1e100", "Infinity", "NaN"}
	var prev []byte
	for i, s := range order {
		v, _ := ParseText(TNumeric, s)
		k := NumericKey(nil, v.S)
		if i > 0 && string(prev) >= string(k) {
			t.Errorf("key of %s not above %s's", s, order[i-1])
		}
		if back, ok := NumericFromKey(k); !ok || Compare(back, v) != 0 {
			t.Errorf("%s: key read back as %v %v", s, back.Debug(), ok)
		}
		prev = k
	}
	if _, ok := NumericFromKey([]byte{6}); ok {
		t.Errorf("class byte 6 read as a key")
	}
}
