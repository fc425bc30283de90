package sqlfe

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// FuzzSQL runs arbitrary SQL on a session with a table: every outcome is a
// result or an *Error with a SQLSTATE; never a panic.
func FuzzSQL(f *testing.F) {
	for _, s := range []string{
		"SELECT 1", "SELECT k, v FROM t WHERE k BETWEEN 1 AND 3 ORDER BY v DESC LIMIT 2",
		"SELECT * FROM t WHERE k IN (1, 2, NULL) FOR UPDATE SKIP LOCKED",
		"UPDATE t SET v = v * 2 + k WHERE s = 'x' OR b RETURNING *", "UPDATE t SET k = k + 10 WHERE k = 1",
		"DELETE FROM t WHERE k > 2 RETURNING k", "INSERT INTO t VALUES (9, 9, 'z', NULL)",
		"BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT * FROM t; COMMIT", "SET lock_timeout = '1s'; SHOW lock_timeout",
		"SELECT * FROM pg_locks", "SELECT * FROM pgrowlocks('t')", "SELECT 2147483647 + 1", "SELECT -9223372036854775807 - 2",
		"CREATE TABLE u (a text PRIMARY KEY, b bigint NOT NULL); DROP TABLE u", "SELECT $1", "SELECT 'a' || 1 || true",
		"SELECT k FROM t WHERE k > 'x'", "SELECT * FROM t ORDER BY 5", "SELECT * FROM t LIMIT -1",
		"CREATE TABLE c (k char(3) PRIMARY KEY, v bpchar); INSERT INTO c VALUES ('a', 'b  ') RETURNING k || v, length(k); SELECT * FROM c WHERE k = 'a  ' ORDER BY v",
		"SELECT 'abcdef'::char(3), 'ab'::character(5) = 'ab', 1::char || s FROM t", "SET myapp.x = 1; SHOW myapp.x; SHOW foo",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		_, s := newTestSession(t)
		if _, err := run(t, s, "CREATE TABLE t (k int PRIMARY KEY, v bigint, s text, b boolean); INSERT INTO t VALUES (1, 1, 'x', true), (2, 4, NULL, false), (3, 9, 'y', NULL)"); err != nil {
			t.Fatal(err)
		}
		sts, err := Parse(sql)
		if err != nil {
			if e := ToError(err); len(e.Code) != 5 {
				t.Fatalf("error without SQLSTATE: %v", err)
			}
			return
		}
		for _, st := range sts {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := s.Execute(ctx, st, nil)
			cancel()
			if err != nil {
				e := ToError(err)
				if len(e.Code) != 5 || e.Code == pgerror.CodeInternal {
					t.Fatalf("%q: internal or code-less error: %v", st.SQL, err)
				}
				break
			}
		}
		s.EndGroup()
	})
}

// FuzzExtended runs a statement through the extended protocol's path, as
// pgwire does: Prepare (Parse) with parameter type OIDs, Bind parameters in
// text or binary format (ParseText / ParseBinary), Describe, Execute. Every
// outcome is a result or an *Error with a SQLSTATE, never a panic or an
// XX000; rows have as many values as the description has columns; and the
// session is usable afterwards.
func FuzzExtended(f *testing.F) {
	for _, c := range []struct {
		sql    string
		oid    byte
		p1     string
		p2     []byte
		format byte
	}{
		{"SELECT $1::int + 1", 0, "41", nil, 0},
		{"SELECT k, v FROM t WHERE k = $1", 3, "1", []byte{0, 0, 0, 1}, 1},
		{"INSERT INTO t VALUES ($1, $2, 'a', true)", 3, "7", []byte{0, 0, 0, 0, 0, 0, 0, 9}, 2},
		{"UPDATE t SET s = $2 WHERE k = $1 RETURNING s", 3, "2", []byte("\xff"), 2},
		{"SELECT $1 || 'x', $2", 4, "a\x00b", []byte("é"), 0},
		{"SELECT * FROM t LIMIT $1 OFFSET $2", 2, "-1", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 3},
		{"SELECT pg_isolation_test_session_is_blocked($1, $2)", 3, "1", []byte("{1,2}"), 0},
		{"SELECT $1::varchar(2), $1::smallint", 0, "40000", nil, 0},
		{"SELECT 1" + strings.Repeat("+1", 2000), 0, "", nil, 0},
		{"SELECT $0", 0, "", nil, 0},
		{"SELECT $1::char(3) = $2, $2 || 'x'", 9, "ab", []byte("ab  "), 0},
	} {
		f.Add(c.sql, c.oid, c.p1, c.p2, c.format)
	}
	oids := []uint32{0, types.OIDBool, types.OIDInt8, types.OIDInt4, types.OIDText, 21, 1043, types.OIDInt4Array, 1700, types.OIDBpchar}
	f.Fuzz(func(t *testing.T, sql string, oid byte, p1 string, p2 []byte, format byte) {
		_, s := newTestSession(t)
		if _, err := run(t, s, "CREATE TABLE t (k int PRIMARY KEY, v bigint, s varchar(5), b boolean); INSERT INTO t VALUES (1, 1, 'x', true), (2, 4, NULL, false)"); err != nil {
			t.Fatal(err)
		}
		check := func(what string, err error) {
			if err == nil {
				return
			}
			if e := ToError(err); len(e.Code) != 5 || e.Code == pgerror.CodeInternal {
				t.Fatalf("%s %q: internal or code-less error: %v", what, sql, err)
			}
		}
		st, err := s.Prepare(sql, []uint32{oids[int(oid)%len(oids)], oids[int(oid/16)%len(oids)]})
		check("Prepare", err)
		if err != nil || st == nil {
			return
		}
		cols, err := s.Describe(st)
		check("Describe", err)
		if err != nil {
			return
		}
		var params []types.Value
		for i, typ := range st.ParamTypes() {
			raw := []byte(p1)
			if i%2 == 1 {
				raw = p2
			}
			var v types.Value
			switch {
			case format&(1<<(i%4)) != 0 && i < 4:
				v, err = types.ParseBinary(typ, raw)
			case format&0x80 != 0:
				v = types.Null(typ)
			default:
				v, err = types.ParseText(typ, string(raw))
			}
			check("Bind", err)
			if err != nil {
				return
			}
			params = append(params, v)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res, err := s.Execute(ctx, st, params)
		cancel()
		check("Execute", err)
		if err == nil && res.Cols != nil {
			if cols != nil && len(res.Cols) != len(cols) {
				t.Fatalf("%q: described %d columns, executed %d", sql, len(cols), len(res.Cols))
			}
			for _, r := range res.Rows {
				if len(r) != len(res.Cols) {
					t.Fatalf("%q: a row of %d values for %d columns", sql, len(r), len(res.Cols))
				}
			}
		}
		s.EndGroup()
		if _, err := run(t, s, "ROLLBACK; SELECT 1"); err != nil && err.Code != pgerror.CodeActiveTx {
			t.Fatalf("%q: the session is unusable afterwards: %s %s", sql, err.Code, err.Message)
		}
	})
}
