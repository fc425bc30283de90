package sqlfe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tupled/tupled"
)

// Indexes: CREATE [UNIQUE] INDEX on columns, UNIQUE constraints of CREATE
// TABLE and DROP INDEX, over the engine's indexes (tupled.DB.CreateIndex).
// A table's indexes are part of its catalog entry (Table.Indexes); the
// engine index of one is named "<engine table>/<index name>", and its key
// is the tuple encoding (package keys) of its columns' values; a row with
// a NULL in one of them is not indexed, so NULLs never conflict, as in
// PostgreSQL. Loading the catalog registers every index's key function
// with the engine again (the engine does not store it).

// IndexDef is one index of a table in the catalog.
type IndexDef struct {
	Name   string `json:"name"`
	Cols   []int  `json:"cols"`
	Unique bool   `json:"unique,omitempty"`
}

// engIndex is the engine index name of t's index name.
func engIndex(t *Table, name string) string { return t.Engine + "/" + name }

// indexKey is the key function of t's index d: the tuple encoding of the
// indexed columns, or not indexed when one is NULL.
func indexKey(t *Table, d IndexDef) func(key, value []byte) ([]byte, bool) {
	tupleFmt := &Table{KeyFormat: keyFormatTuple}
	return func(key, value []byte) ([]byte, bool) {
		row := make([]Value, len(t.Cols))
		if err := decodeRow(t, key, value, row); err != nil {
			return nil, false
		}
		var out []byte
		for _, c := range d.Cols {
			if row[c].Null {
				return nil, false
			}
			out = appendKey(out, tupleFmt, row[c])
		}
		return out, true
	}
}

// createIndexes creates (or, for a table loaded from the catalog,
// registers again) t's indexes in the engine.
func createIndexes(ctx context.Context, db *tupled.DB, t *Table) error {
	for _, d := range t.Indexes {
		err := db.CreateIndex(ctx, t.Engine, engIndex(t, d.Name), tupled.IndexOptions{Unique: d.Unique, Key: indexKey(t, d)})
		if err != nil && !errors.Is(err, tupled.ErrTableExists) {
			return err
		}
	}
	return nil
}

// indexNameTaken reports whether a table or an index is called name.
func (s *Session) indexNameTaken(name string) bool {
	if s.lookupTable(name) != nil {
		return true
	}
	return s.findIndex(name) != nil
}

// findIndex returns the table with index name, or nil.
func (s *Session) findIndex(name string) *Table {
	s.eng.cat.mu.RLock()
	defer s.eng.cat.mu.RUnlock()
	for _, t := range s.eng.cat.tables {
		if p, ok := s.pending[t.Name]; ok {
			t = p
		}
		if t == nil {
			continue
		}
		for _, d := range t.Indexes {
			if d.Name == name {
				return t
			}
		}
	}
	for _, t := range s.pending {
		if t == nil {
			continue
		}
		for _, d := range t.Indexes {
			if d.Name == name {
				return t
			}
		}
	}
	return nil
}

// chooseIndexName is PostgreSQL's ChooseRelationName: table_cols_suffix,
// then with 1, 2, … appended until the name is free (taken: the names
// already used, besides the catalog's).
func (s *Session) chooseIndexName(t *Table, cols []int, suffix string, taken map[string]bool) string {
	parts := []string{t.Name}
	for _, c := range cols {
		parts = append(parts, t.Cols[c].Name)
	}
	base := strings.Join(parts, "_") + "_" + suffix
	name := base
	for i := 1; taken[name] || s.indexNameTaken(name); i++ {
		name = fmt.Sprintf("%s%d", base, i)
	}
	return name
}

// indexCols resolves index columns by name.
func indexCols(t *Table, names []string, loc int32) ([]int, error) {
	var cols []int
	for _, n := range names {
		i := t.col(n)
		if i < 0 {
			return nil, errorf(CodeUndefinedColumn, "column %q named in key does not exist", n).at(loc)
		}
		cols = append(cols, i)
	}
	return cols, nil
}

