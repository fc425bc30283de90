package isospec

import (
	"strings"
	"testing"
	"time"

	"github.com/tupled/tupled"
)

func TestParseSpec(t *testing.T) {
	src := `# header line one
# header line two
options {
  deadlock_timeout 100ms  # per DB
  lock_timeout 0
}
setup { create t; insert 1 10 }
setup
{
  insert t 2 'two words'
  insert other 3 'it''s'
}
teardown { delete 1 }

session s1
setup { begin repeatable read read only }
step s1a { lock 1 keyshare }
step "s1 b" {
  lock t 1 update nowait; get 1
  -- a comment
  scan t from a to z limit 3 lock share skip locked
}
teardown { rollback }

session s2
step s2a { lock 1 nokeyupdate skip locked }
step s2b { sleep 250; set lock_timeout 1s; rowlocks; rowlocks other; create x }

permutation s1a "s1 b"(s2a, *) s2a
permutation s2b s1a
`
	s, err := Parse("p.spec", src)
	if err != nil {
		t.Fatal(err)
	}
	if s.Header != "header line one\nheader line two\n" {
		t.Errorf("header %q", s.Header)
	}
	o, err := s.DBOptions()
	if err != nil || o.DeadlockTimeout != 100*time.Millisecond || o.LockTimeout != 0 {
		t.Errorf("options %+v %v", o, err)
	}
	if len(s.Setup) != 2 || len(s.Setup[0].Cmds) != 2 || len(s.Setup[1].Cmds) != 2 {
		t.Fatalf("setup %+v", s.Setup)
	}
	ins := s.Setup[1].Cmds[1]
	if ins.Kind != CmdInsert || ins.Table != "other" || ins.Key != "3" || ins.Value != "it's" || ins.Line != 11 {
		t.Errorf("insert %+v", ins)
	}
	if c := s.Setup[1].Cmds[0]; c.Table != "t" || c.Value != "two words" || c.Line != 10 {
		t.Errorf("first insert %+v", c)
	}
	s1 := s.Sessions[0]
	if b := s1.Setup.Cmds[0]; b.Kind != CmdBegin || !b.IsolationSet || b.Isolation != tupled.RepeatableRead || !b.ReadOnly {
		t.Errorf("begin %+v", b)
	}
	sb := s.StepByName("s1 b")
	if sb == nil || len(sb.Cmds) != 3 {
		t.Fatalf("step s1 b: %+v", sb)
	}
	if sb.Text != "lock t 1 update nowait; get 1\n  -- a comment\n  scan t from a to z limit 3 lock share skip locked" {
		t.Errorf("step text %q", sb.Text)
	}
	if c := sb.Cmds[0]; c.Kind != CmdLock || c.Strength != tupled.ForUpdate || c.Wait != tupled.NoWait || c.Line != 19 {
		t.Errorf("lock %+v", c)
	}
	if c := sb.Cmds[2]; c.Kind != CmdScan || c.From != "a" || c.To != "z" || !c.HasFrom || !c.HasTo || c.Limit != 3 ||
		c.Strength != tupled.ForShare || c.Wait != tupled.SkipLocked || c.Line != 21 {
		t.Errorf("scan %+v", c)
	}
	if c := s.StepByName("s2a").Cmds[0]; c.Strength != tupled.ForNoKeyUpdate || c.Wait != tupled.SkipLocked || c.Table != "t" {
		t.Errorf("s2a %+v", c)
	}
	cs := s.StepByName("s2b").Cmds
	if cs[0].Kind != CmdSleep || cs[0].Duration != 250*time.Millisecond || cs[1].Kind != CmdSetLockTimeout || cs[1].Duration != time.Second ||
		cs[2].Kind != CmdRowLocks || cs[2].Table != "t" || cs[3].Table != "other" || cs[4].Kind != CmdCreate || cs[4].Table != "x" {
		t.Errorf("s2b %+v %+v %+v %+v %+v", cs[0], cs[1], cs[2], cs[3], cs[4])
	}
	if len(s.Permutations) != 2 {
		t.Fatalf("permutations %d", len(s.Permutations))
	}
	p := s.Permutations[0]
	if got := permSteps(p); got != " s1a s1 b(s2a,*) s2a" {
		t.Errorf("permutation %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"session s1\nstep a { get }\n", "e.spec:2: usage: get [TABLE] KEY"},
		{"session s1\nstep a {\n\n  frobnicate 1\n}\n", `e.spec:4: unknown command "frobnicate"`},
		{"session s1\nstep a { lock 1 exclusive }\n", `e.spec:2: unknown lock strength "exclusive"`},
		{"session s1\nstep a { lock 1 update nowait skip }\n", "e.spec:2: usage: lock [TABLE] KEY"},
		{"session s1\nstep a { get 1 }\nstep a { get 2 }\n", `e.spec:3: duplicate step name "a"`},
		{"session s1\nstep a { get 1 }\npermutation a b\n", `e.spec:3: undefined step "b" in permutation`},
		{"session s1\nstep a { get 1 }\npermutation a(a)\n", `e.spec:3: step a cannot block on a step of its own session (a)`},
		{"session s1\nstep a { get 1 \n", "e.spec:2: unterminated block: missing '}'"},
		{"session s1\nstep a { insert 1 'abc }\n", "e.spec:2: unterminated quoted string"},
		{"options { deadlock_timeout }\nsession s1\nstep a { get 1 }\n", "e.spec:1: option deadlock_timeout has no value"},
		{"options { deadlock_timeout soon }\nsession s1\nstep a { get 1 }\n", `e.spec:1: option deadlock_timeout: bad duration "soon"`},
		{"options {\n nonsense 1 }\nsession s1\nstep a { get 1 }\n", `e.spec:2: unknown option "nonsense"`},
		{"session s1\n", "e.spec:1: session s1 has no step"},
		{"setup { create t }\n", "no session"},
		{"step a { get 1 }\n", "e.spec:1: step outside a session"},
		{"session s1\nstep a { }\n", "e.spec:2: step a has no command"},
		{"session s1\nstep a { sleep forever }\n", `e.spec:2: bad duration "forever"`},
		{"session s1\nstep a { scan limit 0 }\n", `e.spec:2: scan: bad limit "0"`},
		{"session s1\nstep a { scan t t }\n", `e.spec:2: scan: unexpected "t"`},
		{"session s1\nstep a { scan where }\n", `e.spec:2: usage: scan`},
		{"session s1\nstep a { scan reverse reverse }\n", `e.spec:2: scan: reverse given twice`},
		{"session s1\nstep a { begin serializable }\n", "e.spec:2: usage: begin"},
		{"session s1\nstep a { get bad-table 1 }\n", `e.spec:2: bad table name "bad-table"`},
		{"session s1\nsession s1\n", `e.spec:2: duplicate session name "s1"`},
		{"bogus\n", `e.spec:1: expected setup, teardown, session, step or permutation, found "bogus"`},
		{"session s1\nstep a { get 1 }\npermutation\n", "e.spec:3: empty permutation"},
		{"session s1\nstep a { get 1 }\n}\n", "e.spec:3: unexpected '}'"},
	}
	for _, c := range cases {
		_, err := Parse("e.spec", c.src)
		if err == nil {
			t.Errorf("%q: no error, want %q", c.src, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got  %q\n want %q", c.src, err.Error(), c.want)
		}
	}
}

func TestParseRawReadsPostgresSpecs(t *testing.T) {
	src := `# a PostgreSQL isolation spec
setup
{
  CREATE TABLE foo (key int PRIMARY KEY, value int);
}
teardown { DROP TABLE foo; }
session s1
setup { BEGIN; }
step s1a { SELECT * FROM foo WHERE key = 1
  FOR UPDATE; }
session s2
step "s2 a" { SELECT 1; }
permutation s1a "s2 a"(*)
`
	s, err := ParseRaw("pg.spec", src)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.StepByName("s1a").Text; got != "SELECT * FROM foo WHERE key = 1\n  FOR UPDATE;" {
		t.Errorf("step text %q", got)
	}
	if s.Setup[0].Text != "CREATE TABLE foo (key int PRIMARY KEY, value int);" || s.Setup[0].Line != 4 {
		t.Errorf("setup %+v", s.Setup[0])
	}
}

func TestLintSpec(t *testing.T) {
	ok := "session s1\nsetup { begin }\nstep a { get 1 }\nstep c { commit }\npermutation a c\n"
	s, err := Parse("l.spec", ok)
	if err != nil {
		t.Fatal(err)
	}
	if err := LintSpec(s); err != nil {
		t.Errorf("lint: %v", err)
	}
	bad := ok + "permutation a\n"
	s, err = Parse("l.spec", bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := LintSpec(s); err == nil || !strings.Contains(err.Error(), "l.spec:6: permutation a leaves session s1 in a transaction") {
		t.Errorf("lint: %v", err)
	}
	adv := "session s1\nstep a { advlock 1 xact }\nstep b { advlock 2 shared nowait }\n"
	s, err = Parse("l.spec", adv)
	if err != nil {
		t.Fatal(err)
	}
	if err := LintSpec(s); err == nil || !strings.Contains(err.Error(), "l.spec:3: session s1 takes session-level advisory locks") {
		t.Errorf("lint: %v", err)
	}
	s, err = Parse("l.spec", adv+"teardown { advunlockall }\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := LintSpec(s); err != nil {
		t.Errorf("lint: %v", err)
	}
}

func TestParseAdvisory(t *testing.T) {
	s, err := Parse("a.spec", "session s1\nstep a { advlock -5,7 shared xact nowait; advunlock 9223372036854775807 shared; advunlockall; advlocks }\n")
	if err != nil {
		t.Fatal(err)
	}
	cs := s.StepByName("a").Cmds
	want := []string{
		"SELECT pg_try_advisory_xact_lock_shared(-5, 7);",
		"SELECT pg_advisory_unlock_shared(9223372036854775807);",
		"DO $$BEGIN PERFORM pg_advisory_unlock_all(); END$$;",
	}
	for i, w := range want {
		if got := SQL(cs[i]); got != w {
			t.Errorf("command %d: %s, want %s", i, got, w)
		}
	}
	if cs[0].AdvKey != tupled.AdvisoryKeyPair(-5, 7) || !cs[0].AdvShared || !cs[0].AdvXact || !cs[0].AdvTry {
		t.Errorf("parsed %+v", cs[0])
	}
	for _, bad := range []string{"advlock", "advlock x", "advlock 1,2,3", "advlock 2147483648,1", "advlock 1 sharedd", "advunlock 1 xact", "advlock 1 shared shared", "advunlockall 1", "advlocks t"} {
		if _, err := Parse("b.spec", "session s1\nstep a { "+bad+" }\n"); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseFK(t *testing.T) {
	s, err := Parse("a.spec", "setup { create p; create c; fk c p cascade; fk c p }\nsession s1\nstep a { insert c 1 1 }\n")
	if err != nil {
		t.Fatal(err)
	}
	cs := s.Setup[0].Cmds
	if cs[2].Kind != CmdFK || cs[2].Table != "c" || cs[2].RefTable != "p" || cs[2].OnDelete != tupled.Cascade || cs[3].OnDelete != tupled.NoAction {
		t.Fatalf("parsed %+v %+v", cs[2], cs[3])
	}
	if got, want := SQL(cs[2]), "ALTER TABLE c ADD FOREIGN KEY (v) REFERENCES p ON DELETE CASCADE;"; got != want {
		t.Errorf("twin %s, want %s", got, want)
	}
	if got, want := SQL(cs[3]), "ALTER TABLE c ADD FOREIGN KEY (v) REFERENCES p;"; got != want {
		t.Errorf("twin %s, want %s", got, want)
	}
	for _, bad := range []string{"fk", "fk c", "fk c p setnull", "fk c p cascade x", "fk 'c d' p"} {
		if _, err := Parse("b.spec", "setup { "+bad+" }\nsession s1\nstep a { get 1 }\n"); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
