package catalog

// Reclaiming engine tables.
//
// A SQL table lives in an engine table (Table.Engine). SQL DDL is
// transactional — CREATE and DROP change the catalog table inside the
// session's transaction — while the engine's CreateTable and DropTable are
// not. So CREATE TABLE creates its engine table at once (registered in
// Catalog.creating until its transaction ends), and the engine table of a
// dropped SQL table, or of a CREATE whose transaction rolled back, is
// dropped with tupled.DB.DropTable once the transaction is over (an
// orphan). A drop that fails — a transaction of another session still
// holds a row lock on it or wrote to it (55006) — is retried at the next
// DDL commit or rollback. Only engine tables the SQL layer knows it
// abandoned are dropped, never one it does not know (a table created
// through the embedded API); so an orphan left by a crash between a DDL
// commit and its reclaim, or still in use when the process exits, keeps
// its data until dropped by hand (tupled.DB.DropTable).

import (
	"context"
	"errors"
	"strconv"

	"github.com/tupled/tupled"
)

// NewEngineTable creates a fresh engine table for SQL table name: name
// itself if free, else name#2, name#3, ... (a name still held by a table
// not yet reclaimed).
func (c *Catalog) NewEngineTable(ctx context.Context, db *tupled.DB, name string) (string, error) {
	for i := 1; ; i++ {
		e := name
		if i > 1 {
			e = name + "#" + strconv.Itoa(i)
		}
		c.mu.Lock()
		if c.creating == nil {
			c.creating = map[string]bool{}
		}
		taken := c.creating[e]
		c.creating[e] = true
		c.mu.Unlock()
		if taken {
			continue
		}
		err := db.CreateTable(ctx, e)
		if err == nil {
			return e, nil
		}
		c.mu.Lock()
		delete(c.creating, e)
		c.mu.Unlock()
		if !errors.Is(err, tupled.ErrTableExists) {
			return "", err
		}
	}
}

// orphan marks engine table e for reclaim. c.mu held.
func (c *Catalog) orphan(e string) {
	if c.orphans == nil {
		c.orphans = map[string]bool{}
	}
	c.orphans[e] = true
}

// Settle ends the transaction's engine-table creations (those no committed
// SQL table names become orphans) and reclaims orphans.
func (c *Catalog) Settle(db *tupled.DB, created []string, ddl bool) {
	if len(created) == 0 && !ddl {
		return
	}
	c.mu.Lock()
	for _, e := range created {
		delete(c.creating, e)
		if c.byEng[e] == nil {
			c.orphan(e)
		}
	}
	c.mu.Unlock()
	c.reclaim(context.Background(), db)
}

// reclaim drops the orphaned engine tables. One still in use (55006) stays
// marked for the next call.
func (c *Catalog) reclaim(ctx context.Context, db *tupled.DB) {
	c.mu.RLock()
	orphans := make([]string, 0, len(c.orphans))
	for e := range c.orphans {
		orphans = append(orphans, e)
	}
	c.mu.RUnlock()
	// A table still referenced by another orphan's foreign key (2BP01)
	// is dropped in a later pass, once that orphan is gone.
	for progress := true; progress && len(orphans) > 0; {
		progress = false
		var later []string
		for _, e := range orphans {
			err := db.DropTable(ctx, e, &tupled.DropTableOptions{IfExists: true})
			if err == nil {
				progress = true
				c.mu.Lock()
				delete(c.orphans, e)
				c.mu.Unlock()
			} else if errors.Is(err, tupled.ErrDependentObjects) {
				later = append(later, e)
			}
		}
		orphans = later
	}
}
