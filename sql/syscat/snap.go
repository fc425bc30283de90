package syscat

// The catalog as one scan sees it (Snap): its relations and constraints
// with their OIDs, and the fixed OIDs of PostgreSQL's own objects.

import (
	"hash/fnv"
	"sort"
	"strconv"
	"strings"

	"github.com/tupled/tupled/sql/catalog"
)

// Fixed OIDs, as PostgreSQL numbers them.

// Rel is an object with a row in pg_class.
type Rel struct {
	OID   int64
	Name  string
	Kind  string         // "r" table, "i" index, "S" sequence
	Table *catalog.Table // the table, or the index's or sequence's table
	// an index: its definition (for the primary key, the key's columns)
	Index  catalog.IndexDef
	PKey   bool
	SeqCol int               // a column's sequence: its column's index in t.Cols
	Seq    *catalog.Sequence // a sequence: its definition (t nil for one owned by no column)
}

// Con is a constraint (pg_constraint): a primary key, a unique
// constraint or a foreign key.
type Con struct {
	OID   int64
	Name  string
	Kind  string // "p", "u", "f"
	Table *catalog.Table
	Cols  []int // column indexes in t.Cols
	Index *Rel
	FK    *catalog.FKDef
	Check *catalog.CheckDef // a CHECK constraint's definition
	Ref   *catalog.Table    // a foreign key's referenced table
}

// IsUniqueConstraint reports whether index ix is a UNIQUE constraint (a
// row of pg_constraint), not only an index.
func IsUniqueConstraint(ix catalog.IndexDef) bool {
	return ix.Unique && len(ix.Exprs) == 0 && !ix.IndexOnly
}

// ConstraintNames are the names of t's constraints, as pg_constraint
// lists them.
func ConstraintNames(t *catalog.Table) []string {
	var names []string
	if t.HasPKey() {
		names = append(names, t.PrimaryKeyName())
	}
	for _, ix := range t.Indexes {
		if IsUniqueConstraint(ix) {
			names = append(names, ix.Name)
		}
	}
	for _, fk := range t.FKeys {
		names = append(names, fk.Name)
	}
	for _, d := range t.Checks {
		names = append(names, d.Name)
	}
	return names
}

// Snap is the SQL catalog as one scan sees it, with its OIDs. It is
// read-only once Build returns: a Snap is shared by the scans of every
// session while the catalog's generation is unchanged.
type Snap struct {
	Tables   []*catalog.Table // by name
	Views    []*catalog.Table // by name (sqlfe's views.go)
	Rels     []*Rel           // pg_class's objects: views, then each table with its indexes and sequences, then the standalone sequences
	Cons     []*Con           // pg_constraint's, by table
	ByOID    map[int64]*Rel   // Rels by OID
	ByName   map[string]*Rel  // Rels by name
	ConByOID map[int64]*Con   // Cons by OID
	TableOID map[string]int64 // the tables' OIDs by name
	dp       Deparser
}

// AttNum is the attribute number of t's column index i (hidden columns
// have none).
func AttNum(t *catalog.Table, i int) int {
	n := 0
	for j := 0; j <= i && j < len(t.Cols); j++ {
		if !t.Cols[j].Hidden {
			n++
		}
	}
	return n
}

func attnums(t *catalog.Table, cols []int) []int64 {
	out := make([]int64, len(cols))
	for i, c := range cols {
		if c >= 0 {
			out[i] = int64(AttNum(t, c))
		}
	}
	return out
}

