package sqlfe

// The system catalogs: pg_catalog's relations (this file) and
// information_schema's (infoschema.go), with the functions clients call on
// them (catfuncs.go), enough for psql's \d family, ORMs' schema
// introspection and JDBC's metadata.
//
// Nothing is stored: every scan of a catalog relation generates its rows
// from the SQL catalog as the session sees it — the committed tables of the
// Executor (catalog.go: Table, Column, IndexDef, FKDef; serial columns'
// sequences, defaults.go) overlaid with the session's own uncommitted DDL —
// so a catalog relation is never stale and needs no maintenance by DDL.
// They are rowsScan nodes of the general query path (query.go's
// needsQueryPath sends every query naming one there).
//
// OIDs. PostgreSQL's fixed objects keep PostgreSQL's OIDs (namespaces
// pg_catalog 11, public 2200, information_schema 13000 (PostgreSQL's is
// assigned at initdb; tupled fixes one); types by pg_type's OIDs; the
// bootstrap superuser 10, which owns everything and is reported under the
// connected user's name; access methods heap 2 and btree 403; collation
// default 100). Each table, index, sequence and constraint gets an OID
// derived from its name — FNV-1a of its kind and name, folded into
// [16384, 2^30+16384) — so an OID is the same in every session, across
// restarts and across unrelated DDL, without storing a counter in the
// catalog. Collisions are resolved by probing upwards in the order of the
// objects' keys, which is deterministic; they are improbable at any
// realistic catalog size. A table dropped and created again under the same
// name gets the same OID again (PostgreSQL would hand out a new one).
//
// Types. Columns PostgreSQL declares oid or regclass are bigint here
// (an oid is an unsigned 32-bit number), name and "char" are text,
// int2vector, oidvector and int2[] are integer[], aclitem[], pg_node_tree
// and the other arrays text (NULL, or an array literal).

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// Fixed OIDs, as PostgreSQL numbers them.
const (
	oidNspCatalog        = 11
	oidNspPublic         = 2200
	oidNspInfo           = 13000
	oidNspToast          = 99
	oidSuperuser         = 10
	oidDBOwnerRole       = 6171 // pg_database_owner, public's owner in PostgreSQL 15
	oidAmHeap            = 2
	oidAmBtree           = 403
	oidCollDefault       = 100
	oidTablespace        = 1663
	oidDatabase          = 16384 // the one database (PostgreSQL's first user database gets such an OID)
	oidClassPgClass      = 1259
	oidClassPgType       = 1247
	oidClassPgConstraint = 2606
	firstUserOID         = 16384
)

// catRel is an object with a row in pg_class.
type catRel struct {
	oid  int64
	name string
	kind string         // "r" table, "i" index, "S" sequence
	t    *catalog.Table // the table, or the index's or sequence's table
	// an index: its definition (for the primary key, the key's columns)
	ix     catalog.IndexDef
	pkey   bool
	seqCol int               // a column's sequence: its column's index in t.Cols
	seq    *catalog.Sequence // a sequence: its definition (t nil for one owned by no column)
}

// catCon is a constraint (pg_constraint): a primary key, a unique
// constraint or a foreign key.
type catCon struct {
	oid   int64
	name  string
	kind  string // "p", "u", "f"
	t     *catalog.Table
	cols  []int // column indexes in t.Cols
	index *catRel
	fk    *catalog.FKDef
	check *catalog.CheckDef // a CHECK constraint's definition
	ref   *catalog.Table    // a foreign key's referenced table
}

// isUniqueConstraint reports whether index ix is a UNIQUE constraint (a
// row of pg_constraint), not only an index.
func isUniqueConstraint(ix catalog.IndexDef) bool {
	return ix.Unique && len(ix.Exprs) == 0 && !ix.IndexOnly
}

// constraintNames are the names of t's constraints, as pg_constraint
// lists them.
func constraintNames(t *catalog.Table) []string {
	var names []string
	if t.HasPKey() {
		names = append(names, t.PrimaryKeyName())
	}
	for _, ix := range t.Indexes {
		if isUniqueConstraint(ix) {
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

// catSnap is the SQL catalog as one scan sees it, with its OIDs.
type catSnap struct {
	tables []*catalog.Table // by name
	views  []*catalog.Table // by name (views.go)
	rels   []*catRel
	cons   []*catCon
	byOID  map[int64]*catRel
	byName map[string]*catRel
	conOID map[int64]*catCon
	tabOID map[string]int64
}

// RelationOID is table's OID as pg_class shows it (0 if there is none).
func (s *Session) RelationOID(table string) uint32 {
	return uint32(s.catalogSnap().tabOID[table])
}

// attnum is the attribute number of t's column index i (hidden columns
// have none).
func attnum(t *catalog.Table, i int) int {
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
			out[i] = int64(attnum(t, c))
		}
	}
	return out
}

var snapCache struct {
	sync.Mutex
	cat  *catalog.Catalog
	gen  uint64
	snap *catSnap
}

// catalogSnap returns the catalog s sees: the committed tables with the
// session's uncommitted DDL over them.
func (s *Session) catalogSnap() *catSnap {
	cat := &s.eng.cat
	if len(s.pending) == 0 && len(s.pendingSeqs) == 0 {
		gen := cat.Generation()
		snapCache.Lock()
		if snapCache.cat == cat && snapCache.gen == gen && snapCache.snap != nil {
			sn := snapCache.snap
			snapCache.Unlock()
			return sn
		}
		snapCache.Unlock()
	}
	m, seqs, gen := cat.Snapshot()
	for n, t := range s.pending {
		if t == nil {
			delete(m, n)
		} else {
			m[n] = t
		}
	}
	for n, sq := range s.pendingSeqs {
		if sq == nil {
			delete(seqs, n)
		} else {
			seqs[n] = sq
		}
	}
	sn := buildSnap(m, seqs)
	if len(s.pending) == 0 && len(s.pendingSeqs) == 0 {
		snapCache.Lock()
		snapCache.cat, snapCache.gen, snapCache.snap = cat, gen, sn
		snapCache.Unlock()
	}
	return sn
}

func buildSnap(m map[string]*catalog.Table, seqs map[string]*catalog.Sequence) *catSnap {
	sn := &catSnap{byOID: map[int64]*catRel{}, byName: map[string]*catRel{}, conOID: map[int64]*catCon{}, tabOID: map[string]int64{}}
	for _, t := range m {
		if t.IsView() {
			sn.views = append(sn.views, t)
		} else {
			sn.tables = append(sn.tables, t)
		}
	}
	sort.Slice(sn.tables, func(i, j int) bool { return sn.tables[i].Name < sn.tables[j].Name })
	sort.Slice(sn.views, func(i, j int) bool { return sn.views[i].Name < sn.views[j].Name })
	for _, v := range sn.views {
		sn.rels = append(sn.rels, &catRel{name: v.Name, kind: "v", t: v})
	}
	for _, t := range sn.tables {
		sn.rels = append(sn.rels, &catRel{name: t.Name, kind: "r", t: t})
		if t.HasPKey() {
			ix := catalog.IndexDef{Name: t.PrimaryKeyName(), Cols: t.KeyColumns(), Unique: true, Comment: t.PKeyComment}
			r := &catRel{name: ix.Name, kind: "i", t: t, ix: ix, pkey: true}
			sn.rels = append(sn.rels, r)
			sn.cons = append(sn.cons, &catCon{name: ix.Name, kind: "p", t: t, cols: ix.Cols, index: r})
		}
		for _, ix := range t.Indexes {
			r := &catRel{name: ix.Name, kind: "i", t: t, ix: ix}
			sn.rels = append(sn.rels, r)
			if isUniqueConstraint(ix) {
				sn.cons = append(sn.cons, &catCon{name: ix.Name, kind: "u", t: t, cols: ix.Cols, index: r})
			}
		}
		for i, c := range t.Cols {
			if sq := catalog.ColSequence(t, c); sq != nil {
				sn.rels = append(sn.rels, &catRel{name: sq.Name, kind: "S", t: t, seqCol: i, seq: sq})
			}
		}
		for i := range t.FKeys {
			fk := &t.FKeys[i]
			sn.cons = append(sn.cons, &catCon{name: fk.Name, kind: "f", t: t, cols: fk.Cols, fk: fk, ref: m[fk.RefTable]})
		}
		for i := range t.Checks { // check.go
			d := &t.Checks[i]
			var cols []int
			if n, err := checkNode(*d); err == nil {
				cols = checkColumns(t, n)
			}
			sn.cons = append(sn.cons, &catCon{name: d.Name, kind: "c", t: t, cols: cols, check: d})
		}
	}
	var seqNames []string
	for n := range seqs {
		seqNames = append(seqNames, n)
	}
	sort.Strings(seqNames)
	for _, n := range seqNames {
		r := &catRel{name: n, kind: "S", seq: seqs[n], seqCol: -1}
		if t := m[r.seq.OwnedTable]; t != nil && t.Col(r.seq.OwnedCol) >= 0 {
			r.t, r.seqCol = t, t.Col(r.seq.OwnedCol)
		}
		sn.rels = append(sn.rels, r)
	}
	// OIDs: by key order, so that probing past a collision is deterministic
	type keyed struct {
		key string
		set func(int64)
	}
	var ks []keyed
	for _, r := range sn.rels {
		r := r
		ks = append(ks, keyed{"rel " + r.name, func(o int64) { r.oid = o }})
	}
	for _, c := range sn.cons {
		c := c
		ks = append(ks, keyed{"con " + c.t.Name + "." + c.name, func(o int64) { c.oid = o }})
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].key < ks[j].key })
	used := map[int64]bool{}
	for _, k := range ks {
		h := fnv.New32a()
		h.Write([]byte(k.key))
		o := int64(h.Sum32()%(1<<30)) + firstUserOID
		for used[o] || o == oidDatabase {
			o++
		}
		used[o] = true
		k.set(o)
	}
	for _, r := range sn.rels {
		sn.byOID[r.oid] = r
		sn.byName[r.name] = r
		if r.kind == "r" {
			sn.tabOID[r.name] = r.oid
		}
	}
	for _, c := range sn.cons {
		sn.conOID[c.oid] = c
		if c.kind == "f" && c.ref != nil {
			// the referenced table's key the foreign key refers through
			name := c.ref.PrimaryKeyName()
			if c.fk.RefIndex != "" {
				name = c.fk.RefIndex
			}
			c.index = sn.byName[name]
		}
	}
	return sn
}

