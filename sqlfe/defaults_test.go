package sqlfe

import "testing"

// TestColumnDefaults: DEFAULT expressions and serial columns behave as in
// PostgreSQL 15 (outputs checked there): an omitted column or DEFAULT in
// VALUES or SET takes the default, a sequence value handed out is never
// reused (not after a rollback either), another session's insert does not
// wait for a transaction that took a value, and DROP TABLE drops the
// sequence with the table.
func TestColumnDefaults(t *testing.T) {
	eng, s := newTestSession(t)
	s2 := eng.NewSession(2, "test", nil)
	t.Cleanup(s2.Close)
	mustRun(t, s, "CREATE TABLE pktab (id int PRIMARY KEY, data SERIAL NOT NULL)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO pktab VALUES (1, DEFAULT)", "INSERT 0 1")
	mustRun(t, s, "INSERT INTO pktab (id) VALUES (2), (3) RETURNING *", "2|2\n3|3\nINSERT 0 2")
	mustRun(t, s, "UPDATE pktab SET data = DEFAULT WHERE id = 1 RETURNING *", "1|4\nUPDATE 1")
	mustRun(t, s, "BEGIN", "BEGIN")
	mustRun(t, s, "INSERT INTO pktab (id) VALUES (4)", "INSERT 0 1")
	mustRun(t, s2, "INSERT INTO pktab (id) VALUES (5) RETURNING data", "6\nINSERT 0 1")
	mustRun(t, s, "ROLLBACK", "ROLLBACK")
	mustRun(t, s, "INSERT INTO pktab (id) VALUES (7) RETURNING data", "7\nINSERT 0 1")
	mustRun(t, s, "DROP TABLE pktab", "DROP TABLE")
	mustRun(t, s, "CREATE TABLE pktab (id int PRIMARY KEY, data SERIAL NOT NULL)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO pktab VALUES (1, DEFAULT) RETURNING *", "1|1\nINSERT 0 1")

	mustRun(t, s, "CREATE TABLE d (k int PRIMARY KEY, a int DEFAULT 7, b text DEFAULT 'x' || 'y', c bigint DEFAULT -1, e bool DEFAULT true, f smallint DEFAULT 70000)", "CREATE TABLE")
	mustFail(t, s, "INSERT INTO d (k) VALUES (1)", "22003", "smallint out of range")
	mustRun(t, s, "INSERT INTO d (k, f) VALUES (1, 5) RETURNING *", "1|7|xy|-1|t|5\nINSERT 0 1")
	mustRun(t, s, "INSERT INTO d VALUES (2, DEFAULT, 'q', 3, false, 1) RETURNING *", "2|7|q|3|f|1\nINSERT 0 1")
	mustRun(t, s, "UPDATE d SET b = DEFAULT, a = 0 WHERE k = 2 RETURNING *", "2|0|xy|3|f|1\nUPDATE 1")
	mustFail(t, s, "CREATE TABLE bad (k int PRIMARY KEY, a int DEFAULT k)", "0A000", "cannot use column reference in DEFAULT expression")
	mustFail(t, s, "CREATE TABLE bad (k int PRIMARY KEY, a int DEFAULT 'z')", "22P02", `invalid input syntax for type integer: "z"`)
	mustFail(t, s, "CREATE TABLE bad (k int PRIMARY KEY, a serial DEFAULT 1)", "42601", `multiple default values specified for column "a" of table "bad"`)
	mustFail(t, s, "CREATE TABLE bad (k int PRIMARY KEY, a int DEFAULT 1 DEFAULT 2)", "42601", `multiple default values specified for column "a" of table "bad"`)
	mustRun(t, s, "CREATE TABLE ss (k smallserial PRIMARY KEY, v text)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO ss (v) VALUES ('a'), ('b') RETURNING *", "1|a\n2|b\nINSERT 0 2")
}
