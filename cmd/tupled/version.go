package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

func init() {
	register(&command{
		name:    "version",
		summary: "print the version, the commit it was built from and the Go version",
		usage:   "",
		help: `
Version prints tupled's module version and, when Go stamped the binary
with its VCS information (go build or go install in a git clone; not go
run, a git worktree or -buildvcs=false), the commit it was built from, its
time and whether the tree had uncommitted changes; then the Go version and
platform. 'tupled --version' is the same.`,
		run: runVersion,
	})
}

func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := commands["version"]
	fs := newFlagSet(c)
	if err := parseFlags(c, fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	fmt.Fprint(stdout, versionText(bi))
	return nil
}

// versionText renders bi (nil: a binary built without module support) as
// tupled version prints it.
func versionText(bi *debug.BuildInfo) string {
	var b strings.Builder
	if bi == nil {
		fmt.Fprintf(&b, "tupled (no build information)\ngo       %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return b.String()
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)" // go test binaries leave it empty
	}
	fmt.Fprintf(&b, "tupled %s\n", v)
	if bi.Main.Path != "" {
		fmt.Fprintf(&b, "module   %s\n", bi.Main.Path)
	}
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	if rev := set["vcs.revision"]; rev != "" {
		if set["vcs.modified"] == "true" {
			rev += " (modified: built with uncommitted changes)"
		}
		fmt.Fprintf(&b, "commit   %s\n", rev)
	} else {
		fmt.Fprintf(&b, "commit   unknown (no VCS stamp: go run, go test, a git worktree or -buildvcs=false leave it out)\n")
	}
	if t := set["vcs.time"]; t != "" {
		fmt.Fprintf(&b, "time     %s\n", t)
	}
	goVersion := bi.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	fmt.Fprintf(&b, "go       %s %s/%s\n", goVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}
