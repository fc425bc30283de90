// Command goclient runs what ordinary Go applications do against a
// PostgreSQL server, one suite per client library, and prints one line
// per step: "STEP <name> ok" or "STEP <name> FAIL <error>". It exits 1
// when a step failed. tests/clients (TestClients) runs it against tupled
// and PostgreSQL 15; see tests/clients/doc.go.
//
//	goclient -suite stdlib-pgx|stdlib-pq|pgx|gorm|sqlc postgres://user@host:port/db?sslmode=disable
//
// Each suite creates its own tables, named with the suite and the process
// id, and drops them at the end.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

var failed bool

// step runs f and prints its outcome; a panic is a failure too.
func step(name string, f func() error) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			report(name, fmt.Errorf("panic: %v", r))
			ok = false
		}
	}()
	err := f()
	report(name, err)
	return err == nil
}

func report(name string, err error) {
	if err == nil {
		fmt.Printf("STEP %s ok\n", name)
		return
	}
	failed = true
	msg := strings.Join(strings.Fields(err.Error()), " ")
	fmt.Printf("STEP %s FAIL %s\n", name, msg)
}

// runCtx bounds the whole run, so a statement the server never answers
// fails its step instead of hanging the test.
var runCtx = context.Background()

func ctx() context.Context { return runCtx }

// table names a table unique to this process.
func table(base string) string { return fmt.Sprintf("%s_%d", base, os.Getpid()) }

func main() {
	suite := flag.String("suite", "", "stdlib-pgx, stdlib-pq, pgx, gorm or sqlc")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: goclient -suite NAME postgres://...")
		os.Exit(2)
	}
	url := flag.Arg(0)
	var cancel context.CancelFunc
	runCtx, cancel = context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	switch *suite {
	case "stdlib-pgx":
		runStdlib("pgx", url)
	case "stdlib-pq":
		runStdlib("postgres", url)
	case "pgx":
		runPgx(url)
	case "gorm":
		runGorm(url)
	case "sqlc":
		runSqlc(url)
	default:
		fmt.Fprintf(os.Stderr, "unknown suite %q\n", *suite)
		os.Exit(2)
	}
	if failed {
		cancel()
		os.Exit(1)
	}
}

func want[T comparable](what string, got, exp T) error {
	if got != exp {
		return fmt.Errorf("%s: got %v, want %v", what, got, exp)
	}
	return nil
}
