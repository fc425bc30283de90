package sqlfe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/tupled/tupled/sql/types"

	"github.com/tupled/tupled"
)

// CatalogTable is the engine table holding the SQL catalog: SQL table name →
// JSON of its Table.
const CatalogTable = "_tupled_catalog"

// Column of a SQL table.
type Column struct {
	Name    string     `json:"name"`
	Type    types.Type `json:"type"`
	NotNull bool       `json:"not_null,omitempty"`
	// the declared type's modifier: smallint is stored as an integer
	// checked to 16 bits, varchar(n) as a text of at most n characters,
	// character(n) as a TBpchar of MaxLen n (0: bpchar, no length)
	Int2   bool `json:"int2,omitempty"`
	MaxLen int  `json:"max_len,omitempty"`
	// Varchar: declared character varying (a text with MaxLen > 0 is
	// one too, in catalogs written before this field)
	Varchar bool `json:"varchar,omitempty"`
	// Prec > 0: numeric(Prec, Scale)
	Prec  int `json:"prec,omitempty"`
	Scale int `json:"scale,omitempty"`
	// Table and AttNum: a result column that is a table's column, its
	// table and attribute number (RowDescription's); not stored
	Table  string `json:"-"`
	AttNum int    `json:"-"`
	// Hidden marks the rowid key of a table without a PRIMARY KEY (see
	// rowidCounters): no name, SELECT * or INSERT column list reaches it.
	Hidden bool `json:"hidden,omitempty"`
	// Default is the column's DEFAULT expression as SQL text ("SELECT
	// expr"), Serial marks a smallserial, serial or bigserial column (see
	// defaults.go).
	Default string `json:"default,omitempty"`
	Serial  bool   `json:"serial,omitempty"`
	// Identity is "a" (GENERATED ALWAYS AS IDENTITY) or "d" (BY DEFAULT);
	// Seq is the definition of a serial or identity column's sequence
	// when it is not its type's default (sequence.go, identity.go).
	Identity string    `json:"identity,omitempty"`
	Seq      *Sequence `json:"seq,omitempty"`
}

func (c Column) mod() types.Mod {
	return types.Mod{Int2: c.Int2, MaxLen: c.MaxLen, Varchar: c.Varchar || (c.Type == types.TText && c.MaxLen > 0), Prec: c.Prec, Scale: c.Scale}
}

// TypeModifier is the column's type modifier as PostgreSQL reports it in a
// RowDescription (atttypmod): n+4 for a character(n) or character
// varying(n), else -1.
func (c Column) TypeModifier() int32 {
	if (c.Type == types.TBpchar || c.Type == types.TText) && c.MaxLen > 0 {
		return int32(c.MaxLen) + 4
	}
	if c.Type == types.TNumeric && c.Prec > 0 {
		return int32(c.Prec<<16|(c.Scale&0x7ff)) + 4
	}
	return -1
}

// OID is the column's type OID as a client sees it: smallint (21) and
// character varying (1043) are their own types on the wire, though
// integer and text here.
func (c Column) OID() uint32 {
	switch m := c.mod(); {
	case c.Type == types.TInt4 && m.Int2:
		return types.OIDInt2
	case c.Type == types.TText && m.Varchar:
		return types.OIDVarchar
	}
	return c.Type.OID()
}

// Size is the column's fixed width on the wire, -1 if variable.
func (c Column) Size() int16 {
	if c.Type == types.TInt4 && c.Int2 {
		return 2
	}
	return c.Type.Size()
}

// AppendBinary appends v's binary format as a value of column c: a
// smallint in two bytes.
func (c Column) AppendBinary(dst []byte, v types.Value) []byte {
	if c.Type == types.TInt4 && c.Int2 && v.T == types.TInt4 {
		return append(dst, byte(v.I>>8), byte(v.I))
	}
	return v.AppendBinary(dst)
}

// Table is a SQL table: its columns, which one is the primary key, and the
// engine table holding its rows (key: the encoded primary key, value: the
// other columns, see encodeRow).
type Table struct {
	Name   string   `json:"name"`
	Engine string   `json:"engine"`
	Cols   []Column `json:"cols"`
	Key    int      `json:"key"`
	// KeyCols are the columns of a composite primary key, in key order
	// (Key is the first of them); empty for a one-column key
	// (compositekey.go). PKeyName is the name CONSTRAINT name PRIMARY KEY
	// gave the key ("": t_pkey).
	KeyCols  []int  `json:"key_cols,omitempty"`
	PKeyName string `json:"pkey_name,omitempty"`
	// KeyFormat is how the primary key is encoded in the engine's keys:
	// keyFormatTuple (package keys) for tables created since it exists,
	// keyFormatRaw for older ones, which keep theirs.
	KeyFormat keyFormat `json:"key_format,omitempty"`
	// Indexes are its secondary indexes and UNIQUE constraints (index.go).
	Indexes []IndexDef `json:"indexes,omitempty"`
	// FKeys are its foreign keys (fk.go).
	FKeys []FKDef `json:"fkeys,omitempty"`
	// Checks are its CHECK constraints (check.go).
	Checks []CheckDef `json:"checks,omitempty"`
}

// keyFormat names a primary-key encoding (see appendKey).
type keyFormat uint8

const (
	// keyFormatRaw: integers big-endian with the sign bit flipped, text
	// its bytes, bool one byte (tables created before package keys).
	keyFormatRaw keyFormat = iota
	// keyFormatTuple: the key as a one-element tuple of package keys, the
	// encoding programs use for their own keys (and the one that makes
	// composite keys possible).
	keyFormatTuple
)

func (t *Table) col(name string) int {
	for i, c := range t.Cols {
		if c.Name == name && !c.Hidden {
			return i
		}
	}
	return -1
}

// catalog is the committed SQL catalog, kept in memory (loaded at start,
// changed when a DDL transaction commits). gen changes with every change so
// that prepared statements re-plan.
type catalog struct {
	mu     sync.RWMutex
	tables map[string]*Table
	byEng  map[string]*Table
	seqs   map[string]*Sequence // standalone sequences (sequence.go)
	gen    uint64
	// creating: engine tables created by a transaction still open (not in
	// byEng yet), which reclaim must leave alone (reclaim.go).
	creating map[string]bool
	// orphans: engine tables of dropped SQL tables and of CREATEs rolled
	// back, to be dropped (reclaim.go).
	orphans map[string]bool
}

func (c *catalog) load(ctx context.Context, db *tupled.DB) error {
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
		var t Table
		if err := json.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("catalog entry %q: %w", k, err)
		}
		c.tables[t.Name] = &t
		c.byEng[t.Engine] = &t
		return nil
	})
	return err
}

func (c *catalog) get(name string) (*Table, uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.tables[name], c.gen
}

// engineName returns the SQL name of engine table e ("" if unknown).
func (c *catalog) sqlName(e string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if t := c.byEng[e]; t != nil {
		return t.Name
	}
	return ""
}

// apply installs the DDL of a committed transaction (nil = dropped).
func (c *catalog) apply(changes map[string]*Table) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, t := range changes {
		if old := c.tables[name]; old != nil {
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
		c.byEng[t.Engine] = t
	}
	c.gen++
}
