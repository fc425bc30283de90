package sqlfe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// TRUNCATE [TABLE] [ONLY] t [, ...] [RESTART IDENTITY | CONTINUE IDENTITY]
// [CASCADE | RESTRICT], as PostgreSQL 15 runs it, transactionally:
//
//   - each table is locked ACCESS EXCLUSIVE (as DROP TABLE does, so the
//     TRUNCATE waits for every transaction that has used it and holds off
//     every other until its own transaction ends), in the order named;
//   - a table referenced by a foreign key of a table not truncated with it
//     is 0A000 "cannot truncate a table referenced in a foreign key
//     constraint"; CASCADE adds those tables (NOTICE "truncate cascades to
//     table ...");
//   - a table (not temporary) without foreign keys that no other table references gets a
//     new, empty engine table (as PostgreSQL's new relfilenode; the old
//     one is reclaimed when the transaction commits, the new one if it
//     rolls back), which a COPY later in the transaction loads in bulk
//     (bulk.go); the other tables' rows are deleted through the
//     transaction, referencing tables first; either way a rolled-back
//     TRUNCATE leaves every row;
//   - RESTART IDENTITY deletes the serial columns' sequences in the same
//     transaction; until it ends, nextval of those sequences runs in it
//     (Session.seqInTx), so the transaction's own inserts count from 1 and
//     a rollback restores the old sequence, as in PostgreSQL.

func (s *Session) planTruncate(st *pg.TruncateStmt) (*plan, error) {
	var rvs []*pg.RangeVar
	for _, n := range st.Relations {
		rv := n.GetRangeVar()
		if rv == nil {
			return nil, pgerror.NotSupported("this TRUNCATE target is not supported")
		}
		if _, err := relName(rv); err != nil {
			return nil, err
		}
		rvs = append(rvs, rv)
	}
	cascade := st.Behavior == pg.DropBehavior_DROP_CASCADE
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		var list []*catalog.Table
		in := map[string]bool{}
		add := func(t *catalog.Table) error {
			if in[t.Name] {
				return nil
			}
			// PostgreSQL's TRUNCATE takes AccessExclusiveLock on each
			// relation before it looks at foreign keys.
			if err := s.eng.seedRowid(ctx, t); err != nil { // rowid.go: before the lock
				return err
			}
			if err := tx.LockTable(ctx, t.Engine, tupled.AccessExclusive, false); err != nil {
				return engineError(err, t)
			}
			in[t.Name] = true
			list = append(list, t)
			return nil
		}
		for _, rv := range rvs {
			t, err := s.table(rv)
			if err != nil {
				return nil, err
			}
			if err := add(t); err != nil {
				return nil, err
			}
		}
		all := s.allTables()
		slices.SortFunc(all, func(a, b *catalog.Table) int { return strings.Compare(a.Name, b.Name) })
		for changed := true; changed; {
			changed = false
			for _, t := range all {
				if in[t.Name] {
					continue
				}
				for _, d := range t.FKeys {
					if !in[d.RefTable] {
						continue
					}
					if !cascade {
						return nil, &pgerror.Error{Code: pgerror.CodeFeatureNotSupp, Message: "cannot truncate a table referenced in a foreign key constraint",
							Detail: fmt.Sprintf("Table %q references %q.", t.Name, d.RefTable),
							Hint:   fmt.Sprintf("Truncate table %q at the same time, or use TRUNCATE ... CASCADE.", t.Name)}
					}
					s.notice("NOTICE", "00000", fmt.Sprintf("truncate cascades to table %q", t.Name))
					if err := add(t); err != nil {
						return nil, err
					}
					changed = true
					break
				}
			}
		}
		order, cyclic := truncateOrder(list)
		for _, t := range order {
			if cyclic[t.Name] {
				if err := unlinkRows(ctx, tx, t, in); err != nil {
					return nil, err
				}
			}
		}
		for _, t := range order {
			if len(t.FKeys) == 0 && !t.Temp && !s.referenced(t) {
				// a new, empty engine table (rewriteTable without rows),
				// as PostgreSQL's new relfilenode: no row is deleted one
				// by one, and a COPY that follows in the transaction
				// loads it in bulk (bulk.go)
				if err := s.rewriteTable(ctx, tx, t, cloneTable(t), nil); err != nil {
					return nil, err
				}
				continue
			}
			if err := truncateRows(ctx, tx, t); err != nil {
				return nil, err
			}
		}
		if st.RestartSeqs {
			for _, t := range list {
				if nt := s.lookupTable(t.Name); nt != nil {
					t = nt // its new engine table's sequences
				}
				if err := s.restartSequences(ctx, tx, t); err != nil {
					return nil, err
				}
			}
		}
		return &Result{Tag: "TRUNCATE TABLE"}, nil
	}
	return &plan{usesT: true, run: run}, nil
}

