package isospec

import (
	"strings"
	"testing"
	"time"

	"github.com/tupled/tupled"
)

func expectRun(t *testing.T, spec, want string) {
	t.Helper()
	got, err := runFake(spec, Config{}, nil)
	if err != nil {
		t.Fatalf("run: %v\noutput:\n%s", err, got)
	}
	if got != want {
		t.Errorf("output differs (- want, + got):\n%s", Diff(want, got))
	}
}

const twoSessions = `
setup { create t; insert 1 10; insert 2 20 }
session s1
setup { begin }
step s1a { lock 1 update }
step s1b { lock 2 update }
step s1c { commit }
session s2
setup { begin }
step s2a { lock 1 update }
step s2b { get 2 }
step s2c { commit }
`

func TestRunnerReportsWaitsAndCompletions(t *testing.T) {
	expectRun(t, twoSessions+"permutation s1a s2a s1c s2c\n", `Parsed test spec with 2 sessions

starting permutation: s1a s2a s1c s2c
step s1a: lock 1 update
=> 10
step s2a: lock 1 update <waiting ...>
step s1c: commit
step s2a: <... completed>
=> 10
step s2c: commit
`)
}

// A step of a session whose previous step still waits: the runner waits for
// the earlier step to complete first, as isolationtester does.
func TestRunnerWaitsForBusySession(t *testing.T) {
	spec := `
setup { create t; insert 1 10 }
session s1
setup { set lock_timeout 50; begin }
step s1a { lock 1 update }
step s1c { commit }
session s2
setup { begin }
step s2a { lock 1 share }
step s2c { commit }
permutation s2a s1a s1c s2c
`
	expectRun(t, spec, `Parsed test spec with 2 sessions

starting permutation: s2a s1a s1c s2c
step s2a: lock 1 share
=> 10
step s1a: lock 1 update <waiting ...>
step s1a: <... completed>
ERROR:  canceling statement due to lock timeout (55P03)
step s1c: commit
step s2c: commit
`)
}

// Two waiters released by one step complete in the order they began waiting.
func TestRunnerCompletesWaitersInOrder(t *testing.T) {
	spec := `
setup { create t; insert 1 10 }
session s1
setup { begin }
step s1a { lock 1 update }
step s1c { commit }
session s2
setup { begin }
step s2a { lock 1 share }
step s2c { commit }
session s3
setup { begin }
step s3a { lock 1 keyshare }
step s3c { commit }
permutation s1a s3a s2a s1c s2c s3c
`
	expectRun(t, spec, `Parsed test spec with 3 sessions

starting permutation: s1a s3a s2a s1c s2c s3c
step s1a: lock 1 update
=> 10
step s3a: lock 1 keyshare <waiting ...>
step s2a: lock 1 share <waiting ...>
step s1c: commit
step s3a: <... completed>
=> 10
step s2a: <... completed>
=> 10
step s2c: commit
step s3c: commit
`)
}

func TestRunnerResultsAndErrors(t *testing.T) {
	spec := `
setup { create t; insert 1 10; insert 2 'two words' }
session s1
setup { begin }
step s1a { get 1; get 9; lock 2 share; scan; scan from 2 to 3 }
step s1b { insert 1 x; get 1 }
step s1c { rollback; commit; begin; begin }
step s1d { rowlocks }
step s1e { rollback }
session s2
setup { begin }
step s2a { lock 1 update skip locked; lock 1 update nowait }
step s2c { commit }
permutation s1a s2a s1b s1c s1d s2c s1e
`
	expectRun(t, spec, `Parsed test spec with 2 sessions

starting permutation: s1a s2a s1b s1c s1d s2c s1e
step s1a: get 1; get 9; lock 2 share; scan; scan from 2 to 3
=> 10
=> not found
=> 'two words'
=> 1:10 2:'two words'
=> 2:'two words'
step s2a: lock 1 update skip locked; lock 1 update nowait
=> 10
=> 10
step s1b: insert 1 x; get 1
ERROR:  duplicate key value violates unique constraint (23505)
s1: WARNING:  there is no transaction in progress
step s1c: rollback; commit; begin; begin
s1: WARNING:  there is already a transaction in progress
step s1d: rowlocks
=> 1 s2:update
step s2c: commit
step s1e: rollback
`)
}

