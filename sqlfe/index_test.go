package sqlfe

import (
	"testing"

	"github.com/tupled/tupled/sql/pgerror"
)

// Indexes and UNIQUE constraints as PostgreSQL 15 answers them (checked
// with psql on PostgreSQL 15).
func TestIndexes(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE u (k int PRIMARY KEY, a int UNIQUE, b text, UNIQUE (b, a))", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO u VALUES (1, 1, 'x'), (2, NULL, 'y'), (3, NULL, 'y')", "INSERT 0 3")
	mustFail(t, s, "INSERT INTO u VALUES (4, 1, 'z')", "23505", `duplicate key value violates unique constraint "u_a_key"`)
	mustRun(t, s, "CREATE INDEX ON u (b)", "CREATE INDEX")
	mustFail(t, s, "CREATE UNIQUE INDEX ON u (b)", "23505", `could not create unique index "u_b_idx1"`)
	mustFail(t, s, "CREATE UNIQUE INDEX u_b_idx ON u (b)", "42P07", `relation "u_b_idx" already exists`)
	mustRun(t, s, "CREATE INDEX IF NOT EXISTS u_b_idx ON u (b)", "CREATE INDEX")
	mustFail(t, s, "DROP INDEX nope", "42704", `index "nope" does not exist`)
	mustRun(t, s, "DROP INDEX IF EXISTS nope", "DROP INDEX")
	mustRun(t, s, "DROP INDEX u_b_idx", "DROP INDEX")
	mustFail(t, s, "UPDATE u SET a = 1 WHERE k = 2", "23505", `duplicate key value violates unique constraint "u_a_key"`)
	mustRun(t, s, "UPDATE u SET a = 2 WHERE k = 1", "UPDATE 1")
	mustRun(t, s, "INSERT INTO u VALUES (4, 1, 'z')", "INSERT 0 1")
	mustRun(t, s, "BEGIN", "BEGIN")
	mustRun(t, s, "SAVEPOINT s", "SAVEPOINT")
	mustRun(t, s, "INSERT INTO u VALUES (5, 5, 'z')", "INSERT 0 1")
	mustRun(t, s, "ROLLBACK TO s", "ROLLBACK")
	mustRun(t, s, "INSERT INTO u VALUES (6, 5, 'z')", "INSERT 0 1")
	mustRun(t, s, "COMMIT", "COMMIT")
	mustRun(t, s, "SELECT k, a FROM u ORDER BY k", "1|2\n2|NULL\n3|NULL\n4|1\n6|5\nSELECT 5")
	mustRun(t, s, "CREATE TABLE nopk (a int UNIQUE)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO nopk VALUES (1), (NULL), (NULL)", "INSERT 0 3")
	mustFail(t, s, "INSERT INTO nopk VALUES (1)", "23505", `duplicate key value violates unique constraint "nopk_a_key"`)
}

// TestIndexesReopen: the catalog keeps a table's indexes, and loading it
// registers them with the engine again.
func TestIndexesReopen(t *testing.T) {
	dir := t.TempDir()
	db, s := newDiskSession(t, dir)
	mustRun(t, s, "CREATE TABLE u (k int PRIMARY KEY, a int UNIQUE, b text)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO u VALUES (1, 1, 'x'), (2, 2, 'y')", "INSERT 0 2")
	mustRun(t, s, "CREATE UNIQUE INDEX u_b ON u (b)", "CREATE INDEX")
	db, s = reopenDisk(t, dir, db, s)
	mustFail(t, s, "INSERT INTO u VALUES (3, 1, 'z')", "23505", `duplicate key value violates unique constraint "u_a_key"`)
	mustFail(t, s, "INSERT INTO u VALUES (3, 3, 'x')", "23505", `duplicate key value violates unique constraint "u_b"`)
	mustRun(t, s, "INSERT INTO u VALUES (3, 3, 'z')", "INSERT 0 1")
}

// TestOnConflictUniqueIndex: ON CONFLICT infers a unique index that is not
// the primary key (checked with psql on PostgreSQL 15).
func TestOnConflictUniqueIndex(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE v (k int PRIMARY KEY, a int UNIQUE, b text)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO v VALUES (1, 1, 'x') ON CONFLICT (a) DO NOTHING", "INSERT 0 1")
	mustRun(t, s, "INSERT INTO v VALUES (2, 1, 'y') ON CONFLICT (a) DO NOTHING", "INSERT 0 0")
	mustRun(t, s, "INSERT INTO v VALUES (2, 1, 'y') ON CONFLICT (a) DO UPDATE SET b = v.b || excluded.b RETURNING *", "1|1|xy\nINSERT 0 1")
	mustRun(t, s, "INSERT INTO v VALUES (3, 1, 'z') ON CONFLICT ON CONSTRAINT v_a_key DO UPDATE SET b = excluded.b RETURNING *", "1|1|z\nINSERT 0 1")
	mustFail(t, s, "INSERT INTO v VALUES (4, 1, 'w'), (5, 1, 'q') ON CONFLICT (a) DO UPDATE SET b = excluded.b", "21000", "ON CONFLICT DO UPDATE command cannot affect row a second time")
	mustRun(t, s, "INSERT INTO v VALUES (6, NULL, 'n') ON CONFLICT (a) DO UPDATE SET b = excluded.b RETURNING *", "6|NULL|n\nINSERT 0 1")
	mustFail(t, s, "INSERT INTO v VALUES (1, 9, 'n') ON CONFLICT (a) DO UPDATE SET b = excluded.b RETURNING *", "23505", `duplicate key value violates unique constraint "v_pkey"`)
	mustFail(t, s, "INSERT INTO v VALUES (7, 9, 'n') ON CONFLICT (b) DO NOTHING", "42P10", "there is no unique or exclusion constraint matching the ON CONFLICT specification")
	mustRun(t, s, "SELECT * FROM v ORDER BY k", "1|1|z\n6|NULL|n\nSELECT 2")
}

