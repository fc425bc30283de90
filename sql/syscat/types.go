package syscat

// Types: pg_type's rows, a column's PostgreSQL type (ColumnType),
// format_type's names (FormatType) and regtype input (TypeOIDByName).

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/types"
)

// ColumnType is PostgreSQL's type of column c.
func ColumnType(c catalog.Column) TypeInfo {
	switch c.Type {
	case types.TBool:
		return TypeInfo{16, -1, 1, "bool", "boolean", "boolean"}
	case types.TInt4:
		if c.Int2 {
			return TypeInfo{21, -1, 2, "int2", "smallint", "smallint"}
		}
		return TypeInfo{23, -1, 4, "int4", "integer", "integer"}
	case types.TInt8:
		return TypeInfo{20, -1, 8, "int8", "bigint", "bigint"}
	case types.TText:
		if c.MaxLen > 0 {
			return TypeInfo{1043, int32(c.MaxLen) + 4, -1, "varchar", "character varying(" + strconv.Itoa(c.MaxLen) + ")", "character varying"}
		}
		if c.Varchar {
			return TypeInfo{1043, -1, -1, "varchar", "character varying", "character varying"}
		}
		return TypeInfo{25, -1, -1, "text", "text", "text"}
	case types.TBpchar:
		if c.MaxLen > 0 {
			return TypeInfo{1042, int32(c.MaxLen) + 4, -1, "bpchar", "character(" + strconv.Itoa(c.MaxLen) + ")", "character"}
		}
		return TypeInfo{1042, -1, -1, "bpchar", "bpchar", "character"}
	case types.TNumeric:
		if c.Prec > 0 {
			return TypeInfo{1700, c.TypeModifier(), -1, "numeric", fmt.Sprintf("numeric(%d,%d)", c.Prec, c.Scale), "numeric"}
		}
		return TypeInfo{1700, -1, -1, "numeric", "numeric", "numeric"}
	case types.TTimestamp:
		return TypeInfo{1114, -1, 8, "timestamp", "timestamp without time zone", "timestamp without time zone"}
	case types.TTimestamptz:
		return TypeInfo{1184, -1, 8, "timestamptz", "timestamp with time zone", "timestamp with time zone"}
	case types.TDate:
		return TypeInfo{1082, -1, 4, "date", "date", "date"}
	case types.TFloat8:
		return TypeInfo{701, -1, 8, "float8", "double precision", "double precision"}
	case types.TFloat4:
		return TypeInfo{700, -1, 4, "float4", "real", "real"}
	case types.TInt4Array:
		return TypeInfo{1007, -1, -1, "_int4", "integer[]", "ARRAY"}
	case types.TInt8Array:
		return TypeInfo{1016, -1, -1, "_int8", "bigint[]", "ARRAY"}
	case types.TInterval:
		if c.Prec > 0 {
			return TypeInfo{1186, int32(c.Prec), 16, "interval", types.IntervalTypmodName(c.Prec), "interval"}
		}
	case types.TTextArray:
		if c.Varchar {
			return TypeInfo{1015, -1, -1, "_varchar", "character varying[]", "ARRAY"}
		}
	}
	if types.IsArray(c.Type) {
		el := ColumnType(catalog.Column{Type: types.ElemType(c.Type)})
		return TypeInfo{int64(c.Type.OID()), -1, -1, "_" + el.Typname, el.Format + "[]", "ARRAY"}
	}
	if x := types.ExtTypes[c.Type]; x != nil {
		return TypeInfo{int64(x.OID), -1, int(x.Size), x.Typname, x.Name, x.Name}
	}
	if e := types.EnumOf(c.Type); e != nil {
		return TypeInfo{int64(e.OID), -1, 4, e.Name, eval.QuoteIdent(e.Name), "USER-DEFINED"}
	}
	return TypeInfo{25, -1, -1, "text", "text", "text"}
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

// FormatType is format_type's name of a type OID (with typmod, -1: none).
func FormatType(oid int64, typmod int64) string {
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
				return FormatType(r.elem, typmod) + "[]"
			}
			return r.name
		}
	}
	if e := EnumOfOID(oid); e != nil {
		if uint32(oid) == e.ArrayOID {
			return eval.QuoteIdent(e.Name) + "[]"
		}
		return eval.QuoteIdent(e.Name)
	}
	return "???"
}

// TypeOIDByName resolves regtype input.
func TypeOIDByName(name string) (int64, bool) {
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
	if e := types.LookupEnum(strings.Trim(strings.TrimPrefix(name, "public."), `"`)); e != nil { // sql/types' enum registry
		return int64(e.OID), true
	}
	if el, ok := strings.CutSuffix(name, "[]"); ok { // varchar[], double precision[]
		if eo, ok := TypeOIDByName(el); ok {
			for _, r := range pgTypeRows {
				if r.elem == eo && strings.HasPrefix(r.name, "_") {
					return r.oid, true
				}
			}
		}
	}
	return 0, false
}

