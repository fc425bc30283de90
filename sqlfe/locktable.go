package sqlfe

import (
	"context"
	"errors"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// LOCK [TABLE] name [, ...] [IN mode MODE] [NOWAIT]: the tables are locked
// one after another, in the order written, in the transaction until it
// ends (tupled.Tx.LockTable on the SQL table's engine table; pg_locks
// shows them as locktype 'relation'). As in PostgreSQL (checked on 15):
//
//   - outside a transaction block: 25P01 "LOCK TABLE can only be used in
//     transaction blocks";
//   - no such table: 42P01 `relation "t" does not exist`;
//   - NOWAIT and a conflicting lock: 55P03 `could not obtain lock on
//     relation "t"`;
//   - the mode defaults to ACCESS EXCLUSIVE (the parser fills it in).

func (s *Session) planLock(st *pg.LockStmt) (*plan, error) {
	mode := tupled.TableLockMode(st.Mode)
	if mode < tupled.AccessShare || mode > tupled.AccessExclusive {
		return nil, pgerror.NotSupported("LOCK TABLE in lock mode %d is not supported", st.Mode)
	}
	var names []string
	for _, n := range st.Relations {
		rv := n.GetRangeVar()
		if rv == nil {
			return nil, pgerror.NotSupported("LOCK of this object is not supported")
		}
		name, err := relName(rv)
		if err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		if s.block != blkExplicit {
			return nil, pgerror.Errorf(pgerror.CodeNoActiveTx, "LOCK TABLE can only be used in transaction blocks")
		}
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			t := s.lookupTable(name)
			if t == nil && s.lookupView(name) != nil {
				return nil, pgerror.NotSupported("LOCK of a view is not supported")
			}
			if t == nil {
				return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", name)
			}
			if err := s.eng.seedRowid(ctx, t); err != nil { // rowid.go: before the lock
				return nil, err
			}
			if err := tx.LockTable(ctx, t.Engine, mode, st.Nowait); err != nil {
				if errors.Is(err, tupled.ErrLockNotAvailable) {
					return nil, pgerror.Errorf("55P03", "could not obtain lock on relation %q", t.Name)
				}
				return nil, engineError(err, t)
			}
		}
		return &Result{Tag: "LOCK TABLE"}, nil
	}
	return &plan{usesT: true, run: run}, nil
}
