package isospec

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tupled/tupled"
)

// CmdKind names a command of the step language.
type CmdKind int

const (
	CmdBegin CmdKind = iota
	CmdCommit
	CmdRollback
	CmdGet
	CmdLock
	CmdInsert
	CmdUpdate
	CmdDelete
	CmdScan
	CmdSleep
	CmdSetLockTimeout
	CmdRowLocks
	CmdCreate
	CmdSavepoint
	CmdRelease
	CmdRollbackTo
	CmdUpsert       // upsert [TABLE] K V [update V2 [where OLD]]
	CmdAdvLock      // advlock KEY [shared] [xact] [nowait]
	CmdAdvUnlock    // advunlock KEY [shared]
	CmdAdvUnlockAll // advunlockall
	CmdAdvLocks     // advlocks
	CmdLockTable
	CmdFK // fk CHILD PARENT [noaction|restrict|cascade] (fk.go)
)

var cmdNames = map[CmdKind]string{
	CmdBegin: "begin", CmdCommit: "commit", CmdRollback: "rollback", CmdGet: "get", CmdLock: "lock",
	CmdInsert: "insert", CmdUpdate: "update", CmdDelete: "delete", CmdScan: "scan", CmdSleep: "sleep",
	CmdSetLockTimeout: "set", CmdRowLocks: "rowlocks", CmdCreate: "create", CmdLockTable: "locktable",
	CmdSavepoint: "savepoint", CmdRelease: "release", CmdRollbackTo: "rollback to", CmdUpsert: "upsert",
	CmdAdvLock: "advlock", CmdAdvUnlock: "advunlock", CmdAdvUnlockAll: "advunlockall", CmdAdvLocks: "advlocks",
	CmdFK: "fk",
}

func (k CmdKind) String() string { return cmdNames[k] }

// DefaultTable is the table a command names when it names none.
const DefaultTable = "t"

// Command is one parsed command of a block.
type Command struct {
	Kind CmdKind
	Line int
	Text string // the command as written

	Table    string
	Key      string
	Value    string
	Name     string // savepoint, release, rollback to
	Set      string // upsert: the value DO UPDATE writes (HasSet)
	HasSet   bool
	Strength tupled.LockStrength // lock; scan (NoLock = plain read)
	// fk: the referenced table and the ON DELETE action
	RefTable string
	OnDelete tupled.FKAction
	// locktable: the table lock mode and NOWAIT
	TableMode   tupled.TableLockMode
	TableNoWait bool
	Wait        tupled.WaitPolicy // lock; scan with a strength

	// begin
	Isolation    tupled.IsolationLevel
	IsolationSet bool
	ReadOnly     bool

	// scan
	From, To       string
	HasFrom, HasTo bool
	Limit          int
	// scan where V: only rows whose value is V (ScanOptions.Where; WHERE v
	// = V); prefix P: keys beginning with P (ScanOptions.Prefix);
	// reverse: descending key order (ScanOptions.Reverse; ORDER BY k DESC).
	Where, Prefix       string
	HasWhere, HasPrefix bool
	Reverse             bool

	// sleep, set lock_timeout
	Duration time.Duration

	// advlock, advunlock: the key ("N" for pg_advisory_lock(bigint), "N,M"
	// for the integer pair), and shared / transaction-level / try (nowait).
	AdvKey                     tupled.AdvisoryKey
	AdvKeyText                 string
	AdvShared, AdvXact, AdvTry bool
}

// ProducesResult reports whether the command's PostgreSQL twin returns a result
// set (and so whether our output shows something for it on success).
func (c *Command) ProducesResult() bool {
	switch c.Kind {
	case CmdGet, CmdLock, CmdScan, CmdUpdate, CmdDelete, CmdSleep, CmdRowLocks, CmdUpsert,
		CmdAdvLock, CmdAdvUnlock, CmdAdvLocks:
		return true
	}
	return false
}

type ctok struct {
	text   string
	quoted bool
	line   int
}

// is reports whether the token is the unquoted keyword w.
func (t ctok) is(w string) bool { return !t.quoted && strings.EqualFold(t.text, w) }