// relOID resolves a relation name as regclass input does: an OID, or a
// name, optionally schema-qualified and double-quoted; 0 if there is none.
func (sn *catSnap) relOID(name string) (int64, bool) {
	name = strings.TrimSpace(name)
	if n, err := strconv.ParseInt(name, 10, 64); err == nil {
		return n, true
	}
	parts := splitQualified(name)
	if len(parts) == 2 {
		if parts[0] != "public" {
			if o, ok := systemRelOID(parts[0], parts[1]); ok {
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
	if r := sn.byName[name]; r != nil {
		return r.oid, true
	}
	if o, ok := systemRelOID("pg_catalog", name); ok {
		return o, true
	}
	return 0, false
}

// splitQualified splits a.b / "A"."b" into its identifiers, down-casing
// the unquoted ones.
func splitQualified(s string) []string {
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

// systemRelOID gives catalog relations an OID so that 'pg_class'::regclass
// works (pg_class, pg_type and pg_constraint keep PostgreSQL's 1259, 1247
// and 2606; the others
// get one derived from their name below firstUserOID).
func systemRelOID(schema, name string) (int64, bool) {
	if _, ok := catalogRelations[schema+"."+name]; !ok {
		return 0, false
	}
	if schema == "pg_catalog" && name == "pg_class" {
		return oidClassPgClass, true
	}
	if schema == "pg_catalog" && name == "pg_type" { // pg_description's classoid of a type's comment
		return oidClassPgType, true
	}
	if schema == "pg_catalog" && name == "pg_constraint" { // and of a constraint's
		return oidClassPgConstraint, true
	}
	h := fnv.New32a()
	h.Write([]byte(schema + "." + name))
	return int64(h.Sum32()%8000) + 4000, true
}

// ---- relation lookup ----

// catalogRel is a generated relation: its columns and its rows.
type catalogRel struct {
	cols []catalog.Column
	rows func(s *Session, sn *catSnap) [][]types.Value
}

// catalogRelation finds the catalog relation rv names, if it names one:
// pg_catalog.x, information_schema.x, or an unqualified x of pg_catalog that
// no table of the user's shadows (pg_catalog is searched first in
// PostgreSQL, but a user table of a catalog's name was made in this
// catalog, which had no such relation then).
func (s *Session) catalogRelation(rv *pg.RangeVar) (string, *catalogRel, bool) {
	if rv.Catalogname != "" {
		return "", nil, false
	}
	switch rv.Schemaname {
	case "pg_catalog", "information_schema":
		r, ok := catalogRelations[rv.Schemaname+"."+rv.Relname]
		return rv.Schemaname + "." + rv.Relname, r, ok
	case "", "public":
		if r, ok := s.seqRelation(rv.Relname); ok { // SELECT * FROM a sequence (sequence.go)
			return "public." + rv.Relname, r, true
		}
		r, ok := catalogRelations["pg_catalog."+rv.Relname]
		if ok && s.lookupTable(rv.Relname) == nil && rv.Schemaname == "" {
			return "pg_catalog." + rv.Relname, r, true
		}
	}
	return "", nil, false
}

// isCatalogRelation reports whether rv names a catalog relation or a view
// (views.go): the general query path plans both (needsQueryPath).
func (s *Session) isCatalogRelation(rv *pg.RangeVar) bool {
	_, _, ok := s.catalogRelation(rv)
	return ok || s.viewOf(rv) != nil
}

// catalogFromItem is fromItem's RangeVar case for a catalog relation.
func (s *Session) catalogFromItem(rv *pg.RangeVar, name string, alias *pg.Alias) (relNode, *scope, bool, error) {
	full, r, ok := s.catalogRelation(rv)
	if !ok {
		return nil, nil, false, nil
	}
	if full == "pg_catalog.pg_locks" {
		return nil, nil, false, nil // virtual.go's
	}
	rs := &rowsScan{what: "Seq Scan on " + rv.Relname, rows: func(q *qctx) ([][]types.Value, error) {
		return r.rows(q.s, q.s.catalogSnap()), nil
	}}
	cols, err := aliasCols(r.cols, alias)
	if err != nil {
		return nil, nil, true, err
	}
	return rs, &scope{rels: []*scopeRel{{name: name, cols: cols, rows: rs}}, width: len(cols)}, true, nil
}

// anyCatalogRelation reports whether st's FROM names a catalog relation
// anywhere (joins included), so that the query takes the general path.
func (s *Session) anyCatalogRelation(st *pg.SelectStmt) bool {
	var walk func(n *pg.Node) bool
	walk = func(n *pg.Node) bool {
		switch {
		case n == nil:
			return false
		case n.GetRangeVar() != nil:
			return s.isCatalogRelation(n.GetRangeVar())
		case n.GetJoinExpr() != nil:
			return walk(n.GetJoinExpr().Larg) || walk(n.GetJoinExpr().Rarg)
		}
		return false
	}
	for _, f := range st.FromClause {
		if walk(f) {
			return true
		}
	}
	return false
}

// ---- column helpers ----

func cText(n string) catalog.Column { return catalog.Column{Name: n, Type: types.TText} }
func cOID(n string) catalog.Column  { return catalog.Column{Name: n, Type: types.TInt8} }
func cInt4(n string) catalog.Column { return catalog.Column{Name: n, Type: types.TInt4} }
func cInt2(n string) catalog.Column { return catalog.Column{Name: n, Type: types.TInt4, Int2: true} }
func cInt8(n string) catalog.Column { return catalog.Column{Name: n, Type: types.TInt8} }
func cBool(n string) catalog.Column { return catalog.Column{Name: n, Type: types.TBool} }
func cArr(n string) catalog.Column  { return catalog.Column{Name: n, Type: types.TInt4Array} }

func cols(spec string) []catalog.Column {
	var out []catalog.Column
	for _, f := range strings.Fields(spec) {
		name, t, _ := strings.Cut(f, ":")
		switch t {
		case "oid":
			out = append(out, cOID(name))
		case "i4":
			out = append(out, cInt4(name))
		case "i2":
			out = append(out, cInt2(name))
		case "i8":
			out = append(out, cInt8(name))
		case "b":
			out = append(out, cBool(name))
		case "a":
			out = append(out, cArr(name))
		case "ta":
			out = append(out, catalog.Column{Name: name, Type: types.TTextArray})
		case "f":
			out = append(out, catalog.Column{Name: name, Type: types.TNumeric})
		case "f4":
			out = append(out, catalog.Column{Name: name, Type: types.TFloat4})
		default:
			out = append(out, cText(name))
		}
	}
	return out
}

func arr(xs ...int64) types.Value {
	return types.Value{T: types.TInt4Array, A: append([]int64{}, xs...)}
}

var (
	nullText = types.Null(types.TText)
	nullOID  = types.Null(types.TInt8)
)

func oidv(o int64) types.Value { return types.Int8(o) }

// none is the rows of a catalog of objects tupled does not have.
func none(*Session, *catSnap) [][]types.Value { return nil }

// oidExtPlpgsql is plpgsql's pg_extension OID in PostgreSQL 15's initdb.
const oidExtPlpgsql = 13566

// pgExtensionRows: plpgsql, which every PostgreSQL database has installed
// (tupled runs no procedural language, but has the extension's row, so
// CREATE EXTENSION IF NOT EXISTS plpgsql skips as PostgreSQL's does).
func pgExtensionRows(*Session, *catSnap) [][]types.Value {
	return [][]types.Value{{oidv(oidExtPlpgsql), types.Text("plpgsql"), oidv(oidSuperuser), oidv(oidNspCatalog), types.Bool(false),
		types.Text("1.0"), nullText, nullText}}
}

// planCreateExtension is CREATE EXTENSION [IF NOT EXISTS]: plpgsql exists
// already (42710, or a NOTICE with IF NOT EXISTS); no other extension is
// available (0A000, where PostgreSQL without the extension's files says
// 58P01).
func (s *Session) planCreateExtension(st *pg.CreateExtensionStmt) (*plan, error) {
	if st.Extname != "plpgsql" {
		return nil, pgerror.NotSupported("extension %q is not available", st.Extname)
	}
	return &plan{run: func(context.Context, *Session, []types.Value) (*Result, error) {
		if !st.IfNotExists {
			return nil, pgerror.Errorf("42710", "extension %q already exists", st.Extname)
		}
		s.notice("NOTICE", "42710", fmt.Sprintf("extension %q already exists, skipping", st.Extname))
		return &Result{Tag: "CREATE EXTENSION"}, nil
	}}, nil
}

// ---- pg_catalog ----

// colType is PostgreSQL's type of a column: OID, typmod, length, and the
// names format_type and information_schema use.
type colTypeInfo struct {
	oid      int64
	typmod   int32
	len      int
	typname  string // pg_type.typname (udt_name)
	format   string // format_type(atttypid, atttypmod)
	dataType string // information_schema.columns.data_type
}

func colType(c catalog.Column) colTypeInfo {
	switch c.Type {
	case types.TBool:
		return colTypeInfo{16, -1, 1, "bool", "boolean", "boolean"}
	case types.TInt4:
		if c.Int2 {
			return colTypeInfo{21, -1, 2, "int2", "smallint", "smallint"}
		}
		return colTypeInfo{23, -1, 4, "int4", "integer", "integer"}
	case types.TInt8:
		return colTypeInfo{20, -1, 8, "int8", "bigint", "bigint"}
	case types.TText:
		if c.MaxLen > 0 {
			return colTypeInfo{1043, int32(c.MaxLen) + 4, -1, "varchar", "character varying(" + strconv.Itoa(c.MaxLen) + ")", "character varying"}
		}
		if c.Varchar {
			return colTypeInfo{1043, -1, -1, "varchar", "character varying", "character varying"}
		}
		return colTypeInfo{25, -1, -1, "text", "text", "text"}
	case types.TBpchar:
		if c.MaxLen > 0 {
			return colTypeInfo{1042, int32(c.MaxLen) + 4, -1, "bpchar", "character(" + strconv.Itoa(c.MaxLen) + ")", "character"}
		}
		return colTypeInfo{1042, -1, -1, "bpchar", "bpchar", "character"}
	case types.TNumeric:
		if c.Prec > 0 {
			return colTypeInfo{1700, c.TypeModifier(), -1, "numeric", fmt.Sprintf("numeric(%d,%d)", c.Prec, c.Scale), "numeric"}
		}
		return colTypeInfo{1700, -1, -1, "numeric", "numeric", "numeric"}
	case types.TTimestamp:
		return colTypeInfo{1114, -1, 8, "timestamp", "timestamp without time zone", "timestamp without time zone"}
	case types.TTimestamptz:
		return colTypeInfo{1184, -1, 8, "timestamptz", "timestamp with time zone", "timestamp with time zone"}
	case types.TDate:
		return colTypeInfo{1082, -1, 4, "date", "date", "date"}
	case types.TFloat8:
		return colTypeInfo{701, -1, 8, "float8", "double precision", "double precision"}
	case types.TFloat4:
		return colTypeInfo{700, -1, 4, "float4", "real", "real"}
	case types.TInt4Array:
		return colTypeInfo{1007, -1, -1, "_int4", "integer[]", "ARRAY"}
	case types.TInt8Array:
		return colTypeInfo{1016, -1, -1, "_int8", "bigint[]", "ARRAY"}
	case types.TInterval:
		if c.Prec > 0 {
			return colTypeInfo{1186, int32(c.Prec), 16, "interval", types.IntervalTypmodName(c.Prec), "interval"}
		}
	case types.TTextArray:
		if c.Varchar {
			return colTypeInfo{1015, -1, -1, "_varchar", "character varying[]", "ARRAY"}
		}
	}
	if types.IsArray(c.Type) {
		el := colType(catalog.Column{Type: types.ElemType(c.Type)})
		return colTypeInfo{int64(c.Type.OID()), -1, -1, "_" + el.typname, el.format + "[]", "ARRAY"}
	}
	if x := types.ExtTypes[c.Type]; x != nil {
		return colTypeInfo{int64(x.OID), -1, int(x.Size), x.Typname, x.Name, x.Name}
	}
	if e := types.EnumOf(c.Type); e != nil {
		return colTypeInfo{int64(e.OID), -1, 4, e.Name, eval.QuoteIdent(e.Name), "USER-DEFINED"} // enum.go
	}
	return colTypeInfo{25, -1, -1, "text", "text", "text"}
}

// pgTypeRow is one row of pg_type.
type pgTypeRow struct {
	oid      int64
	name     string
	len      int
	byval    bool
	typtype  string
	category string
	elem     int64
	array    int64
	coll     int64
}

var pgTypeRows = []pgTypeRow{
	{16, "bool", 1, true, "b", "B", 0, 1000, 0},
	{17, "bytea", -1, false, "b", "U", 0, 1001, 0},
	{18, "char", 1, true, "b", "Z", 0, 1002, 100},
	{19, "name", 64, false, "b", "S", 18, 1003, 950},
	{20, "int8", 8, true, "b", "N", 0, 1016, 0},
	{21, "int2", 2, true, "b", "N", 0, 1005, 0},
	{22, "int2vector", -1, false, "b", "A", 21, 1006, 0},
	{23, "int4", 4, true, "b", "N", 0, 1007, 0},
	{24, "regproc", 4, true, "b", "N", 0, 1008, 0},
	{25, "text", -1, false, "b", "S", 0, 1009, 100},
	{114, "json", -1, false, "b", "U", 0, 199, 0},
	{26, "oid", 4, true, "b", "N", 0, 1028, 0},
	{30, "oidvector", -1, false, "b", "A", 26, 1013, 0},
	{700, "float4", 4, true, "b", "N", 0, 1021, 0},
	{701, "float8", 8, true, "b", "N", 0, 1022, 0},
	{705, "unknown", -2, false, "p", "X", 0, 0, 0},
	{1000, "_bool", -1, false, "b", "A", 16, 0, 0},
	{1005, "_int2", -1, false, "b", "A", 21, 0, 0},
	{1007, "_int4", -1, false, "b", "A", 23, 0, 0},
	{1009, "_text", -1, false, "b", "A", 25, 0, 100},
	{1016, "_int8", -1, false, "b", "A", 20, 0, 0},
	{1015, "_varchar", -1, false, "b", "A", 1043, 0, 100},
	{1022, "_float8", -1, false, "b", "A", 701, 0, 0},
	{1182, "_date", -1, false, "b", "A", 1082, 0, 0},
	{1185, "_timestamptz", -1, false, "b", "A", 1184, 0, 0},
	{1231, "_numeric", -1, false, "b", "A", 1700, 0, 0},
	{2951, "_uuid", -1, false, "b", "A", 2950, 0, 0},
	{1042, "bpchar", -1, false, "b", "S", 0, 1014, 100},
	{1043, "varchar", -1, false, "b", "S", 0, 1015, 100},
	{1082, "date", 4, true, "b", "D", 0, 1182, 0},
	{1083, "time", 8, true, "b", "D", 0, 1183, 0},
	{1114, "timestamp", 8, true, "b", "D", 0, 1115, 0},
	{1184, "timestamptz", 8, true, "b", "D", 0, 1185, 0},
	{1186, "interval", 16, false, "b", "T", 0, 1187, 0},
	{1700, "numeric", -1, false, "b", "N", 0, 1231, 0},
	{2205, "regclass", 4, true, "b", "N", 0, 2210, 0},
	{2206, "regtype", 4, true, "b", "N", 0, 2211, 0},
	{2278, "void", 4, true, "p", "P", 0, 0, 0},
	{2950, "uuid", 16, false, "b", "U", 0, 2951, 0},
	{3802, "jsonb", -1, false, "b", "U", 0, 3807, 0},
	{4089, "regnamespace", 4, true, "b", "N", 0, 4090, 0},
}

// typeName is format_type's name of a type OID (with typmod, -1: none).
func typeName(oid int64, typmod int64) string {
	switch oid {
	case 16:
		return "boolean"
	case 20:
		return "bigint"
	case 21:
		return "smallint"
	case 23:
		return "integer"
	case 25:
		return "text"
	case 1043:
		if typmod >= 4 {
			return "character varying(" + strconv.FormatInt(typmod-4, 10) + ")"
		}
		return "character varying"
	case 1042:
		if typmod >= 4 {
			return "character(" + strconv.FormatInt(typmod-4, 10) + ")"
		}
		return "bpchar"
	case 1700:
		if typmod >= 4 {
			m := typmod - 4
			return fmt.Sprintf("numeric(%d,%d)", m>>16, int16(m&0xffff))
		}
		return "numeric"
	case 1186:
		if typmod > 0 {
			return types.IntervalTypmodName(int(typmod))
		}
		return "interval"
	case 1114:
		return "timestamp without time zone"
	case 1184:
		return "timestamp with time zone"
	case 1082:
		return "date"
	case 1083:
		return "time without time zone"
	case 700:
		return "real"
	case 701:
		return "double precision"
	case 1007:
		return "integer[]"
	case 1005:
		return "smallint[]"
	case 1016:
		return "bigint[]"
	case 1009:
		return "text[]"
	case 1000:
		return "boolean[]"
	case 18:
		return `"char"`
	}
	for _, r := range pgTypeRows {
		if r.oid == oid {
			if strings.HasPrefix(r.name, "_") && r.elem != 0 {
				return typeName(r.elem, typmod) + "[]"
			}
			return r.name
		}
	}
	if e := enumOfOID(oid); e != nil { // enum.go
		if uint32(oid) == e.ArrayOID {
			return eval.QuoteIdent(e.Name) + "[]"
		}
		return eval.QuoteIdent(e.Name)
	}
	return "???"
}

// typeOIDByName resolves regtype input.
func typeOIDByName(name string) (int64, bool) {
	name = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(name)), "pg_catalog.")
	alias := map[string]int64{"integer": 23, "int": 23, "smallint": 21, "bigint": 20, "boolean": 16,
		"character varying": 1043, "character": 1042, "char": 1042, "timestamp without time zone": 1114, "timestamp": 1114,
		"timestamp with time zone": 1184, "double precision": 701, "real": 700, "integer[]": 1007, "text[]": 1009, `"char"`: 18}
	if o, ok := alias[name]; ok {
		return o, true
	}
	for _, r := range pgTypeRows {
		if r.name == name {
			return r.oid, true
		}
	}
	if e := types.LookupEnum(strings.Trim(strings.TrimPrefix(name, "public."), `"`)); e != nil { // enum.go
		return int64(e.OID), true
	}
	if el, ok := strings.CutSuffix(name, "[]"); ok { // varchar[], double precision[]
		if eo, ok := typeOIDByName(el); ok {
			for _, r := range pgTypeRows {
				if r.elem == eo && strings.HasPrefix(r.name, "_") {
					return r.oid, true
				}
			}
		}
	}
	return 0, false
}

var pgClassCols = cols(`oid:oid relname relnamespace:oid reltype:oid reloftype:oid relowner:oid relam:oid
	relfilenode:oid reltablespace:oid relpages:i4 reltuples:f relallvisible:i4 reltoastrelid:oid
	relhasindex:b relisshared:b relpersistence relkind relnatts:i2 relchecks:i2 relhasrules:b
	relhastriggers:b relhassubclass:b relrowsecurity:b relforcerowsecurity:b relispopulated:b
	relreplident relispartition:b relrewrite:oid relfrozenxid relminmxid relacl reloptions:ta relpartbound`)

func pgClassRows(_ *Session, sn *catSnap) [][]types.Value {
	var rows [][]types.Value
	minus1, _ := types.ParseNumeric("-1")
	for _, r := range sn.rels {
		am, natts, hasIndex, persist, checks := int64(0), 0, false, "p", 0
		switch r.kind {
		case "r":
			am = oidAmHeap
			for _, c := range r.t.Cols {
				if !c.Hidden {
					natts++
				}
			}
			hasIndex = r.t.HasPKey() || len(r.t.Indexes) > 0
			checks = len(r.t.Checks)
		case "i":
			am, natts = oidAmBtree, len(r.ix.Cols)
		case "S":
			natts = 3
		case "v":
			natts = len(r.t.Cols)
		}
		rows = append(rows, []types.Value{oidv(r.oid), types.Text(r.name), oidv(oidNspPublic), oidv(0), oidv(0), oidv(oidSuperuser), oidv(am),
			oidv(r.oid), oidv(0), types.Int4(0), minus1.Value(), types.Int4(0), oidv(0),
			types.Bool(hasIndex), types.Bool(false), types.Text(persist), types.Text(r.kind), types.Int4(int32(natts)), types.Int4(int32(checks)), types.Bool(r.kind == "v"),
			types.Bool(r.kind == "r" && (len(r.t.FKeys) > 0 || referenced(sn, r.t))), types.Bool(false), types.Bool(false), types.Bool(false), types.Bool(true),
			types.Text(map[bool]string{true: "d", false: "n"}[r.kind == "r"]), types.Bool(false), oidv(0), types.Text("0"), types.Text("0"), nullText, types.Null(types.TTextArray), nullText})
	}
	return rows
}

// referenced reports whether a foreign key refers to t (PostgreSQL's
// relhastriggers is true for both ends of a foreign key).
func referenced(sn *catSnap, t *catalog.Table) bool {
	for _, c := range sn.cons {
		if c.kind == "f" && c.ref == t {
			return true
		}
	}
	return false
}

var pgNamespaceCols = cols(`oid:oid nspname nspowner:oid nspacl`)

func pgNamespaceRows(*Session, *catSnap) [][]types.Value {
	return [][]types.Value{
		{oidv(oidNspToast), types.Text("pg_toast"), oidv(oidSuperuser), nullText},
		{oidv(oidNspCatalog), types.Text("pg_catalog"), oidv(oidSuperuser), nullText},
		{oidv(oidNspPublic), types.Text("public"), oidv(oidDBOwnerRole), nullText},
		{oidv(oidNspInfo), types.Text("information_schema"), oidv(oidSuperuser), nullText},
	}
}

var pgAttributeCols = cols(`attrelid:oid attname atttypid:oid attstattarget:i4 attlen:i2 attnum:i2 attndims:i4
	attcacheoff:i4 atttypmod:i4 attbyval:b attalign attstorage attcompression attnotnull:b atthasdef:b
	atthasmissing:b attidentity attgenerated attisdropped:b attislocal:b attinhcount:i4 attcollation:oid
	attacl attoptions attfdwoptions attmissingval`)

func pgAttributeRows(_ *Session, sn *catSnap) [][]types.Value {
	var rows [][]types.Value
	for _, r := range sn.rels {
		if r.kind == "i" {
			rows = append(rows, indexAttributes(r)...)
		}
		if r.kind != "r" && r.kind != "v" {
			continue
		}
		for i, c := range r.t.Cols {
			if c.Hidden {
				continue
			}
			ti := colType(c)
			coll := int64(0)
			if c.Type == types.TText || c.Type == types.TBpchar || c.Type == types.TTextArray {
				coll = oidCollDefault
			}
			ndims := 0
			if types.IsArray(c.Type) {
				ndims = 1
			}
			byval := ti.len > 0 && ti.len <= 8
			align, storage := "i", "p"
			switch {
			case c.Type == types.TNumeric:
				storage = "m" // numeric's typstorage: main
			case ti.len == -1:
				storage = "x"
			}
			rows = append(rows, []types.Value{oidv(r.oid), types.Text(c.Name), oidv(ti.oid), types.Int4(-1), types.Int4(int32(ti.len)), types.Int4(int32(attnum(r.t, i))), types.Int4(int32(ndims)),
				types.Int4(-1), types.Int4(ti.typmod), types.Bool(byval), types.Text(align), types.Text(storage), types.Text(""), types.Bool(c.NotNull || r.t.IsKeyCol(i)), types.Bool(defaultText(r.t, c) != ""),
				types.Bool(false), types.Text(c.Identity), types.Text(""), types.Bool(false), types.Bool(true), types.Int4(0), oidv(coll),
				nullText, nullText, nullText, nullText})
		}
	}
	return rows
}

// indexAttributes are an index's pg_attribute rows: one per element, named
// as its column (an expression: "expr", typed text).
func indexAttributes(r *catRel) [][]types.Value {
	var rows [][]types.Value
	for k, c := range r.ix.Cols {
		name, ti, coll := "expr", colType(catalog.Column{Type: types.TText}), int64(oidCollDefault)
		if c >= 0 {
			col := r.t.Cols[c]
			name, ti = col.Name, colType(col)
			if col.Type != types.TText && col.Type != types.TBpchar {
				coll = 0
			}
		}
		rows = append(rows, []types.Value{oidv(r.oid), types.Text(name), oidv(ti.oid), types.Int4(-1), types.Int4(int32(ti.len)), types.Int4(int32(k + 1)), types.Int4(0),
			types.Int4(-1), types.Int4(ti.typmod), types.Bool(ti.len > 0 && ti.len <= 8), types.Text("i"), types.Text("p"), types.Text(""), types.Bool(false), types.Bool(false),
			types.Bool(false), types.Text(""), types.Text(""), types.Bool(false), types.Bool(true), types.Int4(0), oidv(coll),
			nullText, nullText, nullText, nullText})
	}
	return rows
}

// pgDependRows: a serial column's sequence is owned by (deptype 'a') its
// column, which psql's \d of a sequence prints as "Owned by".
func pgDependRows(_ *Session, sn *catSnap) [][]types.Value {
	var rows [][]types.Value
	for _, r := range sn.rels {
		if r.kind == "S" && r.t != nil {
			dep := "a"
			if r.t.Cols[r.seqCol].Identity != "" {
				dep = "i" // an identity column's sequence is internal to it
			}
			rows = append(rows, []types.Value{oidv(oidClassPgClass), oidv(r.oid), types.Int4(0), oidv(oidClassPgClass), oidv(sn.tabOID[r.t.Name]),
				types.Int4(int32(attnum(r.t, r.seqCol))), types.Text(dep)})
		}
	}
	return rows
}

var pgTypeCols = cols(`oid:oid typname typnamespace:oid typowner:oid typlen:i2 typbyval:b typtype typcategory
	typispreferred:b typisdefined:b typdelim typrelid:oid typsubscript typelem:oid typarray:oid typinput typoutput
	typreceive typsend typmodin typmodout typanalyze typalign typstorage typnotnull:b typbasetype:oid typtypmod:i4
	typndims:i4 typcollation:oid typdefaultbin typdefault typacl`)

func pgTypeRowsOf(s *Session, _ *catSnap) [][]types.Value {
	rows := enumTypeRows(s) // enum.go
	for _, t := range pgTypeRows {
		name := strings.TrimPrefix(t.name, "_")
		in, out := name+"in", name+"out"
		if strings.HasPrefix(t.name, "_") {
			in, out = "array_in", "array_out"
		}
		rows = append(rows, []types.Value{oidv(t.oid), types.Text(t.name), oidv(oidNspCatalog), oidv(oidSuperuser), types.Int4(int32(t.len)), types.Bool(t.byval), types.Text(t.typtype), types.Text(t.category),
			types.Bool(false), types.Bool(true), types.Text(","), oidv(0), types.Text("-"), oidv(t.elem), oidv(t.array), types.Text(in), types.Text(out),
			types.Text(name + "recv"), types.Text(name + "send"), types.Text("-"), types.Text("-"), types.Text("-"), types.Text("i"), types.Text("p"), types.Bool(false), oidv(0), types.Int4(-1),
			types.Int4(0), oidv(t.coll), nullText, nullText, nullText})
	}
	return rows
}

var pgIndexCols = cols(`indexrelid:oid indrelid:oid indnatts:i2 indnkeyatts:i2 indisunique:b indnullsnotdistinct:b
	indisprimary:b indisexclusion:b indimmediate:b indisclustered:b indisvalid:b indcheckxmin:b indisready:b
	indislive:b indisreplident:b indkey:a indcollation:a indclass:a indoption:a indexprs indpred`)

func pgIndexRows(_ *Session, sn *catSnap) [][]types.Value {
	var rows [][]types.Value
	for _, r := range sn.rels {
		if r.kind != "i" {
			continue
		}
		n := len(r.ix.Cols)
		coll, class, opt := make([]int64, n), make([]int64, n), make([]int64, n)
		exprs := nullText
		var es []string
		for i, c := range r.ix.Cols {
			if c < 0 {
				es = append(es, indexExprText(r.ix, i))
			} else if ct := r.t.Cols[c].Type; ct == types.TText || ct == types.TBpchar {
				coll[i] = oidCollDefault
			}
		}
		if len(es) > 0 {
			exprs = types.Text(strings.Join(es, ", "))
		}
		tab := sn.tabOID[r.t.Name]
		rows = append(rows, []types.Value{oidv(r.oid), oidv(tab), types.Int4(int32(n)), types.Int4(int32(n)), types.Bool(r.ix.Unique), types.Bool(false),
			types.Bool(r.pkey), types.Bool(false), types.Bool(true), types.Bool(false), types.Bool(true), types.Bool(false), types.Bool(true),
			types.Bool(true), types.Bool(false), arr(attnums(r.t, r.ix.Cols)...), arr(coll...), arr(class...), arr(opt...), exprs, indexPredicate(r, true)})
	}
	return rows
}

// indexPredicate is a partial index's WHERE as PostgreSQL's ruleutils
// prints it (pg_get_expr of pg_index.indpred, which psql asks pretty), or
// NULL for an index of every row.
func indexPredicate(r *catRel, pretty bool) types.Value {
	if r.ix.Where == "" {
		return nullText
	}
	n, err := checkNode(catalog.CheckDef{Expr: r.ix.Where})
	if err != nil {
		return types.Text(strings.TrimSuffix(strings.TrimPrefix(r.ix.Where, "SELECT "), ";"))
	}
	return types.Text((&ruleWriter{t: r.t, pretty: pretty}).expr(n).s) // checkdef.go
}

// indexExprText is the SQL text of index element i, an expression.
func indexExprText(ix catalog.IndexDef, i int) string {
	if i >= len(ix.Exprs) {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(ix.Exprs[i], "SELECT "), ";")
}

var pgConstraintCols = cols(`oid:oid conname connamespace:oid contype condeferrable:b condeferred:b convalidated:b
	conrelid:oid contypid:oid conindid:oid conparentid:oid confrelid:oid confupdtype confdeltype confmatchtype
	conislocal:b coninhcount:i4 connoinherit:b conkey:a confkey:a conpfeqop:a conppeqop:a conffeqop:a
	confdelsetcols:a conexclop:a conbin`)

func fkActionCode(a interface{ String() string }) string {
	switch strings.ToUpper(a.String()) {
	case "RESTRICT":
		return "r"
	case "CASCADE":
		return "c"
	case "SET NULL":
		return "n"
	case "SET DEFAULT":
		return "d"
	}
	return "a"
}

func pgConstraintRows(_ *Session, sn *catSnap) [][]types.Value {
	var rows [][]types.Value
	for _, c := range sn.cons {
		ind, fref := nullOID, oidv(0)
		if c.index != nil {
			ind = oidv(c.index.oid)
		} else {
			ind = oidv(0)
		}
		upd, del, match := types.Text(" "), types.Text(" "), types.Text(" ")
		fkey := types.Null(types.TInt4Array)
		if c.kind == "f" {
			upd, del, match = types.Text(fkActionCode(c.fk.OnUpdate)), types.Text(fkActionCode(c.fk.OnDelete)), types.Text("s")
			if c.ref != nil {
				fref = oidv(sn.tabOID[c.ref.Name])
				fkey = arr(attnums(c.ref, c.fk.RefCols)...)
			}
		}
		validated, noInherit, bin := true, true, nullText
		if c.kind == "c" {
			validated, noInherit, bin = !c.check.NotValid, false, types.Text(checkConstraintDef(c.t, *c.check, false)) // checkdef.go
		}
		rows = append(rows, []types.Value{oidv(c.oid), types.Text(c.name), oidv(oidNspPublic), types.Text(c.kind), types.Bool(false), types.Bool(false), types.Bool(validated),
			oidv(sn.tabOID[c.t.Name]), oidv(0), ind, oidv(0), fref, upd, del, match,
			types.Bool(true), types.Int4(0), types.Bool(noInherit), arr(attnums(c.t, c.cols)...), fkey, types.Null(types.TInt4Array), types.Null(types.TInt4Array), types.Null(types.TInt4Array),
			types.Null(types.TInt4Array), types.Null(types.TInt4Array), bin})
	}
	return rows
}

var pgAttrdefCols = cols(`oid:oid adrelid:oid adnum:i2 adbin`)

// defaultText is a column's default as pg_get_expr prints it ("" if none).
func defaultText(t *catalog.Table, c catalog.Column) string {
	switch {
	case c.Identity != "":
		return "" // attidentity says it (identity.go)
	case c.Serial:
		return "nextval('" + eval.QuoteIdent(catalog.ColSequence(t, c).Name) + "'::regclass)"
	case c.Default != "":
		d := strings.TrimSuffix(strings.TrimPrefix(c.Default, "SELECT "), ";")
		if e := types.EnumOf(c.Type); e != nil && isStringLiteral(d) {
			return d + "::" + eval.QuoteIdent(e.Name) // the literal coerced to the enum, as PostgreSQL stores it
		}
		return d
	}
	return ""
}

// isStringLiteral reports whether SQL text d is one string literal (its
// quotes inside doubled).
func isStringLiteral(d string) bool {
	return len(d) >= 2 && d[0] == '\'' && d[len(d)-1] == '\'' && !strings.Contains(strings.ReplaceAll(d[1:len(d)-1], "''", ""), "'")
}

func pgAttrdefRows(_ *Session, sn *catSnap) [][]types.Value {
	var rows [][]types.Value
	for _, r := range sn.rels {
		if r.kind != "r" {
			continue
		}
		for i, c := range r.t.Cols {
			if d := defaultText(r.t, c); d != "" && !c.Hidden {
				n := attnum(r.t, i)
				rows = append(rows, []types.Value{oidv(r.oid + int64(n)<<32), oidv(r.oid), types.Int4(int32(n)), types.Text(d)})
			}
		}
	}
	return rows
}

var pgSequenceCols = cols(`seqrelid:oid seqtypid:oid seqstart:i8 seqincrement:i8 seqmax:i8 seqmin:i8 seqcache:i8 seqcycle:b`)

func pgSequenceRows(_ *Session, sn *catSnap) [][]types.Value {
	var rows [][]types.Value
	for _, r := range sn.rels {
		if sq := r.seq; r.kind == "S" {
			typid, _, _ := catalog.SeqTypeRange(sq.Type)
			rows = append(rows, []types.Value{oidv(r.oid), oidv(typid), types.Int8(sq.Start), types.Int8(sq.Inc), types.Int8(sq.Max), types.Int8(sq.Min), types.Int8(sq.Cache), types.Bool(sq.Cycle)})
		}
	}
	return rows
}

var pgSequencesCols = cols(`schemaname sequencename sequenceowner data_type start_value:i8 min_value:i8 max_value:i8
	increment_by:i8 cycle:b cache_size:i8 last_value:i8`)

func pgSequencesRows(s *Session, sn *catSnap) [][]types.Value {
	var rows [][]types.Value
	for _, r := range sn.rels {
		if sq := r.seq; r.kind == "S" {
			last := types.Null(types.TInt8)
			if st, err := s.readSeqState(context.Background(), sq); err == nil && st.called {
				last = types.Int8(st.last)
			}
			rows = append(rows, []types.Value{types.Text("public"), types.Text(r.name), types.Text(s.user), types.Text(sq.Type), types.Int8(sq.Start), types.Int8(sq.Min), types.Int8(sq.Max), types.Int8(sq.Inc), types.Bool(sq.Cycle), types.Int8(sq.Cache), last})
		}
	}
	return rows
}

var pgDatabaseCols = cols(`oid:oid datname datdba:oid encoding:i4 datlocprovider datistemplate:b datallowconn:b
	datconnlimit:i4 datfrozenxid datminmxid dattablespace:oid datcollate datctype daticulocale datcollversion datacl`)

func pgDatabaseRows(s *Session, _ *catSnap) [][]types.Value {
	return [][]types.Value{{oidv(oidDatabase), types.Text(s.database()), oidv(oidSuperuser), types.Int4(6), types.Text("c"), types.Bool(false), types.Bool(true),
		types.Int4(-1), types.Text("0"), types.Text("1"), oidv(oidTablespace), types.Text("C"), types.Text("C"), nullText, nullText, nullText}}
}

var pgRolesCols = cols(`rolname rolsuper:b rolinherit:b rolcreaterole:b rolcreatedb:b rolcanlogin:b rolreplication:b
	rolconnlimit:i4 rolpassword rolvaliduntil rolbypassrls:b rolconfig oid:oid`)

func pgRolesRows(s *Session, _ *catSnap) [][]types.Value {
	return [][]types.Value{{types.Text(s.user), types.Bool(true), types.Bool(true), types.Bool(true), types.Bool(true), types.Bool(true), types.Bool(true),
		types.Int4(-1), types.Text("********"), nullText, types.Bool(true), nullText, oidv(oidSuperuser)}}
}

var pgAuthidCols = cols(`oid:oid rolname rolsuper:b rolinherit:b rolcreaterole:b rolcreatedb:b rolcanlogin:b
	rolreplication:b rolbypassrls:b rolconnlimit:i4 rolpassword rolvaliduntil`)

func pgAuthidRows(s *Session, _ *catSnap) [][]types.Value {
	return [][]types.Value{{oidv(oidSuperuser), types.Text(s.user), types.Bool(true), types.Bool(true), types.Bool(true), types.Bool(true), types.Bool(true),
		types.Bool(true), types.Bool(true), types.Int4(-1), nullText, nullText}}
}

var pgUserCols = cols(`usename usesysid:oid usecreatedb:b usesuper:b userepl:b usebypassrls:b passwd valuntil useconfig`)

func pgUserRows(s *Session, _ *catSnap) [][]types.Value {
	return [][]types.Value{{types.Text(s.user), oidv(oidSuperuser), types.Bool(true), types.Bool(true), types.Bool(true), types.Bool(true), types.Text("********"), nullText, nullText}}
}

var pgSettingsCols = cols(`name setting unit category short_desc extra_desc context vartype source min_val max_val
	enumvals boot_val reset_val sourcefile sourceline:i4 pending_restart:b`)

func pgSettingsRows(s *Session, _ *catSnap) [][]types.Value {
	keys := make([]string, 0, len(pgSettings))
	for k := range pgSettings {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return pgSettings[keys[i]].name < pgSettings[keys[j]].name })
	var rows [][]types.Value
	for _, k := range keys {
		st := pgSettings[k]
		v, err := s.getSetting(st.name)
		if err != nil {
			v = st.def
		}
		rows = append(rows, []types.Value{types.Text(st.name), types.Text(v), nullText, types.Text(""), types.Text(""), nullText, types.Text(st.context), types.Text("string"),
			types.Text("default"), nullText, nullText, nullText, types.Text(st.def), types.Text(st.def), nullText, types.Null(types.TInt4), types.Bool(false)})
	}
	return rows
}

var pgAmCols = cols(`oid:oid amname amhandler amtype`)

func pgAmRows(*Session, *catSnap) [][]types.Value {
	return [][]types.Value{{oidv(oidAmHeap), types.Text("heap"), types.Text("heap_tableam_handler"), types.Text("t")},
		{oidv(oidAmBtree), types.Text("btree"), types.Text("bthandler"), types.Text("i")}}
}

var pgCollationCols = cols(`oid:oid collname collnamespace:oid collowner:oid collprovider collisdeterministic:b
	collencoding:i4 collcollate collctype colliculocale collversion`)

func pgCollationRows(*Session, *catSnap) [][]types.Value {
	return [][]types.Value{
		{oidv(oidCollDefault), types.Text("default"), oidv(oidNspCatalog), oidv(oidSuperuser), types.Text("d"), types.Bool(true), types.Int4(-1), nullText, nullText, nullText, nullText},
		{oidv(950), types.Text("C"), oidv(oidNspCatalog), oidv(oidSuperuser), types.Text("c"), types.Bool(true), types.Int4(-1), types.Text("C"), types.Text("C"), nullText, nullText},
		{oidv(951), types.Text("POSIX"), oidv(oidNspCatalog), oidv(oidSuperuser), types.Text("c"), types.Bool(true), types.Int4(-1), types.Text("POSIX"), types.Text("POSIX"), nullText, nullText},
	}
}

var pgTablespaceCols = cols(`oid:oid spcname spcowner:oid spcacl spcoptions`)

func pgTablespaceRows(*Session, *catSnap) [][]types.Value {
	return [][]types.Value{{oidv(oidTablespace), types.Text("pg_default"), oidv(oidSuperuser), nullText, nullText},
		{oidv(1664), types.Text("pg_global"), oidv(oidSuperuser), nullText, nullText}}
}

var pgTablesCols = cols(`schemaname tablename tableowner tablespace hasindexes:b hasrules:b hastriggers:b rowsecurity:b`)

func pgTablesRows(s *Session, sn *catSnap) [][]types.Value {
	var rows [][]types.Value
	for _, t := range sn.tables {
		rows = append(rows, []types.Value{types.Text("public"), types.Text(t.Name), types.Text(s.user), nullText, types.Bool(t.HasPKey() || len(t.Indexes) > 0),
			types.Bool(false), types.Bool(len(t.FKeys) > 0 || referenced(sn, t)), types.Bool(false)})
	}
	return rows
}

var pgIndexesCols = cols(`schemaname tablename indexname tablespace indexdef`)

func pgIndexesRows(_ *Session, sn *catSnap) [][]types.Value {
	var rows [][]types.Value
	for _, r := range sn.rels {
		if r.kind == "i" {
			rows = append(rows, []types.Value{types.Text("public"), types.Text(r.t.Name), types.Text(r.name), nullText, types.Text(indexDef(r, 0, false))})
		}
	}
	return rows
}

// indexDef is pg_get_indexdef(r, col): the CREATE INDEX statement, or with
// col > 0 that element's text.
func indexDef(r *catRel, col int, pretty bool) string {
	var els []string
	for i, c := range r.ix.Cols {
		if c >= 0 {
			els = append(els, eval.QuoteIdent(r.t.Cols[c].Name))
			continue
		}
		e := indexExprText(r.ix, i)
		if !looksLikeCall(e) {
			e = "(" + e + ")"
		}
		els = append(els, e)
	}
	if col > 0 {
		if col > len(els) {
			return ""
		}
		return els[col-1]
	}
	u := ""
	if r.ix.Unique {
		u = "UNIQUE "
	}
	schema := "public." // pretty (PRETTYFLAG_SCHEMA) leaves out a schema on the search path
	if pretty {
		schema = ""
	}
	out := "CREATE " + u + "INDEX " + eval.QuoteIdent(r.name) + " ON " + schema + eval.QuoteIdent(r.t.Name) + " USING btree (" + strings.Join(els, ", ") + ")"
	if p := indexPredicate(r, pretty); !p.Null {
		out += " WHERE " + p.S
	}
	return out
}

// looksLikeCall reports whether e is one function call (f(...)), which an
// index definition does not parenthesize.
func looksLikeCall(e string) bool {
	i := strings.IndexByte(e, '(')
	if i <= 0 || !strings.HasSuffix(e, ")") {
		return false
	}
	for _, ch := range e[:i] {
		if !(ch == '_' || ch == '.' || ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9') {
			return false
		}
	}
	depth := 0
	for j := i; j < len(e); j++ {
		switch e[j] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 && j != len(e)-1 {
				return false
			}
		}
	}
	return true
}

