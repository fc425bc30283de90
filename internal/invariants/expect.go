package invariants

// TB is the part of testing.TB ExpectViolation uses (so that this package
// does not import testing into the binaries that import it).
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// ExpectViolation runs fn and fails t unless fn panics with a violation of
// the invariant name (tests built with -tags invariants use it).
func ExpectViolation(t TB, name string, fn func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Fatalf("no panic; want a violation of invariant %s", name)
			return
		}
		if got := Name(r); got != name {
			t.Fatalf("panic %v; want a violation of invariant %s", r, name)
		}
	}()
	fn()
}
