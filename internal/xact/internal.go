package xact

// BeginInternal starts a transaction the engine runs for itself (a
// checkpoint holding the horizon while it reads). It behaves as Begin in
// every respect but one: LiveUser leaves it out, so introspection meant
// for users (the root package's Locks, like pg_locks) does not show a
// transaction no caller started and none can end.
func (m *Manager) BeginInternal() *Xact {
	x := new(Xact)
	m.begin(x, true)
	return x
}

// LiveUser returns the ids of the running transactions other than the
// engine's own (BeginInternal).
func (m *Manager) LiveUser() []XID {
	out := make([]XID, 0, m.nlive.Load())
	m.forLive(func(x *Xact) {
		if !x.internal {
			out = append(out, x.id)
		}
	})
	return out
}

// LiveXact is a running transaction's xid and its top level's (itself,
// unless it is a subtransaction).
type LiveXact struct{ ID, Top XID }

// LiveUserXacts is LiveUser's transactions with their subtransactions
// (BeginSub), for pg_locks: each holds its own xid, on behalf of its top
// level (Xact.Top). It returns their ids, read while the live set holds
// them: a record that ends may be reused at once for the next transaction
// of its session (BeginIn), so it is not to be read later.
func (m *Manager) LiveUserXacts() []LiveXact {
	out := make([]LiveXact, 0, m.nlive.Load())
	m.forLive(func(x *Xact) {
		if !x.internal {
			out = append(out, LiveXact{ID: x.id, Top: x.Top().id})
		}
	})
	return out
}
