package engine

import (
	"context"
	"errors"

	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/internal/tuplemode"
)

// UpsertOutcome says what Upsert did.
type UpsertOutcome uint8

// Upsert's outcomes.
const (
	UpsertInserted  UpsertOutcome = iota + 1 // no conflicting row: inserted
	UpsertUpdated                            // conflict: the row was locked and updated
	UpsertUnchanged                          // conflict: DO NOTHING, or DO UPDATE whose WHERE failed (the row stays locked)
)

// Upsert is INSERT … ON CONFLICT (key), PostgreSQL's speculative insertion
// reduced to one key (the primary key):
//
//   - The insert waits, as any insert does, for a transaction that is
//     inserting or deleting the key; if no committed or own row has the key
//     then, it inserts.
//   - On a conflict, onConflict == nil is DO NOTHING. Otherwise the
//     conflicting row is locked FOR NO KEY UPDATE (the lock an update that
//     leaves the key alone takes), waiting if need be, and onConflict gets
//     its current value (READ COMMITTED follows a concurrent update to the
//     newest version): it returns the new value and true (DO UPDATE SET), or
//     false (DO UPDATE … WHERE that failed: the row stays locked, as in
//     PostgreSQL). Should the conflicting row be deleted before it is
//     locked, the insertion is tried again.
//   - Under REPEATABLE READ, a conflicting row the snapshot does not see is
//     40001 (ErrSerialization), for DO NOTHING as for DO UPDATE; so is one
//     updated since the snapshot, when DO UPDATE locks it.
func (tx *Tx) Upsert(ctx context.Context, table string, key, value []byte, onConflict func(existing []byte) ([]byte, bool)) (UpsertOutcome, error) {
	for {
		inserted, err := tx.insert(ctx, table, key, value, true)
		if err != nil {
			return 0, err
		}
		if inserted {
			if err := tx.fkInserted(ctx, table, key, value); err != nil { // fk.go
				return 0, err
			}
			return UpsertInserted, nil
		}
		if onConflict == nil {
			return UpsertUnchanged, nil
		}
		old, err := tx.Lock(ctx, table, key, tuplemode.NoKeyExclusive, Block)
		if errors.Is(err, errs.ErrNotFound) {
			continue // deleted since the insert saw it: insert again
		}
		if err != nil {
			return 0, err
		}
		nv, ok := onConflict(old)
		if !ok {
			return UpsertUnchanged, nil
		}
		if err := tx.Write(ctx, table, key, nv, false, Block); err != nil {
			return 0, err
		}
		return UpsertUpdated, nil
	}
}
