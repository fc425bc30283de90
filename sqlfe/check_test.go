package sqlfe

import (
	"strings"
	"testing"

	"github.com/tupled/tupled/sql/pgerror"
)

// A CHECK constraint's violation carries PostgreSQL's message and the
// failing row, and COPY FROM checks it like INSERT (CONTEXT naming the
// line). (What each statement answers is in testdata/sql/check.test,
// checked against PostgreSQL.)
func TestCheckViolationMessageAndCopy(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE t (a int CHECK (a > 0), b text)", "CREATE TABLE")
	_, err := run(t, s, "INSERT INTO t VALUES (0, NULL)")
	if err == nil || err.Code != pgerror.CodeCheckViolation || err.Message != `new row for relation "t" violates check constraint "t_a_check"` ||
		err.Detail != "Failing row contains (0, null)." {
		t.Fatalf("INSERT: %+v", err)
	}
	got := copyOutcome(t, s, "", []byte("1\tx\n-5\ty\n"), 0)
	if !strings.HasPrefix(got, `ERROR 23514 new row for relation "t" violates check constraint "t_a_check" | COPY t, line 2`) {
		t.Fatalf("COPY: %s", got)
	}
	if got := copyOutcome(t, s, "", []byte("1\tx\n\\N\ty\n"), 0); got != "COPY 2\n1\tx\n\\N\ty\n" {
		t.Fatalf("COPY of a NULL: %q", got)
	}
	_, err = run(t, s, "ALTER TABLE t ADD CONSTRAINT big CHECK (a > 100)")
	if err == nil || err.Code != pgerror.CodeCheckViolation || err.Message != `check constraint "big" of relation "t" is violated by some row` {
		t.Fatalf("ADD CONSTRAINT: %+v", err)
	}
	for _, q := range []string{
		"CREATE TABLE bad (x int CHECK (now() IS NOT NULL))",
		"CREATE TABLE bad (x int CHECK (x > 0) NO INHERIT)",
		"CREATE TABLE bad (x text CHECK (x <> current_user))",
		"ALTER TABLE t RENAME COLUMN a TO z",
	} {
		if _, err := run(t, s, q); err == nil || err.Code != pgerror.CodeFeatureNotSupp {
			t.Errorf("%s: %v, want 0A000", q, err)
		}
	}
}