func TestRunnerSkippedAndNoWait(t *testing.T) {
	spec := `
setup { create t; insert 1 10 }
session s1
setup { begin }
step s1a { lock 1 nokeyupdate }
step s1c { commit }
session s2
setup { begin }
step s2a { lock 1 share skip locked }
step s2b { lock 1 keyshare nowait }
step s2c { lock 1 share nowait; get 1 }
step s2d { commit }
permutation s1a s2a s2b s2c s2d s1c
`
	expectRun(t, spec, `Parsed test spec with 2 sessions

starting permutation: s1a s2a s2b s2c s2d s1c
step s1a: lock 1 nokeyupdate
=> 10
step s2a: lock 1 share skip locked
=> skipped
step s2b: lock 1 keyshare nowait
=> 10
step s2c: lock 1 share nowait; get 1
ERROR:  could not obtain lock on row in relation "t" (55P03)
step s2d: commit
step s1c: commit
`)
}

func TestRunnerAllPermutations(t *testing.T) {
	spec := `
setup { create t }
session a
step a1 { get 1 }
step a2 { get 2 }
session b
step b1 { get 3 }
session c
step c1 { get 4 }
`
	got, err := runFake(spec, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var perms []string
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(l, "starting permutation: ") {
			perms = append(perms, strings.TrimPrefix(l, "starting permutation: "))
		}
	}
	// isolationtester's order: recursive, sessions in order at every level.
	want := []string{
		"a1 a2 b1 c1", "a1 a2 c1 b1", "a1 b1 a2 c1", "a1 b1 c1 a2", "a1 c1 a2 b1", "a1 c1 b1 a2",
		"b1 a1 a2 c1", "b1 a1 c1 a2", "b1 c1 a1 a2", "c1 a1 a2 b1", "c1 a1 b1 a2", "c1 b1 a1 a2",
	}
	if strings.Join(perms, "|") != strings.Join(want, "|") {
		t.Errorf("permutations:\n%v\nwant\n%v", perms, want)
	}
}

