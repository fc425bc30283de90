package syscat

import (
	"strings"
	"testing"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/types"
)

// exprText is a Deparser for tables without CHECK constraints or
// partial indexes: it gives the stored SQL text back.
type exprText struct{}

func (exprText) CheckDef(_ *catalog.Table, d catalog.CheckDef, _ bool) string {
	return "CHECK (" + d.Expr + ")"
}
func (exprText) CheckColumns(*catalog.Table, catalog.CheckDef) []int { return nil }
func (exprText) Predicate(_ *catalog.Table, where string, _ bool) string {
	return where
}

// twoTables is, as sqlfe stores them,
//
//	CREATE TABLE a (id integer PRIMARY KEY, code varchar(8) NOT NULL UNIQUE, qty numeric(10,2) DEFAULT 0);
//	CREATE TABLE b (id bigint PRIMARY KEY, a_id integer REFERENCES a(id) ON DELETE CASCADE, note text);
//	CREATE INDEX b_note ON b (note);
func twoTables() *Snap {
	a := &catalog.Table{Name: "a", Engine: "a", Key: 0, Cols: []catalog.Column{
		{Name: "id", Type: types.TInt4, NotNull: true},
		{Name: "code", Type: types.TText, MaxLen: 8, NotNull: true},
		{Name: "qty", Type: types.TNumeric, Prec: 10, Scale: 2, Default: "SELECT 0;"},
	}, Indexes: []catalog.IndexDef{{Name: "a_code_key", Cols: []int{1}, Unique: true}}}
	b := &catalog.Table{Name: "b", Engine: "b", Key: 0, Cols: []catalog.Column{
		{Name: "id", Type: types.TInt8, NotNull: true},
		{Name: "a_id", Type: types.TInt4},
		{Name: "note", Type: types.TText},
	}, Indexes: []catalog.IndexDef{{Name: "b_note", Cols: []int{2}}},
		FKeys: []catalog.FKDef{{Name: "b_a_id_fkey", Cols: []int{1}, RefTable: "a", RefCols: []int{0}, OnDelete: tupled.Cascade}}}
	return Build(map[string]*catalog.Table{"a": a, "b": b}, nil, exprText{})
}

// rowsText is the rows of relation name whose column key is one of keys,
// the columns cols of each as text, a row a line.
func rowsText(t *testing.T, sn *Snap, name, key string, keys map[string]bool, cols ...string) string {
	t.Helper()
	r := Relations[name]
	idx := func(c string) int {
		for i, col := range r.Cols {
			if col.Name == c {
				return i
			}
		}
		t.Fatalf("%s has no column %s", name, c)
		return -1
	}
	var out []string
	for _, row := range r.Rows(nil, sn) {
		if !keys[row[idx(key)].String()] {
			continue
		}
		var f []string
		for _, c := range cols {
			f = append(f, row[idx(c)].String())
		}
		out = append(out, strings.Join(f, "|"))
	}
	return strings.Join(out, "\n")
}