// Build is the snapshot of tables m and standalone sequences seqs (by
// name), their expressions printed by dp.
func Build(m map[string]*catalog.Table, seqs map[string]*catalog.Sequence, dp Deparser) *Snap {
	sn := &Snap{dp: dp, ByOID: map[int64]*Rel{}, ByName: map[string]*Rel{}, ConByOID: map[int64]*Con{}, TableOID: map[string]int64{}}
	for _, t := range m {
		if t.IsView() {
			sn.Views = append(sn.Views, t)
		} else {
			sn.Tables = append(sn.Tables, t)
		}
	}
	sort.Slice(sn.Tables, func(i, j int) bool { return sn.Tables[i].Name < sn.Tables[j].Name })
	sort.Slice(sn.Views, func(i, j int) bool { return sn.Views[i].Name < sn.Views[j].Name })
	for _, v := range sn.Views {
		sn.Rels = append(sn.Rels, &Rel{Name: v.Name, Kind: "v", Table: v})
	}
	for _, t := range sn.Tables {
		sn.Rels = append(sn.Rels, &Rel{Name: t.Name, Kind: "r", Table: t})
		if t.HasPKey() {
			ix := catalog.IndexDef{Name: t.PrimaryKeyName(), Cols: t.KeyColumns(), Unique: true, Comment: t.PKeyComment}
			r := &Rel{Name: ix.Name, Kind: "i", Table: t, Index: ix, PKey: true}
			sn.Rels = append(sn.Rels, r)
			sn.Cons = append(sn.Cons, &Con{Name: ix.Name, Kind: "p", Table: t, Cols: ix.Cols, Index: r})
		}
		for _, ix := range t.Indexes {
			r := &Rel{Name: ix.Name, Kind: "i", Table: t, Index: ix}
			sn.Rels = append(sn.Rels, r)
			if IsUniqueConstraint(ix) {
				sn.Cons = append(sn.Cons, &Con{Name: ix.Name, Kind: "u", Table: t, Cols: ix.Cols, Index: r})
			}
		}
		for i, c := range t.Cols {
			if sq := catalog.ColSequence(t, c); sq != nil {
				sn.Rels = append(sn.Rels, &Rel{Name: sq.Name, Kind: "S", Table: t, SeqCol: i, Seq: sq})
			}
		}
		for i := range t.FKeys {
			fk := &t.FKeys[i]
			sn.Cons = append(sn.Cons, &Con{Name: fk.Name, Kind: "f", Table: t, Cols: fk.Cols, FK: fk, Ref: m[fk.RefTable]})
		}
		for i := range t.Checks { // check.go
			d := &t.Checks[i]
			cols := dp.CheckColumns(t, *d)
			sn.Cons = append(sn.Cons, &Con{Name: d.Name, Kind: "c", Table: t, Cols: cols, Check: d})
		}
	}
	var seqNames []string
	for n := range seqs {
		seqNames = append(seqNames, n)
	}
	sort.Strings(seqNames)
	for _, n := range seqNames {
		r := &Rel{Name: n, Kind: "S", Seq: seqs[n], SeqCol: -1}
		if t := m[r.Seq.OwnedTable]; t != nil && t.Col(r.Seq.OwnedCol) >= 0 {
			r.Table, r.SeqCol = t, t.Col(r.Seq.OwnedCol)
		}
		sn.Rels = append(sn.Rels, r)
	}
	// OIDs: by key order, so that probing past a collision is deterministic
	type keyed struct {
		key string
		set func(int64)
	}
	var ks []keyed
	for _, r := range sn.Rels {
		r := r
		ks = append(ks, keyed{"rel " + r.Name, func(o int64) { r.OID = o }})
	}
	for _, c := range sn.Cons {
		c := c
		ks = append(ks, keyed{"con " + c.Table.Name + "." + c.Name, func(o int64) { c.OID = o }})
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].key < ks[j].key })
	used := map[int64]bool{}
	for _, k := range ks {
		h := fnv.New32a()
		h.Write([]byte(k.key))
		o := int64(h.Sum32()%(1<<30)) + FirstUserOID
		for used[o] || o == OIDDatabase {
			o++
		}
		used[o] = true
		k.set(o)
	}
	for _, r := range sn.Rels {
		sn.ByOID[r.OID] = r
		sn.ByName[r.Name] = r
		if r.Kind == "r" {
			sn.TableOID[r.Name] = r.OID
		}
	}
	for _, c := range sn.Cons {
		sn.ConByOID[c.OID] = c
		if c.Kind == "f" && c.Ref != nil {
			// the referenced table's key the foreign key refers through
			name := c.Ref.PrimaryKeyName()
			if c.FK.RefIndex != "" {
				name = c.FK.RefIndex
			}
			c.Index = sn.ByName[name]
		}
	}
	return sn
}

// RelOID resolves a relation name as regclass input does: an OID, or a
// name, optionally schema-qualified and double-quoted; 0 if there is none.
func (sn *Snap) RelOID(name string) (int64, bool) {
	name = strings.TrimSpace(name)
	if n, err := strconv.ParseInt(name, 10, 64); err == nil {
		return n, true
	}
	parts := SplitQualified(name)
	if len(parts) == 2 {
		if parts[0] != "public" {
			if o, ok := SystemRelOID(parts[0], parts[1]); ok {
				return o, true
			}
			return 0, false
		}
		name = parts[1]
	} else if len(parts) == 1 {
		name = parts[0]
	} else {
		return 0, false
	}
	if r := sn.ByName[name]; r != nil {
		return r.OID, true
	}
	if o, ok := SystemRelOID("pg_catalog", name); ok {
		return o, true
	}
	return 0, false
}

// SplitQualified splits a.b / "A"."b" into its identifiers, down-casing
// the unquoted ones.
func SplitQualified(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, inq := false, false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case inq && ch == '"' && i+1 < len(s) && s[i+1] == '"':
			cur.WriteByte('"')
			i++
		case ch == '"':
			inq, quoted = !inq, true
		case ch == '.' && !inq:
			out = append(out, cur.String())
			cur.Reset()
			quoted = false
		case inq:
			cur.WriteByte(ch)
		default:
			cur.WriteString(strings.ToLower(string(ch)))
		}
	}
	_ = quoted
	return append(out, cur.String())
}

// SystemRelOID gives catalog relations an OID so that 'pg_class'::regclass
// works (pg_class, pg_type and pg_constraint keep PostgreSQL's 1259, 1247
// and 2606; the others
// get one derived from their name below firstUserOID).
func SystemRelOID(schema, name string) (int64, bool) {
	if _, ok := Relations[schema+"."+name]; !ok {
		return 0, false
	}
	if schema == "pg_catalog" && name == "pg_class" {
		return OIDClassPgClass, true
	}
	if schema == "pg_catalog" && name == "pg_type" { // pg_description's classoid of a type's comment
		return OIDClassPgType, true
	}
	if schema == "pg_catalog" && name == "pg_constraint" { // and of a constraint's
		return OIDClassPgConstraint, true
	}
	h := fnv.New32a()
	h.Write([]byte(schema + "." + name))
	return int64(h.Sum32()%8000) + 4000, true
}

const (
	OIDNspCatalog        = 11
	OIDNspPublic         = 2200
	OIDNspInfo           = 13000
	OIDNspToast          = 99
	OIDSuperuser         = 10
	OIDDBOwnerRole       = 6171 // pg_database_owner, public's owner in PostgreSQL 15
	OIDAmHeap            = 2
	OIDAmBtree           = 403
	OIDCollDefault       = 100
	OIDTablespace        = 1663
	OIDDatabase          = 16384 // the one database (PostgreSQL's first user database gets such an OID)
	OIDClassPgClass      = 1259
	OIDClassPgType       = 1247
	OIDClassPgConstraint = 2606
	FirstUserOID         = 16384
)
