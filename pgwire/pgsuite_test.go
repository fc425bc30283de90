package pgwire

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var flagUpdatePGSuite = flag.Bool("update-pg-suite", false,
	"TestPGIsolationSuite: rewrite testdata/isolation/pg-suite.tsv with the outcomes of this run")

// pgSuiteStatus is testdata/isolation/pg-suite.tsv: one line per spec of
// PostgreSQL's suite, "name<TAB>pass|fail<TAB>what blocks it" ("-" when it
// passes); lines starting with # are comments.
const pgSuiteStatus = "../testdata/isolation/pg-suite.tsv"

// pgSuiteDir finds the unmodified PostgreSQL specs: $TUPLED_PG_ISOLATION
// if set, else ../shared/pg-isolation beside the repository root.
func pgSuiteDir(t *testing.T) string {
	dir := os.Getenv("TUPLED_PG_ISOLATION")
	if dir == "" {
		dir = "../../shared/pg-isolation"
	}
	for _, sub := range []string{"specs", "expected"} {
		if fi, err := os.Stat(filepath.Join(dir, sub)); err != nil || !fi.IsDir() {
			abs, _ := filepath.Abs(dir)
			t.Fatalf("PostgreSQL's isolation specs are missing: no directory %s/%s.\n"+
				"They live in ../shared/pg-isolation beside the repository root (specs/NAME.spec, expected/NAME.out);\n"+
				"set TUPLED_PG_ISOLATION to their directory if they are elsewhere.", abs, sub)
		}
	}
	return dir
}

type pgSuiteEntry struct {
	name, status, reason string
}

