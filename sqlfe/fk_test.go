package sqlfe

import (
	"testing"
)

// mustFailDetail is mustFail that also checks the DETAIL.
func mustFailDetail(t *testing.T, s *Session, sql, code, msg, detail string) {
	t.Helper()
	_, err := run(t, s, sql)
	if err == nil {
		t.Fatalf("%s: no error, want %s", sql, code)
	}
	if err.Code != code || err.Message != msg || err.Detail != detail {
		t.Fatalf("%s:\ngot  %s %q DETAIL %q\nwant %s %q DETAIL %q", sql, err.Code, err.Message, err.Detail, code, msg, detail)
	}
}

// TestForeignKeys: each clause and action, with PostgreSQL 15's answers
// (checked with psql on PostgreSQL 15).
func TestForeignKeys(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE p (k int PRIMARY KEY, u text UNIQUE, v int)", "CREATE TABLE")
	mustRun(t, s, "CREATE TABLE c (id int PRIMARY KEY, pk int REFERENCES p ON DELETE CASCADE ON UPDATE CASCADE, pu text REFERENCES p(u) ON DELETE SET NULL ON UPDATE RESTRICT)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO p VALUES (1, 'a', 0), (2, 'b', 0), (3, 'c', 0)", "INSERT 0 3")
	mustRun(t, s, "INSERT INTO c VALUES (10, 1, 'a'), (11, 1, 'b'), (12, NULL, NULL)", "INSERT 0 3")
	mustFailDetail(t, s, "INSERT INTO c VALUES (13, 99, NULL)", "23503",
		`insert or update on table "c" violates foreign key constraint "c_pk_fkey"`, `Key (pk)=(99) is not present in table "p".`)
	mustFailDetail(t, s, "INSERT INTO c VALUES (14, NULL, 'q')", "23503",
		`insert or update on table "c" violates foreign key constraint "c_pu_fkey"`, `Key (pu)=(q) is not present in table "p".`)
	mustFailDetail(t, s, "UPDATE c SET pk = 7 WHERE id = 12", "23503",
		`insert or update on table "c" violates foreign key constraint "c_pk_fkey"`, `Key (pk)=(7) is not present in table "p".`)
	mustRun(t, s, "UPDATE p SET v = 5 WHERE k = 1", "UPDATE 1")
	mustRun(t, s, "UPDATE p SET k = 4 WHERE k = 1", "UPDATE 1") // ON UPDATE CASCADE
	mustRun(t, s, "SELECT * FROM c ORDER BY id", "10|4|a\n11|4|b\n12|NULL|NULL\nSELECT 3")
	mustRun(t, s, "DELETE FROM p WHERE u = 'b'", "DELETE 1") // ON DELETE SET NULL
	mustRun(t, s, "SELECT * FROM c ORDER BY id", "10|4|a\n11|4|NULL\n12|NULL|NULL\nSELECT 3")
	mustFailDetail(t, s, "UPDATE p SET u = 'z' WHERE k = 4", "23503",
		`update or delete on table "p" violates foreign key constraint "c_pu_fkey" on table "c"`, `Key (u)=(a) is still referenced from table "c".`)
	mustRun(t, s, "DELETE FROM p WHERE k = 4", "DELETE 1") // ON DELETE CASCADE
	mustRun(t, s, "SELECT * FROM c ORDER BY id", "12|NULL|NULL\nSELECT 1")

	// SET DEFAULT, and SET NULL on a NOT NULL column
	mustRun(t, s, "INSERT INTO p VALUES (1, 'a', 0), (2, 'b', 0), (4, 'd', 0)", "INSERT 0 3")
	mustRun(t, s, "CREATE TABLE d (id int PRIMARY KEY, x int DEFAULT 3 REFERENCES p ON DELETE SET DEFAULT)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO d VALUES (1, 2)", "INSERT 0 1")
	mustRun(t, s, "DELETE FROM p WHERE k = 2", "DELETE 1")
	mustRun(t, s, "SELECT * FROM d", "1|3\nSELECT 1")
	mustFailDetail(t, s, "DELETE FROM p WHERE k = 3", "23503",
		`insert or update on table "d" violates foreign key constraint "d_x_fkey"`, `Key (x)=(3) is not present in table "p".`)
	mustRun(t, s, "DELETE FROM d", "DELETE 1")
	mustRun(t, s, "CREATE TABLE c2 (x int NOT NULL REFERENCES p ON DELETE SET NULL)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO c2 VALUES (4)", "INSERT 0 1")
	mustFail(t, s, "DELETE FROM p WHERE k = 4", "23502", `null value in column "x" of relation "c2" violates not-null constraint`)

	// NO ACTION (the default) and RESTRICT
	mustRun(t, s, "CREATE TABLE n (a int REFERENCES p, b int, FOREIGN KEY (b) REFERENCES p)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO n VALUES (1, NULL)", "INSERT 0 1")
	mustFailDetail(t, s, "DELETE FROM p WHERE k = 1", "23503",
		`update or delete on table "p" violates foreign key constraint "n_a_fkey" on table "n"`, `Key (k)=(1) is still referenced from table "n".`)
	mustRun(t, s, "CREATE TABLE n2 (a int, CONSTRAINT myfk FOREIGN KEY (a) REFERENCES p(k) ON UPDATE RESTRICT)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO n2 VALUES (3)", "INSERT 0 1")
	mustFailDetail(t, s, "UPDATE p SET k = 5 WHERE k = 3", "23503",
		`update or delete on table "p" violates foreign key constraint "myfk" on table "n2"`, `Key (k)=(3) is still referenced from table "n2".`)

	// ALTER TABLE … DROP CONSTRAINT / ADD FOREIGN KEY
	mustRun(t, s, "ALTER TABLE n2 DROP CONSTRAINT myfk", "ALTER TABLE")
	mustFail(t, s, "ALTER TABLE n2 DROP CONSTRAINT myfk", "42704", `constraint "myfk" of relation "n2" does not exist`)
	mustRun(t, s, "ALTER TABLE n2 DROP CONSTRAINT IF EXISTS myfk", "ALTER TABLE")
	mustRun(t, s, "INSERT INTO n2 VALUES (99)", "INSERT 0 1")
	mustFailDetail(t, s, "ALTER TABLE n2 ADD FOREIGN KEY (a) REFERENCES p", "23503",
		`insert or update on table "n2" violates foreign key constraint "n2_a_fkey"`, `Key (a)=(99) is not present in table "p".`)
	mustRun(t, s, "DELETE FROM n2 WHERE a = 99", "DELETE 1")
	mustRun(t, s, "ALTER TABLE n2 ADD FOREIGN KEY (a) REFERENCES p", "ALTER TABLE")
	mustRun(t, s, "ALTER TABLE n2 ADD FOREIGN KEY (a) REFERENCES p", "ALTER TABLE")
	mustFail(t, s, "ALTER TABLE n2 ADD CONSTRAINT n2_a_fkey1 FOREIGN KEY (a) REFERENCES p", "42710", `constraint "n2_a_fkey1" for relation "n2" already exists`)
	mustRun(t, s, "DELETE FROM n", "DELETE 1")
	mustRun(t, s, "UPDATE p SET k = 6 WHERE k = 1", "UPDATE 1") // n2 holds only 3
	mustFail(t, s, "BEGIN; ALTER TABLE n2 DROP CONSTRAINT n2_a_fkey", "0A000", "")
	mustRun(t, s, "ROLLBACK", "ROLLBACK")

	// DROP TABLE: 2BP01 while referenced from a table not dropped
	_, e := run(t, s, "DROP TABLE n2")
	if e != nil {
		t.Fatal(e)
	}
	mustFailDetail(t, s, "DROP TABLE p, c, c2, n", "2BP01", "cannot drop desired object(s) because other objects depend on them",
		"constraint d_x_fkey on table d depends on table p")
	_, e = run(t, s, "DROP TABLE p")
	if e == nil || e.Code != "2BP01" || e.Message != "cannot drop table p because other objects depend on it" ||
		e.Hint != "Use DROP ... CASCADE to drop the dependent objects too." {
		t.Fatalf("DROP TABLE p: %+v", e)
	}
	mustRun(t, s, "DROP TABLE p, c, c2, n, d", "DROP TABLE")
	mustRun(t, s, "CREATE TABLE p (k int PRIMARY KEY)", "CREATE TABLE") // the old engine tables are gone
}

