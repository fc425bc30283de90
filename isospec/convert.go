package isospec

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tupled/tupled"
)

// pgErrors maps the primary message of a PostgreSQL error, as isolationtester
// prints it, to the text and SQLSTATE the runner prints for the same failure
// (see PGError). isolationtester does not print SQLSTATEs, so each message
// known here names its own. Two messages are normalised because tupled has one
// error where PostgreSQL has two texts:
//   - 40001 "... due to concurrent delete" (UPDATE/DELETE of a row deleted
//     since the snapshot) is tupled's ErrSerialization, "... concurrent update";
//   - 23505 names the constraint ("t_pkey"); tupled's ErrDuplicateKey does not.
var pgErrors = []struct {
	re    *regexp.Regexp
	text  string // replacement template ($1 ...)
	state string
}{
	{regexp.MustCompile(`^deadlock detected$`), "deadlock detected", "40P01"},
	{regexp.MustCompile(`^could not serialize access due to concurrent (update|delete)$`), "could not serialize access due to concurrent update", "40001"},
	{regexp.MustCompile(`^could not obtain lock on row in relation "(.*)"$`), `could not obtain lock on row in relation "$1"`, "55P03"},
	{regexp.MustCompile(`^could not obtain lock on relation "(.*)"$`), `could not obtain lock on relation "$1"`, "55P03"},
	{regexp.MustCompile(`^canceling statement due to lock timeout$`), "canceling statement due to lock timeout", "55P03"},
	{regexp.MustCompile(`^duplicate key value violates unique constraint ".*"$`), "duplicate key value violates unique constraint", "23505"},
	{regexp.MustCompile(`^current transaction is aborted, commands ignored until end of transaction block$`), "current transaction is aborted, commands ignored until end of transaction block", "25P02"},
	{regexp.MustCompile(`^cannot execute (.*) in a read-only transaction$`), "cannot execute $1 in a read-only transaction", "25006"},
	{regexp.MustCompile(`^relation "(.*)" already exists$`), `relation "$1" already exists`, "42P07"},
	{regexp.MustCompile(`^relation "(.*)" does not exist$`), `relation "$1" does not exist`, "42P01"},
	{regexp.MustCompile(`^canceling statement due to user request$`), "canceling statement due to user request", "57014"},
	{regexp.MustCompile(`^canceling statement due to statement timeout$`), "canceling statement due to statement timeout", "57014"},
	{regexp.MustCompile(`^savepoint "(.*)" does not exist$`), `savepoint "$1" does not exist`, "3B001"},
	{regexp.MustCompile(`^(SAVEPOINT|RELEASE SAVEPOINT|ROLLBACK TO SAVEPOINT) can only be used in transaction blocks$`), "$1 can only be used in transaction blocks", "25P01"},
	{regexp.MustCompile(`^insert or update on table "(.*)" violates foreign key constraint "(.*)"$`), `insert or update on table "$1" violates foreign key constraint "$2"`, "23503"},
	{regexp.MustCompile(`^update or delete on table "(.*)" violates foreign key constraint "(.*)" on table "(.*)"$`), `update or delete on table "$1" violates foreign key constraint "$2" on table "$3"`, "23503"},
}

// ConvertError maps a PostgreSQL error message to our error line.
func ConvertError(msg string) (string, error) {
	for _, e := range pgErrors {
		if m := e.re.FindStringSubmatchIndex(msg); m != nil {
			text := string(e.re.ExpandString(nil, e.text, msg, m))
			return ErrorLine(text, e.state), nil
		}
	}
	return "", fmt.Errorf("unknown PostgreSQL error %q: add it to pgErrors with its SQLSTATE", msg)
}

// pgModes maps pgrowlocks' mode names to lock strengths; an updater
// ("Update", "No Key Update") shows with the strength its update takes.
// pgrowlocks names a multixact's lock-only members "Key Share" and "Share".
var pgModes = map[string]tupled.LockStrength{
	"For Key Share":     tupled.ForKeyShare,
	"Key Share":         tupled.ForKeyShare,
	"For Share":         tupled.ForShare,
	"Share":             tupled.ForShare,
	"For No Key Update": tupled.ForNoKeyUpdate,
	"No Key Update":     tupled.ForNoKeyUpdate,
	"For Update":        tupled.ForUpdate,
	"Update":            tupled.ForUpdate,
}

