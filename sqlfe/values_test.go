package sqlfe

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// Every expected outcome below is what PostgreSQL 15.18 answered.

// Finding 9 (SQL part): a select list wider than a RowDescription can
// describe hung the client. PostgreSQL's limit is 1664 entries (54011).
func TestTargetListLimit(t *testing.T) {
	_, s := newTestSession(t)
	ones := func(n int) string { return strings.TrimSuffix(strings.Repeat("1,", n), ",") }
	mustRun(t, s, "SELECT "+ones(1664), ones(1664)[:0]+strings.ReplaceAll(ones(1664), ",", "|")+"\nSELECT 1")
	mustFail(t, s, "SELECT "+ones(1665), pgerror.CodeTooManyColumns, "target lists can have at most 1664 entries")
	mustFail(t, s, "SELECT "+ones(70000), pgerror.CodeTooManyColumns, "target lists can have at most 1664 entries")
	mustRun(t, s, "CREATE TABLE w (k int PRIMARY KEY, v int)", "CREATE TABLE")
	ks := func(n int) string { return strings.TrimSuffix(strings.Repeat("k,", n), ",") }
	mustRun(t, s, "SELECT *, "+ks(1662)+" FROM w", "SELECT 0") // * counts its columns
	mustFail(t, s, "SELECT *, "+ks(1663)+" FROM w", pgerror.CodeTooManyColumns, "")
	mustRun(t, s, "INSERT INTO w VALUES (1, 1) RETURNING "+ks(1664), strings.ReplaceAll(ks(1664), "k", "1")[:0]+strings.Repeat("1|", 1663)+"1\nINSERT 0 1")
	mustFail(t, s, "INSERT INTO w VALUES (2, 2) RETURNING "+ks(1665), pgerror.CodeTooManyColumns, "")
	mustRun(t, s, "SELECT k FROM w", "1\nSELECT 1")
}

