package sqlfe

import (
	"context"
	"errors"
	"maps"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// sqlSavepoint is an open savepoint of the session's transaction block:
// its name and the block's DDL as it stood when it was established
// (ROLLBACK TO restores it; the catalog rows themselves are rolled back by
// the engine with the rest of the savepoint's writes).
type sqlSavepoint struct {
	name    string
	pending map[string]*catalog.Table
	seqs    map[string]*catalog.Sequence // pendingSeqs
	enums   map[string]*types.Enum       // pendingEnums (enum.go)
	// undo holds, for each setting SET (or SET LOCAL) since the savepoint
	// was established, its value then: ROLLBACK TO restores them, as
	// PostgreSQL's subtransaction abort does (AtEOSubXact_GUC). setSetting
	// records a key in every open savepoint that lacks it, so a RELEASE
	// just drops the released ones.
	undo map[string]string
	// notify: the transaction's LISTEN/NOTIFY work when it was made
	notify [2]int
}

// restoreSettings undoes the SETs made since savepoint i was established
// (see sqlSavepoint.undo); it stays established.
func (s *Session) restoreSettings(i int) {
	undo := s.savepoints[i].undo
	s.savepoints[i].undo = nil
	saved := s.savepoints
	s.savepoints = nil // the restoring SETs record nothing in them
	for k, v := range undo {
		_ = s.setSetting(k, v, false)
	}
	s.savepoints = saved
}

// noteSetting records key's value before a SET in every open savepoint
// that has not recorded it yet.
func (s *Session) noteSetting(key, old string) {
	for i := range s.savepoints {
		sp := &s.savepoints[i]
		if sp.undo == nil {
			sp.undo = map[string]string{}
		}
		if _, ok := sp.undo[key]; !ok {
			sp.undo[key] = old
		}
	}
}

// planSavepoint plans SAVEPOINT, RELEASE [SAVEPOINT] and ROLLBACK TO
// [SAVEPOINT], with PostgreSQL's errors: outside a transaction block 25P01,
// an unknown name 3B001 (which, like any error, aborts the block down to
// the innermost savepoint), in a failed block only ROLLBACK TO.
func (s *Session) planSavepoint(st *pg.TransactionStmt) (*plan, error) {
	name := st.SavepointName
	switch st.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
		return &plan{ctl: true, run: func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
			if s.block != blkExplicit {
				return nil, s.outsideBlock("SAVEPOINT")
			}
			tx, err := s.ensureTx(ctx)
			if err != nil {
				return nil, err
			}
			if err := tx.Savepoint(name); err != nil {
				return nil, err
			}
			s.savepoints = append(s.savepoints, sqlSavepoint{name: name, pending: maps.Clone(s.pending), seqs: maps.Clone(s.pendingSeqs), enums: maps.Clone(s.pendingEnums), notify: s.notifyMark()})
			return &Result{Tag: "SAVEPOINT"}, nil
		}}, nil
	case pg.TransactionStmtKind_TRANS_STMT_RELEASE:
		return &plan{ctl: true, run: func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
			if s.block != blkExplicit {
				return nil, s.outsideBlock("RELEASE SAVEPOINT")
			}
			i := s.findSavepoint(name)
			if i < 0 {
				return nil, noSavepoint(name)
			}
			if err := s.tx.Release(name); err != nil {
				return nil, err
			}
			s.savepoints = s.savepoints[:i]
			return &Result{Tag: "RELEASE"}, nil
		}}, nil
	default: // ROLLBACK TO
		return &plan{ctl: true, run: func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
			if s.block != blkExplicit && s.block != blkFailed {
				return nil, s.outsideBlock("ROLLBACK TO SAVEPOINT")
			}
			i := s.findSavepoint(name)
			if i < 0 {
				return nil, noSavepoint(name)
			}
			if err := s.tx.RollbackTo(name); err != nil {
				return nil, err
			}
			s.restoreSettings(i)
			s.rollbackNotify(s.savepoints[i].notify)
			s.pending, s.pendingSeqs = s.savepoints[i].pending, s.savepoints[i].seqs
			s.rollbackEnumsTo(s.savepoints[i].enums) // enum.go
			s.savepoints[i].pending, s.savepoints[i].seqs, s.savepoints[i].enums = maps.Clone(s.pending), maps.Clone(s.pendingSeqs), maps.Clone(s.pendingEnums)
			s.savepoints = s.savepoints[:i+1]
			s.block = blkExplicit
			return &Result{Tag: "ROLLBACK"}, nil
		}}, nil
	}
}

func (s *Session) outsideBlock(what string) error {
	return pgerror.Errorf(pgerror.CodeNoActiveTx, "%s can only be used in transaction blocks", what)
}

func noSavepoint(name string) *pgerror.Error {
	return pgerror.Errorf(pgerror.CodeInvalidSavepoint, "savepoint %q does not exist", name)
}

func (s *Session) findSavepoint(name string) int {
	for i := len(s.savepoints) - 1; i >= 0; i-- {
		if s.savepoints[i].name == name {
			return i
		}
	}
	return -1
}

// failUnderSavepoint is what an error does inside a transaction block
// with open savepoints: PostgreSQL aborts the innermost subtransaction at
// once (its locks go now, not at ROLLBACK TO) and leaves the block failed
// until ROLLBACK TO or ROLLBACK. The engine has already done the abort
// when the error was its own; for one of the SQL layer's (a bad
// expression, a missing column) it is done here. It reports whether it
// applied.
func (s *Session) failUnderSavepoint() bool {
	if len(s.savepoints) == 0 || s.tx == nil || (s.block != blkExplicit && s.block != blkFailed) {
		return false
	}
	sp := s.savepoints[len(s.savepoints)-1]
	if err := s.tx.RollbackTo(sp.name); err != nil && !errors.Is(err, tupled.ErrTxAborted) {
		return false
	}
	s.restoreSettings(len(s.savepoints) - 1)
	s.rollbackNotify(sp.notify)
	s.pending, s.pendingSeqs = sp.pending, sp.seqs
	s.rollbackEnumsTo(sp.enums) // enum.go
	s.savepoints[len(s.savepoints)-1].pending, s.savepoints[len(s.savepoints)-1].seqs = maps.Clone(s.pending), maps.Clone(s.pendingSeqs)
	s.savepoints[len(s.savepoints)-1].enums = maps.Clone(s.pendingEnums)
	s.block = blkFailed
	return true
}