// statementCount counts the SQL statements of a block (semicolons outside
// quotes and comments).
func statementCount(sql string) int {
	n := 0
	nonEmpty := false
	inQuote, inDollar := false, ""
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case inQuote:
			if c == '\'' {
				inQuote = false
			}
		case inDollar != "":
			if strings.HasPrefix(sql[i:], inDollar) {
				i += len(inDollar) - 1
				inDollar = ""
			}
		case c == '\'':
			inQuote, nonEmpty = true, true
		case c == '$':
			if j := strings.IndexByte(sql[i+1:], '$'); j >= 0 && dollarTag.MatchString(sql[i+1:i+1+j]) {
				inDollar = sql[i : i+j+2]
				i += j + 1
			}
			nonEmpty = true
		case strings.HasPrefix(sql[i:], "--"):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == ';':
			if nonEmpty {
				n++
			}
			nonEmpty = false
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			nonEmpty = true
		}
	}
	if nonEmpty {
		n++
	}
	return n
}

// CheckTwin verifies that twin (a parsed .pg.spec) has our spec's sessions,
// steps and permutations, and one SQL statement per command in every step.
func CheckTwin(ours, twin *Spec) error {
	if len(ours.Sessions) != len(twin.Sessions) {
		return fmt.Errorf("%s has %d sessions, its twin %d", ours.Name, len(ours.Sessions), len(twin.Sessions))
	}
	for i, s := range ours.Sessions {
		t := twin.Sessions[i]
		if s.Name != t.Name || len(s.Steps) != len(t.Steps) {
			return fmt.Errorf("session %d: %s with %d steps, twin %s with %d steps", i+1, s.Name, len(s.Steps), t.Name, len(t.Steps))
		}
		for j, st := range s.Steps {
			tt := t.Steps[j]
			if st.Name != tt.Name {
				return fmt.Errorf("session %s step %d: %s, twin %s", s.Name, j+1, st.Name, tt.Name)
			}
			if n := statementCount(tt.Text); n != len(st.Cmds) {
				return fmt.Errorf("step %s: %d commands, twin has %d SQL statements", st.Name, len(st.Cmds), n)
			}
		}
	}
	op, tp := ours.Permutations, twin.Permutations
	if len(op) != len(tp) {
		return fmt.Errorf("%d permutations, twin %d", len(op), len(tp))
	}
	for i := range op {
		if permSteps(op[i]) != permSteps(tp[i]) {
			return fmt.Errorf("permutation %d:%s, twin:%s", i+1, permSteps(op[i]), permSteps(tp[i]))
		}
	}
	return nil
}

var (
	dollarTag  = regexp.MustCompile(`^[A-Za-z_]*$`)
	dashLine   = regexp.MustCompile(`^-+(\+-+)*$`)
	rowCount   = regexp.MustCompile(`^\((\d+) rows?\)$`)
	noticeLine = regexp.MustCompile(`^[^ :]+: (WARNING|NOTICE|INFO):  `)
	parsedLine = regexp.MustCompile(`^Parsed test spec with \d+ sessions$`)
	cancelLine = regexp.MustCompile(`^isolationtester: canceling step \S+ after \d+ seconds$`)
)

// Convert turns isolationtester's output for twin (the .pg.out) into the
// output the runner prints for ours: step lines get our step text, result sets
// become our result lines, errors get our text and their SQLSTATE.
func Convert(ours, twin *Spec, pgOut string) (string, error) {
	if err := CheckTwin(ours, twin); err != nil {
		return "", err
	}
	c := &converter{ours: ours, twin: twin, src: pgOut}
	if err := c.run(); err != nil {
		return "", fmt.Errorf("%s: line %d of the PostgreSQL output: %v", ours.Name, c.line, err)
	}
	return c.out.String(), nil
}

type converter struct {
	ours, twin *Spec
	src        string
	pos, line  int
	out        strings.Builder

	step    *Step      // the step whose results follow, nil if none may
	inSetup bool       // between a permutation's header and its first step
	results []*Command // its commands that print a result set, in order
	nextRes int
	errored bool
}

func (c *converter) emit(l string) { c.out.WriteString(l + "\n") }

// readLine returns the next line without its newline.
func (c *converter) readLine() (string, bool) {
	if c.pos >= len(c.src) {
		return "", false
	}
	c.line++
	end := strings.IndexByte(c.src[c.pos:], '\n')
	if end < 0 {
		l := c.src[c.pos:]
		c.pos = len(c.src)
		return l, true
	}
	l := c.src[c.pos : c.pos+end]
	c.pos += end + 1
	return l, true
}

func (c *converter) peekLine() string {
	pos, line := c.pos, c.line
	l, _ := c.readLine()
	c.pos, c.line = pos, line
	return l
}

func (c *converter) setStep(st *Step) {
	c.step, c.results, c.nextRes, c.errored = st, nil, 0, false
	if st == nil {
		return
	}
	for _, cmd := range st.Cmds {
		if cmd.ProducesResult() {
			c.results = append(c.results, cmd)
		}
	}
}

