package sqlfe

import "testing"

// TestInsertSelectAndGenerateSeries: INSERT ... SELECT (from a table or
// from generate_series in FROM) and generate_series's rows, as PostgreSQL
// 15 printed them for the same statements.
func TestInsertSelectAndGenerateSeries(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE tn (id integer PRIMARY KEY, value integer not null)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO tn SELECT x,x FROM generate_series(1,2) x", "INSERT 0 2")
	mustRun(t, s, "INSERT INTO tn (id, value) SELECT g * 10, 1 FROM generate_series(1, 7, 3) g RETURNING *", "10|1\n40|1\n70|1\nINSERT 0 3")
	mustFail(t, s, "INSERT INTO tn SELECT x FROM generate_series(100,101) AS x", "23502", `null value in column "value" of relation "tn" violates not-null constraint`)
	mustFail(t, s, "INSERT INTO tn SELECT 1, 2, 3", "42601", "INSERT has more expressions than target columns")
	mustFail(t, s, "INSERT INTO tn (id) SELECT 1, 2", "42601", "INSERT has more expressions than target columns")
	mustFail(t, s, "INSERT INTO tn SELECT true, 1", "42804", `column "id" is of type integer but expression is of type boolean`)
	mustFail(t, s, "INSERT INTO tn SELECT 'a', 1", "22P02", `invalid input syntax for type integer: "a"`)
	mustRun(t, s, "INSERT INTO tn SELECT '3', '4'", "INSERT 0 1")
	mustRun(t, s, "INSERT INTO tn SELECT id + 1000, value FROM tn WHERE id < 20", "INSERT 0 4")
	mustRun(t, s, "SELECT id FROM tn ORDER BY id", "1\n2\n3\n10\n40\n70\n1001\n1002\n1003\n1010\nSELECT 10")
	mustRun(t, s, "SELECT * FROM generate_series(5, 1, -2)", "5\n3\n1\nSELECT 3")
	mustRun(t, s, "SELECT g FROM generate_series(1, 3) AS s(g)", "1\n2\n3\nSELECT 3")
	mustRun(t, s, "SELECT * FROM generate_series(9223372036854775806, 9223372036854775807)", "9223372036854775806\n9223372036854775807\nSELECT 2")
	mustFail(t, s, "SELECT * FROM generate_series(1, 3, 0)", "22023", "step size cannot equal zero")
}
