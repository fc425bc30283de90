package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tupled/tupled/isospec"
)

func init() {
	register(&command{
		name:    "spec",
		summary: "run lock schedules (isolation specs) against tupled",
		usage:   "[-timeout DURATION] FILE.spec...",
		help: `
Spec runs each lock schedule, written in a format modelled on PostgreSQL's
isolation specs (setup, teardown, session, step, permutation), and prints
isolationtester-style output: each step with its results, "<waiting ...>" when
a step blocks on a lock (seen in the database's lock table) and
"<... completed>" when it finishes later. Each permutation runs on a fresh
in-memory database. Without a permutation, every interleaving is run.

Steps are commands over the embedded API (default table t):

  begin [repeatable read|read committed] [read only]   commit   rollback
  savepoint NAME     release NAME     rollback to NAME
  get [TABLE] K
  lock [TABLE] K keyshare|share|nokeyupdate|update [nowait|skip locked]
  insert [TABLE] K V     update [TABLE] K V     delete [TABLE] K
  scan [TABLE] [from K] [to K] [prefix P] [where V] [reverse] [limit N]
       [lock STRENGTH [nowait|skip locked]]
  sleep MS     set lock_timeout MS     rowlocks [TABLE]     create TABLE
  advlock KEY [shared] [xact] [nowait]     advunlock KEY [shared]
  advunlockall     advlocks     locktable [TABLE] MODE [nowait]
  fk CHILD PARENT [noaction|restrict|cascade]

fk (in a setup) declares a foreign key: each row of CHILD references the row
of PARENT whose key is its value (ALTER TABLE CHILD ADD FOREIGN KEY (v)
REFERENCES PARENT ON DELETE …, constraint CHILD_v_fkey). Child inserts lock
the parent FOR KEY SHARE; a parent delete waits for them, then fails with
23503 or cascades.

Advisory locks: KEY is a bigint N or an integer pair N,M (different locks, as
pg_advisory_lock(1) and pg_advisory_lock(0, 1) are). advlock is
pg_advisory_lock: session level (kept across commit and rollback, counted,
released by advunlock, advunlockall or the end of the permutation) unless
xact (pg_advisory_xact_lock: released at transaction end); shared takes the
ShareLock form; nowait the pg_try_ form (prints => t or => f). advunlock
prints => t, or PostgreSQL's warning and => f. advlocks prints the advisory
locks by key: "=> 1 s1:exclusive s2:shared(waiting)".

A command outside a transaction runs as its own transaction. Keys and values
are text; quote them with '...' when they hold spaces. An options block sets
tupled.Options for every permutation:

  options { deadlock_timeout 100ms  lock_timeout 0  deadlock_strategy classic
            share_fast_path_off false  vacuum_interval 1s  step_timeout 30s }

Results print as "=> value", "=> not found", "=> skipped", "=> k:v k:v" for a
scan, and errors as "ERROR:  <PostgreSQL's message> (SQLSTATE)".
See examples/fk.spec, and testdata/spec/ for schedules whose expected output
is PostgreSQL 15's.`,
		run: runSpec,
	})
}

func runSpec(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := commands["spec"]
	fs := newFlagSet(c)
	timeout := fs.Duration("timeout", 30*time.Second, "cancel a step still unfinished after this long; fail the run after twice as long")
	if err := parseFlags(c, fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("no spec file given")
	}
	if *timeout <= 0 {
		return usagef("-timeout must be positive")
	}
	// Parse every file first, so that a typo in the last one fails fast.
	var specs []*isospec.Spec
	for _, path := range fs.Args() {
		s, err := isospec.Load(path)
		if err != nil {
			return err
		}
		specs = append(specs, s)
	}
	for i, s := range specs {
		if len(specs) > 1 {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			fmt.Fprintf(stdout, "=== %s\n", fs.Arg(i))
		}
		if err := isospec.Run(ctx, s, stdout, isospec.Config{StepTimeout: *timeout}); err != nil {
			return err
		}
	}
	return nil
}
