package sqlfe

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/keys"
	"github.com/tupled/tupled/sql/pgerror"
)

// TestCompositeKeyDDL: PRIMARY KEY (a, b) as a table constraint, named or
// not, with INCLUDE; its columns become NOT NULL; PostgreSQL's errors for a
// column named twice (42701), a second primary key (42P16) and an unknown
// column (42703). The catalog keeps the key's columns; the engine key is
// the package keys tuple (a, b), so a program reads it with keys.Unpack. A
// one-column key's catalog entry has no key_cols: it is what it was.
func TestCompositeKeyDDL(t *testing.T) {
	eng, s := newTestSession(t)
	mustFail(t, s, "CREATE TABLE x (a int, b int, PRIMARY KEY (a, a))", pgerror.CodeDuplicateColumn, `column "a" appears twice in primary key constraint`)
	mustFail(t, s, "CREATE TABLE x (a int PRIMARY KEY, b int, PRIMARY KEY (b))", pgerror.CodeInvalidTableDef, `multiple primary keys for table "x" are not allowed`)
	mustFail(t, s, "CREATE TABLE x (a int, b int, PRIMARY KEY (a, c))", pgerror.CodeUndefinedColumn, `column "c" named in key does not exist`)
	mustFail(t, s, "CREATE TABLE x (a int, b jsonb, PRIMARY KEY (a, b))", pgerror.CodeFeatureNotSupp, "")
	mustRun(t, s, "CREATE TABLE t (v int, b text, a int, PRIMARY KEY (a, b) INCLUDE (v))", "CREATE TABLE")
	mustRun(t, s, "CREATE TABLE n (a int, b int, CONSTRAINT n_ab PRIMARY KEY (b, a))", "CREATE TABLE")
	mustRun(t, s, "CREATE TABLE one (k int PRIMARY KEY, v int)", "CREATE TABLE")
	tbl, _ := eng.cat.Get("t")
	if len(tbl.KeyCols) != 2 || tbl.KeyCols[0] != 2 || tbl.KeyCols[1] != 1 || tbl.Key != 2 || !tbl.Cols[1].NotNull || !tbl.Cols[2].NotNull || tbl.Cols[0].NotNull {
		t.Fatalf("catalog entry %+v", tbl)
	}
	if n, _ := eng.cat.Get("n"); n.PrimaryKeyName() != "n_ab" {
		t.Fatalf("named key: %q", n.PrimaryKeyName())
	}
	one, _ := eng.cat.Get("one")
	if js, _ := json.Marshal(one); bytes.Contains(js, []byte("key_cols")) || bytes.Contains(js, []byte("pkey_name")) {
		t.Fatalf("a one-column table's catalog entry changed: %s", js)
	}
	mustRun(t, s, "INSERT INTO t VALUES (1, 'x', 2), (2, 'a', 10), (3, 'b', 2)", "INSERT 0 3")
	var got []keys.Tuple
	err := eng.db.RunTx(context.Background(), nil, func(tx *tupled.Tx) error {
		return tx.Scan(context.Background(), tbl.Engine, tupled.ScanOptions{}, func(k, _ []byte) error {
			tu, err := keys.Unpack(k)
			got = append(got, tu)
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []keys.Tuple{{int64(2), "b"}, {int64(2), "x"}, {int64(10), "a"}}
	if len(got) != len(want) {
		t.Fatalf("engine keys %v, want %v", got, want)
	}
	for i := range want {
		if !bytes.Equal(keys.MustPack(got[i]...), keys.MustPack(want[i]...)) {
			t.Fatalf("engine keys %v, want %v", got, want)
		}
	}
	mustRun(t, s, "SELECT * FROM t", "3|b|2\n1|x|2\n2|a|10\nSELECT 3") // key order (a, b); columns v, b, a
	mustRun(t, s, "SELECT v FROM t WHERE b = 'x' AND a = 2", "1\nSELECT 1")
	mustRun(t, s, "SELECT b FROM t WHERE a = 2 ORDER BY a DESC", "x\nb\nSELECT 2")
	mustRun(t, s, "UPDATE t SET a = 3 WHERE a = 2 AND b = 'b' RETURNING *", "3|b|3\nUPDATE 1")
	mustFail(t, s, "INSERT INTO n VALUES (1, 2), (1, 2)", pgerror.CodeUniqueViolation, `duplicate key value violates unique constraint "n_ab"`)
	// the key's name is a relation's: PostgreSQL 15's 42P07s and names
	mustRun(t, s, "CREATE TABLE m (a int, b int, PRIMARY KEY (a, b))", "CREATE TABLE")
	mustFail(t, s, "CREATE INDEX m_pkey ON m (b)", pgerror.CodeDuplicateTable, `relation "m_pkey" already exists`)
	mustFail(t, s, "CREATE TABLE m2 (a int, b int, CONSTRAINT m_pkey PRIMARY KEY (a, b))", pgerror.CodeDuplicateTable, `relation "m_pkey" already exists`)
	mustFail(t, s, "CREATE TABLE m3 (a int, b int, CONSTRAINT k3 PRIMARY KEY (a, b), CONSTRAINT k3 UNIQUE (b))", pgerror.CodeDuplicateTable, `relation "k3" already exists`)
	mustRun(t, s, "CREATE TABLE m4 (a int, b int, CONSTRAINT m4_b_key PRIMARY KEY (a, b), UNIQUE (b))", "CREATE TABLE")
	mustFail(t, s, "INSERT INTO m4 VALUES (1, 1), (2, 1)", pgerror.CodeUniqueViolation, `duplicate key value violates unique constraint "m4_b_key1"`)
	mustFail(t, s, "INSERT INTO m4 VALUES (1, 1), (1, 1)", pgerror.CodeUniqueViolation, `duplicate key value violates unique constraint "m4_b_key"`)
}

// compositeScript is a session on a table keyed (a, b) through every DML
// path, with what PostgreSQL 15 answers (psql -A; its ERRORs' DETAIL
// here after a "|"). Results without ORDER BY that PostgreSQL returns in
// heap order have an ORDER BY here.
var compositeScript = []struct{ sql, want string }{
	{"CREATE TABLE t (a int, b text, v int, PRIMARY KEY (a, b))", "CREATE TABLE"},
	{"INSERT INTO t VALUES (2, 'x', 1), (1, 'y', 2), (1, 'x', 3), (10, 'a', 4), (-1, 'z', 5)", "INSERT 0 5"},
	{"SELECT * FROM t ORDER BY a, b", "-1|z|5\n1|x|3\n1|y|2\n2|x|1\n10|a|4\nSELECT 5"},
	{"SELECT * FROM t ORDER BY a DESC, b DESC", "10|a|4\n2|x|1\n1|y|2\n1|x|3\n-1|z|5\nSELECT 5"},
	{"SELECT v FROM t WHERE a = 1 AND b = 'x'", "3\nSELECT 1"},
	{"SELECT v FROM t WHERE b = 'x' AND a = 1", "3\nSELECT 1"},
	{"SELECT v FROM t WHERE a = 1 ORDER BY b", "3\n2\nSELECT 2"},
	{"SELECT a, b FROM t WHERE a > 1 ORDER BY a, b", "2|x\n10|a\nSELECT 2"},
	{"SELECT a, b FROM t WHERE a >= 1 AND a < 10 ORDER BY a, b", "1|x\n1|y\n2|x\nSELECT 3"},
	{"SELECT a, b FROM t WHERE a = 1 AND b > 'x'", "1|y\nSELECT 1"},
	{"SELECT a, b FROM t WHERE a = 1 AND b <= 'x'", "1|x\nSELECT 1"},
	{"SELECT a, b FROM t WHERE b = 'x' ORDER BY a", "1|x\n2|x\nSELECT 2"},
	{"SELECT a, b FROM t WHERE a = 1 AND b = 'x' AND v = 99", "SELECT 0"},
	{"SELECT a, b FROM t WHERE a = NULL AND b = 'x'", "SELECT 0"},
	{"SELECT a, b FROM t WHERE a = 3000000000 AND b = 'x'", "SELECT 0"},
	{"PREPARE p (int, text) AS SELECT v FROM t WHERE a = $1 AND b = $2 FOR UPDATE", "PREPARE"},
	{"EXECUTE p (1, 'y')", "2\nSELECT 1"},
	{"EXECUTE p ('2', 'x')", "1\nSELECT 1"},
	{"PREPARE q (int) AS SELECT b FROM t WHERE a = $1 ORDER BY b DESC", "PREPARE"},
	{"EXECUTE q (1)", "y\nx\nSELECT 2"},
	{"INSERT INTO t VALUES (1, 'x', 9)", `23505 duplicate key value violates unique constraint "t_pkey"|Key (a, b)=(1, x) already exists.`},
	{"INSERT INTO t (a, v) VALUES (3, 9)", `23502 null value in column "b" of relation "t" violates not-null constraint|Failing row contains (3, null, 9).`},
	{"INSERT INTO t (b, v) VALUES ('q', 9)", `23502 null value in column "a" of relation "t" violates not-null constraint|Failing row contains (null, q, 9).`},
	{"UPDATE t SET v = v + 100 WHERE a = 1 RETURNING *", "1|x|103\n1|y|102\nUPDATE 2"},
	{"UPDATE t SET b = 'w' WHERE a = 1 AND b = 'y' RETURNING *", "1|w|102\nUPDATE 1"},
	{"UPDATE t SET a = 2 WHERE a = 1 AND b = 'x'", `23505 duplicate key value violates unique constraint "t_pkey"|Key (a, b)=(2, x) already exists.`},
	{"UPDATE t SET a = a + 100 WHERE b = 'x' RETURNING *", "101|x|103\n102|x|1\nUPDATE 2"},
	{"DELETE FROM t WHERE a = 1 AND b = 'w'", "DELETE 1"},
	{"DELETE FROM t WHERE a = 10 RETURNING *", "10|a|4\nDELETE 1"},
	{"SELECT * FROM t ORDER BY a, b", "-1|z|5\n101|x|103\n102|x|1\nSELECT 3"},
	{"INSERT INTO t VALUES (-1, 'z', 7) ON CONFLICT (b, a) DO UPDATE SET v = t.v + excluded.v RETURNING *", "-1|z|12\nINSERT 0 1"},
	{"INSERT INTO t VALUES (-1, 'z', 7) ON CONFLICT ON CONSTRAINT t_pkey DO NOTHING", "INSERT 0 0"},
	{"INSERT INTO t VALUES (-1, 'zz', 7) ON CONFLICT (a, b) DO NOTHING", "INSERT 0 1"},
	{"INSERT INTO t VALUES (-1, 'z', 7) ON CONFLICT (a) DO NOTHING", "42P10 there is no unique or exclusion constraint matching the ON CONFLICT specification|"},
	{"INSERT INTO t VALUES (5, 'k', 1), (5, 'k', 2) ON CONFLICT (a, b) DO UPDATE SET v = 0", "21000 ON CONFLICT DO UPDATE command cannot affect row a second time|"},
	{"INSERT INTO t SELECT a + 1000, b, v FROM t WHERE a < 0", "INSERT 0 2"},
	{"SELECT * FROM t ORDER BY a, b", "-1|z|12\n-1|zz|7\n101|x|103\n102|x|1\n999|z|12\n999|zz|7\nSELECT 6"},
	{"CREATE TABLE s (id serial, g int DEFAULT 7, n text, CONSTRAINT s_pk PRIMARY KEY (g, id) INCLUDE (n))", "CREATE TABLE"},
	{"INSERT INTO s (n) VALUES ('a'), ('b')", "INSERT 0 2"},
	{"INSERT INTO s (id, n) VALUES (1, 'c')", `23505 duplicate key value violates unique constraint "s_pk"|Key (g, id)=(7, 1) already exists.`},
	{"INSERT INTO s (n) VALUES ('d') ON CONFLICT ON CONSTRAINT s_pk DO NOTHING", "INSERT 0 1"},
	{"INSERT INTO s (n) VALUES ('d') ON CONFLICT ON CONSTRAINT s_pkey DO NOTHING", `42704 constraint "s_pkey" for table "s" does not exist|`},
	{"SELECT * FROM s ORDER BY g, id", "1|7|a\n2|7|b\n3|7|d\nSELECT 3"},
	{"CREATE TABLE u (a int, b int, v int, PRIMARY KEY (a, b))", "CREATE TABLE"},
	{"CREATE UNIQUE INDEX u_v ON u (v)", "CREATE INDEX"},
	{"INSERT INTO u VALUES (1, 1, 1), (1, 2, 2), (2, 1, 3)", "INSERT 0 3"},
	{"INSERT INTO u VALUES (3, 3, 2)", `23505 duplicate key value violates unique constraint "u_v"|Key (v)=(2) already exists.`},
	{"UPDATE u SET v = 3 WHERE a = 1 AND b = 1", `23505 duplicate key value violates unique constraint "u_v"|Key (v)=(3) already exists.`},
	{"UPDATE u SET b = 5 WHERE v = 3 RETURNING *", "2|5|3\nUPDATE 1"},
	{"SELECT a, b FROM u WHERE v = 3", "2|5\nSELECT 1"},
	{"INSERT INTO u VALUES (7, 7, 3) ON CONFLICT (v) DO UPDATE SET v = 30 RETURNING *", "2|5|30\nINSERT 0 1"},
	{"CREATE TABLE c (x char(3), y bpchar, z int, PRIMARY KEY (x, y))", "CREATE TABLE"},
	{"INSERT INTO c VALUES ('a', 'b  ', 1)", "INSERT 0 1"},
	{"INSERT INTO c VALUES ('a  ', 'b', 1)", `23505 duplicate key value violates unique constraint "c_pkey"|Key (x, y)=(a  , b) already exists.`},
	{"SELECT x || '|', y || '|', length(y), y FROM c", "a||b||1|b  \nSELECT 1"},
}

func runScript(t *testing.T, s *Session, script []struct{ sql, want string }) {
	t.Helper()
	for _, st := range script {
		got, err := run(t, s, st.sql)
		if err != nil {
			got = err.Code + " " + err.Message + "|" + err.Detail
		}
		if got != st.want {
			t.Fatalf("%s:\ngot:\n%s\nwant:\n%s", st.sql, got, st.want)
		}
	}
}

// TestCompositeKeyDML runs compositeScript: point lookups on the whole
// key, prefix scans on its leading columns, key order, INSERT (VALUES,
// SELECT, DEFAULT and serial key columns), UPDATE of key and non-key
// columns, DELETE, ON CONFLICT on the key's columns or constraint name,
// unique indexes beside the key, bpchar key columns, with PostgreSQL's
// 23505 and 23502 texts.
func TestCompositeKeyDML(t *testing.T) {
	_, s := newTestSession(t)
	runScript(t, s, compositeScript)
}

// TestCompositeKeyReopen: a composite-key table survives closing and
// reopening a pebble-backed database: the catalog keeps the key's columns
// and name, rows and uniqueness come back.
func TestCompositeKeyReopen(t *testing.T) {
	dir := t.TempDir()
	db, s := newDiskSession(t, dir)
	mustRun(t, s, "CREATE TABLE r (k char(2), n int, v text, CONSTRAINT r_k PRIMARY KEY (n, k)); INSERT INTO r VALUES ('a', 2, 'x'), ('b', 1, NULL), ('a', 1, 'z')", "CREATE TABLE\nINSERT 0 3")
	db, s = reopenDisk(t, dir, db, s)
	mustRun(t, s, "SELECT * FROM r ORDER BY n, k", "a |1|z\nb |1|NULL\na |2|x\nSELECT 3")
	mustRun(t, s, "SELECT v FROM r WHERE n = 2 AND k = 'a'", "x\nSELECT 1")
	mustFail(t, s, "INSERT INTO r VALUES ('b', 1, 'w')", pgerror.CodeUniqueViolation, `duplicate key value violates unique constraint "r_k"`)
	mustRun(t, s, "INSERT INTO r VALUES ('b', 2, 'w') ON CONFLICT ON CONSTRAINT r_k DO NOTHING", "INSERT 0 1")
}

// TestCompositeKeyLocking: a locking statement whose WHERE names the whole
// key, or its leading column, locks only the rows it selects: another
// session's FOR UPDATE NOWAIT of an unrelated row succeeds (55P03 were it
// blocked), of a selected row fails. pgrowlocks shows the keys as rows.
func TestCompositeKeyLocking(t *testing.T) {
	eng, s1 := newTestSession(t)
	s2 := eng.NewSession(2, "test", nil)
	t.Cleanup(s2.Close)
	mustRun(t, s1, "CREATE TABLE t (a int, b text, v int, PRIMARY KEY (a, b)); INSERT INTO t VALUES (1, 'x', 0), (1, 'y', 0), (2, 'x', 0), (0, 'x', 0)", "CREATE TABLE\nINSERT 0 4")
	for _, tc := range []struct{ lock, free, busy string }{
		{"SELECT v FROM t WHERE a = 1 AND b = 'x' FOR UPDATE", "a = 1 AND b = 'y'", "b = 'x' AND a = 1"},
		{"SELECT v FROM t WHERE a = 1 FOR UPDATE", "a = 2 AND b = 'x'", "a = 1 AND b = 'y'"},
		{"UPDATE t SET v = 1 WHERE a = 1", "a = 0", "a = 1 AND b = 'x'"},
		{"DELETE FROM t WHERE a = 2 AND b = 'x'", "a = 1", "a = 2"},
		{"SELECT v FROM t WHERE a = 1 AND b > 'x' FOR UPDATE", "a = 1 AND b = 'x'", "a = 1 AND b = 'y'"},
	} {
		run(t, s1, "BEGIN")
		if _, err := run(t, s1, tc.lock); err != nil {
			t.Fatalf("%s: %v", tc.lock, err)
		}
		run(t, s2, "BEGIN")
		if _, err := run(t, s2, "SELECT v FROM t WHERE "+tc.free+" FOR UPDATE NOWAIT"); err != nil {
			t.Fatalf("after %s, a lock of %s: %s %s", tc.lock, tc.free, err.Code, err.Message)
		}
		mustFail(t, s2, "SELECT v FROM t WHERE "+tc.busy+" FOR UPDATE NOWAIT", "55P03", "")
		run(t, s2, "ROLLBACK")
		run(t, s1, "ROLLBACK")
	}
	run(t, s1, "BEGIN")
	mustRun(t, s1, "SELECT a FROM t WHERE a = 1 FOR SHARE", "1\n1\nSELECT 2")
	mustRun(t, s2, "SELECT locked_row, modes FROM pgrowlocks('t')", "(1,x)|{\"For Share\"}\n(1,y)|{\"For Share\"}\nSELECT 2")
	run(t, s1, "ROLLBACK")
	// pg_locks names a tuple lock's row by its key, as pgrowlocks does
	tbl, _ := eng.cat.Get("t")
	if rel, k := s1.keyText(tbl.Engine, keys.MustPack(int64(2), "x")); rel != "t" || k != "(2,x)" {
		t.Fatalf("keyText: %q %q", rel, k)
	}
}

// TestCompositeKeyUpdateVsKeyShare: FOR KEY SHARE on (1, 'x') lets another
// session update its non-key column at once, and makes an update of either
// key column wait (the waiter shows in DB.Locks()) until the locker ends,
// as for one-column keys and in PostgreSQL. An insert of a key an
// in-progress transaction inserted waits for it, then is 23505 (it
// committed) or goes in (it rolled back).
func TestCompositeKeyUpdateVsKeyShare(t *testing.T) {
	eng, s1 := newTestSession(t)
	s2 := eng.NewSession(2, "test", nil)
	t.Cleanup(s2.Close)
	mustRun(t, s1, "CREATE TABLE t (a int, b text, v int, PRIMARY KEY (a, b)); INSERT INTO t VALUES (1, 'x', 0), (1, 'y', 0)", "CREATE TABLE\nINSERT 0 2")
	for _, upd := range []string{"UPDATE t SET b = 'q' WHERE a = 1 AND b = 'x'", "UPDATE t SET a = 5 WHERE b = 'x'"} {
		mustRun(t, s1, "BEGIN; SELECT v FROM t WHERE a = 1 AND b = 'x' FOR KEY SHARE", "BEGIN\n0\nSELECT 1")
		mustRun(t, s2, "BEGIN; UPDATE t SET v = v + 1 WHERE a = 1 AND b = 'x'", "BEGIN\nUPDATE 1")
		res := startAsync(t, s2, upd)
		waitForLockWait(t, eng, s2)
		mustRun(t, s1, "COMMIT", "COMMIT")
		if out, err := res(); err != nil || out != "UPDATE 1" {
			t.Fatalf("%s: %q %v", upd, out, err)
		}
		mustRun(t, s2, "ROLLBACK", "ROLLBACK")
	}
	for _, end := range []string{"COMMIT", "ROLLBACK"} {
		mustRun(t, s1, "BEGIN; INSERT INTO t VALUES (3, 'n', 1)", "BEGIN\nINSERT 0 1")
		res := startAsync(t, s2, "INSERT INTO t VALUES (3, 'n', 2)")
		waitForLockWait(t, eng, s2)
		mustRun(t, s1, end, end)
		out, err := res()
		if end == "COMMIT" {
			if err == nil || err.Code != pgerror.CodeUniqueViolation || err.Detail != "Key (a, b)=(3, n) already exists." {
				t.Fatalf("after the inserter's commit: %q %v", out, err)
			}
			mustRun(t, s1, "DELETE FROM t WHERE a = 3", "DELETE 1")
			continue
		}
		if err != nil || out != "INSERT 0 1" {
			t.Fatalf("after the inserter's rollback: %q %v", out, err)
		}
	}
	mustRun(t, s1, "SELECT * FROM t ORDER BY a, b", "1|x|0\n1|y|0\n3|n|2\nSELECT 3")
}

// BenchmarkCompositeKeyLookup: a point lookup on the whole key and a
// prefix scan on its first column read only their rows, against a
// filter on a non-key column that reads the table (10 000 rows).
func BenchmarkCompositeKeyLookup(b *testing.B) {
	_, s := newTestSession(b)
	if _, err := run(b, s, "CREATE TABLE t (a int, b int, v int, PRIMARY KEY (a, b))"); err != nil {
		b.Fatal(err)
	}
	for a := 0; a < 100; a++ {
		q := "INSERT INTO t SELECT " + strconv.Itoa(a) + ", g, g FROM generate_series(1, 100) g"
		if _, err := run(b, s, q); err != nil {
			b.Fatal(q, err)
		}
	}
	for _, q := range []struct{ name, sql, want string }{
		{"point", "SELECT v FROM t WHERE a = 50 AND b = 7", "7\nSELECT 1"},
		{"prefix", "SELECT v FROM t WHERE a = 50 AND v > 98", "99\n100\nSELECT 2"},
		{"filter", "SELECT v FROM t WHERE v = 7 AND a + 0 = 50", "7\nSELECT 1"},
	} {
		b.Run(q.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if out, err := run(b, s, q.sql); err != nil || out != q.want {
					b.Fatalf("%s: %q %v", q.sql, out, err)
				}
			}
		})
	}
}