// Finding 10: integer ranges in constants, folding, casts, arithmetic and
// columns.
func TestIntegerRanges(t *testing.T) {
	_, s := newTestSession(t)
	mustFail(t, s, "SELECT -((-2147483648)::int)", pgerror.CodeNumericRange, "integer out of range")
	mustFail(t, s, "SELECT -(-9223372036854775808)::bigint", pgerror.CodeNumericRange, "bigint out of range")
	mustFail(t, s, "SELECT 9223372036854775807 + 1", pgerror.CodeNumericRange, "bigint out of range")
	mustFail(t, s, "SELECT 9223372036854775807 * 2", pgerror.CodeNumericRange, "bigint out of range")
	mustFail(t, s, "SELECT (-9223372036854775807 - 1) / -1", pgerror.CodeNumericRange, "bigint out of range")
	mustFail(t, s, "SELECT -9223372036854775807 - 2", pgerror.CodeNumericRange, "bigint out of range")
	mustFail(t, s, "SELECT 3000000000::int", pgerror.CodeNumericRange, "integer out of range")
	mustFail(t, s, "SELECT '3000000000'::int", pgerror.CodeNumericRange, `value "3000000000" is out of range for type integer`)
	mustFail(t, s, "SELECT 40000::smallint", pgerror.CodeNumericRange, "smallint out of range")
	mustFail(t, s, "SELECT '40000'::smallint", pgerror.CodeNumericRange, `value "40000" is out of range for type smallint`)
	mustRun(t, s, "SELECT -2147483648, -9223372036854775808, 32767::smallint, '-32768'::int2", "-2147483648|-9223372036854775808|32767|-32768\nSELECT 1")

	// -2147483648 is an integer constant, as PostgreSQL folds it
	st, err := s.Prepare("SELECT -2147483648, 2147483648, -(2147483648), -2147483649", nil)
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := s.Describe(st)
	var types []string
	for _, c := range cols {
		types = append(types, c.Type.String())
	}
	if got := strings.Join(types, " "); got != "integer bigint integer bigint" {
		t.Fatalf("types: %s", got)
	}

	mustRun(t, s, "CREATE TABLE i (k int PRIMARY KEY, a smallint, b int, c bigint)", "CREATE TABLE")
	mustFail(t, s, "INSERT INTO i VALUES (1, 40000)", pgerror.CodeNumericRange, "smallint out of range")
	mustFail(t, s, "INSERT INTO i VALUES (1, '40000')", pgerror.CodeNumericRange, `value "40000" is out of range for type smallint`)
	mustFail(t, s, "INSERT INTO i VALUES (1, 'x')", pgerror.CodeInvalidText, `invalid input syntax for type smallint: "x"`)
	mustFail(t, s, "INSERT INTO i VALUES (1, 40000::bigint)", pgerror.CodeNumericRange, "smallint out of range")
	mustFail(t, s, "INSERT INTO i VALUES (1, 1, 3000000000)", pgerror.CodeNumericRange, "integer out of range")
	mustFail(t, s, "INSERT INTO i VALUES (-((-2147483648)::int))", pgerror.CodeNumericRange, "integer out of range")
	mustRun(t, s, "INSERT INTO i VALUES (1, -32768, -2147483648, -9223372036854775808) RETURNING *", "1|-32768|-2147483648|-9223372036854775808\nINSERT 0 1")
	mustFail(t, s, "UPDATE i SET a = a - 1", pgerror.CodeNumericRange, "smallint out of range")
	mustFail(t, s, "UPDATE i SET b = -b", pgerror.CodeNumericRange, "integer out of range")
	mustFail(t, s, "UPDATE i SET c = -c", pgerror.CodeNumericRange, "bigint out of range")
	mustFail(t, s, "UPDATE i SET c = c - 1", pgerror.CodeNumericRange, "bigint out of range")
	mustRun(t, s, "UPDATE i SET a = a + 1, b = b + 1, c = c + 1 RETURNING a, b, c", "-32767|-2147483647|-9223372036854775807\nUPDATE 1")
	mustRun(t, s, "SELECT * FROM i", "1|-32767|-2147483647|-9223372036854775807\nSELECT 1")
	// a smallint column survives the catalog's reload
	eng2, err := NewExecutor(t.Context(), s.eng.db, nil)
	if err != nil {
		t.Fatal(err)
	}
	s2 := eng2.NewSession(2, "test", nil)
	defer s2.Close()
	mustFail(t, s2, "INSERT INTO i VALUES (2, 32768)", pgerror.CodeNumericRange, "smallint out of range")
}

// Finding 10: varchar(n) lengths.
func TestVarcharLength(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE v (k int PRIMARY KEY, a varchar(3), c varchar)", "CREATE TABLE")
	mustFail(t, s, "INSERT INTO v VALUES (1, 'abcdef')", pgerror.CodeStringTooLong, "value too long for type character varying(3)")
	mustFail(t, s, "INSERT INTO v VALUES (1, 'abcd ')", pgerror.CodeStringTooLong, "value too long for type character varying(3)")
	mustFail(t, s, "INSERT INTO v VALUES (1, 'éé€x')", pgerror.CodeStringTooLong, "value too long for type character varying(3)")
	mustRun(t, s, "INSERT INTO v VALUES (1, 'ab '), (2, 'abc   '), (5, 'éé€'), (6, 1234::text::varchar(3)) RETURNING a || '|'", "ab |\nabc|\néé€|\n123|\nINSERT 0 4")
	mustFail(t, s, "UPDATE v SET a = a || 'x' WHERE k = 1", pgerror.CodeStringTooLong, "value too long for type character varying(3)")
	mustRun(t, s, "UPDATE v SET c = 'abcdef' || k WHERE k = 1 RETURNING c", "abcdef1\nUPDATE 1")
	mustRun(t, s, "SELECT 'abcdef'::varchar(3), 'abc  '::varchar(3), 'éé€x'::varchar(2)", "abc|abc|éé\nSELECT 1")
	mustFail(t, s, "CREATE TABLE z (k int PRIMARY KEY, a varchar(0))", pgerror.CodeInvalidParamValue, "length for type varchar must be at least 1")
	mustFail(t, s, "CREATE TABLE z (k int PRIMARY KEY, a varchar(10485761))", pgerror.CodeInvalidParamValue, "length for type varchar cannot exceed 10485760")
	// a varchar primary key too
	mustRun(t, s, "CREATE TABLE vk (k varchar(2) PRIMARY KEY)", "CREATE TABLE")
	mustFail(t, s, "INSERT INTO vk VALUES ('abc')", pgerror.CodeStringTooLong, "value too long for type character varying(2)")
	mustRun(t, s, "INSERT INTO vk VALUES ('ab  ') RETURNING k || '|'", "ab|\nINSERT 0 1")
}

