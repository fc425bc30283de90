package sqlfe

import (
	"encoding/binary"
	"testing"

	"github.com/tupled/tupled/sql/types"
)

// TestNumeric: numeric columns, literals, arithmetic, comparisons and
// casts print what PostgreSQL 15 printed for the same statements.
func TestNumeric(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE acc (id text PRIMARY KEY, bal numeric NOT NULL, n int)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO acc VALUES ('a', 600, 1), ('b', 1.50, 2), ('c', -0.005, 3), ('d', 12345678901234567890.1234, 4)", "INSERT 0 4")
	mustRun(t, s, "SELECT id, bal FROM acc ORDER BY bal", "c|-0.005\nb|1.50\na|600\nd|12345678901234567890.1234\nSELECT 4")
	mustRun(t, s, "UPDATE acc SET bal = bal + 100 WHERE id < 'c' RETURNING bal, bal * 2, bal - 0.5, -bal",
		"700|1400|699.5|-700\n101.50|203.00|101.00|-101.50\nUPDATE 2")
	mustRun(t, s, "SELECT id FROM acc WHERE bal > 100.5 ORDER BY id", "a\nb\nd\nSELECT 3")
	mustRun(t, s, "SELECT id FROM acc WHERE n = 1.0", "a\nSELECT 1")
	mustRun(t, s, "SELECT id FROM acc WHERE n = 1.5", "SELECT 0")
	mustRun(t, s, "SELECT id FROM acc WHERE n IN (2.0, 7)", "b\nSELECT 1")
	mustRun(t, s, "SELECT 1.5 + 2, 3 * 1.25, 1e3, 1.5e-3, 2.5::int, (-2.5)::int, '7.10'::numeric, 10::numeric, 99999999999999999999999",
		"3.5|3.75|1000|0.0015|3|-3|7.10|10|99999999999999999999999\nSELECT 1")
	mustFail(t, s, "SELECT 'x'::numeric", "22P02", `invalid input syntax for type numeric: "x"`)
	mustFail(t, s, "SELECT 3000000000.0::int", "22003", "integer out of range")
	// quotients at select_div_scale's scale (PostgreSQL 15's answers)
	mustRun(t, s, "SELECT 1.0 / 3, 2.50 / 0.5, -1 / 3.0, 1 % 0.3, 123456789.123 / 7",
		"0.33333333333333333333|5.0000000000000000|-0.33333333333333333333|0.1|17636684.160428571429\nSELECT 1")
	mustFail(t, s, "SELECT 1.0 / 0", "22012", "division by zero")
	// a numeric key: 1.5 and 1.50 are one key; a row shows the scale it was written with
	mustRun(t, s, "CREATE TABLE nkey (k numeric PRIMARY KEY); INSERT INTO nkey VALUES (1.50), (-2), (0.25) RETURNING k", "CREATE TABLE\n1.50\n-2\n0.25\nINSERT 0 3")
	mustFail(t, s, "INSERT INTO nkey VALUES (1.5)", "23505", `duplicate key value violates unique constraint "nkey_pkey"`)
	mustRun(t, s, "SELECT k FROM nkey WHERE k = 1.5000 UNION ALL SELECT max(k) FROM nkey WHERE k < 1", "1.50\n0.25\nSELECT 2")
	mustRun(t, s, "CREATE TABLE nk (k int PRIMARY KEY, v numeric(10,2)); INSERT INTO nk VALUES (1, 2.345) RETURNING v", "CREATE TABLE\n2.35\nINSERT 0 1")
}

// TestTimestamp: timestamp columns, input forms, output, ordering and
// casts print what PostgreSQL 15 printed for the same statements; the
// binary format is microseconds since 2000-01-01.
func TestTimestamp(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE u (id int PRIMARY KEY, name varchar, sometime timestamp)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO u (id, name) VALUES (1, 'olivier')", "INSERT 0 1")
	mustRun(t, s, "UPDATE u SET sometime = '1830-10-04' WHERE id = 1 RETURNING sometime", "1830-10-04 00:00:00\nUPDATE 1")
	mustRun(t, s, "INSERT INTO u VALUES (2, 'b', '2024-02-29 13:45:01.1234567'), (3, 'c', '2024-02-29T13:45'), (4, 'd', '1999-12-31 23:59:59.5')", "INSERT 0 3")
	mustRun(t, s, "SELECT id, sometime FROM u ORDER BY sometime",
		"1|1830-10-04 00:00:00\n4|1999-12-31 23:59:59.5\n3|2024-02-29 13:45:00\n2|2024-02-29 13:45:01.123457\nSELECT 4")
	mustRun(t, s, "SELECT id FROM u WHERE sometime > '2000-01-01' ORDER BY id", "2\n3\nSELECT 2")
	mustRun(t, s, "SELECT sometime::text FROM u WHERE id = 1", "1830-10-04 00:00:00\nSELECT 1")
	mustFail(t, s, "SELECT '2024-13-01'::timestamp", "22008", `date/time field value out of range: "2024-13-01"`)
	mustFail(t, s, "SELECT 'x'::timestamp", "22007", `invalid input syntax for type timestamp: "x"`) // invalid_datetime_format, as PostgreSQL says
	for _, c := range []struct {
		s  string
		us int64
	}{{"2000-01-01 00:00:00", 0}, {"2000-01-01 00:00:00.000001", 1}, {"1830-10-04 00:00:00", -5340816000000000}} {
		v, err := types.ParseText(types.TTimestamp, c.s)
		if err != nil {
			t.Fatal(err)
		}
		b := v.AppendBinary(nil)
		if got := int64(binary.BigEndian.Uint64(b)); got != c.us {
			t.Errorf("%s: binary %d, want %d", c.s, got, c.us)
		}
		if back, err := types.ParseBinary(types.TTimestamp, b); err != nil || back.S != c.s {
			t.Errorf("%s: read back %v %v", c.s, back, err)
		}
	}
}
