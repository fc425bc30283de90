//go:build invariants

package deadlock

import (
	"testing"
	"time"

	"github.com/tupled/tupled/internal/invariants"
)

// TestInvariantVictimOnCycle: a cycle that does not start at the checked
// wait, repeats a wait or holds a wait begun after the check's as-of
// cannot condemn anyone. (A member resolved after validation, by an
// external event such as a lock timeout, is validation's business: the
// check lets it pass.)
func TestInvariantVictimOnCycle(t *testing.T) {
	t0 := time.Unix(1000, 0)
	mk := func(start time.Time) *Wait {
		w := &Wait{Start: start}
		w.Init(nil)
		return w
	}
	a, b, c := mk(t0), mk(t0.Add(time.Second)), mk(t0.Add(2*time.Second))
	asOf := t0.Add(time.Second)
	checkVictim(a, []*Wait{a, b}, asOf) // a real cycle as of asOf
	ended := mk(t0)
	ended.Resolve(Granted)
	checkVictim(a, []*Wait{a, ended}, asOf) // a member granted since validation: no violation

	for name, fn := range map[string]func(){
		"not at start":  func() { checkVictim(a, []*Wait{b, a}, asOf) },
		"empty":         func() { checkVictim(a, nil, asOf) },
		"repeated wait": func() { checkVictim(a, []*Wait{a, b, a}, asOf) },
		"begun later":   func() { checkVictim(a, []*Wait{a, c}, asOf) },
	} {
		t.Run(name, func(t *testing.T) { invariants.ExpectViolation(t, invVictim, fn) })
	}
}