// constraintDef is pg_get_constraintdef.
func constraintDef(c *catCon) string {
	names := func(t *catalog.Table, cs []int) string {
		var out []string
		for _, i := range cs {
			if i >= 0 && t != nil && i < len(t.Cols) {
				out = append(out, eval.QuoteIdent(t.Cols[i].Name))
			}
		}
		return strings.Join(out, ", ")
	}
	switch c.kind {
	case "c":
		return checkConstraintDef(c.t, *c.check, false) // checkdef.go
	case "p":
		return "PRIMARY KEY (" + names(c.t, c.cols) + ")"
	case "u":
		return "UNIQUE (" + names(c.t, c.cols) + ")"
	}
	d := "FOREIGN KEY (" + names(c.t, c.cols) + ") REFERENCES " + eval.QuoteIdent(c.fk.RefTable) + "(" + names(c.ref, c.fk.RefCols) + ")"
	for _, a := range []struct {
		what string
		code string
	}{{"UPDATE", fkActionCode(c.fk.OnUpdate)}, {"DELETE", fkActionCode(c.fk.OnDelete)}} {
		switch a.code {
		case "r":
			d += " ON " + a.what + " RESTRICT"
		case "c":
			d += " ON " + a.what + " CASCADE"
		case "n":
			d += " ON " + a.what + " SET NULL"
		case "d":
			d += " ON " + a.what + " SET DEFAULT"
		}
	}
	return d
}

