package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
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

// TestVersion: tupled version and --version print the build's version
// and Go's; versionText shows the VCS stamp when the build has one.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		code, out, errs := runCLI(args...)
		if code != 0 || errs != "" || !strings.HasPrefix(out, "tupled ") || !strings.Contains(out, "go       "+runtime.Version()) {
			t.Errorf("tupled %v: exit %d\nstdout: %s\nstderr: %s", args, code, out, errs)
		}
	}
	if code, _, errs := runCLI("version", "extra"); code != 2 || !strings.Contains(errs, `unexpected argument "extra"`) {
		t.Errorf("version extra: exit %d, stderr %s", code, errs)
	}
	bi := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Path: "github.com/tupled/tupled", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123abc"}, {Key: "vcs.time", Value: "2026-12-05T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	want := "tupled v1.2.3\nmodule   github.com/tupled/tupled\ncommit   0123abc (modified: built with uncommitted changes)\ntime     2026-12-05T10:00:00Z\ngo       go1.99 " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if got := versionText(bi); got != want {
		t.Errorf("versionText:\n%s\nwant:\n%s", got, want)
	}
	bi.Settings, bi.Main.Version = nil, ""
	if got := versionText(bi); !strings.HasPrefix(got, "tupled (devel)\n") || !strings.Contains(got, "commit   unknown") {
		t.Errorf("versionText without a stamp:\n%s", got)
	}
	if got := versionText(nil); !strings.Contains(got, "no build information") || !strings.Contains(got, runtime.Version()) {
		t.Errorf("versionText(nil):\n%s", got)
	}
}
