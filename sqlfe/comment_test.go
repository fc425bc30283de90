package sqlfe

import (
	"testing"

	"github.com/tupled/tupled/sql/pgerror"
)

// Comments are catalog data: a reopened database still has them, and a
// rolled-back one is gone. (What each statement answers is in
// testdata/sql/comment.test, checked against PostgreSQL.)
func TestCommentSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	db, s := newDiskSession(t, dir)
	mustRun(t, s, "CREATE TABLE c (id serial PRIMARY KEY, a int); CREATE INDEX c_a ON c (a); CREATE SEQUENCE q", "CREATE TABLE\nCREATE INDEX\nCREATE SEQUENCE")
	mustRun(t, s, "COMMENT ON TABLE c IS 'tab'; COMMENT ON COLUMN c.a IS 'col'; COMMENT ON INDEX c_a IS 'idx'; COMMENT ON INDEX c_pkey IS 'pk'", "COMMENT\nCOMMENT\nCOMMENT\nCOMMENT")
	mustRun(t, s, "COMMENT ON SEQUENCE q IS 'seq'; COMMENT ON SEQUENCE c_id_seq IS 'serial'", "COMMENT\nCOMMENT")
	mustRun(t, s, "BEGIN; COMMENT ON TABLE c IS 'gone'; ROLLBACK", "BEGIN\nCOMMENT\nROLLBACK")
	mustRun(t, s, "COMMENT ON CONSTRAINT c_pkey ON c IS 'the constraint'", "COMMENT")
	mustRun(t, s, "SELECT obj_description(oid, 'pg_constraint') FROM pg_constraint WHERE conname = 'c_pkey'", "the constraint\nSELECT 1")
	mustRun(t, s, "BEGIN; COMMENT ON CONSTRAINT c_pkey ON c IS 'gone'; ROLLBACK", "BEGIN\nCOMMENT\nROLLBACK")
	mustRun(t, s, "SELECT obj_description(oid, 'pg_constraint') FROM pg_constraint WHERE conname = 'c_pkey'", "the constraint\nSELECT 1")
	_, s = reopenDiskSession(t, dir, db, s)
	mustRun(t, s, "SELECT obj_description(oid, 'pg_constraint') FROM pg_constraint WHERE conname = 'c_pkey'", "the constraint\nSELECT 1")
	mustRun(t, s, "SELECT obj_description('c'::regclass, 'pg_class'), col_description('c'::regclass, 2), obj_description('c_a'::regclass, 'pg_class'), obj_description('c_pkey'::regclass, 'pg_class')",
		"tab|col|idx|pk\nSELECT 1")
	mustRun(t, s, "SELECT obj_description('q'::regclass, 'pg_class'), obj_description('c_id_seq'::regclass, 'pg_class')", "seq|serial\nSELECT 1")
	// the serial sequence with a comment still counts
	mustRun(t, s, "INSERT INTO c (a) VALUES (1) RETURNING id", "1\nINSERT 0 1")
}

func TestCommentErrors(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE c (a int); CREATE VIEW v AS SELECT a FROM c; CREATE INDEX c_a ON c (a)", "CREATE TABLE\nCREATE VIEW\nCREATE INDEX")
	mustFail(t, s, "COMMENT ON VIEW c IS 'x'", pgerror.CodeWrongObjectType, `"c" is not a view`)
	mustFail(t, s, "COMMENT ON INDEX v IS 'x'", pgerror.CodeWrongObjectType, `"v" is not an index`)
	mustFail(t, s, "COMMENT ON TABLE c_a IS 'x'", pgerror.CodeWrongObjectType, `"c_a" is not a table`)
	mustFail(t, s, "COMMENT ON COLUMN c.b IS 'x'", pgerror.CodeUndefinedColumn, `column "b" of relation "c" does not exist`)
	mustFail(t, s, "COMMENT ON TABLE nosuch IS 'x'", pgerror.CodeUndefinedTable, `relation "nosuch" does not exist`)
	mustFail(t, s, "COMMENT ON SCHEMA public IS 'x'", pgerror.CodeFeatureNotSupp, "COMMENT ON SCHEMA is not supported")
}
