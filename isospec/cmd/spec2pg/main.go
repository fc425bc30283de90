// Command spec2pg writes the PostgreSQL twin NAME.pg.spec of each NAME.spec
// given: the isolationtester spec in SQL with the same sessions, steps and
// permutations (see isospec.Twin), after checking the spec with
// isospec.LintSpec. With -check it only reports twins that
// differ from what it would write.
//
//	go run ./isospec/cmd/spec2pg testdata/spec/*.spec
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tupled/tupled/isospec"
)

func main() {
	check := flag.Bool("check", false, "report twins that are not up to date instead of writing them")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: spec2pg [-check] FILE.spec...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	failed := false
	for _, path := range flag.Args() {
		if strings.HasSuffix(path, ".pg.spec") {
			continue
		}
		s, err := isospec.Load(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			failed = true
			continue
		}
		if err := isospec.LintSpec(s); err != nil {
			fmt.Fprintln(os.Stderr, err)
			failed = true
			continue
		}
		f := isospec.FilesOf(path)
		twin := isospec.Twin(s, filepath.Base(path))
		if *check {
			old, err := os.ReadFile(f.Twin)
			if err != nil || string(old) != twin {
				fmt.Fprintf(os.Stderr, "%s is not up to date\n", f.Twin)
				failed = true
			}
			continue
		}
		if err := os.WriteFile(f.Twin, []byte(twin), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}
