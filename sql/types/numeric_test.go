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
