package sqlfe

import (
	"context"

	"github.com/tupled/tupled"
)

// prepareRow finishes a row about to be inserted into t, as INSERT does
// after its values are computed: the hidden rowid of a table without a
// primary key, the columns' modifiers and NOT NULL (checkRow); it returns
// the row's engine key. INSERT (dml.go) and COPY FROM (copy.go) share it.
func (s *Session) prepareRow(ctx context.Context, t *Table, row []Value) ([]byte, error) {
	if t.hiddenKey() {
		id, err := s.eng.nextRowid(ctx, t)
		if err != nil {
			return nil, err
		}
		row[t.Key] = Int8(id)
	}
	if err := checkRow(t, row); err != nil {
		return nil, err
	}
	return rowKey(nil, t, row), nil
}

// insertRow inserts row into t in tx: prepareRow, then the engine's
// insert, which checks unique keys, unique indexes and foreign keys; a
// duplicate key is worded as PostgreSQL's (dupRowError).
func (s *Session) insertRow(ctx context.Context, tx *tupled.Tx, t *Table, row []Value) error {
	key, err := s.prepareRow(ctx, t, row)
	if err != nil {
		return err
	}
	if err := tx.Insert(ctx, t.Engine, key, encodeRow(t, row)); err != nil {
		return dupRowError(err, t, row)
	}
	return nil
}
