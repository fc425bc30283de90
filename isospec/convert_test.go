package isospec

import (
	"strings"
	"testing"
)

const convSpec = `
setup { create t; insert 1 10 }
session s1
setup { begin }
step s1a { lock 1 update }
step s1b { get 1; get 2; scan; scan to 0 }
step s1c { commit; commit }
step s1d { sleep 10; rowlocks }
session s2
setup { begin repeatable read }
step s2a { lock 1 share skip locked }
step s2b { update 1 x; delete 2 }
step s2c { insert 1 y }
step s2d {
  lock 1 keyshare
}
permutation s1a s2a s2b s1b s1c s2c s1d s2d
`

func mustParse(t *testing.T, src string) (*Spec, *Spec) {
	t.Helper()
	ours, err := Parse("c.spec", src)
	if err != nil {
		t.Fatal(err)
	}
	twin, err := ParseRaw("c.pg.spec", Twin(ours, "c.spec"))
	if err != nil {
		t.Fatal(err)
	}
	return ours, twin
}

func TestConvert(t *testing.T) {
	ours, err := Parse("c.spec", convSpec)
	if err != nil {
		t.Fatal(err)
	}
	// A twin whose step s2d spans two lines, as hand-written specs do.
	twinSrc := strings.Replace(Twin(ours, "c.spec"), "WHERE k = '1' FOR KEY SHARE;", "WHERE k = '1'\n  FOR KEY SHARE;", 1)
	twin, err := ParseRaw("c.pg.spec", twinSrc)
	if err != nil {
		t.Fatal(err)
	}
	pg := `Parsed test spec with 2 sessions

starting permutation: s1a s2a s2b s1b s1c s2c s1d s2d
step s1a: SELECT v FROM t WHERE k = '1' FOR UPDATE;
 v
--
10
(1 row)

step s2a: SELECT v FROM t WHERE k = '1' FOR SHARE SKIP LOCKED;
v
-
(0 rows)

step s2b: UPDATE t SET v = 'x' WHERE k = '1' RETURNING k; DELETE FROM t WHERE k = '2' RETURNING k; <waiting ...>
step s1b: SELECT v FROM t WHERE k = '1'; SELECT v FROM t WHERE k = '2'; SELECT k, v FROM t ORDER BY k; SELECT k, v FROM t WHERE k < '0' ORDER BY k;
 v
--
10
(1 row)

v
-
(0 rows)

k| v
-+--
1|10
(1 row)

k|v
-+-
(0 rows)

step s1c: COMMIT; COMMIT;
s1: WARNING:  there is no transaction in progress
step s2b: <... completed>
ERROR:  could not serialize access due to concurrent delete
step s2c: INSERT INTO t VALUES ('1', 'y');
ERROR:  current transaction is aborted, commands ignored until end of transaction block
step s1d: SELECT pg_sleep(0.01); SELECT * FROM rowlocks('t');
pg_sleep
--------
        
(1 row)

k|multi|lockers                        
-+-----+-------------------------------
1|t    |s2:Key Share,s1:For No Key Update
(1 row)

step s2d: SELECT v FROM t WHERE k = '1'
  FOR KEY SHARE;
ERROR:  duplicate key value violates unique constraint "t_pkey"
`
	got, err := Convert(ours, twin, pg)
	if err != nil {
		t.Fatal(err)
	}
	want := `Parsed test spec with 2 sessions

starting permutation: s1a s2a s2b s1b s1c s2c s1d s2d
step s1a: lock 1 update
=> 10
step s2a: lock 1 share skip locked
=> skipped
step s2b: update 1 x; delete 2 <waiting ...>
step s1b: get 1; get 2; scan; scan to 0
=> 10
=> not found
=> 1:10
=> (no rows)
step s1c: commit; commit
s1: WARNING:  there is no transaction in progress
step s2b: <... completed>
ERROR:  could not serialize access due to concurrent update (40001)
step s2c: insert 1 y
ERROR:  current transaction is aborted, commands ignored until end of transaction block (25P02)
step s1d: sleep 10; rowlocks
=> 1 multi s1:nokeyupdate s2:keyshare
step s2d: lock 1 keyshare
ERROR:  duplicate key value violates unique constraint (23505)
`
	if got != want {
		t.Errorf("(- want, + got)\n%s", Diff(want, got))
	}
}

func TestConvertUpdateDeleteNotFound(t *testing.T) {
	ours, twin := mustParse(t, "session s1\nstep a { update 1 x; delete 1 }\n")
	pg := "Parsed test spec with 1 sessions\n\nstarting permutation: a\nstep a: UPDATE t SET v = 'x' WHERE k = '1' RETURNING k; DELETE FROM t WHERE k = '1' RETURNING k;\nk\n-\n1\n(1 row)\n\nk\n-\n(0 rows)\n\n"
	got, err := Convert(ours, twin, pg)
	if err != nil {
		t.Fatal(err)
	}
	want := "Parsed test spec with 1 sessions\n\nstarting permutation: a\nstep a: update 1 x; delete 1\n=> not found\n"
	if got != want {
		t.Errorf("(- want, + got)\n%s", Diff(want, got))
	}
}