var pgTypeCols = Columns(`oid:oid typname typnamespace:oid typowner:oid typlen:i2 typbyval:b typtype typcategory
	typispreferred:b typisdefined:b typdelim typrelid:oid typsubscript typelem:oid typarray:oid typinput typoutput
	typreceive typsend typmodin typmodout typanalyze typalign typstorage typnotnull:b typbasetype:oid typtypmod:i4
	typndims:i4 typcollation:oid typdefaultbin typdefault typacl`)

func pgTypeRowsOf(s Session, _ *Snap) [][]types.Value {
	rows := enumTypeRows(s) // below
	for _, t := range pgTypeRows {
		name := strings.TrimPrefix(t.name, "_")
		in, out := name+"in", name+"out"
		if strings.HasPrefix(t.name, "_") {
			in, out = "array_in", "array_out"
		}
		rows = append(rows, []types.Value{oidv(t.oid), types.Text(t.name), oidv(OIDNspCatalog), oidv(OIDSuperuser), types.Int4(int32(t.len)), types.Bool(t.byval), types.Text(t.typtype), types.Text(t.category),
			types.Bool(false), types.Bool(true), types.Text(","), oidv(0), types.Text("-"), oidv(t.elem), oidv(t.array), types.Text(in), types.Text(out),
			types.Text(name + "recv"), types.Text(name + "send"), types.Text("-"), types.Text("-"), types.Text("-"), types.Text("i"), types.Text("p"), types.Bool(false), oidv(0), types.Int4(-1),
			types.Int4(0), oidv(t.coll), nullText, nullText, nullText})
	}
	return rows
}

// TypeInfo is PostgreSQL's type of a column: OID, typmod, length, and the
// names format_type and information_schema use.
type TypeInfo struct {
	OID      int64
	Typmod   int32
	Len      int
	Typname  string // pg_type.typname (udt_name)
	Format   string // format_type(atttypid, atttypmod)
	DataType string // information_schema.columns.data_type
}

// EnumOfOID is the enum type (or the array type of the enum type) of OID
// oid, nil if none.
func EnumOfOID(oid int64) *types.Enum {
	if oid < 16384 || oid > 1<<32-1 {
		return nil
	}
	t := types.TypeForOID(uint32(oid))
	if types.IsArray(t) {
		t = types.ElemType(t)
	}
	return types.EnumOf(t)
}

// udtSchema is information_schema's udt_schema of a column of type t.
func udtSchema(t types.Type) string {
	if types.IsEnum(t) {
		return "public"
	}
	return "pg_catalog"
}

// enumTypeRows are pg_type's rows of the enum types the session sees and
// of their array types (which tupled has no values of).
func enumTypeRows(s Session) [][]types.Value {
	var rows [][]types.Value
	for _, e := range s.Enums() {
		row := func(oid uint32, name string, len int, byval bool, typtype, cat string, elem, array uint32, in, out, recv, send, storage string) []types.Value {
			return []types.Value{oidv(int64(oid)), types.Text(name), oidv(OIDNspPublic), oidv(OIDSuperuser), types.Int4(int32(len)), types.Bool(byval), types.Text(typtype), types.Text(cat),
				types.Bool(false), types.Bool(true), types.Text(","), oidv(0), types.Text("-"), oidv(int64(elem)), oidv(int64(array)), types.Text(in), types.Text(out),
				types.Text(recv), types.Text(send), types.Text("-"), types.Text("-"), types.Text("-"), types.Text("i"), types.Text(storage), types.Bool(false), oidv(0), types.Int4(-1),
				types.Int4(0), oidv(0), nullText, nullText, nullText}
		}
		rows = append(rows,
			row(e.OID, e.Name, 4, true, "e", "E", 0, e.ArrayOID, "enum_in", "enum_out", "enum_recv", "enum_send", "p"),
			row(e.ArrayOID, "_"+e.Name, -1, false, "b", "A", e.OID, 0, "array_in", "array_out", "array_recv", "array_send", "x"))
	}
	return rows
}

// pgEnumRows are pg_enum's: each label of each enum type the session
// sees.
func pgEnumRows(s Session, _ *Snap) [][]types.Value {
	var rows [][]types.Value
	for _, e := range s.Enums() {
		for _, l := range e.Labels {
			rows = append(rows, []types.Value{oidv(int64(l.OID)), oidv(int64(e.OID)), types.FloatValue(float64(l.Sort), types.TFloat4), types.Text(l.Label)})
		}
	}
	return rows
}