// Finding 10: || with non-text operands, as PostgreSQL's anynonarray || text.
func TestConcatOperands(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE b (k int PRIMARY KEY, b boolean, n bigint, s text); INSERT INTO b VALUES (1, true, 5, 'x')", "CREATE TABLE\nINSERT 0 1")
	mustRun(t, s, "SELECT 'one' || b, b || 'one', 'id-' || k, k || '-x', 'n' || n, s || b, s || k, b::text, 'a' || NULL::int FROM b",
		"onetrue|trueone|id-1|1-x|n5|xtrue|x1|true|NULL\nSELECT 1")
	mustRun(t, s, "SELECT 'one' || true, 'one' || 1::bool, NULL || NULL", "onetrue|onetrue|NULL\nSELECT 1")
	mustFail(t, s, "SELECT k || k FROM b", pgerror.CodeUndefinedFunction, "operator does not exist: integer || integer")
	mustFail(t, s, "SELECT true || false", pgerror.CodeUndefinedFunction, "operator does not exist: boolean || boolean")
	mustRun(t, s, "INSERT INTO b (k, s) VALUES (2, true), (3, 5); SELECT s FROM b ORDER BY k", "INSERT 0 2\nx\ntrue\n5\nSELECT 3")
}

// Finding 10: text must be UTF-8 without NUL (22021), in literals, query
// text and parameters.
func TestEncodingChecks(t *testing.T) {
	_, s := newTestSession(t)
	mustFail(t, s, `SELECT E'a\x00b'`, pgerror.CodeCharacterNotInRepertoire, `invalid byte sequence for encoding "UTF8": 0x00`)
	mustFail(t, s, `SELECT E'\xff'`, pgerror.CodeCharacterNotInRepertoire, `invalid byte sequence for encoding "UTF8": 0xff`)
	mustFail(t, s, "SELECT 'a\xffb'", pgerror.CodeCharacterNotInRepertoire, `invalid byte sequence for encoding "UTF8": 0xff`)
	mustFail(t, s, "SELECT 'a\xe2\x28\xa1'", pgerror.CodeCharacterNotInRepertoire, `invalid byte sequence for encoding "UTF8": 0xe2 0x28 0xa1`)
	mustFail(t, s, "SELECT 1\x00; SELECT 2", pgerror.CodeCharacterNotInRepertoire, `invalid byte sequence for encoding "UTF8": 0x00`)
	mustRun(t, s, "SELECT 'é€😀'", "é€😀\nSELECT 1")
	for _, p := range []string{"a\x00b", "\xff", "\xed\xa0\x80" /* a surrogate */} {
		if _, err := types.ParseText(types.TText, p); err == nil || ToError(err).Code != pgerror.CodeCharacterNotInRepertoire {
			t.Fatalf("ParseText(%q): %v", p, err)
		}
		if _, err := types.ParseText(types.TInt4, p); err == nil || ToError(err).Code != pgerror.CodeCharacterNotInRepertoire {
			t.Fatalf("ParseText(int4, %q): %v", p, err)
		}
		if _, err := types.ParseBinary(types.TText, []byte(p)); err == nil || ToError(err).Code != pgerror.CodeCharacterNotInRepertoire {
			t.Fatalf("ParseBinary(%q): %v", p, err)
		}
	}
	if v, err := types.ParseText(types.TText, "é"); err != nil || v.S != "é" {
		t.Fatal(v, err)
	}
}