func TestConvertRejects(t *testing.T) {
	ours, twin := mustParse(t, "session s1\nsetup { begin }\nstep a { get 1 }\nstep b { commit }\nsession s2\nstep c { get 2 }\n")
	head := "Parsed test spec with 2 sessions\n\nstarting permutation: a b c\n"
	cases := []struct{ pg, want string }{
		{head + "step a: SELECT v FROM t WHERE k = '1';\nERROR:  out of memory\n", `unknown PostgreSQL error "out of memory"`},
		{head + "step a: SELECT v FROM t WHERE k = '1';\nstep b: COMMIT;\n", "step a: 0 result sets, expected 1"},
		{head + "step b: COMMIT;\n v\n--\n10\n(1 row)\n\n", "step b: more result sets than commands that return one"},
		{head + "step zz: SELECT 1;\n", `unknown step "zz"`},
		{head + "step a: SELECT 2;\n", "step a: the SQL printed is not the twin's"},
		{head + "s2: WARNING:  there is already a transaction in progress\nstep a: SELECT v FROM t WHERE k = '1';\n v\n--\n10\n(1 row)\n\n", "a session left its transaction open"},
		{head + "step a: SELECT v FROM t WHERE k = '1';\n v\n--\n10\n(2 rows)\n\n", "result set says 2 rows, has 1"},
		{head + "what is this\n", `unrecognised line "what is this"`},
		{"Parsed something\n", "expected 'Parsed test spec with N sessions'"},
	}
	for _, c := range cases {
		_, err := Convert(ours, twin, c.pg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got  %v\n want %q", c.pg, err, c.want)
		}
	}
}

func TestCheckTwin(t *testing.T) {
	ours, _ := mustParse(t, "session s1\nstep a { get 1; get 2 }\npermutation a\n")
	cases := []struct{ twin, want string }{
		{"session s1\nstep a { SELECT 1; }\npermutation a\n", "step a: 2 commands, twin has 1 SQL statements"},
		{"session s1\nstep b { SELECT 1; SELECT 2; }\npermutation b\n", "session s1 step 1: a, twin b"},
		{"session s2\nstep a { SELECT 1; SELECT 2; }\npermutation a\n", "session 1: s1 with 1 steps, twin s2"},
		{"session s1\nstep a { SELECT 1; SELECT 2; }\npermutation a(*)\n", "permutation 1: a, twin: a(*)"},
		{"session s1\nstep a { SELECT 'x;y'; SELECT $$;$$; -- ;\n }\npermutation a\n", ""},
	}
	for _, c := range cases {
		twin, err := ParseRaw("t.pg.spec", c.twin)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckTwin(ours, twin)
		if c.want == "" {
			if err != nil {
				t.Errorf("%q: %v", c.twin, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got  %v\n want %q", c.twin, err, c.want)
		}
	}
}

func TestTwinSQL(t *testing.T) {
	s, err := Parse("x.spec", `# Title
options { deadlock_timeout 250ms lock_timeout 1s }
setup { create t; insert 1 'it''s' }
session s1
setup { set lock_timeout 0; begin repeatable read read only }
step a { lock 1 nokeyupdate skip locked; scan from 1 to 5 limit 2 lock keyshare nowait; sleep 1500; rowlocks }
step b { scan prefix j where 'it''s' reverse limit 1 lock update skip locked }
teardown { rollback }
permutation a(*)
`)
	if err != nil {
		t.Fatal(err)
	}
	got := Twin(s, "x.spec")
	for _, want := range []string{
		"# Title\n#\n# PostgreSQL twin of x.spec",
		`CREATE TABLE t (k text COLLATE "C" PRIMARY KEY, v text);`,
		"INSERT INTO t VALUES ('1', 'it''s');",
		"CREATE EXTENSION IF NOT EXISTS pgrowlocks;",
		"teardown\n{\n  DROP TABLE IF EXISTS t;\n}",
		"setup { SET deadlock_timeout = '250ms'; SET lock_timeout = '1000ms'; SET lock_timeout = 0; BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; }",
		"step a { SELECT v FROM t WHERE k = '1' FOR NO KEY UPDATE SKIP LOCKED; SELECT k, v FROM t WHERE k >= '1' AND k < '5' ORDER BY k LIMIT 2 FOR KEY SHARE NOWAIT; SELECT pg_sleep(1.5); SELECT * FROM rowlocks('t'); }",
		"step b { SELECT k, v FROM t WHERE starts_with(k, 'j') AND v = 'it''s' ORDER BY k DESC LIMIT 1 FOR UPDATE SKIP LOCKED; }",
		"teardown { ROLLBACK; }",
		"permutation a(*)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("twin lacks %q:\n%s", want, got)
		}
	}
}