var pgViewsCols = cols(`schemaname viewname viewowner definition`)

// pgViewsRows lists the views; definition is the query as stored
// (pg_query's deparsed text, not pg_get_viewdef's layout).
func pgViewsRows(s *Session, sn *catSnap) [][]types.Value {
	var rows [][]types.Value
	for _, v := range sn.views {
		rows = append(rows, []types.Value{types.Text("public"), types.Text(v.Name), types.Text(s.user), types.Text(v.View)})
	}
	return rows
}

// catalogRelations are the generated relations, by schema.name.
var catalogRelations map[string]*catalogRel

func init() {
	catalogRelations = map[string]*catalogRel{
		"pg_catalog.pg_class":         {pgClassCols, pgClassRows},
		"pg_catalog.pg_namespace":     {pgNamespaceCols, pgNamespaceRows},
		"pg_catalog.pg_attribute":     {pgAttributeCols, pgAttributeRows},
		"pg_catalog.pg_type":          {pgTypeCols, pgTypeRowsOf},
		"pg_catalog.pg_index":         {pgIndexCols, pgIndexRows},
		"pg_catalog.pg_indexes":       {pgIndexesCols, pgIndexesRows},
		"pg_catalog.pg_constraint":    {pgConstraintCols, pgConstraintRows},
		"pg_catalog.pg_attrdef":       {pgAttrdefCols, pgAttrdefRows},
		"pg_catalog.pg_sequence":      {pgSequenceCols, pgSequenceRows},
		"pg_catalog.pg_sequences":     {pgSequencesCols, pgSequencesRows},
		"pg_catalog.pg_database":      {pgDatabaseCols, pgDatabaseRows},
		"pg_catalog.pg_roles":         {pgRolesCols, pgRolesRows},
		"pg_catalog.pg_authid":        {pgAuthidCols, pgAuthidRows},
		"pg_catalog.pg_user":          {pgUserCols, pgUserRows},
		"pg_catalog.pg_settings":      {pgSettingsCols, pgSettingsRows},
		"pg_catalog.pg_am":            {pgAmCols, pgAmRows},
		"pg_catalog.pg_collation":     {pgCollationCols, pgCollationRows},
		"pg_catalog.pg_tablespace":    {pgTablespaceCols, pgTablespaceRows},
		"pg_catalog.pg_tables":        {pgTablesCols, pgTablesRows},
		"pg_catalog.pg_views":         {pgViewsCols, pgViewsRows},
		"pg_catalog.pg_matviews":      {cols(`schemaname matviewname matviewowner tablespace hasindexes:b ispopulated:b definition`), none},
		"pg_catalog.pg_description":   {pgDescriptionCols, pgDescriptionRows}, // comment.go
		"pg_catalog.pg_shdescription": {cols(`objoid:oid classoid:oid description`), none},
		"pg_catalog.pg_proc": {cols(`oid:oid proname pronamespace:oid proowner:oid prolang:oid procost:f prorows:f
			provariadic:oid prosupport prokind prosecdef:b proleakproof:b proisstrict:b proretset:b provolatile
			proparallel pronargs:i2 pronargdefaults:i2 prorettype:oid proargtypes:a proallargtypes:a proargmodes
			proargnames proargdefaults protrftypes prosrc probin prosqlbody proconfig proacl`), none},
		"pg_catalog.pg_inherits": {cols(`inhrelid:oid inhparent:oid inhseqno:i4 inhdetachpending:b`), none},
		"pg_catalog.pg_trigger": {cols(`oid:oid tgrelid:oid tgparentid:oid tgname tgfoid:oid tgtype:i2 tgenabled
			tgisinternal:b tgconstrrelid:oid tgconstrindid:oid tgconstraint:oid tgdeferrable:b tginitdeferred:b
			tgnargs:i2 tgattr:a tgargs tgqual tgoldtable tgnewtable`), none},
		"pg_catalog.pg_policy": {cols(`oid:oid polname polrelid:oid polcmd polpermissive:b polroles:a polqual polwithcheck`), none},
		"pg_catalog.pg_statistic_ext": {cols(`oid:oid stxrelid:oid stxname stxnamespace:oid stxowner:oid
			stxstattarget:i4 stxkeys:a stxkind stxexprs`), none},
		"pg_catalog.pg_publication": {cols(`oid:oid pubname pubowner:oid puballtables:b pubinsert:b pubupdate:b
			pubdelete:b pubtruncate:b pubviaroot:b`), none},
		"pg_catalog.pg_publication_rel":       {cols(`oid:oid prpubid:oid prrelid:oid prqual prattrs:a`), none},
		"pg_catalog.pg_publication_namespace": {cols(`oid:oid pnpubid:oid pnnspid:oid`), none},
		"pg_catalog.pg_foreign_table":         {cols(`ftrelid:oid ftserver:oid ftoptions`), none},
		"pg_catalog.pg_auth_members":          {cols(`roleid:oid member:oid grantor:oid admin_option:b`), none},
		"pg_catalog.pg_enum":                  {cols(`oid:oid enumtypid:oid enumsortorder:f4 enumlabel`), pgEnumRows}, // enum.go
		"pg_catalog.pg_extension": {cols(`oid:oid extname extowner:oid extnamespace:oid extrelocatable:b extversion
			extconfig extcondition`), pgExtensionRows},
		"pg_catalog.pg_depend":  {cols(`classid:oid objid:oid objsubid:i4 refclassid:oid refobjid:oid refobjsubid:i4 deptype`), pgDependRows},
		"pg_catalog.pg_rewrite": {cols(`oid:oid rulename ev_class:oid ev_type is_instead:b ev_qual ev_action`), none},
		"pg_catalog.pg_locks":   {pgLocksCols, nil}, // virtual.go plans it
	}
	for name, r := range infoSchemaRelations { // infoschema.go
		catalogRelations["information_schema."+name] = r
	}
}