// Finding 10: timeouts are range-checked as PostgreSQL's integer GUCs in
// milliseconds (0 .. INT_MAX).
func TestTimeoutRange(t *testing.T) {
	_, s := newTestSession(t)
	mustFail(t, s, "SET lock_timeout = '100000000000 s'", pgerror.CodeInvalidParamValue, `invalid value for parameter "lock_timeout": "100000000000 s"`)
	mustFail(t, s, "SET lock_timeout = '2147483648 ms'", pgerror.CodeInvalidParamValue, `invalid value for parameter "lock_timeout": "2147483648 ms"`)
	mustFail(t, s, "SET lock_timeout = '25d'", pgerror.CodeInvalidParamValue, "")
	mustFail(t, s, "SET lock_timeout = -1", pgerror.CodeInvalidParamValue, `-1 ms is outside the valid range for parameter "lock_timeout" (0 .. 2147483647)`)
	mustFail(t, s, "SET statement_timeout = '100000000000 s'", pgerror.CodeInvalidParamValue, `invalid value for parameter "statement_timeout": "100000000000 s"`)
	mustFail(t, s, "SET deadlock_timeout = '100000000000 s'", pgerror.CodeInvalidParamValue, `invalid value for parameter "deadlock_timeout": "100000000000 s"`)
	mustFail(t, s, "SET deadlock_timeout = 0", pgerror.CodeInvalidParamValue, `0 ms is outside the valid range for parameter "deadlock_timeout" (1 .. 2147483647)`)
	mustFail(t, s, "SET idle_in_transaction_session_timeout = '100000000000 s'", pgerror.CodeInvalidParamValue, "")
	_, err := run(t, s, "SET lock_timeout = '100000000000 s'")
	if err.Hint != "Value exceeds integer range." {
		t.Fatalf("hint %q", err.Hint)
	}
	mustRun(t, s, "SET lock_timeout = '2147483647 ms'; SHOW lock_timeout", "SET\n2147483647ms\nSHOW")
	mustRun(t, s, "SET lock_timeout = '24d'; SHOW lock_timeout", "SET\n24d\nSHOW")
	mustRun(t, s, "SET lock_timeout = '1.5'; SHOW lock_timeout", "SET\n2ms\nSHOW")
	mustRun(t, s, "SET lock_timeout = '100us'; SHOW lock_timeout", "SET\n0\nSHOW")
	// locks still work after the refused settings
	mustRun(t, s, "SET lock_timeout = '1s'; CREATE TABLE t (k int PRIMARY KEY); INSERT INTO t VALUES (1); SELECT k FROM t FOR UPDATE", "SET\nCREATE TABLE\nINSERT 0 1\n1\nSELECT 1")
}

