package sqlfe

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
)

// tempTables are a session's temporary tables: CREATE TEMP | TEMPORARY
// TABLE t (...) [ON COMMIT PRESERVE ROWS | DELETE ROWS | DROP].
//
// The design: a temporary table is a catalog.Table (Temp set) that lives
// in its session only — never in the catalog table nor in the shared
// Catalog, so no other session sees it — over an engine table of its own
// named tempPrefix + a number + "/" + its name (made and dropped with
// tupled.DB.CreateTable and DropTable directly, outside the reclaim
// machinery, which never sees it). Its name is looked up before the
// shared catalog's (lookupRel), so it shadows a permanent table of the
// same name as pg_temp, first in PostgreSQL's search_path, does; DROP
// TABLE drops it first. Its DDL is transactional like the catalog's:
// CREATE and DROP stage in pending, applied at commit and dropped (with
// the engine table of a CREATE) at rollback. At commit, before the
// transaction commits, ON COMMIT DELETE ROWS deletes the rows in it; ON
// COMMIT DROP drops the table once it has committed. The session's end
// (Close) drops every one; and since a crash skips that, NewExecutor
// drops every engine table named with tempPrefix: a temporary table
// never survives a reopen. gen changes with every change, so a cached
// plan that resolved a name before is planned again (planFor).
//
// Not supported yet (0A000): pg_class and the other system catalogs do
// not list them; ALTER TABLE, CREATE INDEX (beyond the PRIMARY KEY and
// UNIQUE of the CREATE), COMMENT ON, foreign keys from or to them, serial
// and identity columns, views over them, and their DDL inside a savepoint.
type tempTables struct {
	byName  map[string]*tempTable // committed
	pending map[string]*tempTable // the open transaction's (nil: dropped)
	created []string              // engine tables the open transaction made
	gen     uint64
}

type tempTable struct {
	t        *catalog.Table
	onCommit pg.OnCommitAction
}

// tempPrefix starts the engine name of every temporary table.
const tempPrefix = "_tupled_temp/"

var tempSeq atomic.Uint64 // numbers the engine tables of temporary tables

// lookupTemp is the temporary table name, nil if none.
func (s *Session) lookupTemp(name string) *tempTable {
	if tt, ok := s.temps.pending[name]; ok {
		return tt
	}
	return s.temps.byName[name]
}

func (s *Session) stageTemp(name string, tt *tempTable) {
	if s.temps.pending == nil {
		s.temps.pending = map[string]*tempTable{}
	}
	s.temps.pending[name] = tt
	s.temps.gen++
}

// tempNameTaken reports whether a relation of pg_temp is called name: a
// temporary table or one of their indexes.
func (s *Session) tempNameTaken(name string) bool {
	for n := range s.tempNames() {
		tt := s.lookupTemp(n)
		if tt == nil {
			continue
		}
		if n == name || (tt.t.HasPKey() && tt.t.PrimaryKeyName() == name) {
			return true
		}
		for _, d := range tt.t.Indexes {
			if d.Name == name {
				return true
			}
		}
	}
	return false
}

// refuseTemp is the 0A000 of what temporary tables do not support.
func refuseTemp(t *catalog.Table, what string) error {
	if t != nil && t.Temp {
		return pgerror.NotSupported("%s of a temporary table is not supported", what)
	}
	return nil
}

// createTemp makes temporary table nt (planCreate's checks done): its
// engine table, its indexes, its entry in pending.
func (s *Session) createTemp(ctx context.Context, nt *catalog.Table, onCommit pg.OnCommitAction) error {
	if len(s.savepoints) > 0 {
		return pgerror.NotSupported("CREATE TEMPORARY TABLE inside a savepoint is not supported")
	}
	if len(nt.FKeys) > 0 {
		return pgerror.NotSupported("foreign keys of a temporary table are not supported")
	}
	if nt.HasSerial() {
		return pgerror.NotSupported("serial and identity columns of a temporary table are not supported")
	}
	nt.Temp = true
	nt.Engine = tempPrefix + strconv.FormatUint(tempSeq.Add(1), 10) + "/" + nt.Name
	if err := s.eng.db.CreateTable(ctx, nt.Engine); err != nil {
		return err
	}
	s.temps.created = append(s.temps.created, nt.Engine)
	if err := createIndexes(ctx, s.eng.db, nt); err != nil {
		return err
	}
	s.stageTemp(nt.Name, &tempTable{t: nt, onCommit: onCommit})
	return nil
}

