package tuplemode

import "testing"

// TestConflictTable: the table is symmetric, and each mode conflicts with
// exactly the modes PostgreSQL's documentation lists for it.
func TestConflictTable(t *testing.T) {
	want := map[Mode][]Mode{
		KeyShare:       {Exclusive},
		Share:          {NoKeyExclusive, Exclusive},
		NoKeyExclusive: {Share, NoKeyExclusive, Exclusive},
		Exclusive:      {KeyShare, Share, NoKeyExclusive, Exclusive},
	}
	for a := range Mode(NumModes) {
		for b := range Mode(NumModes) {
			w := false
			for _, c := range want[a] {
				w = w || c == b
			}
			if got := Conflicts(a, b); got != w || got != Conflicts(b, a) {
				t.Errorf("Conflicts(%v, %v) = %v, want %v (and symmetric)", a, b, got, w)
			}
		}
	}
}

// TestString: every mode names itself as PostgreSQL does; others say what they are.
func TestString(t *testing.T) {
	if s := Exclusive.String(); s != "LockTupleExclusive" {
		t.Errorf("Exclusive: %q", s)
	}
	if s := Mode(7).String(); s != "Mode(7)" {
		t.Errorf("String of an invalid mode: %q", s)
	}
}