func (c *converter) run() error {
	first, ok := c.readLine()
	if !ok || !parsedLine.MatchString(first) {
		return fmt.Errorf("expected 'Parsed test spec with N sessions', found %q", first)
	}
	c.emit(first)
	for {
		rest := c.src[c.pos:]
		if rest == "" {
			return c.endStep()
		}
		if strings.HasPrefix(rest, "step ") {
			if err := c.stepLine(); err != nil {
				return err
			}
			continue
		}
		l, _ := c.readLine()
		switch {
		case l == "" && strings.HasPrefix(c.peekLine(), "starting permutation:"):
			if err := c.endStep(); err != nil {
				return err
			}
			h, _ := c.readLine()
			c.emit("")
			c.emit(h)
			c.setStep(nil)
			c.inSetup = true
		case noticeLine.MatchString(l) && c.inSetup && c.notFirstStepSession(l):
			// isolationtester keeps its connections from one permutation to
			// the next; the runner rolls back every session at the end of a
			// permutation. A session-setup warning means a session's
			// transaction was left open by the previous permutation.
			return fmt.Errorf("notice during session setup: %q: a session left its transaction open at the end of the previous permutation (see LintSpec)", l)
		case noticeLine.MatchString(l), cancelLine.MatchString(l):
			c.emit(l)
		case strings.HasPrefix(l, "ERROR:  "):
			if c.step == nil {
				return fmt.Errorf("error outside a step: %q", l)
			}
			e, err := ConvertError(strings.TrimPrefix(l, "ERROR:  "))
			if err != nil {
				return err
			}
			c.emit(e)
			c.errored = true
		case dashLine.MatchString(c.peekLine()):
			if err := c.resultSet(l); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unrecognised line %q", l)
		}
	}
}

// notFirstStepSession reports whether a notice line comes from another
// session than the permutation's first printed step (whose own notices may
// precede its step line).
func (c *converter) notFirstStepSession(l string) bool {
	sess, _, _ := strings.Cut(l, ":")
	rest := c.src[c.pos:]
	i := strings.Index(rest, "\nstep ")
	if strings.HasPrefix(rest, "step ") {
		i = -1
	} else if i < 0 {
		return true
	}
	name, _, _ := strings.Cut(rest[i+len("\nstep "):], ":")
	st := c.ours.StepByName(name)
	return st == nil || c.ours.Sessions[st.Session].Name != sess
}

// endStep checks that a finished step printed a result for each command that
// returns one (unless it failed on the way).
func (c *converter) endStep() error {
	if c.step != nil && !c.errored && c.nextRes != len(c.results) {
		return fmt.Errorf("step %s: %d result sets, expected %d", c.step.Name, c.nextRes, len(c.results))
	}
	return nil
}

