package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/types"
)

// Catalog is the committed SQL catalog, kept in memory (loaded at start by
// Load, changed by Apply and ApplySeqs when a DDL transaction commits). Its
// generation (Get, Snapshot) changes with every change so that prepared
// statements re-plan. Safe for concurrent use; the *Table and *Sequence it
// hands out are never modified (a change installs new ones).
type Catalog struct {
	mu     sync.RWMutex
	tables map[string]*Table      // by SQL name
	byEng  map[string]*Table      // by engine table name
	seqs   map[string]*Sequence   // standalone sequences (sequence.go)
	enums  map[string]*types.Enum // enum types (enum.go)
	gen    uint64
	// creating: engine tables created by a transaction still open (not in
	// byEng yet), which reclaim must leave alone (reclaim.go).
	creating map[string]bool
	// orphans: engine tables of dropped SQL tables and of CREATEs rolled
	// back, to be dropped (reclaim.go).
	orphans map[string]bool
}

// Load reads the committed catalog from the engine table CatalogTable
// (creating it in a new database): the tables and the standalone
// sequences. Declaring their indexes and foreign keys with the engine is
// the caller's part (sqlfe's Executor.declareConstraints).
func (c *Catalog) Load(ctx context.Context, db *tupled.DB) error {
	if err := db.CreateTable(ctx, CatalogTable); err != nil && !errors.Is(err, tupled.ErrTableExists) {
		return err
	}
	c.tables = map[string]*Table{}
	c.byEng = map[string]*Table{}
	tx, err := db.Begin(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	err = tx.Scan(ctx, CatalogTable, tupled.ScanOptions{}, func(k, v []byte) error {
		if isSeqCatalogKey(k) {
			return c.loadSeq(v) // sequence.go
		}
		if isEnumCatalogKey(k) {
			return c.loadEnum(v) // enum.go
		}
		var t Table
		if err := json.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("catalog entry %q: %w", k, err)
		}
		c.tables[t.Name] = &t
		if !t.IsView() {
			c.byEng[t.Engine] = &t
		}
		return nil
	})
	c.fixEnumCols()
	return err
}

// Get returns the committed table name (nil if none) and the catalog's
// generation.
func (c *Catalog) Get(name string) (*Table, uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.tables[name], c.gen
}

// SQLName returns the SQL name of engine table e ("" if unknown).
func (c *Catalog) SQLName(e string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if t := c.byEng[e]; t != nil {
		return t.Name
	}
	return ""
}

// Apply installs the DDL of a committed transaction (nil = dropped).
func (c *Catalog) Apply(changes map[string]*Table) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, t := range changes {
		if old := c.tables[name]; old != nil && !old.IsView() {
			delete(c.byEng, old.Engine)
			if t == nil || t.Engine != old.Engine {
				c.orphan(old.Engine)
			}
		}
		if t == nil {
			delete(c.tables, name)
			continue
		}
		c.tables[name] = t
		if !t.IsView() { // a view has no engine table
			c.byEng[t.Engine] = t
		}
	}
	c.gen++
}

// ByEngine returns the committed table whose rows are in engine table e, or
// nil.
func (c *Catalog) ByEngine(e string) *Table {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.byEng[e]
}

// Sequence returns the committed standalone sequence name, or nil.
func (c *Catalog) Sequence(name string) *Sequence {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.seqs[name]
}

// Range calls fn for each committed table, in no order, until fn returns
// false. The catalog is read-locked meanwhile: fn must not change it.
func (c *Catalog) Range(fn func(name string, t *Table) bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for n, t := range c.tables {
		if !fn(n, t) {
			return
		}
	}
}

// Generation is the catalog's generation, which every change advances.
func (c *Catalog) Generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// Snapshot returns copies of the committed tables and standalone sequences
// by name, and the generation they are of.
func (c *Catalog) Snapshot() (tables map[string]*Table, seqs map[string]*Sequence, gen uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	tables = make(map[string]*Table, len(c.tables))
	for n, t := range c.tables {
		tables[n] = t
	}
	seqs = make(map[string]*Sequence, len(c.seqs))
	for n, sq := range c.seqs {
		seqs[n] = sq
	}
	return tables, seqs, c.gen
}
