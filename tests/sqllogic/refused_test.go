package sqllogic

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tupled/tupled/internal/pgoracle"
)

var refusedDocFlag = flag.Bool("refused-doc", false, "rewrite testdata/sql/REFUSED.md from tupled's answers to refused.sql")

// nodeName matches a CamelCase word, the shape of pg_query's node names
// (GroupingSet, RowExpr, CreateEnumStmt): an error must name SQL, not them.
var nodeName = regexp.MustCompile(`\b[A-Z][a-z]{2,}[A-Z][A-Za-z]*\b`)

// refusedFile is testdata/sql/refused.sql: setup statements, then cases.
type refusedFile struct {
	setup, cases []string
}

func readRefused(t *testing.T) refusedFile {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "refused.sql"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rf refusedFile
	inCases := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "-- cases":
			inCases = true
		case line == "" || strings.HasPrefix(line, "--"):
		case inCases:
			rf.cases = append(rf.cases, line)
		default:
			rf.setup = append(rf.setup, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rf.cases) == 0 {
		t.Fatal("refused.sql has no cases")
	}
	return rf
}

// TestRefused: every case of refused.sql is refused by tupled with 0A000
// and a message in SQL words, and (with -pg) run by PostgreSQL 15; and
// REFUSED.md lists them with tupled's messages (-refused-doc rewrites it).
func TestRefused(t *testing.T) {
	rf := readRefused(t)
	var connString string
	if *pgFlag {
		connString = pgoracle.Start(t)
	} else {
		connString = startTupled(t)
	}
	conn := connect(t, connString)
	exec := func(sql string) error {
		ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
		defer cancel()
		_, err := conn.Exec(ctx, sql).ReadAll()
		if err == nil && *pgFlag {
			// A case may leave a transaction open (BEGIN): end it so the
			// next case starts as the others do.
			_, err = conn.Exec(ctx, "ROLLBACK").ReadAll()
		}
		return err
	}
	for _, sql := range rf.setup {
		if err := exec(sql); err != nil {
			t.Fatalf("setup %s: %v", sql, err)
		}
	}
	var doc bytes.Buffer
	doc.WriteString("# SQL tupled still refuses\n\n")
	doc.WriteString("Generated from `refused.sql` by `go test ./tests/sqllogic -run TestRefused -refused-doc`\n")
	doc.WriteString("(every statement below runs on PostgreSQL 15: `-pg` checks it). Each gets\n")
	doc.WriteString("SQLSTATE 0A000 from tupled, with this message.\n\n")
	doc.WriteString("| statement | tupled's message |\n|---|---|\n")
	for _, sql := range rf.cases {
		err := exec(sql)
		if *pgFlag {
			if err != nil {
				t.Errorf("PostgreSQL refuses %s: %v (refused.sql lists only SQL PostgreSQL runs)", sql, err)
			}
			continue
		}
		var pe *pgconn.PgError
		switch {
		case err == nil:
			t.Errorf("%s now runs on tupled: move it into a .test file with PostgreSQL's answer and delete it from refused.sql", sql)
		case !errors.As(err, &pe):
			t.Fatalf("%s: %v (the connection cannot go on)", sql, err)
		case pe.Code != "0A000":
			t.Errorf("%s: SQLSTATE %s (%s), want 0A000 for SQL tupled does not support", sql, pe.Code, pe.Message)
		case nodeName.MatchString(pe.Message):
			t.Errorf("%s: message %q names a parser node (%s), not SQL", sql, pe.Message, nodeName.FindString(pe.Message))
		}
		msg := ""
		if pe != nil {
			msg = pe.Message
		}
		fmt.Fprintf(&doc, "| `%s` | %s |\n", strings.ReplaceAll(sql, "|", `\|`), strings.ReplaceAll(msg, "|", `\|`))
	}
	if *pgFlag {
		return
	}
	path := filepath.Join(corpusDir, "REFUSED.md")
	if *refusedDocFlag {
		if err := os.WriteFile(path, doc.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(old, doc.Bytes()) {
		t.Errorf("%s is stale: run go test ./tests/sqllogic -run TestRefused -refused-doc", path)
	}
}
