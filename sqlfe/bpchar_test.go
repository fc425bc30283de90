package sqlfe

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// character(n) (bpchar), issue 10's last SQL value gap. Every expected
// outcome below is what PostgreSQL 15.18 answered (psql, C.UTF-8).

func TestCharType(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE t (k int PRIMARY KEY, c char(5), d character(3), e char, f bpchar)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO t VALUES (1, 'ab', 'x', 'y', 'z  ')", "INSERT 0 1")
	// blank-padded on output; || and length see it as text, without the padding
	mustRun(t, s, "SELECT c, '|'||c||'|', length(c), c || 'x', c::text || 'x', d, e, f, f || '|', length(f) FROM t",
		"ab   ||ab||2|abx|abx|x  |y|z  |z||1\nSELECT 1")
	mustRun(t, s, "SELECT 'ab'::char(5), 'ab'::char(5)::text, 'abcdef'::char(3), 'abc   '::char(3), 'ab  '::char(1), 'abc'::char, 'abc'::character, 'ab  '::bpchar || '|'",
		"ab   |ab|abc|abc|a|a|a|ab|\nSELECT 1")
	mustRun(t, s, "SELECT 'ab'::bpchar(3), 'abc'::pg_catalog.bpchar(2), CAST('ab' AS character(4)) || '|', 'ab'::char(3)::char(5) || '|', 'ab'::char(5)::char(1)",
		"ab |ab|ab||ab||a\nSELECT 1")
	// at the length: accepted; one past: 22001 unless the excess is spaces (cut)
	mustRun(t, s, "INSERT INTO t (k, c) VALUES (2, 'abcde'), (3, 'abcde   ') RETURNING c || '|'", "abcde|\nabcde|\nINSERT 0 2")
	mustFail(t, s, "INSERT INTO t (k, c) VALUES (4, 'abcdef')", pgerror.CodeStringTooLong, "value too long for type character(5)")
	mustFail(t, s, "INSERT INTO t (k, c) VALUES (4, 'abcdef   ')", pgerror.CodeStringTooLong, "value too long for type character(5)")
	mustFail(t, s, "UPDATE t SET d = 'abcd' WHERE k = 1", pgerror.CodeStringTooLong, "value too long for type character(3)")
	mustRun(t, s, "UPDATE t SET d = 'abc   ' WHERE k = 1 RETURNING d || '|'", "abc|\nUPDATE 1")
	mustFail(t, s, "INSERT INTO t (k, e) VALUES (4, 'ab')", pgerror.CodeStringTooLong, "value too long for type character(1)")
	// trailing spaces are insignificant between bpchars; bpchar against text compares as text
	mustRun(t, s, "SELECT k, c = 'abcde', c = 'abcde  ', c = 'abcde   '::text, c::text = 'abcde', 'abcde '::text = c FROM t WHERE k = 3",
		"3|t|t|f|t|f\nSELECT 1")
	mustRun(t, s, "SELECT 'ab'::char(3) = 'ab '::text, 'ab'::char(3) = 'ab'::char(5), 'ab'::char(3) < 'ab'::char(5), 'a  '::bpchar = 'a'::text, 'a'::char(2) = 'a'::varchar(3)",
		"f|t|f|t|t\nSELECT 1")
	mustRun(t, s, "SELECT 'ab'::char(3) IN ('ab', 'x'), 'ab'::char(3) IS DISTINCT FROM 'ab  ', ' '::char(3) = ''::char, ''::char(3) || '|', length(''::char(3))",
		"t|f|t|||0\nSELECT 1")
	mustFail(t, s, "SELECT c = 1 FROM t", pgerror.CodeUndefinedFunction, "operator does not exist: character = integer")
	// conversions to and from other types
	mustRun(t, s, "SELECT 1::char(3) || '|', true::char(5) || '|', 12345::char(3), '12 '::char(3)::int, 't '::char(3)::bool, 'ab'::char(3) || 'cd'::char(3), 'a'::char(3) || 1, 1 || 'a'::char(3)",
		"1||true||123|12|t|abcd|a1|1a\nSELECT 1")
	mustRun(t, s, "SELECT 'ab'::char(5)::varchar(5) || '|', 'ab'::char(5)::varchar || '|', 'ab '::varchar(5)::char(5) || '|'", "ab||ab||ab|\nSELECT 1")
	mustFail(t, s, "SELECT 'ab'::char(3)::int", pgerror.CodeInvalidText, `invalid input syntax for type integer: "ab "`)
	mustRun(t, s, "CREATE TABLE u (k int PRIMARY KEY, c char(3))", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO u VALUES (1, 12), (4, 'é'), (5, 'éé€'), (6, 'éé€ ')", "INSERT 0 4")
	mustFail(t, s, "INSERT INTO u VALUES (2, true)", pgerror.CodeStringTooLong, "value too long for type character(3)")
	mustFail(t, s, "INSERT INTO u VALUES (3, 1234)", pgerror.CodeStringTooLong, "value too long for type character(3)")
	mustFail(t, s, "INSERT INTO u VALUES (7, 'éé€x')", pgerror.CodeStringTooLong, "value too long for type character(3)")
	mustRun(t, s, "SELECT k, c || '|', length(c), c FROM u WHERE c < 'é' ORDER BY k", "1|12||2|12 \nSELECT 1")
	mustRun(t, s, "SELECT k, c FROM u WHERE c = '12' OR c = 'é   '", "1|12 \n4|é  \nSELECT 2")
	// the length limits
	mustFail(t, s, "CREATE TABLE z (k int PRIMARY KEY, c char(0))", pgerror.CodeInvalidParamValue, "length for type char must be at least 1")
	mustFail(t, s, "CREATE TABLE z (k int PRIMARY KEY, c char(10485761))", pgerror.CodeInvalidParamValue, "length for type char cannot exceed 10485760")
	mustFail(t, s, "SELECT 'a'::char(0)", pgerror.CodeInvalidParamValue, "length for type char must be at least 1")
	mustFail(t, s, "SELECT 'a'::character(10485761)", pgerror.CodeInvalidParamValue, "length for type char cannot exceed 10485760")
	mustRun(t, s, "CREATE TABLE z (k int PRIMARY KEY, c char(10485760))", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO z VALUES (1, 'x') RETURNING length(c)", "1\nINSERT 0 1")
	big, _ := run(t, s, "SELECT c FROM z")
	if want := "x" + strings.Repeat(" ", 10485759) + "\nSELECT 1"; big != want {
		t.Fatalf("char(10485760): got %d bytes, want %d", len(big), len(want))
	}
	// a type PostgreSQL's "char" (one byte) stays unsupported
	mustFail(t, s, `SELECT 'ab'::"char"`, pgerror.CodeFeatureNotSupp, "")
}

// A character(n) primary key: 'ab' and 'ab  ' are one key (23505), point
// and range lookups and ORDER BY ignore the padding.
func TestCharKey(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE pk (k char(4) PRIMARY KEY, v int)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO pk VALUES ('ab', 1)", "INSERT 0 1")
	for _, k := range []string{"ab  ", "ab ", "ab"} {
		_, err := run(t, s, "INSERT INTO pk VALUES ('"+k+"', 2)")
		if err == nil || err.Code != pgerror.CodeUniqueViolation || err.Detail != "Key (k)=(ab  ) already exists." {
			t.Fatalf("insert %q: %v", k, err)
		}
	}
	mustRun(t, s, "INSERT INTO pk VALUES ('a', 3), ('abc', 4), ('b', 5), ('', 6), (' a', 7)", "INSERT 0 5")
	mustRun(t, s, "SELECT k || '|', v FROM pk ORDER BY k", "||6\n a||7\na||3\nab||1\nabc||4\nb||5\nSELECT 6")
	mustRun(t, s, "SELECT k, v FROM pk WHERE k = 'ab'", "ab  |1\nSELECT 1")
	mustRun(t, s, "SELECT k, v FROM pk WHERE k = 'ab   '", "ab  |1\nSELECT 1")
	mustRun(t, s, "SELECT k, v FROM pk WHERE k IN ('b ', 'a')", "a   |3\nb   |5\nSELECT 2")
	mustRun(t, s, "SELECT k, v FROM pk WHERE k > 'ab' ORDER BY k DESC", "b   |5\nabc |4\nSELECT 2")
	mustRun(t, s, "SELECT k, v FROM pk WHERE k >= 'ab ' AND k <= 'abc  '", "ab  |1\nabc |4\nSELECT 2")
	mustFail(t, s, "UPDATE pk SET k = 'abc ' WHERE v = 1", pgerror.CodeUniqueViolation, `duplicate key value violates unique constraint "pk_pkey"`)
	mustFail(t, s, "INSERT INTO pk VALUES ('abcde', 9)", pgerror.CodeStringTooLong, "value too long for type character(4)")
	mustRun(t, s, "INSERT INTO pk VALUES ('abcd  ', 9) RETURNING k || '|', k", "abcd||abcd\nINSERT 0 1")
	mustRun(t, s, "UPDATE pk SET v = 10 WHERE k = 'abcd' RETURNING k", "abcd\nUPDATE 1")
	mustRun(t, s, "DELETE FROM pk WHERE k = ' a  ' RETURNING v", "7\nDELETE 1")
	mustRun(t, s, "SELECT * FROM pk", "    |6\na   |3\nab  |1\nabc |4\nabcd|10\nb   |5\nSELECT 6")
	// parameters: a text parameter against the key is a bpchar
	st, err := s.Prepare("SELECT v FROM pk WHERE k = $1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.ParamTypes()[0] != types.TBpchar {
		t.Fatalf("parameter type %s", st.ParamTypes()[0])
	}
	cols, _ := s.Describe(st)
	if len(cols) != 1 || cols[0].TypeModifier() != -1 {
		t.Fatalf("cols %+v", cols)
	}
	res, err := s.Execute(context.Background(), st, []types.Value{types.Text("abc  ")})
	if err != nil || len(res.Rows) != 1 || res.Rows[0][0].I != 4 {
		t.Fatalf("execute: %v %v", res, err)
	}
	// RowDescription: OID 1042 with typmod n+4 (bpchar without a length: -1)
	st, err = s.Prepare("SELECT k, k || 'x', 'ab'::char(5), 'ab'::char(5)::char(7), 'ab'::bpchar FROM pk", nil)
	if err != nil {
		t.Fatal(err)
	}
	cols, _ = s.Describe(st)
	var got []string
	for _, c := range cols {
		got = append(got, c.Name+":"+c.Type.String()+":"+strconv.Itoa(int(c.Type.OID()))+":"+strconv.Itoa(int(c.TypeModifier())))
	}
	if g := strings.Join(got, " "); g != "k:character:1042:8 ?column?:text:25:-1 bpchar:character:1042:9 bpchar:character:1042:11 bpchar:character:1042:-1" {
		t.Fatalf("describe: %s", g)
	}
	s.EndGroup()
}

// A character(n) primary key and column survive closing and reopening a
// pebble-backed database (the catalog keeps the length; keys come back
// padded).
func TestCharReopen(t *testing.T) {
	dir := t.TempDir()
	db, s := newDiskSession(t, dir)
	mustRun(t, s, "CREATE TABLE r (k char(3) PRIMARY KEY, c character(4)); INSERT INTO r VALUES ('a', 'x'), ('bc ', 'yz'), ('d', NULL)", "CREATE TABLE\nINSERT 0 3")
	db, s = reopenDisk(t, dir, db, s)
	mustRun(t, s, "SELECT k || '|', k, c FROM r ORDER BY k DESC", "d||d  |NULL\nbc||bc |yz  \na||a  |x   \nSELECT 3")
	mustRun(t, s, "SELECT c FROM r WHERE k = 'bc'", "yz  \nSELECT 1")
	mustFail(t, s, "INSERT INTO r VALUES ('a  ', 'w')", pgerror.CodeUniqueViolation, "")
	mustFail(t, s, "INSERT INTO r VALUES ('e', 'vwxyz')", pgerror.CodeStringTooLong, "value too long for type character(4)")
	mustFail(t, s, "INSERT INTO r VALUES ('abcd', 'v')", pgerror.CodeStringTooLong, "value too long for type character(3)")
}

// A bpchar primary key without a length keeps the trailing spaces it was
// written with (PostgreSQL stores the value as given), though they do not
// count for uniqueness.
func TestBpcharUnlimitedKey(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE b (k bpchar PRIMARY KEY, v int)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO b VALUES ('ab  ', 1), ('c', 2), ('', 3) RETURNING k, k || '|'", "ab  |ab|\nc|c|\n||\nINSERT 0 3")
	mustFail(t, s, "INSERT INTO b VALUES ('ab', 4)", pgerror.CodeUniqueViolation, "")
	mustRun(t, s, "SELECT k || '|', length(k), k, v FROM b WHERE k = 'ab' ORDER BY k", "ab||2|ab  |1\nSELECT 1")
	mustRun(t, s, "UPDATE b SET k = 'c   ' WHERE v = 2 RETURNING k", "c   \nUPDATE 1")
	mustRun(t, s, "SELECT * FROM b", "|3\nab  |1\nc   |2\nSELECT 3")
}
