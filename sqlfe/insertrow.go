package sqlfe

import (
	"context"

	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/types"
)

// prepareRow finishes a row about to be inserted into t, as INSERT does
// after its values are computed: the hidden rowid of a table without a
// primary key, the columns' modifiers and NOT NULL (checkRow); it returns
// the row's engine key; modded marks the columns whose modifiers are
// applied already (nil: none). INSERT (dml.go) and COPY FROM (copy.go)
// share it;
// both then insert the row with tx.Insert (which checks unique keys,
// unique indexes and foreign keys) and word a duplicate with dupRowError.
func (s *Session) prepareRow(ctx context.Context, t *catalog.Table, row []types.Value, modded []bool, dst []byte) ([]byte, error) {
	if t.HiddenKey() {
		id, err := s.eng.nextRowid(ctx, t)
		if err != nil {
			return nil, err
		}
		row[t.Key] = types.Int8(id)
	}
	if err := checkRowModded(t, row, modded); err != nil {
		return nil, err
	}
	return catalog.RowKey(dst[:0], t, row), nil
}
