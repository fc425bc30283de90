package syscat

// pg_catalog's relations: their columns and row generators, and the
// registry of every catalog relation (Relations).

import (
	"sort"
	"strings"

	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/types"
)

// Session is what a catalog relation reads of the session that scans it
// (sqlfe's Session implements it).
type Session interface {
	// User is the connected user, the name the bootstrap superuser (OID
	// 10, the owner of everything) is shown under.
	User() string
	// Database is the name of the database the client connected to.
	Database() string
	// Enums are the enum types the session sees (its own uncommitted
	// ones too).
	Enums() []*types.Enum
	// Settings are the configuration parameters with the session's
	// values, for pg_settings.
	Settings() []Setting
	// SequenceState is the state of sequence sq: its last value and
	// whether nextval has handed it out.
	SequenceState(sq *catalog.Sequence) (last int64, called bool, err error)
}

// Setting is one row of pg_settings: a parameter's name, its value as
// the session sees it, its context and its default.
type Setting struct {
	Name, Value, Context, Default string
}

// Deparser renders the SQL expressions the catalog stores (CHECK
// constraints, partial indexes' WHERE) as PostgreSQL's ruleutils prints
// them. That needs the SQL parser, which is sqlfe's (checkdef.go).
type Deparser interface {
	// CheckDef is pg_get_constraintdef's text of CHECK constraint d of t.
	CheckDef(t *catalog.Table, d catalog.CheckDef, pretty bool) string
	// CheckColumns are the indexes in t.Cols of the columns d reads
	// (pg_constraint.conkey), nil if its text does not parse.
	CheckColumns(t *catalog.Table, d catalog.CheckDef) []int
	// Predicate is the text of partial index predicate where (SQL text
	// as IndexDef.Where stores it).
	Predicate(t *catalog.Table, where string, pretty bool) string
}

// Relation is a generated relation: its columns and its rows.
type Relation struct {
	Cols []catalog.Column
	Rows func(s Session, sn *Snap) [][]types.Value
}

// ---- column helpers ----

func cText(n string) catalog.Column { return catalog.Column{Name: n, Type: types.TText} }

// ColOID and ColInt8 are a column of an oid (a bigint here) and of a bigint.
func ColOID(n string) catalog.Column  { return catalog.Column{Name: n, Type: types.TInt8} }
func cInt4(n string) catalog.Column   { return catalog.Column{Name: n, Type: types.TInt4} }
func cInt2(n string) catalog.Column   { return catalog.Column{Name: n, Type: types.TInt4, Int2: true} }
func ColInt8(n string) catalog.Column { return catalog.Column{Name: n, Type: types.TInt8} }
func cBool(n string) catalog.Column   { return catalog.Column{Name: n, Type: types.TBool} }
func cArr(n string) catalog.Column    { return catalog.Column{Name: n, Type: types.TInt4Array} }

