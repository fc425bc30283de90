package tuplemode

import (
	"testing"

	"github.com/tupled/tupled/lockmgr"
)

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

// TestHeavyweightLocks: the tuple locks of two modes conflict in the lock
// manager exactly when the row locks do, so waiters queue behind exactly
// the waiters they could not run beside.
func TestHeavyweightLocks(t *testing.T) {
	for a := range Mode(NumModes) {
		for b := range Mode(NumModes) {
			if hw := lockmgr.Conflicts(a.HeavyweightLock(), b.HeavyweightLock()); hw != Conflicts(a, b) {
				t.Errorf("%v/%v: heavyweight %v vs %v conflict %v, row locks %v", a, b, a.HeavyweightLock(), b.HeavyweightLock(), hw, Conflicts(a, b))
			}
		}
	}
	if s := Mode(7).String(); s != "Mode(7)" {
		t.Errorf("String of an invalid mode: %q", s)
	}
}
