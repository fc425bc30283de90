// Package invariants holds the switch and the helper for the engine's
// run-time invariant checks, as pebble's internal/invariants does: the
// invariants each package's doc.go states in prose are checked where they
// must hold when the module is built with the invariants build tag
// (go test -tags invariants ./...), and not at all otherwise.
//
// Enabled is a constant, true only under //go:build invariants. Every call
// site must be guarded by
//
//	if invariants.Enabled {
//		...
//	}
//
// so that without the tag the compiler removes the check, its arguments
// and any work done to compute them: a check costs nothing in a normal
// build. Under the tag a check must stay O(1), or O(members) of the object
// the operation touches (a multixact's members, a lock's holders); never a
// scan of a table or of the lock manager.
//
// Fail panics with a message that begins "invariant <name> violated: ",
// name being the invariant's name as its package's doc.go lists it
// ("multixact.members-unique"); Check is Fail when a condition does not
// hold. Tests built with the tag break each invariant on purpose and
// assert the panic names it (Violation, Name).
//
// Callers: the packages below the engine whose doc.go lists invariants
// marked "(checked under -tags invariants)": heap, multixact, tuplelock,
// lockmgr, deadlock, internal/xact. Only the module's own packages can
// import it (internal/).
package invariants
