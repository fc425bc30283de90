package sqlfe

import (
	"testing"

	"github.com/tupled/tupled/sql/pgerror"
)

// Keys of the typed key format (dates, timestamps, floats, numeric,
// interval) survive closing and reopening a pebble-backed database: the
// catalog keeps the format, rows come back with the text they were written
// with, key order and uniqueness hold, and a lookup by key finds its row.
func TestTypedKeyReopen(t *testing.T) {
	dir := t.TempDir()
	db, s := newDiskSession(t, dir)
	mustRun(t, s, "CREATE TABLE tk (day date, amount numeric, at timestamptz, PRIMARY KEY (day, amount, at)); "+
		"INSERT INTO tk VALUES ('2020-01-02', 1.50, '2020-01-02 10:00+00'), ('1900-05-06', -3, '1900-05-06 00:00+00'), ('2020-01-02', 0.5, '2021-01-01 00:00+00')", "CREATE TABLE\nINSERT 0 3")
	mustRun(t, s, "CREATE TABLE fk (f float8 PRIMARY KEY, d interval UNIQUE); INSERT INTO fk VALUES ('-0', '1 day'), (2.5, '2 hours')", "CREATE TABLE\nINSERT 0 2")
	db, s = reopenDisk(t, dir, db, s)
	mustRun(t, s, "SELECT day, amount, at FROM tk ORDER BY day, amount, at",
		"1900-05-06|-3|1900-05-06 00:00:00+00\n2020-01-02|0.5|2021-01-01 00:00:00+00\n2020-01-02|1.50|2020-01-02 10:00:00+00\nSELECT 3")
	mustRun(t, s, "SELECT amount FROM tk WHERE day = '2020-01-02' AND amount = 1.5 AND at = '2020-01-02 12:00+02'", "1.50\nSELECT 1")
	mustFail(t, s, "INSERT INTO tk VALUES ('2020-01-02', 1.500, '2020-01-02 10:00:00+00')", pgerror.CodeUniqueViolation, "")
	mustRun(t, s, "SELECT f FROM fk ORDER BY f", "-0\n2.5\nSELECT 2")
	mustFail(t, s, "INSERT INTO fk VALUES (0, '3 days')", pgerror.CodeUniqueViolation, "")
}