// TestForeignKeyErrors: bad declarations, with PostgreSQL's SQLSTATE and
// message.
func TestForeignKeyErrors(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE foo (a int PRIMARY KEY, b text)", "CREATE TABLE")
	mustRun(t, s, "CREATE TABLE p2 (x int, y int, UNIQUE (x, y))", "CREATE TABLE")
	mustFailDetail(t, s, "CREATE TABLE bar2 (a text REFERENCES foo)", "42804", `foreign key constraint "bar2_a_fkey" cannot be implemented`,
		`Key columns "a" and "a" are of incompatible types: text and integer.`)
	mustFail(t, s, "CREATE TABLE bar3 (a int REFERENCES nosuch)", "42P01", `relation "nosuch" does not exist`)
	mustFail(t, s, "CREATE TABLE bar4 (a int REFERENCES foo(zz))", "42703", `column "zz" referenced in foreign key constraint does not exist`)
	mustFail(t, s, "CREATE TABLE bar5 (a int REFERENCES foo(b))", "42830", `there is no unique constraint matching given keys for referenced table "foo"`)
	mustFail(t, s, "CREATE TABLE c2 (x int, y int, FOREIGN KEY (x, y) REFERENCES p2)", "42704", `there is no primary key for referenced table "p2"`)
	mustFail(t, s, "CREATE TABLE c3 (x int, FOREIGN KEY (x, y) REFERENCES p2(x, y))", "42703", `column "y" referenced in foreign key constraint does not exist`)
	mustFail(t, s, "CREATE TABLE c4 (x int, FOREIGN KEY (x) REFERENCES p2(x, y))", "42830", "number of referencing and referenced columns for foreign key disagree")
	mustFail(t, s, "CREATE TABLE c5 (x int REFERENCES foo(a, a))", "42830", "foreign key referenced-columns list must not contain duplicates")
	mustFail(t, s, "CREATE TABLE c6 (x int REFERENCES foo MATCH FULL)", "0A000", "")
	mustFail(t, s, "SELECT * FROM bar2", "42P01", `relation "bar2" does not exist`)
	// a multi-column reference to a unique constraint, in another order
	mustRun(t, s, "CREATE TABLE c2 (x int, y int, FOREIGN KEY (y, x) REFERENCES p2 (y, x))", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO p2 VALUES (1, 2)", "INSERT 0 1")
	mustRun(t, s, "INSERT INTO c2 VALUES (1, 2), (1, NULL)", "INSERT 0 2")
	mustFailDetail(t, s, "INSERT INTO c2 VALUES (2, 1)", "23503", `insert or update on table "c2" violates foreign key constraint "c2_y_x_fkey"`,
		`Key (y, x)=(1, 2) is not present in table "p2".`)
	mustFailDetail(t, s, "DELETE FROM p2", "23503", `update or delete on table "p2" violates foreign key constraint "c2_y_x_fkey" on table "c2"`,
		`Key (y, x)=(2, 1) is still referenced from table "c2".`)
	// a self-reference
	mustRun(t, s, "CREATE TABLE tree (id int PRIMARY KEY, up int REFERENCES tree ON DELETE CASCADE)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO tree VALUES (1, NULL), (2, 1), (3, 2)", "INSERT 0 3")
	mustFail(t, s, "INSERT INTO tree VALUES (4, 7)", "23503", `insert or update on table "tree" violates foreign key constraint "tree_up_fkey"`)
	mustRun(t, s, "DELETE FROM tree WHERE id = 1", "DELETE 1")
	mustRun(t, s, "SELECT * FROM tree", "SELECT 0")
	mustRun(t, s, "DROP TABLE tree", "DROP TABLE")
}

// TestForeignKeysReopen: the catalog keeps the foreign keys, and loading
// it declares them with the engine again.
func TestForeignKeysReopen(t *testing.T) {
	dir := t.TempDir()
	db, s := newDiskSession(t, dir)
	mustRun(t, s, "CREATE TABLE parent (i int, c text)", "CREATE TABLE")
	mustRun(t, s, "CREATE UNIQUE INDEX parent_idx ON parent (i)", "CREATE INDEX")
	mustRun(t, s, "CREATE TABLE child (i int REFERENCES parent(i) ON DELETE CASCADE, n int)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO parent VALUES (1, 'a'), (2, 'b')", "INSERT 0 2")
	mustRun(t, s, "INSERT INTO child VALUES (1, 10), (2, 20)", "INSERT 0 2")
	db, s = reopenDisk(t, dir, db, s)
	mustFailDetail(t, s, "INSERT INTO child VALUES (3, 30)", "23503", `insert or update on table "child" violates foreign key constraint "child_i_fkey"`,
		`Key (i)=(3) is not present in table "parent".`)
	mustRun(t, s, "DELETE FROM parent WHERE i = 1", "DELETE 1")
	mustRun(t, s, "SELECT i, n FROM child", "2|20\nSELECT 1")
	mustFail(t, s, "DROP TABLE parent", "2BP01", "cannot drop table parent because other objects depend on it")
	mustRun(t, s, "DROP TABLE child, parent", "DROP TABLE")
}

// TestFKCompositeKey: a foreign key to a two-column primary key, its
// columns in either order, CASCADE on update and delete, NULL in one
// column (not checked), the DETAILs (psql on PostgreSQL 15 printed the same).
func TestFKCompositeKey(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE pc (a int, b text, v text, PRIMARY KEY (a, b))", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO pc VALUES (1, 'x', 'p1'), (2, 'y', 'p2')", "INSERT 0 2")
	mustRun(t, s, "CREATE TABLE cc (id int PRIMARY KEY, pa int, pb text, FOREIGN KEY (pb, pa) REFERENCES pc (b, a) ON DELETE CASCADE ON UPDATE CASCADE)", "CREATE TABLE")
	mustRun(t, s, "CREATE TABLE cd (id int PRIMARY KEY, pa int, pb text, FOREIGN KEY (pa, pb) REFERENCES pc)", "CREATE TABLE")
	mustFail(t, s, "CREATE TABLE ce (id int PRIMARY KEY, pa int REFERENCES pc)", "42830", "number of referencing and referenced columns for foreign key disagree")
	mustRun(t, s, "INSERT INTO cc VALUES (1, 1, 'x'), (2, 2, 'y')", "INSERT 0 2")
	mustRun(t, s, "INSERT INTO cd VALUES (1, 1, 'x')", "INSERT 0 1")
	mustFail(t, s, "INSERT INTO cc VALUES (3, 1, 'y')", "23503", `insert or update on table "cc" violates foreign key constraint "cc_pb_pa_fkey"`)
	mustFail(t, s, "INSERT INTO cd VALUES (3, 2, 'x')", "23503", `insert or update on table "cd" violates foreign key constraint "cd_pa_pb_fkey"`)
	mustRun(t, s, "INSERT INTO cc VALUES (4, NULL, 'y')", "INSERT 0 1")
	mustRun(t, s, "UPDATE pc SET b = 'z' WHERE a = 2", "UPDATE 1")
	mustRun(t, s, "SELECT * FROM cc ORDER BY id", "1|1|x\n2|2|z\n4|NULL|y\nSELECT 3")
	mustFail(t, s, "DELETE FROM pc WHERE a = 1", "23503", `update or delete on table "pc" violates foreign key constraint "cd_pa_pb_fkey" on table "cd"`)
	mustRun(t, s, "DELETE FROM cd", "DELETE 1")
	mustRun(t, s, "DELETE FROM pc WHERE a = 1", "DELETE 1")
	mustRun(t, s, "SELECT * FROM cc ORDER BY id", "2|2|z\n4|NULL|y\nSELECT 2")
}
