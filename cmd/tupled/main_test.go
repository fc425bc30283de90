package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

func TestUsage(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.spec")
	os.WriteFile(bad, []byte("session s1\nstep a {\n  lock 1 sideways\n}\n"), 0o644)
	cases := []struct {
		args         []string
		code         int
		stdout, errs string
	}{
		{nil, 2, "", "tupled: no command given"},
		{[]string{"help"}, 0, "spec     run lock schedules", ""},
		{[]string{"-h"}, 0, "tupled <command> [arguments]", ""},
		{[]string{"help", "spec"}, 0, "usage: tupled spec [-timeout DURATION] FILE.spec...", ""},
		{[]string{"help", "nope"}, 2, "", `tupled help: unknown command "nope"`},
		{[]string{"nope"}, 2, "", `tupled: unknown command "nope"`},
		{[]string{"spec"}, 2, "", "tupled spec: no spec file given\nusage: tupled spec"},
		{[]string{"spec", "-x", "a.spec"}, 2, "", "tupled spec: flag provided but not defined: -x"},
		{[]string{"spec", "-timeout", "0", "a.spec"}, 2, "", "-timeout must be positive"},
		{[]string{"spec", "-h"}, 0, "-timeout duration", ""},
		{[]string{"spec", filepath.Join(dir, "missing.spec")}, 1, "", "missing.spec: no such file or directory"},
		{[]string{"spec", bad}, 1, "", `tupled spec: bad.spec:3: unknown lock strength "sideways"`},
	}
	for _, c := range cases {
		code, out, errs := runCLI(c.args...)
		if code != c.code || !strings.Contains(out, c.stdout) || !strings.Contains(errs, c.errs) {
			t.Errorf("tupled %v: exit %d (want %d)\nstdout: %s\nstderr: %s\nwant stdout containing %q, stderr containing %q",
				c.args, code, c.code, out, errs, c.stdout, c.errs)
		}
	}
}

// The README's command: the example prints what PostgreSQL does.
func TestSpecExample(t *testing.T) {
	code, out, errs := runCLI("spec", "../../examples/fk.spec")
	want, err := os.ReadFile("../../examples/fk.out")
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || out != string(want) {
		t.Errorf("exit %d, stderr %s\ngot:\n%s\nwant:\n%s", code, errs, out, want)
	}
}
