package catalog

import "github.com/tupled/tupled"

// IndexDef is one index of a table in the catalog.
type IndexDef struct {
	Name   string `json:"name"`
	Cols   []int  `json:"cols"` // -1: the element is Exprs[i]
	Unique bool   `json:"unique,omitempty"`
	// Exprs are the SQL text ("SELECT expr") of expression elements, by
	// element (nil: every element is a column).
	Exprs []string `json:"exprs,omitempty"`
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