// Finding 11: SQLSTATEs of PostgreSQL.
func TestSQLStates(t *testing.T) {
	_, s := newTestSession(t)
	mustFail(t, s, "SELECT 1 OFFSET -1", pgerror.CodeInvalidOffset, "OFFSET must not be negative")
	mustFail(t, s, "SELECT 1 LIMIT -1", pgerror.CodeInvalidRowCount, "LIMIT must not be negative")
	mustFail(t, s, "SELECT true::bigint", pgerror.CodeCannotCoerce, "cannot cast type boolean to bigint")
	mustFail(t, s, "SELECT 1::bigint::bool", pgerror.CodeCannotCoerce, "cannot cast type bigint to boolean")
	mustFail(t, s, "SELECT true::smallint", pgerror.CodeCannotCoerce, "cannot cast type boolean to smallint")
	mustFail(t, s, "SELECT 1::int4[]::bigint", pgerror.CodeCannotCoerce, "cannot cast type integer to integer[]")
	mustRun(t, s, "SELECT true::int, 1::bool, 0::bool, true::text", "1|t|f|true\nSELECT 1")
	mustFail(t, s, "SELECT $0", pgerror.CodeUndefinedParameter, "there is no parameter $0")
	mustFail(t, s, "SELECT 1::foo", pgerror.CodeUndefinedObject, `type "foo" does not exist`)
	mustFail(t, s, "SELECT 1::int[]::foo[]", pgerror.CodeUndefinedObject, `type "foo[]" does not exist`)
	mustFail(t, s, "CREATE TABLE x (a foo)", pgerror.CodeUndefinedObject, `type "foo" does not exist`)
	mustFail(t, s, "SELECT '1'::xml", pgerror.CodeFeatureNotSupp, "")
	mustFail(t, s, "SELECT foo(1)", pgerror.CodeUndefinedFunction, "function foo(integer) does not exist")
	mustFail(t, s, "SELECT foo('a')", pgerror.CodeUndefinedFunction, "function foo(unknown) does not exist")
	mustFail(t, s, "SELECT foo()", pgerror.CodeUndefinedFunction, "function foo() does not exist")
	mustFail(t, s, "SELECT foo(1, 'a', true)", pgerror.CodeUndefinedFunction, "function foo(integer, unknown, boolean) does not exist")
	mustFail(t, s, "SELECT foo(1::bigint, NULL)", pgerror.CodeUndefinedFunction, "function foo(bigint, unknown) does not exist")
	mustFail(t, s, "SELECT public.foo(1)", pgerror.CodeUndefinedFunction, "function public.foo(integer) does not exist")
	mustFail(t, s, "SELECT pg_backend_pid(1)", pgerror.CodeUndefinedFunction, "function pg_backend_pid(integer) does not exist")
	mustFail(t, s, "SELECT to_hex(255)", pgerror.CodeFeatureNotSupp, "") // PostgreSQL has it; tupled does not
	mustRun(t, s, "SELECT lower('AÉ'), upper('aé')", "aé|AÉ\nSELECT 1")
	_, err := run(t, s, "SELECT foo(1)")
	if err.Hint == "" || err.Position != 8 {
		t.Fatalf("hint %q position %d", err.Hint, err.Position)
	}
}

// Errors of the engine keep their SQLSTATE and message through the front
// end (the engine's size limits, 54000, arrive this way).
func TestEngineSQLStatePassThrough(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE t (k int PRIMARY KEY, v int)", "CREATE TABLE")
	mustRun(t, s, "BEGIN READ ONLY", "BEGIN")
	mustFail(t, s, "INSERT INTO t VALUES (1, 1)", "25006", tupled.ErrReadOnly.Error())
	mustRun(t, s, "ROLLBACK", "ROLLBACK")
	for _, err := range []error{tupled.ErrIO, tupled.ErrInvalid, tupled.ErrReadOnly, tupled.ErrSerialization} {
		wrapped := fmt.Errorf("key of 40000 bytes: %w", err)
		tbl := &catalog.Table{Name: "t"}
		for _, e := range []*pgerror.Error{ToError(wrapped), engineError(wrapped, tbl), ToError(dupKeyError(wrapped, tbl, []types.Value{types.Int4(1)}))} {
			if e.Code != tupled.SQLState(err) || e.Message != wrapped.Error() {
				t.Fatalf("%v: got %s %q", err, e.Code, e.Message)
			}
		}
	}
}

// A simple query has no parameters: $n is 42P02, naming the first one, as
// PostgreSQL says (not the extended protocol's 08P01 about Bind).
func TestSimpleQueryParameter(t *testing.T) {
	_, s := newTestSession(t)
	mustFail(t, s, "SELECT 1, $2, $1", pgerror.CodeUndefinedParameter, "there is no parameter $2")
	_, err := run(t, s, "SELECT 1; SELECT 1, $2, $1")
	if err.Position != 21 {
		t.Fatalf("position %d", err.Position)
	}
	// positions count from the start of the query string, not of the statement
	if _, err := run(t, s, "SELECT 1; SELECT 1::foo"); err.Position != 21 {
		t.Fatalf("position %d", err.Position)
	}
	st, perr := s.Prepare("SELECT $1::int + 1", nil)
	if perr != nil {
		t.Fatal(perr)
	}
	res, xerr := s.Execute(t.Context(), st, []types.Value{types.Int4(41)})
	if xerr != nil || res.Rows[0][0].I != 42 {
		t.Fatal(res, xerr)
	}
	s.EndGroup()
}