// Columns are the columns spec lists: name[:type] separated by blanks,
// the type oid, i2, i4, i8, b (boolean), a (integer[]), ta (text[]),
// f (numeric), f4 (real), or none for text.
func Columns(spec string) []catalog.Column {
	var out []catalog.Column
	for _, f := range strings.Fields(spec) {
		name, t, _ := strings.Cut(f, ":")
		switch t {
		case "oid":
			out = append(out, ColOID(name))
		case "i4":
			out = append(out, cInt4(name))
		case "i2":
			out = append(out, cInt2(name))
		case "i8":
			out = append(out, ColInt8(name))
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
func none(Session, *Snap) [][]types.Value { return nil }

// oidExtPlpgsql is plpgsql's pg_extension OID in PostgreSQL 15's initdb.
const oidExtPlpgsql = 13566

// pgExtensionRows: plpgsql, which every PostgreSQL database has installed
// (tupled runs no procedural language, but has the extension's row, so
// CREATE EXTENSION IF NOT EXISTS plpgsql skips as PostgreSQL's does).
func pgExtensionRows(Session, *Snap) [][]types.Value {
	return [][]types.Value{{oidv(oidExtPlpgsql), types.Text("plpgsql"), oidv(OIDSuperuser), oidv(OIDNspCatalog), types.Bool(false),
		types.Text("1.0"), nullText, nullText}}
}

// ---- pg_catalog ----

var pgClassCols = Columns(`oid:oid relname relnamespace:oid reltype:oid reloftype:oid relowner:oid relam:oid
	relfilenode:oid reltablespace:oid relpages:i4 reltuples:f relallvisible:i4 reltoastrelid:oid
	relhasindex:b relisshared:b relpersistence relkind relnatts:i2 relchecks:i2 relhasrules:b
	relhastriggers:b relhassubclass:b relrowsecurity:b relforcerowsecurity:b relispopulated:b
	relreplident relispartition:b relrewrite:oid relfrozenxid relminmxid relacl reloptions:ta relpartbound`)

func pgClassRows(_ Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	minus1, _ := types.ParseNumeric("-1")
	for _, r := range sn.Rels {
		am, natts, hasIndex, persist, checks := int64(0), 0, false, "p", 0
		switch r.Kind {
		case "r":
			am = OIDAmHeap
			for _, c := range r.Table.Cols {
				if !c.Hidden {
					natts++
				}
			}
			hasIndex = r.Table.HasPKey() || len(r.Table.Indexes) > 0
			checks = len(r.Table.Checks)
		case "i":
			am, natts = OIDAmBtree, len(r.Index.Cols)
		case "S":
			natts = 3
		case "v":
			natts = len(r.Table.Cols)
		}
		rows = append(rows, []types.Value{oidv(r.OID), types.Text(r.Name), oidv(OIDNspPublic), oidv(0), oidv(0), oidv(OIDSuperuser), oidv(am),
			oidv(r.OID), oidv(0), types.Int4(0), minus1.Value(), types.Int4(0), oidv(0),
			types.Bool(hasIndex), types.Bool(false), types.Text(persist), types.Text(r.Kind), types.Int4(int32(natts)), types.Int4(int32(checks)), types.Bool(r.Kind == "v"),
			types.Bool(r.Kind == "r" && (len(r.Table.FKeys) > 0 || referenced(sn, r.Table))), types.Bool(false), types.Bool(false), types.Bool(false), types.Bool(true),
			types.Text(map[bool]string{true: "d", false: "n"}[r.Kind == "r"]), types.Bool(false), oidv(0), types.Text("0"), types.Text("0"), nullText, types.Null(types.TTextArray), nullText})
	}
	return rows
}

// referenced reports whether a foreign key refers to t (PostgreSQL's
// relhastriggers is true for both ends of a foreign key).
func referenced(sn *Snap, t *catalog.Table) bool {
	for _, c := range sn.Cons {
		if c.Kind == "f" && c.Ref == t {
			return true
		}
	}
	return false
}

var pgNamespaceCols = Columns(`oid:oid nspname nspowner:oid nspacl`)

func pgNamespaceRows(Session, *Snap) [][]types.Value {
	return [][]types.Value{
		{oidv(OIDNspToast), types.Text("pg_toast"), oidv(OIDSuperuser), nullText},
		{oidv(OIDNspCatalog), types.Text("pg_catalog"), oidv(OIDSuperuser), nullText},
		{oidv(OIDNspPublic), types.Text("public"), oidv(OIDDBOwnerRole), nullText},
		{oidv(OIDNspInfo), types.Text("information_schema"), oidv(OIDSuperuser), nullText},
	}
}

var pgAttributeCols = Columns(`attrelid:oid attname atttypid:oid attstattarget:i4 attlen:i2 attnum:i2 attndims:i4
	attcacheoff:i4 atttypmod:i4 attbyval:b attalign attstorage attcompression attnotnull:b atthasdef:b
	atthasmissing:b attidentity attgenerated attisdropped:b attislocal:b attinhcount:i4 attcollation:oid
	attacl attoptions attfdwoptions attmissingval`)

func pgAttributeRows(_ Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	for _, r := range sn.Rels {
		if r.Kind == "i" {
			rows = append(rows, indexAttributes(r)...)
		}
		if r.Kind != "r" && r.Kind != "v" {
			continue
		}
		for i, c := range r.Table.Cols {
			if c.Hidden {
				continue
			}
			ti := ColumnType(c)
			coll := int64(0)
			if c.Type == types.TText || c.Type == types.TBpchar || c.Type == types.TTextArray {
				coll = OIDCollDefault
			}
			ndims := 0
			if types.IsArray(c.Type) {
				ndims = 1
			}
			byval := ti.Len > 0 && ti.Len <= 8
			align, storage := "i", "p"
			switch {
			case c.Type == types.TNumeric:
				storage = "m" // numeric's typstorage: main
			case ti.Len == -1:
				storage = "x"
			}
			rows = append(rows, []types.Value{oidv(r.OID), types.Text(c.Name), oidv(ti.OID), types.Int4(-1), types.Int4(int32(ti.Len)), types.Int4(int32(AttNum(r.Table, i))), types.Int4(int32(ndims)),
				types.Int4(-1), types.Int4(ti.Typmod), types.Bool(byval), types.Text(align), types.Text(storage), types.Text(""), types.Bool(c.NotNull || r.Table.IsKeyCol(i)), types.Bool(DefaultText(r.Table, c) != ""),
				types.Bool(false), types.Text(c.Identity), types.Text(""), types.Bool(false), types.Bool(true), types.Int4(0), oidv(coll),
				nullText, nullText, nullText, nullText})
		}
	}
	return rows
}

// indexAttributes are an index's pg_attribute rows: one per element, named
// as its column (an expression: "expr", typed text).
func indexAttributes(r *Rel) [][]types.Value {
	var rows [][]types.Value
	for k, c := range r.Index.Cols {
		name, ti, coll := "expr", ColumnType(catalog.Column{Type: types.TText}), int64(OIDCollDefault)
		if c >= 0 {
			col := r.Table.Cols[c]
			name, ti = col.Name, ColumnType(col)
			if col.Type != types.TText && col.Type != types.TBpchar {
				coll = 0
			}
		}
		rows = append(rows, []types.Value{oidv(r.OID), types.Text(name), oidv(ti.OID), types.Int4(-1), types.Int4(int32(ti.Len)), types.Int4(int32(k + 1)), types.Int4(0),
			types.Int4(-1), types.Int4(ti.Typmod), types.Bool(ti.Len > 0 && ti.Len <= 8), types.Text("i"), types.Text("p"), types.Text(""), types.Bool(false), types.Bool(false),
			types.Bool(false), types.Text(""), types.Text(""), types.Bool(false), types.Bool(true), types.Int4(0), oidv(coll),
			nullText, nullText, nullText, nullText})
	}
	return rows
}

// pgDependRows: a serial column's sequence is owned by (deptype 'a') its
// column, which psql's \d of a sequence prints as "Owned by".
func pgDependRows(_ Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	for _, r := range sn.Rels {
		if r.Kind == "S" && r.Table != nil {
			dep := "a"
			if r.Table.Cols[r.SeqCol].Identity != "" {
				dep = "i" // an identity column's sequence is internal to it
			}
			rows = append(rows, []types.Value{oidv(OIDClassPgClass), oidv(r.OID), types.Int4(0), oidv(OIDClassPgClass), oidv(sn.TableOID[r.Table.Name]),
				types.Int4(int32(AttNum(r.Table, r.SeqCol))), types.Text(dep)})
		}
	}
	return rows
}

var pgIndexCols = Columns(`indexrelid:oid indrelid:oid indnatts:i2 indnkeyatts:i2 indisunique:b indnullsnotdistinct:b
	indisprimary:b indisexclusion:b indimmediate:b indisclustered:b indisvalid:b indcheckxmin:b indisready:b
	indislive:b indisreplident:b indkey:a indcollation:a indclass:a indoption:a indexprs indpred`)

func pgIndexRows(_ Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	for _, r := range sn.Rels {
		if r.Kind != "i" {
			continue
		}
		n := len(r.Index.Cols)
		coll, class, opt := make([]int64, n), make([]int64, n), make([]int64, n)
		exprs := nullText
		var es []string
		for i, c := range r.Index.Cols {
			if c < 0 {
				es = append(es, indexExprText(r.Index, i))
			} else if ct := r.Table.Cols[c].Type; ct == types.TText || ct == types.TBpchar {
				coll[i] = OIDCollDefault
			}
		}
		if len(es) > 0 {
			exprs = types.Text(strings.Join(es, ", "))
		}
		tab := sn.TableOID[r.Table.Name]
		rows = append(rows, []types.Value{oidv(r.OID), oidv(tab), types.Int4(int32(n)), types.Int4(int32(n)), types.Bool(r.Index.Unique), types.Bool(false),
			types.Bool(r.PKey), types.Bool(false), types.Bool(true), types.Bool(false), types.Bool(true), types.Bool(false), types.Bool(true),
			types.Bool(true), types.Bool(false), arr(attnums(r.Table, r.Index.Cols)...), arr(coll...), arr(class...), arr(opt...), exprs, sn.indexPredicate(r, true)})
	}
	return rows
}

var pgConstraintCols = Columns(`oid:oid conname connamespace:oid contype condeferrable:b condeferred:b convalidated:b
	conrelid:oid contypid:oid conindid:oid conparentid:oid confrelid:oid confupdtype confdeltype confmatchtype
	conislocal:b coninhcount:i4 connoinherit:b conkey:a confkey:a conpfeqop:a conppeqop:a conffeqop:a
	confdelsetcols:a conexclop:a conbin`)

func pgConstraintRows(_ Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	for _, c := range sn.Cons {
		ind, fref := nullOID, oidv(0)
		if c.Index != nil {
			ind = oidv(c.Index.OID)
		} else {
			ind = oidv(0)
		}
		upd, del, match := types.Text(" "), types.Text(" "), types.Text(" ")
		fkey := types.Null(types.TInt4Array)
		if c.Kind == "f" {
			upd, del, match = types.Text(fkActionCode(c.FK.OnUpdate)), types.Text(fkActionCode(c.FK.OnDelete)), types.Text("s")
			if c.Ref != nil {
				fref = oidv(sn.TableOID[c.Ref.Name])
				fkey = arr(attnums(c.Ref, c.FK.RefCols)...)
			}
		}
		validated, noInherit, bin := true, true, nullText
		if c.Kind == "c" {
			validated, noInherit, bin = !c.Check.NotValid, false, types.Text(sn.dp.CheckDef(c.Table, *c.Check, false))
		}
		rows = append(rows, []types.Value{oidv(c.OID), types.Text(c.Name), oidv(OIDNspPublic), types.Text(c.Kind), types.Bool(false), types.Bool(false), types.Bool(validated),
			oidv(sn.TableOID[c.Table.Name]), oidv(0), ind, oidv(0), fref, upd, del, match,
			types.Bool(true), types.Int4(0), types.Bool(noInherit), arr(attnums(c.Table, c.Cols)...), fkey, types.Null(types.TInt4Array), types.Null(types.TInt4Array), types.Null(types.TInt4Array),
			types.Null(types.TInt4Array), types.Null(types.TInt4Array), bin})
	}
	return rows
}

var pgAttrdefCols = Columns(`oid:oid adrelid:oid adnum:i2 adbin`)

func pgAttrdefRows(_ Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	for _, r := range sn.Rels {
		if r.Kind != "r" {
			continue
		}
		for i, c := range r.Table.Cols {
			if d := DefaultText(r.Table, c); d != "" && !c.Hidden {
				n := AttNum(r.Table, i)
				rows = append(rows, []types.Value{oidv(r.OID + int64(n)<<32), oidv(r.OID), types.Int4(int32(n)), types.Text(d)})
			}
		}
	}
	return rows
}

var pgSequenceCols = Columns(`seqrelid:oid seqtypid:oid seqstart:i8 seqincrement:i8 seqmax:i8 seqmin:i8 seqcache:i8 seqcycle:b`)

func pgSequenceRows(_ Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	for _, r := range sn.Rels {
		if sq := r.Seq; r.Kind == "S" {
			typid, _, _ := catalog.SeqTypeRange(sq.Type)
			rows = append(rows, []types.Value{oidv(r.OID), oidv(typid), types.Int8(sq.Start), types.Int8(sq.Inc), types.Int8(sq.Max), types.Int8(sq.Min), types.Int8(sq.Cache), types.Bool(sq.Cycle)})
		}
	}
	return rows
}

var pgSequencesCols = Columns(`schemaname sequencename sequenceowner data_type start_value:i8 min_value:i8 max_value:i8
	increment_by:i8 cycle:b cache_size:i8 last_value:i8`)

func pgSequencesRows(s Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	for _, r := range sn.Rels {
		if sq := r.Seq; r.Kind == "S" {
			last := types.Null(types.TInt8)
			if v, called, err := s.SequenceState(sq); err == nil && called {
				last = types.Int8(v)
			}
			rows = append(rows, []types.Value{types.Text("public"), types.Text(r.Name), types.Text(s.User()), types.Text(sq.Type), types.Int8(sq.Start), types.Int8(sq.Min), types.Int8(sq.Max), types.Int8(sq.Inc), types.Bool(sq.Cycle), types.Int8(sq.Cache), last})
		}
	}
	return rows
}

var pgDatabaseCols = Columns(`oid:oid datname datdba:oid encoding:i4 datlocprovider datistemplate:b datallowconn:b
	datconnlimit:i4 datfrozenxid datminmxid dattablespace:oid datcollate datctype daticulocale datcollversion datacl`)

func pgDatabaseRows(s Session, _ *Snap) [][]types.Value {
	return [][]types.Value{{oidv(OIDDatabase), types.Text(s.Database()), oidv(OIDSuperuser), types.Int4(6), types.Text("c"), types.Bool(false), types.Bool(true),
		types.Int4(-1), types.Text("0"), types.Text("1"), oidv(OIDTablespace), types.Text("C"), types.Text("C"), nullText, nullText, nullText}}
}

var pgRolesCols = Columns(`rolname rolsuper:b rolinherit:b rolcreaterole:b rolcreatedb:b rolcanlogin:b rolreplication:b
	rolconnlimit:i4 rolpassword rolvaliduntil rolbypassrls:b rolconfig oid:oid`)

func pgRolesRows(s Session, _ *Snap) [][]types.Value {
	return [][]types.Value{{types.Text(s.User()), types.Bool(true), types.Bool(true), types.Bool(true), types.Bool(true), types.Bool(true), types.Bool(true),
		types.Int4(-1), types.Text("********"), nullText, types.Bool(true), nullText, oidv(OIDSuperuser)}}
}

var pgAuthidCols = Columns(`oid:oid rolname rolsuper:b rolinherit:b rolcreaterole:b rolcreatedb:b rolcanlogin:b
	rolreplication:b rolbypassrls:b rolconnlimit:i4 rolpassword rolvaliduntil`)

func pgAuthidRows(s Session, _ *Snap) [][]types.Value {
	return [][]types.Value{{oidv(OIDSuperuser), types.Text(s.User()), types.Bool(true), types.Bool(true), types.Bool(true), types.Bool(true), types.Bool(true),
		types.Bool(true), types.Bool(true), types.Int4(-1), nullText, nullText}}
}

var pgUserCols = Columns(`usename usesysid:oid usecreatedb:b usesuper:b userepl:b usebypassrls:b passwd valuntil useconfig`)

func pgUserRows(s Session, _ *Snap) [][]types.Value {
	return [][]types.Value{{types.Text(s.User()), oidv(OIDSuperuser), types.Bool(true), types.Bool(true), types.Bool(true), types.Bool(true), types.Text("********"), nullText, nullText}}
}

var pgSettingsCols = Columns(`name setting unit category short_desc extra_desc context vartype source min_val max_val
	enumvals boot_val reset_val sourcefile sourceline:i4 pending_restart:b`)

func pgSettingsRows(s Session, _ *Snap) [][]types.Value {
	sts := s.Settings()
	sort.Slice(sts, func(i, j int) bool { return sts[i].Name < sts[j].Name })
	var rows [][]types.Value
	for _, st := range sts {
		rows = append(rows, []types.Value{types.Text(st.Name), types.Text(st.Value), nullText, types.Text(""), types.Text(""), nullText, types.Text(st.Context), types.Text("string"),
			types.Text("default"), nullText, nullText, nullText, types.Text(st.Default), types.Text(st.Default), nullText, types.Null(types.TInt4), types.Bool(false)})
	}
	return rows
}

var pgAmCols = Columns(`oid:oid amname amhandler amtype`)

func pgAmRows(Session, *Snap) [][]types.Value {
	return [][]types.Value{{oidv(OIDAmHeap), types.Text("heap"), types.Text("heap_tableam_handler"), types.Text("t")},
		{oidv(OIDAmBtree), types.Text("btree"), types.Text("bthandler"), types.Text("i")}}
}

var pgCollationCols = Columns(`oid:oid collname collnamespace:oid collowner:oid collprovider collisdeterministic:b
	collencoding:i4 collcollate collctype colliculocale collversion`)

func pgCollationRows(Session, *Snap) [][]types.Value {
	return [][]types.Value{
		{oidv(OIDCollDefault), types.Text("default"), oidv(OIDNspCatalog), oidv(OIDSuperuser), types.Text("d"), types.Bool(true), types.Int4(-1), nullText, nullText, nullText, nullText},
		{oidv(950), types.Text("C"), oidv(OIDNspCatalog), oidv(OIDSuperuser), types.Text("c"), types.Bool(true), types.Int4(-1), types.Text("C"), types.Text("C"), nullText, nullText},
		{oidv(951), types.Text("POSIX"), oidv(OIDNspCatalog), oidv(OIDSuperuser), types.Text("c"), types.Bool(true), types.Int4(-1), types.Text("POSIX"), types.Text("POSIX"), nullText, nullText},
	}
}

var pgTablespaceCols = Columns(`oid:oid spcname spcowner:oid spcacl spcoptions`)

func pgTablespaceRows(Session, *Snap) [][]types.Value {
	return [][]types.Value{{oidv(OIDTablespace), types.Text("pg_default"), oidv(OIDSuperuser), nullText, nullText},
		{oidv(1664), types.Text("pg_global"), oidv(OIDSuperuser), nullText, nullText}}
}

var pgTablesCols = Columns(`schemaname tablename tableowner tablespace hasindexes:b hasrules:b hastriggers:b rowsecurity:b`)

func pgTablesRows(s Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	for _, t := range sn.Tables {
		rows = append(rows, []types.Value{types.Text("public"), types.Text(t.Name), types.Text(s.User()), nullText, types.Bool(t.HasPKey() || len(t.Indexes) > 0),
			types.Bool(false), types.Bool(len(t.FKeys) > 0 || referenced(sn, t)), types.Bool(false)})
	}
	return rows
}

var pgIndexesCols = Columns(`schemaname tablename indexname tablespace indexdef`)

func pgIndexesRows(_ Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	for _, r := range sn.Rels {
		if r.Kind == "i" {
			rows = append(rows, []types.Value{types.Text("public"), types.Text(r.Table.Name), types.Text(r.Name), nullText, types.Text(sn.IndexDef(r, 0, false))})
		}
	}
	return rows
}

var pgViewsCols = Columns(`schemaname viewname viewowner definition`)

// pgViewsRows lists the views; definition is the query as stored
// (pg_query's deparsed text, not pg_get_viewdef's layout).
func pgViewsRows(s Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	for _, v := range sn.Views {
		rows = append(rows, []types.Value{types.Text("public"), types.Text(v.Name), types.Text(s.User()), types.Text(v.View)})
	}
	return rows
}

// Relations are the generated relations, by schema.name.
var Relations map[string]*Relation

func init() {
	Relations = map[string]*Relation{
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
		"pg_catalog.pg_matviews":      {Columns(`schemaname matviewname matviewowner tablespace hasindexes:b ispopulated:b definition`), none},
		"pg_catalog.pg_description":   {pgDescriptionCols, pgDescriptionRows}, // comment.go
		"pg_catalog.pg_shdescription": {Columns(`objoid:oid classoid:oid description`), none},
		"pg_catalog.pg_proc": {Columns(`oid:oid proname pronamespace:oid proowner:oid prolang:oid procost:f prorows:f
			provariadic:oid prosupport prokind prosecdef:b proleakproof:b proisstrict:b proretset:b provolatile
			proparallel pronargs:i2 pronargdefaults:i2 prorettype:oid proargtypes:a proallargtypes:a proargmodes
			proargnames proargdefaults protrftypes prosrc probin prosqlbody proconfig proacl`), none},
		"pg_catalog.pg_inherits": {Columns(`inhrelid:oid inhparent:oid inhseqno:i4 inhdetachpending:b`), none},
		"pg_catalog.pg_trigger": {Columns(`oid:oid tgrelid:oid tgparentid:oid tgname tgfoid:oid tgtype:i2 tgenabled
			tgisinternal:b tgconstrrelid:oid tgconstrindid:oid tgconstraint:oid tgdeferrable:b tginitdeferred:b
			tgnargs:i2 tgattr:a tgargs tgqual tgoldtable tgnewtable`), none},
		"pg_catalog.pg_policy": {Columns(`oid:oid polname polrelid:oid polcmd polpermissive:b polroles:a polqual polwithcheck`), none},
		"pg_catalog.pg_statistic_ext": {Columns(`oid:oid stxrelid:oid stxname stxnamespace:oid stxowner:oid
			stxstattarget:i4 stxkeys:a stxkind stxexprs`), none},
		"pg_catalog.pg_publication": {Columns(`oid:oid pubname pubowner:oid puballtables:b pubinsert:b pubupdate:b
			pubdelete:b pubtruncate:b pubviaroot:b`), none},
		"pg_catalog.pg_publication_rel":       {Columns(`oid:oid prpubid:oid prrelid:oid prqual prattrs:a`), none},
		"pg_catalog.pg_publication_namespace": {Columns(`oid:oid pnpubid:oid pnnspid:oid`), none},
		"pg_catalog.pg_foreign_table":         {Columns(`ftrelid:oid ftserver:oid ftoptions`), none},
		"pg_catalog.pg_auth_members":          {Columns(`roleid:oid member:oid grantor:oid admin_option:b`), none},
		"pg_catalog.pg_enum":                  {Columns(`oid:oid enumtypid:oid enumsortorder:f4 enumlabel`), pgEnumRows}, // types.go
		"pg_catalog.pg_extension": {Columns(`oid:oid extname extowner:oid extnamespace:oid extrelocatable:b extversion
			extconfig extcondition`), pgExtensionRows},
		"pg_catalog.pg_depend":  {Columns(`classid:oid objid:oid objsubid:i4 refclassid:oid refobjid:oid refobjsubid:i4 deptype`), pgDependRows},
		"pg_catalog.pg_rewrite": {Columns(`oid:oid rulename ev_class:oid ev_type is_instead:b ev_qual ev_action`), none},
		"pg_catalog.pg_locks":   {PgLocksCols, nil}, // sqlfe plans it (virtual.go)
	}
	for name, r := range infoSchemaRelations { // infoschema.go
		Relations["information_schema."+name] = r
	}
}

// PgLocksCols are pg_locks' columns, whose rows sqlfe generates from the
// engine's locks (virtual.go): a subset of PostgreSQL's columns, from db.Locks(). relation is
// the SQL table's name (not an OID); tuple is the row's primary key.
var PgLocksCols = []catalog.Column{
	{Name: "locktype", Type: types.TText},
	{Name: "relation", Type: types.TText},
	{Name: "tuple", Type: types.TText},
	{Name: "transactionid", Type: types.TInt8},
	{Name: "classid", Type: types.TInt8}, // oid in PostgreSQL: advisory locks' key, unsigned
	{Name: "objid", Type: types.TInt8},
	{Name: "objsubid", Type: types.TInt4}, // smallint in PostgreSQL: 1 bigint key, 2 integer pair
	{Name: "virtualtransaction", Type: types.TText},
	{Name: "pid", Type: types.TInt4},
	{Name: "mode", Type: types.TText},
	{Name: "granted", Type: types.TBool},
	{Name: "waitstart", Type: types.TText},
}

// Namespaces are pg_namespace's rows (oid, nspname, nspowner, nspacl):
// regnamespace's names.
func Namespaces() [][]types.Value { return pgNamespaceRows(nil, nil) }