// ParseCommands parses the text of a block into commands. line is the line
// number of the block's first character in its file.
func ParseCommands(text string, line int) ([]*Command, error) {
	var cmds []*Command
	var cur []ctok
	curStart := 0
	flush := func(end int) error {
		if len(cur) == 0 {
			return nil
		}
		c, err := parseCommand(cur, strings.TrimSpace(text[curStart:end]))
		if err != nil {
			return err
		}
		cmds = append(cmds, c)
		cur = nil
		return nil
	}
	i := 0
	for i < len(text) {
		c := text[i]
		switch {
		case c == '\n':
			if err := flush(i); err != nil {
				return nil, err
			}
			line++
			i++
		case c == ';':
			if err := flush(i); err != nil {
				return nil, err
			}
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
		case c == '#' || strings.HasPrefix(text[i:], "--"):
			for i < len(text) && text[i] != '\n' {
				i++
			}
			if err := flush(i); err != nil { // the comment ends the command text
				return nil, err
			}
		case c == '\'':
			start := line
			if len(cur) == 0 {
				curStart = i
			}
			var b strings.Builder
			i++
			closed := false
			for i < len(text) {
				if text[i] == '\'' {
					if i+1 < len(text) && text[i+1] == '\'' {
						b.WriteByte('\'')
						i += 2
						continue
					}
					i++
					closed = true
					break
				}
				if text[i] == '\n' {
					line++
				}
				b.WriteByte(text[i])
				i++
			}
			if !closed {
				return nil, &Error{Line: start, Msg: "unterminated quoted string"}
			}
			cur = append(cur, ctok{text: b.String(), quoted: true, line: start})
		default:
			if len(cur) == 0 {
				curStart = i
			}
			start := i
			for i < len(text) && !strings.ContainsRune(" \t\r\f\n;'", rune(text[i])) {
				i++
			}
			cur = append(cur, ctok{text: text[start:i], line: line})
		}
	}
	if err := flush(len(text)); err != nil {
		return nil, err
	}
	return cmds, nil
}

func cmdErr(t ctok, format string, args ...any) error {
	return &Error{Line: t.line, Msg: fmt.Sprintf(format, args...)}
}

var strengths = map[string]tupled.LockStrength{
	"keyshare":    tupled.ForKeyShare,
	"share":       tupled.ForShare,
	"nokeyupdate": tupled.ForNoKeyUpdate,
	"update":      tupled.ForUpdate,
}

// StrengthName is the spelling of a lock strength in the step language.
func StrengthName(s tupled.LockStrength) string {
	for n, v := range strengths {
		if v == s {
			return n
		}
	}
	return "none"
}

func parseStrength(t ctok) (tupled.LockStrength, bool) {
	if t.quoted {
		return 0, false
	}
	s, ok := strengths[strings.ToLower(t.text)]
	return s, ok
}

// trailingWait strips a trailing "nowait" or "skip locked".
func trailingWait(args []ctok) ([]ctok, tupled.WaitPolicy) {
	n := len(args)
	if n >= 1 && args[n-1].is("nowait") {
		return args[:n-1], tupled.NoWait
	}
	if n >= 2 && args[n-2].is("skip") && args[n-1].is("locked") {
		return args[:n-2], tupled.SkipLocked
	}
	return args, tupled.Wait
}

func checkName(t ctok, what string) error {
	if t.text == "" {
		return cmdErr(t, "empty %s name", what)
	}
	for i := 0; i < len(t.text); i++ {
		if !isIdentChar(t.text[i]) {
			return cmdErr(t, "bad %s name %q", what, t.text)
		}
	}
	return nil
}