func (s *Session) planCreateIndex(st *pg.IndexStmt) (*plan, error) {
	switch {
	case st.AccessMethod != "" && st.AccessMethod != "btree":
		return nil, notSupported("access method %q is not supported", st.AccessMethod)
	case st.WhereClause != nil:
		return nil, notSupported("partial indexes are not supported")
	case len(st.IndexIncludingParams) > 0 || len(st.Options) > 0 || st.TableSpace != "":
		return nil, notSupported("CREATE INDEX options are not supported")
	case st.Concurrent:
		return nil, notSupported("CREATE INDEX CONCURRENTLY is not supported")
	case st.NullsNotDistinct:
		return nil, notSupported("NULLS NOT DISTINCT is not supported")
	}
	tname, err := relName(st.Relation)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range st.IndexParams {
		e := p.GetIndexElem()
		if e == nil || e.Name == "" {
			return nil, notSupported("index expressions are not supported")
		}
		names = append(names, e.Name)
	}
	run := func(ctx context.Context, s *Session, _ []Value) (*Result, error) {
		res := &Result{Tag: "CREATE INDEX"}
		if s.block == blkExplicit {
			return nil, notSupported("CREATE INDEX inside a transaction block is not supported")
		}
		t := s.lookupTable(tname)
		if t == nil {
			return nil, errorf(CodeUndefinedTable, "relation %q does not exist", tname)
		}
		cols, err := indexCols(t, names, st.Relation.Location)
		if err != nil {
			return nil, err
		}
		name := st.Idxname
		if name == "" {
			name = s.chooseIndexName(t, cols, "idx", nil)
		} else if s.indexNameTaken(name) {
			if st.IfNotExists {
				s.notice("NOTICE", CodeDuplicateTable, "relation \""+name+"\" already exists, skipping")
				return res, nil
			}
			return nil, errorf(CodeDuplicateTable, "relation %q already exists", name)
		}
		d := IndexDef{Name: name, Cols: cols, Unique: st.Unique}
		err = s.eng.db.CreateIndex(ctx, t.Engine, engIndex(t, name), tupled.IndexOptions{Unique: d.Unique, Key: indexKey(t, d)})
		if err != nil {
			if errors.Is(err, tupled.ErrDuplicateKey) {
				return nil, errorf(CodeUniqueViolation, "could not create unique index %q", name)
			}
			return nil, engineError(err, t)
		}
		tx, err := s.ensureTx(ctx)
		if err == nil {
			err = s.saveIndexes(ctx, tx, t, append(append([]IndexDef(nil), t.Indexes...), d))
		}
		if err != nil {
			_ = s.eng.db.DropIndex(ctx, engIndex(t, name), true)
			return nil, err
		}
		return res, nil
	}
	return &plan{usesT: true, run: run}, nil
}

// saveIndexes writes t's catalog entry with indexes ixs (committed with
// the statement's transaction).
func (s *Session) saveIndexes(ctx context.Context, tx *tupled.Tx, t *Table, ixs []IndexDef) error {
	nt := *t
	nt.Indexes = ixs
	data, err := json.Marshal(&nt)
	if err != nil {
		return err
	}
	if err := tx.Update(ctx, CatalogTable, []byte(t.Name), data); err != nil {
		return err
	}
	if s.pending == nil {
		s.pending = map[string]*Table{}
	}
	s.pending[t.Name] = &nt
	return nil
}

func (s *Session) planDropIndex(st *pg.DropStmt) (*plan, error) {
	if st.Concurrent {
		return nil, notSupported("DROP INDEX CONCURRENTLY is not supported")
	}
	var names []string
	for _, o := range st.Objects {
		parts := strs(o.GetList().GetItems())
		if len(parts) == 2 && parts[0] == "public" {
			parts = parts[1:]
		}
		if len(parts) != 1 {
			return nil, errorf(CodeUndefinedObject, "index %q does not exist", strings.Join(parts, "."))
		}
		names = append(names, parts[0])
	}
	run := func(ctx context.Context, s *Session, _ []Value) (*Result, error) {
		if s.block == blkExplicit {
			return nil, notSupported("DROP INDEX inside a transaction block is not supported")
		}
		for _, name := range names {
			t := s.findIndex(name)
			if t == nil {
				if st.MissingOk {
					s.notice("NOTICE", "00000", "index \""+name+"\" does not exist, skipping")
					continue
				}
				return nil, errorf(CodeUndefinedObject, "index %q does not exist", name)
			}
			var keep []IndexDef
			for _, d := range t.Indexes {
				if d.Name != name {
					keep = append(keep, d)
				}
			}
			if err := s.eng.db.DropIndex(ctx, engIndex(t, name), true); err != nil {
				return nil, engineError(err, t)
			}
			tx, err := s.ensureTx(ctx)
			if err != nil {
				return nil, err
			}
			if err := s.saveIndexes(ctx, tx, t, keep); err != nil {
				return nil, err
			}
		}
		return &Result{Tag: "DROP INDEX"}, nil
	}
	return &plan{usesT: true, run: run}, nil
}

// indexViolation is the 23505 of a unique index of t named in err, or
// nil when err names none (the primary key's).
func indexViolation(err error, t *Table) *Error {
	for _, d := range t.Indexes {
		if strings.Contains(err.Error(), `"`+engIndex(t, d.Name)+`"`) {
			return errorf(CodeUniqueViolation, "duplicate key value violates unique constraint %q", d.Name)
		}
	}
	return nil
}

// uniqueByName is t's unique index called name.
func uniqueByName(t *Table, name string) (IndexDef, bool) {
	for _, d := range t.Indexes {
		if d.Unique && d.Name == name {
			return d, true
		}
	}
	return IndexDef{}, false
}

// uniqueByCols is the unique index of t on exactly the columns of an ON
// CONFLICT inference specification (in any order), as PostgreSQL's
// infer_arbiter_indexes matches them.
func uniqueByCols(t *Table, elems []*pg.Node) (IndexDef, bool) {
	want := map[int]bool{}
	for _, n := range elems {
		e := n.GetIndexElem()
		if e == nil || e.Name == "" {
			return IndexDef{}, false
		}
		c := t.col(e.Name)
		if c < 0 {
			return IndexDef{}, false
		}
		want[c] = true
	}
	for _, d := range t.Indexes {
		if !d.Unique || len(d.Cols) != len(want) {
			continue
		}
		match := true
		for _, c := range d.Cols {
			match = match && want[c]
		}
		if match {
			return d, true
		}
	}
	return IndexDef{}, false
}
