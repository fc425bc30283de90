package tupled

import (
	"context"

	"github.com/tupled/tupled/internal/engine"
)

// UpsertOutcome says what [Tx.Upsert] did.
type UpsertOutcome = engine.UpsertOutcome

// Upsert's outcomes.
const (
	// UpsertInserted: no row had the key; value was inserted.
	UpsertInserted = engine.UpsertInserted
	// UpsertUpdated: a row had the key; it was locked and onConflict's
	// value written.
	UpsertUpdated = engine.UpsertUpdated
	// UpsertUnchanged: a row had the key and nothing was written: DO
	// NOTHING (onConflict nil), or onConflict declined (a DO UPDATE …
	// WHERE that failed; the row stays locked FOR NO KEY UPDATE).
	UpsertUnchanged = engine.UpsertUnchanged
)

// Upsert is INSERT INTO table VALUES (key, value) ON CONFLICT (key) DO
// NOTHING (onConflict nil) or DO UPDATE (onConflict non-nil), with
// PostgreSQL's rules:
//
//   - An insert in progress or a delete in progress of the key is waited
//     for; then, if no committed row (or one of this transaction's) has the
//     key, value is inserted.
//   - On a conflict with DO UPDATE, the row is locked FOR NO KEY UPDATE
//     (waiting, and under READ COMMITTED following a concurrent update to
//     the newest version) and onConflict is called with its value: it
//     returns the value to write and true, or false to write nothing (the
//     WHERE of DO UPDATE failed; the row stays locked). A conflicting row
//     deleted before it could be locked makes Upsert insert again.
//   - Under REPEATABLE READ a conflicting row the transaction's snapshot
//     does not see fails with ErrSerialization (40001), as does one updated
//     since the snapshot that DO UPDATE must lock.
//
// Errors are those of Insert, Lock and Update (with their SQLSTATEs); an
// error aborts the transaction (down to the innermost savepoint). value and
// what onConflict returns are copied; onConflict's argument is the
// caller's own copy.
func (tx *Tx) Upsert(ctx context.Context, table string, key, value []byte, onConflict func(existing []byte) (newValue []byte, update bool)) (UpsertOutcome, error) {
	if err := tx.enter(); err != nil {
		return 0, err
	}
	defer tx.exit()
	return tx.t.Upsert(ctx, table, key, value, onConflict)
}