func bools(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// The expected rows and texts are PostgreSQL 15.18's for the same DDL.
func TestTwoTablesRows(t *testing.T) {
	sn := twoTables()
	for _, c := range []struct {
		name, got, want string
	}{
		{"pg_class", rowsText(t, sn, "pg_catalog.pg_class", "relname", bools("a", "b", "a_pkey", "a_code_key", "b_pkey", "b_note"),
			"relname", "relkind", "relnatts", "relhasindex", "relhastriggers"),
			"a|r|3|t|t\na_pkey|i|1|f|f\na_code_key|i|1|f|f\nb|r|3|t|t\nb_pkey|i|1|f|f\nb_note|i|1|f|f"},
		{"pg_attribute", rowsText(t, sn, "pg_catalog.pg_attribute", "attrelid", bools(itoa(sn.TableOID["a"])),
			"attname", "atttypid", "attlen", "attnum", "atttypmod", "attnotnull", "atthasdef"),
			"id|23|4|1|-1|t|f\ncode|1043|-1|2|12|t|f\nqty|1700|-1|3|655366|f|t"},
		{"pg_constraint", rowsText(t, sn, "pg_catalog.pg_constraint", "conrelid", bools(itoa(sn.TableOID["a"]), itoa(sn.TableOID["b"])),
			"conname", "contype", "conkey", "confkey", "confupdtype", "confdeltype"),
			"a_pkey|p|{1}|| | \na_code_key|u|{2}|| | \nb_pkey|p|{1}|| | \nb_a_id_fkey|f|{2}|{1}|a|c"},
	} {
		if c.got != c.want {
			t.Errorf("%s:\n%s\nwant (PostgreSQL 15):\n%s", c.name, c.got, c.want)
		}
	}
	a := sn.ByName["a"].Table
	for i, want := range []string{"integer", "character varying(8)", "numeric(10,2)"} {
		ti := ColumnType(a.Cols[i])
		if got := FormatType(ti.OID, int64(ti.Typmod)); got != want || ti.Format != want {
			t.Errorf("format_type of a.%s = %q (ColumnType %q), want %q", a.Cols[i].Name, got, ti.Format, want)
		}
	}
	if got := DefaultText(a, a.Cols[2]); got != "0" {
		t.Errorf("pg_get_expr of a.qty's default = %q, want 0", got)
	}
	defs := map[string]string{}
	for _, c := range sn.Cons {
		defs[c.Name] = sn.ConstraintDef(c, false)
	}
	for name, want := range map[string]string{
		"a_code_key":  "UNIQUE (code)",
		"a_pkey":      "PRIMARY KEY (id)",
		"b_a_id_fkey": "FOREIGN KEY (a_id) REFERENCES a(id) ON DELETE CASCADE",
		"b_pkey":      "PRIMARY KEY (id)",
	} {
		if defs[name] != want {
			t.Errorf("pg_get_constraintdef(%s) = %q, want %q", name, defs[name], want)
		}
	}
	for name, want := range map[string]string{
		"b_note":     "CREATE INDEX b_note ON public.b USING btree (note)",
		"a_code_key": "CREATE UNIQUE INDEX a_code_key ON public.a USING btree (code)",
	} {
		if got := sn.IndexDef(sn.ByName[name], 0, false); got != want {
			t.Errorf("pg_get_indexdef(%s) = %q, want %q", name, got, want)
		}
	}
}

// OIDs derive from names: a second Build, and one with an unrelated
// table more, give every object the OID it had.
func TestOIDsStable(t *testing.T) {
	sn, again := twoTables(), twoTables()
	more := map[string]*catalog.Table{"c": {Name: "c", Engine: "c", Key: 0, Cols: []catalog.Column{{Name: "k", Type: types.TInt4, NotNull: true}}}}
	for _, t := range sn.Tables {
		more[t.Name] = t
	}
	withC := Build(more, nil, exprText{})
	for _, r := range sn.Rels {
		if withC.ByName[r.Name].OID != r.OID {
			t.Errorf("%s: OID %d, with table c %d", r.Name, r.OID, withC.ByName[r.Name].OID)
		}
		if again.ByName[r.Name].OID != r.OID || r.OID < FirstUserOID {
			t.Errorf("%s: OID %d, then %d", r.Name, r.OID, again.ByName[r.Name].OID)
		}
	}
	for _, c := range sn.Cons {
		if again.ConByOID[c.OID] == nil || again.ConByOID[c.OID].Name != c.Name {
			t.Errorf("constraint %s: OID %d not stable", c.Name, c.OID)
		}
	}
	if o, ok := sn.RelOID(`public."a"`); !ok || o != sn.TableOID["a"] {
		t.Errorf(`'public."a"'::regclass = %d, %v; want %d`, o, ok, sn.TableOID["a"])
	}
	if o, _ := sn.RelOID("pg_class"); o != OIDClassPgClass {
		t.Errorf("'pg_class'::regclass = %d, want %d", o, OIDClassPgClass)
	}
}

func itoa(n int64) string { return types.Int8(n).String() }