// truncateOrder orders the tables so that a table comes after every table
// of the list referencing it (children first); the tables of a cycle of
// references (a table referencing itself among them) keep the order named
// and are reported in cyclic.
func truncateOrder(list []*catalog.Table) (out []*catalog.Table, cyclic map[string]bool) {
	cyclic = map[string]bool{}
	for _, t := range list {
		for _, d := range t.FKeys {
			if d.RefTable == t.Name {
				cyclic[t.Name] = true
			}
		}
	}
	done := map[string]bool{}
	for len(out) < len(list) {
		progress := false
		for _, t := range list {
			if done[t.Name] {
				continue
			}
			blocked := false
			for _, c := range list {
				if c == t || done[c.Name] {
					continue
				}
				for _, d := range c.FKeys {
					if d.RefTable == t.Name {
						blocked = true
					}
				}
			}
			if !blocked {
				done[t.Name] = true
				out = append(out, t)
				progress = true
			}
		}
		if !progress {
			for _, t := range list {
				if !done[t.Name] {
					done[t.Name] = true
					cyclic[t.Name] = true
					out = append(out, t)
				}
			}
		}
	}
	return out, cyclic
}

// unlinkRows sets to NULL, in every row of t, the columns of t's foreign
// keys into the tables being truncated (in), so that the rows of a cycle
// of references can then be deleted in any order. No one sees these
// versions: the tables are locked ACCESS EXCLUSIVE and the rows are
// deleted next, in the same transaction.
func unlinkRows(ctx context.Context, tx *tupled.Tx, t *catalog.Table, in map[string]bool) error {
	var cols []int
	for _, d := range t.FKeys {
		if in[d.RefTable] {
			cols = append(cols, d.Cols...)
		}
	}
	if len(cols) == 0 {
		return nil
	}
	type kv struct{ k, v []byte }
	var start []byte
	for {
		var batch []kv
		err := tx.Scan(ctx, t.Engine, tupled.ScanOptions{Start: start, Limit: truncateBatch}, func(k, v []byte) error {
			batch = append(batch, kv{append([]byte(nil), k...), append([]byte(nil), v...)})
			return nil
		})
		if err != nil {
			return engineError(err, t)
		}
		row := make([]types.Value, len(t.Cols))
		for _, r := range batch {
			if err := catalog.DecodeRow(t, r.k, r.v, row); err != nil {
				return err
			}
			changed := false
			for _, c := range cols {
				if !row[c].Null {
					row[c], changed = types.Null(t.Cols[c].Type), true
				}
			}
			if changed {
				if err := tx.Update(ctx, t.Engine, r.k, catalog.EncodeRow(t, row)); err != nil {
					return engineError(err, t)
				}
			}
		}
		if len(batch) < truncateBatch {
			return nil
		}
		start = append(batch[len(batch)-1].k, 0)
	}
}

// truncateBatch is how many keys truncateRows reads before deleting them.
const truncateBatch = 1024

// truncateRows deletes every row of t in tx, a batch of keys at a time.
func truncateRows(ctx context.Context, tx *tupled.Tx, t *catalog.Table) error {
	var start []byte
	keys := make([][]byte, 0, truncateBatch)
	for {
		keys = keys[:0]
		err := tx.Scan(ctx, t.Engine, tupled.ScanOptions{Start: start, Limit: truncateBatch}, func(k, _ []byte) error {
			keys = append(keys, append([]byte(nil), k...))
			return nil
		})
		if err != nil {
			return engineError(err, t)
		}
		for _, k := range keys {
			if err := tx.Delete(ctx, t.Engine, k); err != nil && !errors.Is(err, tupled.ErrNotFound) {
				return engineError(err, t)
			}
		}
		if len(keys) < truncateBatch {
			return nil
		}
		start = append(keys[len(keys)-1], 0)
	}
}

// restartSequences deletes the state of t's sequences (its serial and
// identity columns' and those OWNED BY its columns) in tx (the next value
// is START again) and has nextval run in tx for them until it ends.
func (s *Session) restartSequences(ctx context.Context, tx *tupled.Tx, t *catalog.Table) error {
	for _, sq := range s.ownedSequences(t) { // sequence.go
		key := sq.Key
		if el := s.seqSess[key]; el != nil {
			el.cached = el.last
		}
		err := tx.Delete(ctx, SequenceTable, []byte(key))
		if err != nil && !errors.Is(err, tupled.ErrNotFound) && !errors.Is(err, tupled.ErrNoTable) {
			return err
		}
		if s.seqInTx == nil {
			s.seqInTx = map[string]bool{}
		}
		s.seqInTx[key] = true
	}
	return nil
}
