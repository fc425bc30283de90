package sqlfe

import "testing"

// INSERT … ON CONFLICT as PostgreSQL 15 answers it (every outcome checked
// with psql on PostgreSQL 15).
func TestInsertOnConflict(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE u (key int PRIMARY KEY, val text)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO u VALUES (1, 'a') ON CONFLICT DO NOTHING", "INSERT 0 1")
	mustRun(t, s, "INSERT INTO u VALUES (1, 'b') ON CONFLICT DO NOTHING RETURNING *", "INSERT 0 0")
	mustRun(t, s, "INSERT INTO u VALUES (1, 'b'), (2, 'c') ON CONFLICT (key) DO UPDATE SET val = u.val || ' updated by ' || excluded.val RETURNING *",
		"1|a updated by b\n2|c\nINSERT 0 2")
	mustRun(t, s, "INSERT INTO u AS x VALUES (2, 'd') ON CONFLICT (key) DO UPDATE SET val = excluded.val WHERE x.val = 'nope' RETURNING *", "INSERT 0 0")
	mustFail(t, s, "INSERT INTO u VALUES (3, 'e'), (3, 'f') ON CONFLICT (key) DO UPDATE SET val = excluded.val", "21000", "ON CONFLICT DO UPDATE command cannot affect row a second time")
	mustRun(t, s, "INSERT INTO u VALUES (3, 'e'), (3, 'f') ON CONFLICT (key) DO NOTHING", "INSERT 0 1")
	mustFail(t, s, "INSERT INTO u VALUES (4, 'g') ON CONFLICT DO UPDATE SET val = 'x'", "42601", "ON CONFLICT DO UPDATE requires inference specification or constraint name")
	mustFail(t, s, "INSERT INTO u VALUES (4, 'g') ON CONFLICT (val) DO NOTHING", "42P10", "")
	mustRun(t, s, "INSERT INTO u VALUES (3, 'g') ON CONFLICT ON CONSTRAINT u_pkey DO UPDATE SET val = excluded.val || '!' RETURNING val", "g!\nINSERT 0 1")
	mustFail(t, s, "INSERT INTO u VALUES (4, 'g') ON CONFLICT ON CONSTRAINT nope DO NOTHING", "42704", `constraint "nope" for table "u" does not exist`)
	mustFail(t, s, "INSERT INTO u VALUES (5, 'h') ON CONFLICT (key) DO UPDATE SET val = excluded.nope", "42703", "")
	mustRun(t, s, "SELECT * FROM u ORDER BY key", "1|a updated by b\n2|c\n3|g!\nSELECT 3")
}

// TestUpsertSetKey: DO UPDATE SET of the primary key moves the conflicting
// row (a key update); the moved row cannot be affected again by the same
// statement; a move onto an existing key is 23505 (psql on PostgreSQL 15
// printed the same).
func TestUpsertSetKey(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE oc (k int PRIMARY KEY, v text)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO oc VALUES (1, 'a'), (5, 'e')", "INSERT 0 2")
	mustRun(t, s, "INSERT INTO oc VALUES (1, 'x') ON CONFLICT (k) DO UPDATE SET k = oc.k + 10, v = EXCLUDED.v RETURNING *", "11|x\nINSERT 0 1")
	mustFail(t, s, "INSERT INTO oc VALUES (11, 'y') ON CONFLICT (k) DO UPDATE SET k = 5", "23505", `duplicate key value violates unique constraint "oc_pkey"`)
	mustFail(t, s, "INSERT INTO oc VALUES (11, 'y'), (21, 'z') ON CONFLICT (k) DO UPDATE SET k = oc.k + 10", "21000", "ON CONFLICT DO UPDATE command cannot affect row a second time")
	mustRun(t, s, "INSERT INTO oc VALUES (5, 'q') ON CONFLICT (k) DO UPDATE SET k = 6 WHERE oc.v = 'nope' RETURNING *", "INSERT 0 0")
	mustRun(t, s, "SELECT * FROM oc ORDER BY k", "5|e\n11|x\nSELECT 2")
}
