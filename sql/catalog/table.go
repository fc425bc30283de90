package catalog

import "github.com/tupled/tupled/sql/types"

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
	// Comment is COMMENT ON COLUMN's text ("": none; sqlfe's comment.go).
	Comment string `json:"comment,omitempty"`
	// Enum is the OID of the column's enum type (0: not an enum): Type's
	// number is the process's own (types.FirstEnum up), so Load maps the
	// column back to its type by this OID (enum.go).
	Enum uint32 `json:"enum,omitempty"`
	// EnumArray: the column is of the array type of enum Enum
	EnumArray bool `json:"enum_array,omitempty"`
}

// Mod is the column's type modifier as sql/types applies it on assignment
// (smallint, varchar(n), character(n), numeric(p,s), an interval's
// typmod in Prec).
func (c Column) Mod() types.Mod {
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
	if c.Type == types.TInterval && c.Prec > 0 {
		return int32(c.Prec) // INTERVAL_TYPMOD
	}
	return -1
}

// OID is the column's type OID as a client sees it: smallint (21) and
// character varying (1043) are their own types on the wire, though
// integer and text here.
func (c Column) OID() uint32 {
	switch m := c.Mod(); {
	case c.Type == types.TInt4 && m.Int2:
		return types.OIDInt2
	case c.Type == types.TText && m.Varchar:
		return types.OIDVarchar
	case c.Type == types.TTextArray && m.Varchar:
		return types.OIDVarcharArray
	}
	return c.Type.OID()
}

