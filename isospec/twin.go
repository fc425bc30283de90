package isospec

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tupled/tupled"
)

// The PostgreSQL twin of a spec is an isolationtester spec in SQL with the
// same sessions, step names and permutations, where every command is one SQL
// statement. Tables are (k text COLLATE "C" PRIMARY KEY, v text): keys are text
// compared bytewise, as tupled compares them.

// TableDDL is the PostgreSQL definition of a table of the step language.
func TableDDL(name string) string {
	return fmt.Sprintf(`CREATE TABLE %s (k text COLLATE "C" PRIMARY KEY, v text);`, name)
}

// rowlocksSQL defines rowlocks(rel), the twin of the rowlocks command: for
// each row with live lockers (pgrowlocks), the key, whether xmax is a
// multixact, and session:mode for each live locker, the session taken from
// the application_name isolationtester gives each connection ("…/s1").
const rowlocksSQL = `CREATE EXTENSION IF NOT EXISTS pgrowlocks;
  CREATE OR REPLACE FUNCTION rowlocks(rel text) RETURNS TABLE (k text, multi boolean, lockers text)
  LANGUAGE plpgsql AS $f$
  BEGIN
    RETURN QUERY EXECUTE format(
      'SELECT t.k, r.multi, string_agg(s.name || '':'' || s.mode, '','' ORDER BY s.name, s.mode)
         FROM pgrowlocks(%L) r
         JOIN %I t ON t.ctid = r.locked_row
         CROSS JOIN LATERAL (
           SELECT regexp_replace(a.application_name, ''^.*/'', '''') AS name, u.mode
             FROM unnest(r.pids, r.modes) AS u(pid, mode)
             JOIN pg_stat_activity a ON a.pid = u.pid) s
        GROUP BY t.k, r.multi ORDER BY t.k', rel, rel);
  END $f$;`