func readPGSuiteStatus(t *testing.T) map[string]pgSuiteEntry {
	m := map[string]pgSuiteEntry{}
	f, err := os.Open(pgSuiteStatus)
	if os.IsNotExist(err) && *flagUpdatePGSuite {
		return m
	}
	if err != nil {
		t.Fatalf("status file: %v (run with -update-pg-suite to create it)", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.SplitN(line, "\t", 3)
		if len(fs) != 3 || (fs[1] != "pass" && fs[1] != "fail") {
			t.Fatalf("%s:%d: want name<TAB>pass|fail<TAB>reason, got %q", pgSuiteStatus, n, line)
		}
		m[fs[0]] = pgSuiteEntry{fs[0], fs[1], fs[2]}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// firstDiff renders where got first departs from want: the line number and
// a few lines of each side from there, instead of both outputs whole.
func firstDiff(got, want []byte) string {
	g := strings.Split(string(got), "\n")
	w := strings.Split(string(want), "\n")
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	from := max(i-2, 0)
	part := func(ls []string) string {
		to := min(i+4, len(ls))
		if from >= to {
			return "    (end of output)\n"
		}
		var b strings.Builder
		for j := from; j < to; j++ {
			mark := "  "
			if j == i {
				mark = "> "
			}
			fmt.Fprintf(&b, "  %s%s\n", mark, ls[j])
		}
		return b.String()
	}
	return fmt.Sprintf("first difference at line %d\n--- tupled\n%s--- PostgreSQL 15\n%s", i+1, part(g), part(w))
}

// firstDiffLine is the first line of got that is not PostgreSQL's, for the
// reason column of a newly failing spec.
func firstDiffLine(got, want []byte) string {
	g := strings.Split(string(got), "\n")
	w := strings.Split(string(want), "\n")
	for i := range g {
		if i >= len(w) || g[i] != w[i] {
			if s := strings.TrimSpace(g[i]); s != "" {
				return s
			}
			return "output differs at line " + fmt.Sprint(i+1)
		}
	}
	return "output ends early"
}

// TestPGIsolationSuite runs PostgreSQL's own row-locking isolation specs,
// unmodified (../shared/pg-isolation, see its README), through PostgreSQL's
// isolationtester against tupled serve, one fresh server per spec, and
// compares each output byte for byte with what PostgreSQL 15 printed.
// testdata/isolation/pg-suite.tsv records which specs pass: the test fails
// when a listed pass no longer passes, and when a listed failure now passes
// (so the list stays true; -update-pg-suite rewrites it). With -short only
// the listed passes run.
func TestPGIsolationSuite(t *testing.T) {
	needTool(t, isolationTester)
	dir := pgSuiteDir(t)
	status := readPGSuiteStatus(t)
	specs, err := filepath.Glob(filepath.Join(dir, "specs", "*.spec"))
	if err != nil || len(specs) == 0 {
		t.Fatalf("no specs in %s/specs: %v", dir, err)
	}
	var names []string
	for _, s := range specs {
		names = append(names, strings.TrimSuffix(filepath.Base(s), ".spec"))
	}
	if !*flagUpdatePGSuite {
		for _, n := range names {
			if _, ok := status[n]; !ok {
				t.Errorf("spec %s is not in %s: add it (or run with -update-pg-suite)", n, pgSuiteStatus)
			}
		}
		for n := range status {
			if !slices.Contains(names, n) {
				t.Errorf("%s lists %s, which %s/specs does not have", pgSuiteStatus, n, dir)
			}
		}
	}

	var mu sync.Mutex
	results := map[string]pgSuiteEntry{}
	t.Cleanup(func() {
		if !*flagUpdatePGSuite || t.Failed() && len(results) != len(names) {
			return
		}
		writePGSuiteStatus(t, names, status, results)
	})
	for _, name := range names {
		st, listed := status[name]
		if testing.Short() && (!listed || st.status != "pass") && !*flagUpdatePGSuite {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(filepath.Join(dir, "expected", name+".out"))
			if err != nil {
				t.Fatalf("no expected output: %v", err)
			}
			got, stderr := runPGSpec(t, filepath.Join(dir, "specs", name+".spec"))
			pass := bytes.Equal(got, want)
			e := pgSuiteEntry{name, "pass", "-"}
			if !pass {
				why := firstDiffLine(got, want)
				if l := stderrNote(stderr); l != "" {
					why = l
				}
				e = pgSuiteEntry{name, "fail", why}
			}
			mu.Lock()
			results[name] = e
			mu.Unlock()
			if *flagUpdatePGSuite {
				return
			}
			switch {
			case st.status == "pass" && !pass:
				t.Errorf("%s passed before (%s) and now differs from PostgreSQL's output:\n%s", name, pgSuiteStatus, firstDiff(got, want)+"--- isolationtester's stderr\n"+string(stderr))
			case st.status == "fail" && pass:
				t.Errorf("%s now passes: mark it pass in %s (or run go test ./pgwire -run TestPGIsolationSuite -update-pg-suite)", name, pgSuiteStatus)
			}
		})
	}
}

// stderrNote is the first line of isolationtester's stderr that says
// what failed (a failed setup or teardown), or "".
func stderrNote(stderr []byte) string {
	for _, l := range strings.Split(string(stderr), "\n") {
		if strings.Contains(l, "failed") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// runPGSpec runs one spec through isolationtester against a fresh server
// and returns what it printed, stdout and stderr through one pipe (what
// expected/ holds), twice: as the output to compare and as the text to
// search for a failed setup's message.
func runPGSpec(t *testing.T, spec string) (stdout, stderr []byte) {
	// deadlock_timeout 1s, PostgreSQL's default, as the expected files'
	// server had.
	ts := startServerDT(t, time.Second, nil)
	h, p := ts.hostPort()
	in, err := os.Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := osexec.Command(isolationTester, fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres", h, p))
	cmd.Stdin = in
	// isolationtester cancels a step still waiting after twice this many
	// seconds (and gives up on the spec after 3x): a step that never
	// returns costs 20s, not the default 360s.
	cmd.Env = append(os.Environ(), "PG_TEST_TIMEOUT_DEFAULT=10")
	// One pipe for both, as the expected files were made (`> NAME.out
	// 2>&1`): isolationtester's stderr lines ("unused step name: ...")
	// come first there, its buffered stdout after.
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if _, ok := err.(*osexec.ExitError); err != nil && !ok {
		t.Fatalf("isolationtester: %v", err)
	}
	return out.Bytes(), out.Bytes()
}

func writePGSuiteStatus(t *testing.T, names []string, old, results map[string]pgSuiteEntry) {
	var b strings.Builder
	b.WriteString("# PostgreSQL's isolation specs (../shared/pg-isolation) against tupled serve: pgwire TestPGIsolationSuite.\n")
	b.WriteString("# name<TAB>pass|fail<TAB>the first construct it fails on (- when it passes). See README.md.\n")
	for _, n := range names {
		r, ok := results[n]
		if !ok {
			r = old[n]
		} else if o, had := old[n]; r.status == "fail" && had && o.status == "fail" {
			r.reason = o.reason // keep the curated reason
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\n", n, r.status, r.reason)
	}
	if err := os.WriteFile(pgSuiteStatus, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", pgSuiteStatus)
}