// parseDuration reads MS (an integer number of milliseconds) or a Go duration.
func parseDuration(t ctok) (time.Duration, error) {
	if n, err := strconv.Atoi(t.text); err == nil && n >= 0 {
		return time.Duration(n) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(t.text)
	if err != nil || d < 0 {
		return 0, cmdErr(t, "bad duration %q (milliseconds, or a duration like 100ms)", t.text)
	}
	return d, nil
}

func parseCommand(toks []ctok, text string) (*Command, error) {
	head := toks[0]
	args := toks[1:]
	c := &Command{Line: head.line, Text: text, Table: DefaultTable}
	if head.quoted {
		return nil, cmdErr(head, "expected a command, found a quoted string")
	}
	usage := func(u string) error { return cmdErr(head, "usage: %s", u) }
	// optTable consumes a leading table name when the argument count says one is there.
	optTable := func(withTable int) error {
		if len(args) == withTable {
			if err := checkName(args[0], "table"); err != nil {
				return err
			}
			c.Table = args[0].text
			args = args[1:]
		}
		return nil
	}
	switch strings.ToLower(head.text) {
	case "begin":
		c.Kind = CmdBegin
		a := args
		if len(a) >= 2 && a[0].is("isolation") && a[1].is("level") {
			a = a[2:]
		}
		for len(a) > 0 {
			switch {
			case len(a) >= 2 && a[0].is("repeatable") && a[1].is("read"):
				c.Isolation, c.IsolationSet = tupled.RepeatableRead, true
			case len(a) >= 2 && a[0].is("read") && a[1].is("committed"):
				c.Isolation, c.IsolationSet = tupled.ReadCommitted, true
			case len(a) >= 2 && a[0].is("read") && a[1].is("only"):
				c.ReadOnly = true
			case len(a) >= 2 && a[0].is("read") && a[1].is("write"):
				c.ReadOnly = false
			default:
				return nil, usage("begin [repeatable read|read committed] [read only]")
			}
			a = a[2:]
		}
	case "commit":
		c.Kind = CmdCommit
		if len(args) != 0 {
			return nil, usage("commit")
		}
	case "rollback", "abort":
		c.Kind = CmdRollback
		if len(args) == 2 && args[0].is("to") && head.is("rollback") {
			c.Kind, c.Name = CmdRollbackTo, args[1].text
			break
		}
		if len(args) != 0 {
			return nil, usage("rollback | rollback to NAME")
		}
	case "savepoint", "release":
		c.Kind = CmdSavepoint
		if head.is("release") {
			c.Kind = CmdRelease
		}
		if len(args) != 1 {
			return nil, usage(head.text + " NAME")
		}
		c.Name = args[0].text
	case "get":
		c.Kind = CmdGet
		if len(args) < 1 || len(args) > 2 {
			return nil, usage("get [TABLE] KEY")
		}
		if err := optTable(2); err != nil {
			return nil, err
		}
		c.Key = args[0].text
	case "lock":
		c.Kind = CmdLock
		a, w := trailingWait(args)
		args = a
		c.Wait = w
		if len(args) < 2 || len(args) > 3 {
			return nil, usage("lock [TABLE] KEY keyshare|share|nokeyupdate|update [nowait|skip locked]")
		}
		s, ok := parseStrength(args[len(args)-1])
		if !ok {
			return nil, cmdErr(args[len(args)-1], "unknown lock strength %q (keyshare, share, nokeyupdate or update)", args[len(args)-1].text)
		}
		c.Strength = s
		args = args[:len(args)-1]
		if err := optTable(2); err != nil {
			return nil, err
		}
		c.Key = args[0].text
	case "insert", "update":
		c.Kind = CmdInsert
		if strings.EqualFold(head.text, "update") {
			c.Kind = CmdUpdate
		}
		if len(args) < 2 || len(args) > 3 {
			return nil, usage(strings.ToLower(head.text) + " [TABLE] KEY VALUE")
		}
		if err := optTable(3); err != nil {
			return nil, err
		}
		c.Key, c.Value = args[0].text, args[1].text
	case "upsert":
		c.Kind = CmdUpsert
		u := usage("upsert [TABLE] KEY VALUE [update VALUE [where OLD]]")
		for i, a := range args {
			if a.is("update") {
				rest := args[i+1:]
				switch {
				case len(rest) == 1:
				case len(rest) == 3 && rest[1].is("where"):
					c.Where, c.HasWhere = rest[2].text, true
				default:
					return nil, u
				}
				c.Set, c.HasSet = rest[0].text, true
				args = args[:i]
				break
			}
		}
		if len(args) < 2 || len(args) > 3 {
			return nil, u
		}
		if err := optTable(3); err != nil {
			return nil, err
		}
		c.Key, c.Value = args[0].text, args[1].text
	case "delete":
		c.Kind = CmdDelete
		if len(args) < 1 || len(args) > 2 {
			return nil, usage("delete [TABLE] KEY")
		}
		if err := optTable(2); err != nil {
			return nil, err
		}
		c.Key = args[0].text
	case "scan":
		c.Kind = CmdScan
		if err := parseScan(c, head, args); err != nil {
			return nil, err
		}
	case "sleep":
		c.Kind = CmdSleep
		if len(args) != 1 {
			return nil, usage("sleep MS")
		}
		d, err := parseDuration(args[0])
		if err != nil {
			return nil, err
		}
		c.Duration = d
	case "set":
		c.Kind = CmdSetLockTimeout
		if len(args) != 2 || !args[0].is("lock_timeout") {
			return nil, usage("set lock_timeout MS")
		}
		d, err := parseDuration(args[1])
		if err != nil {
			return nil, err
		}
		c.Duration = d
	case "rowlocks":
		c.Kind = CmdRowLocks
		if len(args) > 1 {
			return nil, usage("rowlocks [TABLE]")
		}
		if err := optTable(1); err != nil {
			return nil, err
		}
	case "create":
		c.Kind = CmdCreate
		if len(args) != 1 {
			return nil, usage("create TABLE")
		}
		if err := optTable(1); err != nil {
			return nil, err
		}
	case "advlock", "advunlock":
		c.Kind = CmdAdvLock
		u := "advlock KEY [shared] [xact] [nowait]"
		if strings.EqualFold(head.text, "advunlock") {
			c.Kind, u = CmdAdvUnlock, "advunlock KEY [shared]"
		}
		if len(args) < 1 {
			return nil, usage(u)
		}
		if err := parseAdvKey(c, args[0]); err != nil {
			return nil, err
		}
		for _, a := range args[1:] {
			switch {
			case a.is("shared") && !c.AdvShared:
				c.AdvShared = true
			case a.is("xact") && c.Kind == CmdAdvLock && !c.AdvXact:
				c.AdvXact = true
			case a.is("nowait") && c.Kind == CmdAdvLock && !c.AdvTry:
				c.AdvTry = true
			default:
				return nil, usage(u)
			}
		}
	case "advunlockall":
		c.Kind = CmdAdvUnlockAll
		if len(args) != 0 {
			return nil, usage("advunlockall")
		}
	case "advlocks":
		c.Kind = CmdAdvLocks
		if len(args) != 0 {
			return nil, usage("advlocks")
		}
	case "locktable":
		c.Kind = CmdLockTable
		if len(args) > 0 && args[len(args)-1].is("nowait") {
			c.TableNoWait = true
			args = args[:len(args)-1]
		}
		if len(args) < 1 || len(args) > 2 {
			return nil, usage("locktable [TABLE] accessshare|rowshare|rowexclusive|shareupdateexclusive|share|sharerowexclusive|exclusive|accessexclusive [nowait]")
		}
		m, ok := tableModes[strings.ToLower(args[len(args)-1].text)]
		if !ok {
			return nil, cmdErr(args[len(args)-1], "unknown table lock mode %q (accessshare, rowshare, rowexclusive, shareupdateexclusive, share, sharerowexclusive, exclusive, accessexclusive)", args[len(args)-1].text)
		}
		c.TableMode = m
		args = args[:len(args)-1]
		if err := optTable(1); err != nil {
			return nil, err
		}
	case "fk":
		c.Kind = CmdFK
		if err := parseFK(c, args); err != nil {
			return nil, err
		}
	default:
		return nil, cmdErr(head, "unknown command %q (begin, get, lock, insert, update, delete, scan, commit, rollback, savepoint, release, rollback to, upsert, sleep, set, rowlocks, create, advlock, advunlock, advunlockall, advlocks, locktable, fk)", head.text)
	}
	return c, nil
}

// tableModes are locktable's mode words, PostgreSQL's LOCK modes without
// their spaces.
var tableModes = map[string]tupled.TableLockMode{
	"accessshare": tupled.AccessShare, "rowshare": tupled.RowShare, "rowexclusive": tupled.RowExclusive,
	"shareupdateexclusive": tupled.ShareUpdateExclusive, "share": tupled.Share,
	"sharerowexclusive": tupled.ShareRowExclusive, "exclusive": tupled.Exclusive, "accessexclusive": tupled.AccessExclusive,
}

// sqlTableModes are the modes as LOCK TABLE spells them.
var sqlTableModes = map[tupled.TableLockMode]string{
	tupled.AccessShare: "ACCESS SHARE", tupled.RowShare: "ROW SHARE", tupled.RowExclusive: "ROW EXCLUSIVE",
	tupled.ShareUpdateExclusive: "SHARE UPDATE EXCLUSIVE", tupled.Share: "SHARE",
	tupled.ShareRowExclusive: "SHARE ROW EXCLUSIVE", tupled.Exclusive: "EXCLUSIVE", tupled.AccessExclusive: "ACCESS EXCLUSIVE",
}

func parseScan(c *Command, head ctok, args []ctok) error {
	usage := cmdErr(head, "usage: scan [TABLE] [from KEY] [to KEY] [prefix P] [where VALUE] [reverse] [limit N] [lock STRENGTH [nowait|skip locked]]")
	isKw := func(t ctok) bool {
		return t.is("from") || t.is("to") || t.is("limit") || t.is("lock") || t.is("where") || t.is("prefix") || t.is("reverse")
	}
	if len(args) > 0 && !isKw(args[0]) {
		if err := checkName(args[0], "table"); err != nil {
			return err
		}
		c.Table = args[0].text
		args = args[1:]
	}
	seen := map[string]bool{}
	for len(args) > 0 {
		kw := args[0]
		if !isKw(kw) {
			return cmdErr(kw, "scan: unexpected %q", kw.text)
		}
		name := strings.ToLower(kw.text)
		if seen[name] {
			return cmdErr(kw, "scan: %s given twice", name)
		}
		seen[name] = true
		if name == "reverse" {
			c.Reverse = true
			args = args[1:]
			continue
		}
		if len(args) < 2 {
			return usage
		}
		val := args[1]
		args = args[2:]
		switch name {
		case "from":
			c.From, c.HasFrom = val.text, true
		case "to":
			c.To, c.HasTo = val.text, true
		case "where":
			c.Where, c.HasWhere = val.text, true
		case "prefix":
			c.Prefix, c.HasPrefix = val.text, true
		case "limit":
			n, err := strconv.Atoi(val.text)
			if err != nil || n <= 0 {
				return cmdErr(val, "scan: bad limit %q", val.text)
			}
			c.Limit = n
		case "lock":
			s, ok := parseStrength(val)
			if !ok {
				return cmdErr(val, "unknown lock strength %q (keyshare, share, nokeyupdate or update)", val.text)
			}
			c.Strength = s
			if len(args) >= 1 && args[0].is("nowait") {
				c.Wait = tupled.NoWait
				args = args[1:]
			} else if len(args) >= 2 && args[0].is("skip") && args[1].is("locked") {
				c.Wait = tupled.SkipLocked
				args = args[2:]
			}
		}
	}
	return nil
}

// parseOptions reads "name value" pairs.
func parseOptions(file string, b *Block) ([]Option, error) {
	var out []Option
	var pend *Option
	for i, l := range strings.Split(b.Text, "\n") {
		if k := strings.IndexAny(l, "#"); k >= 0 {
			l = l[:k]
		}
		for _, f := range strings.FieldsFunc(l, func(r rune) bool { return r == ' ' || r == '\t' || r == ';' || r == '\r' }) {
			if pend == nil {
				pend = &Option{Name: f, Line: b.Line + i}
				continue
			}
			pend.Value = f
			out = append(out, *pend)
			pend = nil
		}
	}
	if pend != nil {
		return nil, &Error{File: file, Line: pend.Line, Msg: fmt.Sprintf("option %s has no value", pend.Name)}
	}
	for _, o := range out {
		if _, ok := knownOptions[o.Name]; !ok {
			return nil, &Error{File: file, Line: o.Line, Msg: fmt.Sprintf("unknown option %q (known: %s)", o.Name, strings.Join(optionNames(), ", "))}
		}
	}
	return out, nil
}

// parseAdvKey reads an advisory lock key: a bigint "N" or an integer pair
// "N,M" (pg_advisory_lock(bigint) and pg_advisory_lock(int, int)).
func parseAdvKey(c *Command, t ctok) error {
	if a, b, pair := strings.Cut(t.text, ","); pair {
		k1, err1 := strconv.ParseInt(a, 10, 32)
		k2, err2 := strconv.ParseInt(b, 10, 32)
		if t.quoted || err1 != nil || err2 != nil {
			return cmdErr(t, "bad advisory key %q (a bigint N, or two integers N,M)", t.text)
		}
		c.AdvKey = tupled.AdvisoryKeyPair(int32(k1), int32(k2))
		c.AdvKeyText = strconv.FormatInt(k1, 10) + "," + strconv.FormatInt(k2, 10)
		return nil
	}
	k, err := strconv.ParseInt(t.text, 10, 64)
	if t.quoted || err != nil {
		return cmdErr(t, "bad advisory key %q (a bigint N, or two integers N,M)", t.text)
	}
	c.AdvKey = tupled.AdvisoryKeyInt64(k)
	c.AdvKeyText = strconv.FormatInt(k, 10)
	return nil
}