// TestExpressionIndex: a unique index on lower(key), its default name,
// and ON CONFLICT inferring it (checked with psql on PostgreSQL 15).
func TestExpressionIndex(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE upsert (key text not null, payload text)", "CREATE TABLE")
	mustRun(t, s, "CREATE UNIQUE INDEX ON upsert(lower(key))", "CREATE INDEX")
	mustRun(t, s, "INSERT INTO upsert VALUES ('FooFoo', 'a')", "INSERT 0 1")
	mustFail(t, s, "INSERT INTO upsert VALUES ('FOOFOO', 'b')", "23505", `duplicate key value violates unique constraint "upsert_lower_idx"`)
	mustRun(t, s, "INSERT INTO upsert(key, payload) VALUES('FOOFOO', 'insert2') ON CONFLICT (lower(key)) DO UPDATE set key = EXCLUDED.key, payload = upsert.payload || ' updated' RETURNING *",
		"FOOFOO|a updated\nINSERT 0 1")
}

// TestUniqueViolationDetail: a unique index's 23505 has PostgreSQL's
// DETAIL (checked with psql on PostgreSQL 15).
func TestUniqueViolationDetail(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE u (k int PRIMARY KEY, a int UNIQUE, b text, UNIQUE (b, a))", "CREATE TABLE")
	mustRun(t, s, "CREATE UNIQUE INDEX ON u (lower(b))", "CREATE INDEX")
	mustRun(t, s, "INSERT INTO u VALUES (1, 1, 'x')", "INSERT 0 1")
	for sql, detail := range map[string]string{
		"INSERT INTO u VALUES (2, 1, 'y')": "Key (a)=(1) already exists.",
		"INSERT INTO u VALUES (2, 2, 'X')": "Key (lower(b))=(x) already exists.",
		"INSERT INTO u VALUES (1, 3, 'z')": "Key (k)=(1) already exists.",
	} {
		_, err := run(t, s, sql)
		if err == nil || err.Code != "23505" || err.Detail != detail {
			t.Fatalf("%s: got %v, want DETAIL %q", sql, err, detail)
		}
	}
}

// TestIndexLookup: WHERE col = value reads through an index of col (the
// same rows as a table scan: the whole WHERE is still checked).
func TestIndexLookup(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE w (k int PRIMARY KEY, a bigint, b text)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO w VALUES (1, 1, 'x'), (2, 1, 'y'), (3, 2, 'x'), (4, NULL, 'x')", "INSERT 0 4")
	mustRun(t, s, "CREATE INDEX ON w (a)", "CREATE INDEX")
	mustRun(t, s, "CREATE INDEX ON w (b)", "CREATE INDEX")
	mustRun(t, s, "SELECT k FROM w WHERE a = 1 ORDER BY k", "1\n2\nSELECT 2")
	mustRun(t, s, "SELECT k FROM w WHERE 1 = a AND b = 'y'", "2\nSELECT 1")
	mustRun(t, s, "SELECT k FROM w WHERE b = 'x' ORDER BY k", "1\n3\n4\nSELECT 3")
	mustRun(t, s, "SELECT k FROM w WHERE a = NULL", "SELECT 0")
	mustRun(t, s, "UPDATE w SET a = 5 WHERE a = 2", "UPDATE 1")
	mustRun(t, s, "SELECT k FROM w WHERE a = 5", "3\nSELECT 1")
	mustRun(t, s, "DELETE FROM w WHERE b = 'y'", "DELETE 1")
	mustRun(t, s, "SELECT k FROM w WHERE a = 1", "1\nSELECT 1")
}

// CREATE INDEX after statements of the same query string (one implicit
// transaction) that wrote the table fails at once instead of waiting
// forever for that transaction, whose lock the index build waits for; after
// a CREATE TABLE alone (PostgreSQL's isolation specs' setups) it works.
func TestCreateIndexAfterOtherStatements(t *testing.T) {
	_, s := newTestSession(t)
	mustFail(t, s, "CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int PRIMARY KEY, a int REFERENCES a(id)); CREATE INDEX ON b (a)",
		pgerror.CodeFeatureNotSupp, "CREATE INDEX on a table an earlier statement of the same query string wrote to is not supported: send it in a query of its own")
	mustRun(t, s, "CREATE TABLE a (id int PRIMARY KEY, v int); CREATE UNIQUE INDEX ON a (v)", "CREATE TABLE\nCREATE INDEX") // the group was rolled back
	mustFail(t, s, "INSERT INTO a VALUES (1, 1); CREATE INDEX ON a (id)", pgerror.CodeFeatureNotSupp, "")
}
