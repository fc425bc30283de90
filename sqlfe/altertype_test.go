package sqlfe

import (
	"testing"

	"github.com/tupled/tupled/sql/pgerror"
)

// ALTER COLUMN TYPE's rewrite is what a reopened database holds: the new
// type, the converted rows, the rebuilt key and index. (What each case
// answers is in testdata/sql/alter_column_type.test, checked against
// PostgreSQL.)
func TestAlterColumnTypeSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	db, s := newDiskSession(t, dir)
	mustRun(t, s, "CREATE TABLE m (id int PRIMARY KEY, code text, amount numeric(10,2)); CREATE UNIQUE INDEX m_code ON m (code)", "CREATE TABLE\nCREATE INDEX")
	mustRun(t, s, "INSERT INTO m VALUES (1, '10', 1.25), (2, '20', 2.5)", "INSERT 0 2")
	mustRun(t, s, "ALTER TABLE m ALTER COLUMN id TYPE bigint", "ALTER TABLE")
	mustRun(t, s, "ALTER TABLE m ALTER COLUMN code TYPE integer USING code::integer", "ALTER TABLE")
	mustRun(t, s, "ALTER TABLE m ALTER COLUMN amount TYPE numeric(10,1)", "ALTER TABLE")
	_, s = reopenDiskSession(t, dir, db, s)
	mustRun(t, s, "SELECT id, code, amount, pg_typeof(id), pg_typeof(code) FROM m WHERE code = 20", "2|20|2.5|bigint|integer\nSELECT 1")
	mustRun(t, s, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'm'::regclass AND attname = 'amount'", "numeric(10,1)\nSELECT 1")
	mustFail(t, s, "INSERT INTO m VALUES (3, 10, 0)", pgerror.CodeUniqueViolation, `duplicate key value violates unique constraint "m_code"`)
	mustFail(t, s, "INSERT INTO m VALUES (1, 30, 0)", pgerror.CodeUniqueViolation, `duplicate key value violates unique constraint "m_pkey"`)
	mustRun(t, s, "INSERT INTO m VALUES (3000000000, 30, 3.33) RETURNING amount", "3.3\nINSERT 0 1")
}

// PostgreSQL's messages and hints for what ALTER COLUMN TYPE cannot do.
func TestAlterColumnTypeErrors(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE e (a int PRIMARY KEY, b text DEFAULT 'x', c varchar(10)); INSERT INTO e VALUES (1, 'one', 'abcdef')", "CREATE TABLE\nINSERT 0 1")
	for _, tc := range []struct{ sql, code, msg, hint string }{
		{"ALTER TABLE e ALTER COLUMN b TYPE integer", pgerror.CodeDatatypeMismatch, `column "b" cannot be cast automatically to type integer`, `You might need to specify "USING b::integer".`},
		{"ALTER TABLE e ALTER COLUMN a TYPE boolean USING a::text", pgerror.CodeDatatypeMismatch, `result of USING clause for column "a" cannot be cast automatically to type boolean`, "You might need to add an explicit cast."},
		{"ALTER TABLE e ALTER COLUMN b TYPE integer USING length(b)", pgerror.CodeDatatypeMismatch, `default for column "b" cannot be cast automatically to type integer`, ""},
		{"ALTER TABLE e ALTER COLUMN c TYPE integer USING c::integer", pgerror.CodeInvalidText, `invalid input syntax for type integer: "abcdef"`, ""},
		{"ALTER TABLE e ALTER COLUMN c TYPE varchar(3)", pgerror.CodeStringTooLong, "value too long for type character varying(3)", ""},
		{"ALTER TABLE e ALTER COLUMN a TYPE int USING NULL", pgerror.CodeNotNull, `column "a" of relation "e" contains null values`, ""},
	} {
		_, err := run(t, s, tc.sql)
		if err == nil || err.Code != tc.code || err.Message != tc.msg || err.Hint != tc.hint {
			t.Errorf("%s: got %v (hint %q), want %s %s (hint %q)", tc.sql, err, hintOf(err), tc.code, tc.msg, tc.hint)
		}
	}
	mustRun(t, s, "SELECT a, b, c FROM e", "1|one|abcdef\nSELECT 1")
}

func hintOf(e *pgerror.Error) string {
	if e == nil {
		return ""
	}
	return e.Hint
}

// What ALTER COLUMN TYPE refuses (PostgreSQL runs these): a foreign key's
// own column, a table other tables reference, a table a view reads. The
// refusal leaves the table and its foreign keys working.
func TestAlterColumnTypeRefused(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE p (id int PRIMARY KEY, x int); CREATE TABLE c (id int PRIMARY KEY, p_id int REFERENCES p, y int); CREATE VIEW v AS SELECT y FROM c",
		"CREATE TABLE\nCREATE TABLE\nCREATE VIEW")
	mustRun(t, s, "INSERT INTO p VALUES (1, 1); INSERT INTO c VALUES (1, 1, 1)", "INSERT 0 1\nINSERT 0 1")
	for _, sql := range []string{
		"ALTER TABLE c ALTER COLUMN p_id TYPE bigint",
		"ALTER TABLE p ALTER COLUMN x TYPE bigint",
		"ALTER TABLE c ALTER COLUMN y TYPE bigint",
		"ALTER TABLE p ALTER COLUMN x TYPE int[]",
	} {
		if _, err := run(t, s, sql); err == nil || err.Code != pgerror.CodeFeatureNotSupp {
			t.Errorf("%s: got %v, want 0A000", sql, err)
		}
	}
	mustFail(t, s, "INSERT INTO c VALUES (2, 9, 0)", "23503", `insert or update on table "c" violates foreign key constraint "c_p_id_fkey"`)
	mustRun(t, s, "SELECT pg_typeof(p_id), pg_typeof(y) FROM c", "integer|integer\nSELECT 1")
}
