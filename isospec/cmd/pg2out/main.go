// Command pg2out converts isolationtester's output for the PostgreSQL twin of
// each spec given (NAME.pg.out, produced by testdata/spec/oracle.sh) into the
// output the tupled runner must print (NAME.out). See isospec.Convert.
//
//	go run ./isospec/cmd/pg2out testdata/spec/*.spec
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/tupled/tupled/isospec"
)

func main() {
	if len(os.Args) < 2 || strings.HasPrefix(os.Args[1], "-") {
		fmt.Fprintln(os.Stderr, "usage: pg2out FILE.spec...  (reads FILE.pg.spec and FILE.pg.out, writes FILE.out)")
		os.Exit(2)
	}
	failed := false
	for _, path := range os.Args[1:] {
		if strings.HasSuffix(path, ".pg.spec") {
			continue
		}
		f := isospec.FilesOf(path)
		out, err := isospec.ConvertFiles(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			failed = true
			continue
		}
		if err := os.WriteFile(f.Out, []byte(out), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}
