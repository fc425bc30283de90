package tupled

// VacuumResult reports one DB.Vacuum pass.
type VacuumResult struct {
	Rows            int    // rows examined (those written since they were last found with nothing to do)
	VersionsRemoved int    // dead tuple versions reclaimed
	RowsUnlinked    int    // keys with no version left, removed from their table
	ClogTruncatedTo uint64 // commit-status entries below this xid were dropped
}

// Vacuum reclaims what no snapshot can need: tuple versions deleted or
// updated by transactions that committed before every live snapshot,
// versions of aborted transactions, finished lockers in xmax (of the rows
// it visits: a single locker's xid on an otherwise settled row is left for
// the next visitor, see heap.Table), multixacts no transaction can need
// (they are then garbage-collected), empty keys, and commit-status entries
// below the oldest xid still referenced. It runs in the background every
// Options.VacuumInterval; calling it directly is safe.
func (db *DB) Vacuum() VacuumResult {
	if db.enter() != nil {
		return VacuumResult{}
	}
	defer db.exit()
	return VacuumResult(db.eng.VacuumNow())
}

// Checkpoint writes the current committed state of an on-disk database to
// its backend and removes the WAL that is no longer needed. For an
// in-memory database with Options.MemoryArena it moves the rows whose
// last change every transaction sees into the tables' arenas and out of
// the Go heap, as the background loop does every 100 ms; otherwise a
// no-op in memory.
func (db *DB) Checkpoint() error {
	if err := db.enter(); err != nil {
		return err
	}
	defer db.exit()
	return db.eng.Checkpoint()
}
