package invariants

import (
	"fmt"
	"strings"
)

// Violation is the value Fail panics with.
type Violation struct {
	Name string // the invariant, as its package's doc.go names it
	Msg  string // what was found
}

func (v *Violation) Error() string {
	return "invariant " + v.Name + " violated: " + v.Msg
}

func (v *Violation) String() string { return v.Error() }

// Fail reports that the invariant name does not hold: it panics with a
// *Violation whose message begins "invariant <name> violated: ". Guard the
// call with if Enabled { ... }.
func Fail(name, format string, args ...any) {
	panic(&Violation{Name: name, Msg: fmt.Sprintf(format, args...)})
}

// Check is Fail unless cond holds. Guard the call with if Enabled { ... }:
// its arguments are evaluated even when cond is true.
func Check(cond bool, name, format string, args ...any) {
	if !cond {
		Fail(name, format, args...)
	}
}

// Name returns the invariant a recovered panic value names, or "" if it is
// not a violation (tests use it).
func Name(r any) string {
	switch v := r.(type) {
	case *Violation:
		return v.Name
	case error:
		return nameOf(v.Error())
	case string:
		return nameOf(v)
	}
	return ""
}

func nameOf(s string) string {
	rest, ok := strings.CutPrefix(s, "invariant ")
	if !ok {
		return ""
	}
	name, _, ok := strings.Cut(rest, " violated: ")
	if !ok {
		return ""
	}
	return name
}
