package catalog

import (
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/keys"
	"github.com/tupled/tupled/sql/types"
)

// IndexDef is one index of a table in the catalog.
type IndexDef struct {
	Name   string `json:"name"`
	Cols   []int  `json:"cols"` // -1: the element is Exprs[i]
	Unique bool   `json:"unique,omitempty"`
	// Exprs are the SQL text ("SELECT expr") of expression elements, by
	// element (nil: every element is a column).
	Exprs []string `json:"exprs,omitempty"`
	// Typed: its keys are in KeyFormatTyped (indexes made since it
	// exists), where numeric, float and interval values that are equal
	// (1.5 and 1.50) are one key and dates and timestamps sort by value;
	// else in KeyFormatTuple, where those types are their text.
	Typed bool `json:"typed,omitempty"`
	// Where is a partial index's predicate, as SQL text ("SELECT pred"):
	// only the rows it is true for are in the index ("": every row).
	Where string `json:"where,omitempty"`
	// IndexOnly: a unique index CREATE UNIQUE INDEX made, which is not a
	// constraint (pg_constraint has no row for it, ON CONFLICT ON
	// CONSTRAINT does not name it), unlike a UNIQUE constraint's index.
	// (Unique indexes from before the field existed count as
	// constraints.)
	IndexOnly bool `json:"index_only,omitempty"`
	// Comment is COMMENT ON INDEX's text ("": none).
	Comment string `json:"comment,omitempty"`
}

var (
	tupleFormat = &Table{KeyFormat: KeyFormatTuple}
	typedFormat = &Table{KeyFormat: KeyFormatTyped}
)

// KeyFormat is the format of d's keys, as a Table to hand AppendKey.
func (d IndexDef) KeyFormat() *Table {
	if d.Typed {
		return typedFormat
	}
	return tupleFormat
}

// DecodeIndexKey decodes the key of index d of t (AppendKey of the values
// of d's columns, in d's format) into those values; d's elements are all
// columns.
func DecodeIndexKey(t *Table, d IndexDef, b []byte) ([]types.Value, error) {
	r := keys.NewReader(b)
	out := make([]types.Value, 0, len(d.Cols))
	for _, c := range d.Cols {
		if c < 0 || c >= len(t.Cols) {
			return nil, ErrCorrupt
		}
		v, err := readKeyElem(r, t.Cols[c], d.Typed)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if !r.Done() {
		return nil, ErrCorrupt
	}
	return out, nil
}

// EngIndex is the engine index name of t's index name.
func EngIndex(t *Table, name string) string { return t.Engine + "/" + name }

// FKDef is one foreign key of a table in the catalog.
type FKDef struct {
	Name     string `json:"name"`
	Cols     []int  `json:"cols"`      // the referencing columns, as declared
	RefTable string `json:"ref_table"` // the referenced table's SQL name
	RefCols  []int  `json:"ref_cols"`  // the referenced columns, as declared
	// RefIndex is the referenced table's unique index the foreign key
	// refers through ("": its primary key).
	RefIndex string          `json:"ref_index,omitempty"`
	OnDelete tupled.FKAction `json:"on_delete,omitempty"`
	OnUpdate tupled.FKAction `json:"on_update,omitempty"`
}

// EngFK is the engine name of t's foreign key name.
func EngFK(t *Table, name string) string { return t.Engine + "/" + name }

// CheckDef is a CHECK constraint of a table.
type CheckDef struct {
	Name string `json:"name"`
	// Expr is the expression as "SELECT expr" (deparseExpr).
	Expr     string `json:"expr"`
	NotValid bool   `json:"not_valid,omitempty"`
}