// dropTemp drops temporary table name in tx (DROP TABLE).
func (s *Session) dropTemp(ctx context.Context, tx *tupled.Tx, tt *tempTable) error {
	if len(s.savepoints) > 0 {
		return pgerror.NotSupported("DROP TABLE of a temporary table inside a savepoint is not supported")
	}
	if err := tx.LockTable(ctx, tt.t.Engine, tupled.AccessExclusive, false); err != nil {
		return engineError(err, tt.t)
	}
	s.stageTemp(tt.t.Name, nil)
	return nil
}

// tempPreCommit runs ON COMMIT DELETE ROWS in tx, before it commits.
func (s *Session) tempPreCommit(ctx context.Context, tx *tupled.Tx) error {
	for name := range s.tempNames() {
		tt := s.lookupTemp(name)
		if tt == nil || tt.onCommit != pg.OnCommitAction_ONCOMMIT_DELETE_ROWS {
			continue
		}
		var keys [][]byte
		err := tx.Scan(ctx, tt.t.Engine, tupled.ScanOptions{}, func(k, _ []byte) error {
			keys = append(keys, append([]byte(nil), k...))
			return nil
		})
		for _, k := range keys {
			if err == nil {
				err = tx.Delete(ctx, tt.t.Engine, k)
			}
		}
		if err != nil {
			return engineError(err, tt.t)
		}
	}
	return nil
}

// tempNames are the names of the session's temporary tables, committed
// and pending.
func (s *Session) tempNames() map[string]bool {
	names := map[string]bool{}
	for n := range s.temps.byName {
		names[n] = true
	}
	for n := range s.temps.pending {
		names[n] = true
	}
	return names
}

// tempEnd ends the open transaction's temporary-table DDL: committed, it
// is applied (and ON COMMIT DROP done), else undone; the engine tables of
// the tables gone are dropped.
func (s *Session) tempEnd(ctx context.Context, committed bool) {
	pending, created := s.temps.pending, s.temps.created
	s.temps.pending, s.temps.created = nil, nil
	var gone []string
	if !committed {
		gone = created
	} else {
		for name, tt := range pending {
			if old := s.temps.byName[name]; old != nil && (tt == nil || tt.t.Engine != old.t.Engine) {
				gone = append(gone, old.t.Engine)
			}
			if tt == nil {
				delete(s.temps.byName, name)
				continue
			}
			if s.temps.byName == nil {
				s.temps.byName = map[string]*tempTable{}
			}
			s.temps.byName[name] = tt
		}
		for name, tt := range s.temps.byName {
			if tt.onCommit == pg.OnCommitAction_ONCOMMIT_DROP {
				gone = append(gone, tt.t.Engine)
				delete(s.temps.byName, name)
			}
		}
	}
	if pending != nil || len(gone) > 0 {
		s.temps.gen++ // what names resolve to changed back or on
	}
	for _, e := range gone {
		_ = s.eng.db.DropTable(ctx, e, &tupled.DropTableOptions{IfExists: true})
	}
}

// dropAllTemps drops the session's temporary tables (its end, DISCARD
// TEMP and ALL outside a transaction block); gen moves on, so no plan
// made over them is used again.
func (s *Session) dropAllTemps() {
	for _, tt := range s.temps.byName {
		_ = s.eng.db.DropTable(context.Background(), tt.t.Engine, &tupled.DropTableOptions{IfExists: true})
	}
	s.temps = tempTables{gen: s.temps.gen + 1}
}

// dropLeftoverTemps drops the engine tables of temporary tables a crash
// left (NewExecutor: no session has any yet).
func dropLeftoverTemps(ctx context.Context, db *tupled.DB) error {
	names, err := db.ListTables(ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		if strings.HasPrefix(n, tempPrefix) {
			if err := db.DropTable(ctx, n, &tupled.DropTableOptions{IfExists: true}); err != nil {
				return err
			}
		}
	}
	return nil
}