func sqlText(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func sqlMillis(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return sqlText(strconv.FormatInt(d.Milliseconds(), 10) + "ms")
}

func sqlLock(s tupled.LockStrength, w tupled.WaitPolicy) string {
	out := " " + strings.ToUpper(s.String())
	switch w {
	case tupled.NoWait:
		out += " NOWAIT"
	case tupled.SkipLocked:
		out += " SKIP LOCKED"
	}
	return out
}

// SQL is the PostgreSQL statement equivalent to a command.
func SQL(c *Command) string {
	t, k := c.Table, sqlText(c.Key)
	switch c.Kind {
	case CmdBegin:
		s := "BEGIN"
		if c.IsolationSet {
			s += " ISOLATION LEVEL " + strings.ToUpper(c.Isolation.String())
		}
		if c.ReadOnly {
			s += " READ ONLY"
		}
		return s + ";"
	case CmdCommit:
		return "COMMIT;"
	case CmdRollback:
		return "ROLLBACK;"
	case CmdUpsert:
		// RETURNING v: a row when inserted or updated, none on DO NOTHING
		// or a DO UPDATE whose WHERE failed.
		s := fmt.Sprintf("INSERT INTO %s VALUES (%s, %s) ON CONFLICT (k) DO ", t, k, sqlText(c.Value))
		if !c.HasSet {
			return s + "NOTHING RETURNING v;"
		}
		s += "UPDATE SET v = " + sqlText(c.Set)
		if c.HasWhere {
			s += fmt.Sprintf(" WHERE %s.v = %s", t, sqlText(c.Where))
		}
		return s + " RETURNING v;"
	case CmdSavepoint:
		return "SAVEPOINT " + c.Name + ";"
	case CmdRelease:
		return "RELEASE " + c.Name + ";"
	case CmdRollbackTo:
		return "ROLLBACK TO " + c.Name + ";"
	case CmdGet:
		return fmt.Sprintf("SELECT v FROM %s WHERE k = %s;", t, k)
	case CmdLock:
		return fmt.Sprintf("SELECT v FROM %s WHERE k = %s%s;", t, k, sqlLock(c.Strength, c.Wait))
	case CmdLockTable:
		s := fmt.Sprintf("LOCK TABLE %s IN %s MODE", t, sqlTableModes[c.TableMode])
		if c.TableNoWait {
			s += " NOWAIT"
		}
		return s + ";"
	case CmdInsert:
		return fmt.Sprintf("INSERT INTO %s VALUES (%s, %s);", t, k, sqlText(c.Value))
	case CmdUpdate:
		// RETURNING shows whether a row was updated: isolationtester prints no row counts.
		return fmt.Sprintf("UPDATE %s SET v = %s WHERE k = %s RETURNING k;", t, sqlText(c.Value), k)
	case CmdDelete:
		return fmt.Sprintf("DELETE FROM %s WHERE k = %s RETURNING k;", t, k)
	case CmdScan:
		var where []string
		if c.HasFrom {
			where = append(where, "k >= "+sqlText(c.From))
		}
		if c.HasTo {
			where = append(where, "k < "+sqlText(c.To))
		}
		if c.HasPrefix {
			where = append(where, "starts_with(k, "+sqlText(c.Prefix)+")")
		}
		if c.HasWhere {
			where = append(where, "v = "+sqlText(c.Where))
		}
		s := "SELECT k, v FROM " + t
		if len(where) > 0 {
			s += " WHERE " + strings.Join(where, " AND ")
		}
		s += " ORDER BY k"
		if c.Reverse {
			s += " DESC"
		}
		if c.Limit > 0 {
			s += fmt.Sprintf(" LIMIT %d", c.Limit)
		}
		if c.Strength != tupled.NoLock {
			s += sqlLock(c.Strength, c.Wait)
		}
		return s + ";"
	case CmdSleep:
		return fmt.Sprintf("SELECT pg_sleep(%s);", strconv.FormatFloat(c.Duration.Seconds(), 'f', -1, 64))
	case CmdSetLockTimeout:
		return "SET lock_timeout = " + sqlMillis(c.Duration) + ";"
	case CmdRowLocks:
		return fmt.Sprintf("SELECT * FROM rowlocks(%s);", sqlText(t))
	case CmdCreate:
		return TableDDL(t)
	case CmdAdvLock:
		return advLockSQL(c)
	case CmdAdvUnlock:
		return advUnlockSQL(c)
	case CmdFK:
		return fkSQL(c)
	case CmdAdvUnlockAll:
		// A DO block, so that it returns no rows and may end a session's
		// teardown (isolationtester prints a teardown's result sets).
		return "DO $$BEGIN PERFORM pg_advisory_unlock_all(); END$$;"
	case CmdAdvLocks:
		return advLocksSQL
	}
	panic("unknown command kind")
}

// blockSQL translates a block: one statement per command, on one line for a
// step, one per line for setup and teardown.
func blockSQL(b *Block, sep string) string {
	parts := make([]string, len(b.Cmds))
	for i, c := range b.Cmds {
		parts[i] = SQL(c)
	}
	return strings.Join(parts, sep)
}

func (s *Spec) allBlocks() []*Block {
	bs := append([]*Block(nil), s.Setup...)
	if s.Teardown != nil {
		bs = append(bs, s.Teardown)
	}
	for _, sess := range s.Sessions {
		for _, b := range []*Block{sess.Setup, sess.Teardown} {
			if b != nil {
				bs = append(bs, b)
			}
		}
		for _, st := range sess.Steps {
			bs = append(bs, &st.Block)
		}
	}
	return bs
}

// Twin writes the PostgreSQL isolation spec equivalent to s. file is the name
// of our spec, mentioned in the header.
func Twin(s *Spec, file string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s.Header, "\n"), "\n") {
		if l == "" {
			b.WriteString("#\n")
		} else {
			b.WriteString("# " + l + "\n")
		}
	}
	fmt.Fprintf(&b, "#\n# PostgreSQL twin of %s, generated by `go run ./isospec/cmd/spec2pg`.\n\n", file)

	var tables []string
	seen := map[string]bool{}
	usesRowlocks := false
	for _, bl := range s.allBlocks() {
		for _, c := range bl.Cmds {
			if c.Kind == CmdCreate && !seen[c.Table] {
				seen[c.Table] = true
				tables = append(tables, c.Table)
			}
			if c.Kind == CmdRowLocks {
				usesRowlocks = true
			}
		}
	}
	if usesRowlocks {
		b.WriteString("setup\n{\n  " + rowlocksSQL + "\n}\n")
	}
	for _, bl := range s.Setup {
		b.WriteString("setup\n{\n  " + blockSQL(bl, "\n  ") + "\n}\n")
	}
	var td []string
	if s.Teardown != nil {
		td = append(td, blockSQL(s.Teardown, "\n  "))
	}
	if len(tables) > 0 {
		td = append(td, "DROP TABLE IF EXISTS "+strings.Join(tables, ", ")+";")
	}
	if len(td) > 0 {
		b.WriteString("teardown\n{\n  " + strings.Join(td, "\n  ") + "\n}\n")
	}

	// Options that PostgreSQL has as settings become SETs in every session's
	// setup (deadlock_timeout and lock_timeout are per session there).
	var sets []string
	if v, ok := s.Option("deadlock_timeout"); ok {
		d, _ := optDuration(v)
		sets = append(sets, "SET deadlock_timeout = "+sqlMillis(d)+";")
	}
	if v, ok := s.Option("lock_timeout"); ok {
		d, _ := optDuration(v)
		sets = append(sets, "SET lock_timeout = "+sqlMillis(d)+";")
	}
	for _, sess := range s.Sessions {
		fmt.Fprintf(&b, "\nsession %s\n", sess.Name)
		setup := append([]string(nil), sets...)
		if sess.Setup != nil {
			setup = append(setup, blockSQL(sess.Setup, " "))
		}
		if len(setup) > 0 {
			fmt.Fprintf(&b, "setup { %s }\n", strings.Join(setup, " "))
		}
		for _, st := range sess.Steps {
			fmt.Fprintf(&b, "step %s { %s }\n", st.Name, blockSQL(&st.Block, " "))
		}
		if sess.Teardown != nil {
			fmt.Fprintf(&b, "teardown { %s }\n", blockSQL(sess.Teardown, " "))
		}
	}
	if len(s.Permutations) > 0 {
		b.WriteString("\n")
		for _, p := range s.Permutations {
			b.WriteString("permutation" + permSteps(p) + "\n")
		}
	}
	return b.String()
}