func (c *converter) stepLine() error {
	if err := c.endStep(); err != nil {
		return err
	}
	c.inSetup = false
	rest := c.src[c.pos:]
	nameEnd := strings.Index(rest, ": ")
	if nameEnd < 0 {
		return fmt.Errorf("bad step line")
	}
	name := rest[len("step "):nameEnd]
	ours, twin := c.ours.StepByName(name), c.twin.StepByName(name)
	if ours == nil || twin == nil {
		return fmt.Errorf("unknown step %q", name)
	}
	after := rest[nameEnd+2:]
	switch {
	case strings.HasPrefix(after, "<... completed>\n") || after == "<... completed>":
		c.readLine()
		c.emit("step " + name + ": <... completed>")
		c.setStep(ours)
	case strings.HasPrefix(after, twin.Text):
		tail := after[len(twin.Text):]
		waiting := strings.HasPrefix(tail, " <waiting ...>")
		if waiting {
			tail = tail[len(" <waiting ...>"):]
		}
		if tail != "" && tail[0] != '\n' {
			return fmt.Errorf("step %s: unexpected text after the SQL: %q", name, firstLine(tail))
		}
		// Consume the SQL's lines and the rest of the last one.
		for i := 0; i <= strings.Count(twin.Text, "\n"); i++ {
			c.readLine()
		}
		if waiting {
			c.emit("step " + name + ": " + ours.Text + " <waiting ...>")
			c.setStep(nil)
		} else {
			c.emit("step " + name + ": " + ours.Text)
			c.setStep(ours)
		}
	default:
		return fmt.Errorf("step %s: the SQL printed is not the twin's: %q", name, firstLine(after))
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// resultSet reads one result set printed by PQprint (header, dashes, rows,
// "(N rows)", blank line) and prints it in our form for the next command of
// the current step that returns one.
func (c *converter) resultSet(header string) error {
	c.readLine() // dashes
	cols := splitRow(header)
	var rows [][]string
	for {
		l, ok := c.readLine()
		if !ok {
			return fmt.Errorf("result set without its row count")
		}
		if m := rowCount.FindStringSubmatch(l); m != nil {
			if n, _ := strconv.Atoi(m[1]); n != len(rows) {
				return fmt.Errorf("result set says %d rows, has %d", n, len(rows))
			}
			break
		}
		r := splitRow(l)
		if len(r) != len(cols) {
			return fmt.Errorf("row %q has %d fields, header %d", l, len(r), len(cols))
		}
		rows = append(rows, r)
	}
	if l, ok := c.readLine(); ok && l != "" {
		return fmt.Errorf("expected a blank line after a result set, found %q", l)
	}
	if c.step == nil {
		return fmt.Errorf("result set outside a step (setup and teardown must not return rows)")
	}
	if c.errored || c.nextRes >= len(c.results) {
		return fmt.Errorf("step %s: more result sets than commands that return one", c.step.Name)
	}
	cmd := c.results[c.nextRes]
	c.nextRes++
	col := func(row []string, name string) (string, error) {
		for i, n := range cols {
			if n == name {
				return row[i], nil
			}
		}
		return "", fmt.Errorf("step %s: %s result has no column %q (columns %v)", c.step.Name, cmd.Kind, name, cols)
	}
	want := func(ok bool) error {
		if !ok {
			return fmt.Errorf("step %s: %d rows for %q", c.step.Name, len(rows), cmd.Text)
		}
		return nil
	}
	switch cmd.Kind {
	case CmdGet, CmdLock:
		if err := want(len(rows) <= 1); err != nil {
			return err
		}
		if len(rows) == 0 {
			// PostgreSQL returns no row both for a missing row and for a
			// skipped one; a lock with SKIP LOCKED reports "skipped" (specs do
			// not lock missing keys with SKIP LOCKED).
			if cmd.Kind == CmdLock && cmd.Wait == tupled.SkipLocked {
				c.emit(skippedLine)
			} else {
				c.emit(notFoundLine)
			}
			return nil
		}
		v, err := col(rows[0], "v")
		if err != nil {
			return err
		}
		c.emit(ValueLine(v))
	case CmdUpsert:
		if err := want(len(rows) <= 1); err != nil {
			return err
		}
		if len(rows) == 0 {
			c.emit(conflictLine)
			return nil
		}
		v, err := col(rows[0], "v")
		if err != nil {
			return err
		}
		c.emit(ValueLine(v))
	case CmdUpdate, CmdDelete:
		if err := want(len(rows) <= 1); err != nil {
			return err
		}
		if len(rows) == 0 {
			c.emit(notFoundLine)
		}
	case CmdScan:
		var kvs []KV
		for _, r := range rows {
			k, err := col(r, "k")
			if err != nil {
				return err
			}
			v, err := col(r, "v")
			if err != nil {
				return err
			}
			kvs = append(kvs, KV{k, v})
		}
		c.emit(ScanLine(kvs))
	case CmdSleep:
		if err := want(len(rows) == 1 && len(cols) == 1 && cols[0] == "pg_sleep"); err != nil {
			return err
		}
	case CmdRowLocks:
		if len(rows) == 0 {
			c.emit(noLocksLine)
			return nil
		}
		for _, r := range rows {
			k, err := col(r, "k")
			if err != nil {
				return err
			}
			m, err := col(r, "multi")
			if err != nil {
				return err
			}
			ls, err := col(r, "lockers")
			if err != nil {
				return err
			}
			var lockers []Locker
			for _, item := range strings.Split(ls, ",") {
				if item == "" {
					continue
				}
				sess, mode, ok := strings.Cut(item, ":")
				s, known := pgModes[mode]
				if !ok || !known {
					return fmt.Errorf("step %s: bad locker %q", c.step.Name, item)
				}
				lockers = append(lockers, Locker{Session: sess, Mode: StrengthName(s)})
			}
			sort.SliceStable(lockers, func(i, j int) bool { return lockers[i].Session < lockers[j].Session })
			c.emit(RowLockLine(k, m == "t", lockers))
		}
	case CmdAdvLock, CmdAdvUnlock, CmdAdvLocks:
		return c.convertAdvisory(cmd, cols, rows)
	default:
		return fmt.Errorf("step %s: %s does not return rows", c.step.Name, cmd.Kind)
	}
	return nil
}

// splitRow splits a PQprint row on "|" and trims the alignment padding.
func splitRow(l string) []string {
	f := strings.Split(l, "|")
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	return f
}