// A blocker annotation (*) reports a step as waiting even when it completed
// at once; the completion shows at the next opportunity.
func TestRunnerBlockerAnnotations(t *testing.T) {
	spec := twoSessions + "permutation s1a s2b(*) s1c s2c\npermutation s1a s2a s1c(s2a) s2c\n"
	got, err := runFake(spec, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `Parsed test spec with 2 sessions

starting permutation: s1a s2b(*) s1c s2c
step s1a: lock 1 update
=> 10
step s2b: get 2 <waiting ...>
step s1c: commit
step s2b: <... completed>
=> 20
step s2c: commit

starting permutation: s1a s2a s1c(s2a) s2c
step s1a: lock 1 update
=> 10
step s2a: lock 1 update <waiting ...>
step s1c: commit <waiting ...>
step s2a: <... completed>
=> 10
step s2c: commit
step s1c: <... completed>
`
	if got != want {
		t.Errorf("output differs (- want, + got):\n%s", Diff(want, got))
	}
}

// A step that never finishes is canceled after the step timeout, as
// isolationtester cancels after PGISOLATIONTIMEOUT; the run goes on.
func TestRunnerCancelsStuckStep(t *testing.T) {
	// s2's second step comes while s2a still waits for s1, which commits only
	// after it: nothing can release s2a.
	spec := `
setup { create t; insert 1 10 }
session s1
setup { begin }
step s1a { lock 1 update }
step s1c { commit }
session s2
step s2a { lock 1 update }
step s2b { get 1 }
permutation s1a s2a s2b s1c
`
	start := time.Now()
	got, err := runFake(spec, Config{StepTimeout: 200 * time.Millisecond}, nil)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, got)
	}
	want := `Parsed test spec with 2 sessions

starting permutation: s1a s2a s2b s1c
step s1a: lock 1 update
=> 10
step s2a: lock 1 update <waiting ...>
isolationtester: canceling step s2a after 0 seconds
step s2a: <... completed>
ERROR:  canceling statement due to user request (57014)
step s2b: get 1
=> 10
step s1c: commit
`
	if got != want {
		t.Errorf("output differs (- want, + got):\n%s", Diff(want, got))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

// An engine that ignores cancellation must not hang the runner.
func TestRunnerFailsWhenEngineIgnoresCancel(t *testing.T) {
	spec := `
setup { create t; insert 1 10 }
session s1
setup { begin }
step s1a { lock 1 update }
step s1c { commit }
session s2
step s2a { lock 1 update }
step s2b { get 1 }
permutation s1a s2a s2b s1c
`
	var fake *fakeTarget
	got, err := runFake(spec, Config{StepTimeout: 100 * time.Millisecond}, func(f *fakeTarget) { f.ignoreCancel = true; fake = f })
	defer close(fake.stuckReleased)
	if err == nil || !strings.Contains(err.Error(), "step s2a timed out") {
		t.Fatalf("want a timeout error, got %v\n%s", err, got)
	}
}

func TestRunnerSurvivesEnginePanic(t *testing.T) {
	spec := twoSessions + "permutation s1a s2b s1c s2c\n"
	got, err := runFake(spec, Config{}, func(f *fakeTarget) { f.panicOnGet = true })
	if err == nil || !strings.Contains(err.Error(), "s2 s2b: the engine panicked: fake engine: Get exploded") {
		t.Fatalf("want the panic reported, got %v\n%s", err, got)
	}
}

func TestRunnerSetupFailureStopsRun(t *testing.T) {
	_, err := runFake("setup { create t; create t }\nsession s1\nstep s1a { get 1 }\n", Config{}, nil)
	if err == nil || !strings.Contains(err.Error(), `test.spec:1: setup of session setup failed: ERROR:  relation "t" already exists (42P07)`) {
		t.Fatalf("got %v", err)
	}
}

func TestRunnerRollsBackAtEnd(t *testing.T) {
	var fakes []*fakeTarget
	spec := twoSessions + "permutation s1a s2b\n"
	s, err := Parse("x.spec", spec)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err = Run(t.Context(), s, &out, Config{Open: func(o *tupled.Options) (Target, error) {
		f := newFake(o)
		fakes = append(fakes, f)
		return f, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	f := fakes[0]
	if !f.closed {
		t.Error("engine not closed")
	}
	for row, hs := range f.holders {
		if len(hs) > 0 {
			t.Errorf("row %s still locked by %v after the permutation", row, hs)
		}
	}
}

func TestRunnerOptionsReachEngine(t *testing.T) {
	spec := "options { deadlock_timeout 123ms lock_timeout 7 share_fast_path_off true deadlock_strategy classic }\nsession s1\nstep s1a { rollback }\n"
	s, err := Parse("x.spec", spec)
	if err != nil {
		t.Fatal(err)
	}
	var got tupled.Options
	var out strings.Builder
	err = Run(t.Context(), s, &out, Config{Open: func(o *tupled.Options) (Target, error) { got = *o; return newFake(o), nil }})
	if err != nil {
		t.Fatal(err)
	}
	if got.DeadlockTimeout != 123*time.Millisecond || got.LockTimeout != 7*time.Millisecond || !got.ShareFastPathOff || got.DeadlockStrategy != "classic" {
		t.Errorf("options: %+v", got)
	}
}

func TestRunnerSetLockTimeoutInsideTransactionFails(t *testing.T) {
	_, err := runFake("setup { create t }\nsession s1\nsetup { begin }\nstep s1a {\n  set lock_timeout 5\n}\n", Config{}, nil)
	if err == nil || !strings.Contains(err.Error(), "test.spec:5: set lock_timeout inside a transaction is not supported") {
		t.Fatalf("got %v", err)
	}
}

func TestRunnerAutocommit(t *testing.T) {
	spec := `
setup { create t; insert 1 10 }
session s1
step s1a { lock 1 update; update 1 11 }
session s2
setup { begin }
step s2a { lock 1 update }
step s2c { commit }
permutation s1a s2a s2c
`
	expectRun(t, spec, `Parsed test spec with 2 sessions

starting permutation: s1a s2a s2c
step s1a: lock 1 update; update 1 11
=> 10
step s2a: lock 1 update
=> 11
step s2c: commit
`)
}
