package sqlfe

import (
	"context"
	"testing"

	"github.com/tupled/tupled/sql/pgerror"
)

// The catalogs show a session its own uncommitted DDL, and only it.
func TestCatalogSeesOwnDDL(t *testing.T) {
	eng, s := newTestSession(t)
	other := eng.NewSession(2, "test", nil)
	t.Cleanup(other.Close)
	mustRun(t, s, "BEGIN", "BEGIN")
	mustRun(t, s, "CREATE TABLE x (k serial PRIMARY KEY, v text)", "CREATE TABLE")
	const q = "SELECT relname, relkind FROM pg_class WHERE relname LIKE 'x%' ORDER BY relname"
	mustRun(t, s, q, "x|r\nx_k_seq|S\nx_pkey|i\nSELECT 3")
	mustRun(t, other, q, "SELECT 0")
	mustRun(t, s, "ROLLBACK", "ROLLBACK")
	mustRun(t, s, q, "SELECT 0")
	mustRun(t, s, "CREATE TABLE x (k int PRIMARY KEY)", "CREATE TABLE")
	mustRun(t, other, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'x'", "1\nSELECT 1")
	mustRun(t, s, "DROP TABLE x", "DROP TABLE")
	mustRun(t, other, q, "SELECT 0")
}

// An OID is the same in every session and after the catalog is loaded
// again (a restart), whatever other tables come and go.
func TestCatalogOIDsStable(t *testing.T) {
	eng, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE a (k int PRIMARY KEY)", "CREATE TABLE")
	mustRun(t, s, "CREATE TABLE b (k int PRIMARY KEY REFERENCES a)", "CREATE TABLE")
	const q = "SELECT 'a'::regclass, 'b'::regclass, (SELECT oid FROM pg_constraint WHERE conname = 'b_k_fkey'), (SELECT oid FROM pg_class WHERE relname = 'a_pkey')"
	before, err := run(t, s, q)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "CREATE TABLE c (k int)", "CREATE TABLE")
	mustRun(t, s, "DROP TABLE c", "DROP TABLE")
	eng2, err2 := NewExecutor(context.Background(), eng.db, nil)
	if err2 != nil {
		t.Fatal(err2)
	}
	s2 := eng2.NewSession(3, "test", nil)
	t.Cleanup(s2.Close)
	after, err := run(t, s2, q)
	if err != nil {
		t.Fatal(err)
	}
	if before != after {
		t.Fatalf("OIDs changed:\n%s\n%s", before, after)
	}
	// and the oid is what regclass prints back as the name
	mustRun(t, s2, "SELECT c.oid::regclass, c.relname FROM pg_class c WHERE c.oid = 'b'::regclass", "b|b\nSELECT 1")
}

func TestCatalogErrors(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE t (k serial PRIMARY KEY)", "CREATE TABLE")
	mustFail(t, s, "SELECT 'nosuch'::regclass", pgerror.CodeUndefinedTable, `relation "nosuch" does not exist`)
	mustFail(t, s, "SELECT 'x'::oid", pgerror.CodeInvalidText, `invalid input syntax for type oid: "x"`)
	mustFail(t, s, "SELECT pg_get_serial_sequence('t', 'nosuch')", pgerror.CodeUndefinedColumn, `column "nosuch" of relation "t" does not exist`)
	mustFail(t, s, "SELECT pg_get_serial_sequence('nosuch', 'k')", pgerror.CodeUndefinedTable, "")
	mustFail(t, s, "SELECT pg_get_indexdef(1, 2)", pgerror.CodeUndefinedFunction, "")
	mustFail(t, s, "SELECT 'a' = ANY ('{a')", pgerror.CodeInvalidText, `malformed array literal: "{a"`)
	mustFail(t, s, "SELECT ARRAY(SELECT 1, 2)", pgerror.CodeSyntax, "")
	mustFail(t, s, "SELECT * FROM information_schema.nosuch", pgerror.CodeUndefinedTable, "")
	mustFail(t, s, "SELECT (1)[1]", pgerror.CodeDatatypeMismatch, "")
	mustRun(t, s, "SELECT pg_get_indexdef(NULL), NULL::regclass, 1 = ANY (NULL::int[]), pg_get_constraintdef(0)", "NULL|NULL|NULL|NULL\nSELECT 1")
	mustRun(t, s, "SELECT pg_get_serial_sequence('t', 'k'), pg_get_expr(adbin, adrelid) FROM pg_attrdef", "public.t_k_seq|nextval('t_k_seq'::regclass)\nSELECT 1")
	// a user table of a catalog's name shadows it unqualified
	mustRun(t, s, "CREATE TABLE pg_am (x int)", "CREATE TABLE")
	mustRun(t, s, "SELECT count(*) FROM pg_am", "0\nSELECT 1")
	mustRun(t, s, "SELECT count(*) FROM pg_catalog.pg_am", "2\nSELECT 1")
}