// Size is the column's fixed width on the wire, -1 if variable, as
// RowDescription reports it: pg_type.typlen, which is 4 for an enum
// (an OID inside PostgreSQL) though its binary value is its label.
func (c Column) Size() int16 {
	switch {
	case c.Type == types.TInt4 && c.Int2:
		return 2
	case types.IsEnum(c.Type):
		return 4
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
// other columns, see EncodeRow).
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
	// KeyFormatTyped for tables created since it exists, KeyFormatTuple
	// (package keys) and KeyFormatRaw for older ones, which keep theirs.
	KeyFormat KeyFormat `json:"key_format,omitempty"`
	// Indexes are its secondary indexes and UNIQUE constraints (index.go).
	Indexes []IndexDef `json:"indexes,omitempty"`
	// FKeys are its foreign keys (fk.go).
	FKeys []FKDef `json:"fkeys,omitempty"`
	// Checks are its CHECK constraints (check.go).
	Checks []CheckDef `json:"checks,omitempty"`
	// View, when not empty, makes the entry a view: its query as SQL
	// text, planned where the view is named (sqlfe's views.go). A view
	// has no engine table (Engine ""), no key (Key -1) and no
	// constraints; Cols are its result columns. ViewDeps are the tables
	// and views its query reads, which cannot be dropped while it exists.
	View     string   `json:"view,omitempty"`
	ViewDeps []string `json:"view_deps,omitempty"`
	// Comment is COMMENT ON TABLE's (or VIEW's) text, PKeyComment COMMENT
	// ON INDEX's of the primary key's index ("": none; sqlfe's
	// comment.go). They go with the table, as a column's with the column.
	Comment     string `json:"comment,omitempty"`
	PKeyComment string `json:"pkey_comment,omitempty"`
	// ConComments are COMMENT ON CONSTRAINT's texts, by constraint name
	// (the primary key, a unique index's, a foreign key, a CHECK). An
	// entry whose constraint is gone is dropped when the table is saved.
	ConComments []NamedComment `json:"con_comments,omitempty"`
	// Temp marks a session's temporary table (sqlfe's temp.go), which is
	// never written to CatalogTable.
	Temp bool `json:"-"`
}

// IsView reports whether t is a view.
func (t *Table) IsView() bool { return t != nil && t.View != "" }

// KeyFormat names a primary-key encoding (see AppendKey).
type KeyFormat uint8

const (
	// KeyFormatRaw: integers big-endian with the sign bit flipped, text
	// its bytes, bool one byte (tables created before package keys).
	KeyFormatRaw KeyFormat = iota
	// KeyFormatTuple: the key as a one-element tuple of package keys, the
	// encoding programs use for their own keys (and the one that makes
	// composite keys possible).
	KeyFormatTuple
	// KeyFormatTyped: KeyFormatTuple, and date, timestamp, timestamptz,
	// real, double precision, numeric and interval keys as their ordered
	// forms (types.KeyInt, KeyFloat, NumericKey, IntervalKey), which the
	// text of those types is not: tables created since it exists, the only ones those types
	// can be primary keys of (KeyTypeOK).
	KeyFormatTyped
)

// tupleKeys reports whether t's keys are package keys tuples.
func (t *Table) tupleKeys() bool { return t.KeyFormat >= KeyFormatTuple }

// TypedKeyType reports whether ty, held as text that does not sort as its
// values, has an ordered key form in KeyFormatTyped (date, timestamp,
// timestamptz, real, double precision, numeric, interval, the enums).
func TypedKeyType(ty types.Type) bool { return typedKey(ty) }

func typedKey(ty types.Type) bool {
	return types.IsDateTime(ty) || types.IsFloat(ty) || ty == types.TNumeric || ty == types.TInterval || types.IsEnum(ty)
}

// KeyTypeOK reports whether a column of type ty can be in t's primary key:
// any type but those held as text that does not sort as their values
// (types.NoKeyType), and of those the typed ones in a KeyFormatTyped table.
func KeyTypeOK(t *Table, ty types.Type) bool {
	return !types.NoKeyType(ty) || (t.KeyFormat == KeyFormatTyped && typedKey(ty))
}

// Col is the index of t's visible column name, -1 if none (the hidden
// rowid has no name a query reaches).
func (t *Table) Col(name string) int {
	for i, c := range t.Cols {
		if c.Name == name && !c.Hidden {
			return i
		}
	}
	return -1
}

// HasSerial reports whether one of t's columns is serial or an identity
// column, whose sequence state lives in the sequences table.
func (t *Table) HasSerial() bool {
	for _, c := range t.Cols {
		if c.Serial || c.Identity != "" {
			return true
		}
	}
	return false
}

// HiddenKey reports whether t's key is the hidden rowid column.
func (t *Table) HiddenKey() bool { return t.Key >= 0 && t.Cols[t.Key].Hidden }

// AddHiddenKey gives t (which has no PRIMARY KEY) its rowid column.
func (t *Table) AddHiddenKey() {
	t.Cols = append(t.Cols, Column{Name: "", Type: types.TInt8, NotNull: true, Hidden: true})
	t.Key = len(t.Cols) - 1
}

// KeyColumns returns the columns of t's primary key in key order (nil for a
// table without columns).
func (t *Table) KeyColumns() []int {
	if len(t.KeyCols) > 0 {
		return t.KeyCols
	}
	if t.Key < 0 {
		return nil
	}
	return []int{t.Key}
}

// IsKeyCol reports whether column i is one of t's primary-key columns.
func (t *Table) IsKeyCol(i int) bool {
	if len(t.KeyCols) == 0 {
		return i == t.Key
	}
	for _, k := range t.KeyCols {
		if k == i {
			return true
		}
	}
	return false
}

// NKeyCols is the number of t's primary-key columns.
func (t *Table) NKeyCols() int {
	if len(t.KeyCols) > 0 {
		return len(t.KeyCols)
	}
	if t.Key < 0 {
		return 0
	}
	return 1
}

// Composite reports whether t's primary key has more than one column.
func (t *Table) Composite() bool { return len(t.KeyCols) > 1 }

// PrimaryKeyName is the name of t's primary-key constraint: the one given by
// CONSTRAINT name PRIMARY KEY, else PostgreSQL's default, t_pkey.
func (t *Table) PrimaryKeyName() string {
	if t.PKeyName != "" {
		return t.PKeyName
	}
	return t.Name + "_pkey"
}

// HasPKey reports whether t has a declared primary key (not the hidden
// rowid), whose constraint name is a relation name in PostgreSQL.
func (t *Table) HasPKey() bool { return t != nil && t.Key >= 0 && !t.HiddenKey() }

// NamedComment is a comment on a constraint of a table (Table.ConComments).
type NamedComment struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// ConComment is the comment on t's constraint name, "" if none.
func (t *Table) ConComment(name string) string {
	for _, c := range t.ConComments {
		if c.Name == name {
			return c.Text
		}
	}
	return ""
}
