package isospec

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Advisory lock commands:
//
//	advlock KEY [shared] [xact] [nowait]   pg_[try_]advisory_[xact_]lock[_shared](KEY)
//	advunlock KEY [shared]                 pg_advisory_unlock[_shared](KEY)
//	advunlockall                           pg_advisory_unlock_all() (prints nothing)
//	advlocks                               the advisory locks of pg_locks, by session
//
// KEY is a bigint N or an integer pair N,M (different locks, as in
// PostgreSQL). A blocking advlock prints nothing on success; with nowait it
// prints => t or => f; advunlock prints => t, or PostgreSQL's warning and
// => f when the session holds no such session-level lock. advlocks prints
// one line per key, "=> KEY s1:exclusive s2:shared(waiting)", sessions and
// modes sorted, or "=> (no advisory locks)".

const noAdvLocksLine = "=> (no advisory locks)"

// advLockSQL is the twin of a blocking or try advlock.
func advLockSQL(c *Command) string {
	fn := "pg_"
	if c.AdvTry {
		fn += "try_"
	}
	fn += "advisory_"
	if c.AdvXact {
		fn += "xact_"
	}
	fn += "lock"
	if c.AdvShared {
		fn += "_shared"
	}
	return fmt.Sprintf("SELECT %s(%s);", fn, strings.ReplaceAll(c.AdvKeyText, ",", ", "))
}

func advUnlockSQL(c *Command) string {
	fn := "pg_advisory_unlock"
	if c.AdvShared {
		fn += "_shared"
	}
	return fmt.Sprintf("SELECT %s(%s);", fn, strings.ReplaceAll(c.AdvKeyText, ",", ", "))
}

// advLocksSQL lists pg_locks' advisory locks as advlocks prints them: the key
// rebuilt from classid/objid/objsubid, and session:mode[(waiting)] for each
// holder or waiter, the session taken from the application_name that
// isolationtester gives each connection ("…/s1").
const advLocksSQL = `SELECT k, string_agg(locker, ' ' ORDER BY locker COLLATE "C") AS lockers FROM (` +
	`SELECT CASE WHEN l.objsubid = 1 THEN ((l.classid::bigint << 32) | l.objid::bigint)::text ` +
	`ELSE (l.classid::bigint - CASE WHEN l.classid::bigint >= 2147483648 THEN 4294967296 ELSE 0 END)::text || ',' || ` +
	`(l.objid::bigint - CASE WHEN l.objid::bigint >= 2147483648 THEN 4294967296 ELSE 0 END)::text END AS k, ` +
	`regexp_replace(a.application_name, '^.*/', '') || ':' || CASE l.mode WHEN 'ExclusiveLock' THEN 'exclusive' ELSE 'shared' END || ` +
	`CASE WHEN l.granted THEN '' ELSE '(waiting)' END AS locker ` +
	`FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory') s ` +
	`GROUP BY k ORDER BY k COLLATE "C";`

// AdvLockLine is one line of an advlocks result.
func AdvLockLine(key string, lockers []string) string {
	sort.Strings(lockers)
	return resultPrefix + key + " " + strings.Join(lockers, " ")
}

// execAdvisory runs an advisory lock command (see exec for the results).
func (s *session) execAdvisory(ctx context.Context, c *Command) ([]event, bool, error) {
	if s.tx != nil && s.aborted {
		return errAbortedLine(c), true, nil
	}
	if c.Kind == CmdAdvLocks {
		return lines(s.r.advLockLines()...), false, nil
	}
	if s.es == nil {
		return nil, false, fmt.Errorf("%s needs an engine with sessions (isospec.SessionTarget)", c.Kind)
	}
	// A failure aborts the open transaction, as in PostgreSQL.
	fail := func(err error) ([]event, bool, error) {
		if s.tx != nil {
			s.aborted = true
		}
		return errorEvent(err, c), true, nil
	}
	boolLine := func(ok bool) []event {
		if ok {
			return lines(resultPrefix + "t")
		}
		return lines(resultPrefix + "f")
	}
	switch c.Kind {
	case CmdAdvUnlock:
		ok, err := s.es.AdvisoryUnlock(c.AdvKey, c.AdvShared)
		if err != nil {
			return fail(err)
		}
		if !ok {
			mode := "ExclusiveLock"
			if c.AdvShared {
				mode = "ShareLock"
			}
			return append([]event{notice("you don't own a lock of type " + mode)}, boolLine(false)...), false, nil
		}
		return boolLine(true), false, nil
	case CmdAdvUnlockAll:
		if err := s.es.AdvisoryUnlockAll(); err != nil {
			return fail(err)
		}
		return lines(), false, nil
	}
	if !c.AdvXact {
		// Session-level: in the open transaction if any (the session runs it).
		if c.AdvTry {
			ok, err := s.es.TryAdvisoryLock(ctx, c.AdvKey, c.AdvShared)
			if err != nil {
				return fail(err)
			}
			return boolLine(ok), false, nil
		}
		if err := s.es.AdvisoryLock(ctx, c.AdvKey, c.AdvShared); err != nil {
			return fail(err)
		}
		return lines(), false, nil
	}
	// Transaction-level: in the open transaction, or in its own (autocommit:
	// released at once, as PostgreSQL's implicit transaction does).
	tx := s.tx
	auto := tx == nil
	if auto {
		opts, err := s.txOptions()
		if err != nil {
			return nil, false, err
		}
		t, berr := s.es.Begin(ctx, opts)
		if berr != nil {
			return errorEvent(berr, c), true, nil
		}
		tx = t
		s.txID.Store(tx.ID())
		defer s.txID.Store(0)
	}
	atx, ok := tx.(AdvisoryTxn)
	if !ok {
		if auto {
			tx.Rollback()
		}
		return nil, false, fmt.Errorf("advlock xact needs a transaction with advisory locks (isospec.AdvisoryTxn)")
	}
	var got bool
	var err error
	if c.AdvTry {
		got, err = atx.TryAdvisoryLock(ctx, c.AdvKey, c.AdvShared)
	} else {
		err = atx.AdvisoryLock(ctx, c.AdvKey, c.AdvShared)
	}
	if auto {
		if err == nil {
			err = tx.Commit()
		} else {
			tx.Rollback()
		}
	}
	if err != nil {
		return fail(err)
	}
	if c.AdvTry {
		return boolLine(got), false, nil
	}
	return lines(), false, nil
}

// advLockLines formats the advisory locks of db.Locks() naming each holder
// or waiter by its session.
func (r *runner) advLockLines() []string {
	bySess, byTx := map[uint64]string{}, map[uint64]string{}
	for _, s := range r.sessions {
		if s.es != nil {
			bySess[s.es.ID()] = s.name
		}
		if id := s.txID.Load(); id != 0 {
			byTx[id] = s.name
		}
	}
	keys := map[string][]string{}
	for _, l := range r.eng.Locks() {
		k, ok := strings.CutPrefix(l.Tag, "advisory ")
		if !ok {
			continue
		}
		name, ok := bySess[l.Session]
		if !ok {
			if name, ok = byTx[l.TxID]; !ok {
				name = "?"
			}
		}
		mode := "shared"
		if l.Mode == "ExclusiveLock" {
			mode = "exclusive"
		}
		if !l.Granted {
			mode += "(waiting)"
		}
		keys[k] = append(keys[k], name+":"+mode)
	}
	if len(keys) == 0 {
		return []string{noAdvLocksLine}
	}
	ks := make([]string, 0, len(keys))
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = AdvLockLine(k, keys[k])
	}
	return out
}

// convertAdvisory converts the result set of an advisory command.
func (c *converter) convertAdvisory(cmd *Command, cols []string, rows [][]string) error {
	one := func() (string, error) {
		if len(rows) != 1 || len(cols) != 1 {
			return "", fmt.Errorf("step %s: %d rows of %d columns for %q", c.step.Name, len(rows), len(cols), cmd.Text)
		}
		return rows[0][0], nil
	}
	switch cmd.Kind {
	case CmdAdvLock, CmdAdvUnlock:
		v, err := one()
		if err != nil {
			return err
		}
		if cmd.Kind == CmdAdvUnlock || (cmd.Kind == CmdAdvLock && cmd.AdvTry) {
			if v != "t" && v != "f" {
				return fmt.Errorf("step %s: %q returned %q", c.step.Name, cmd.Text, v)
			}
			c.emit(resultPrefix + v)
		}
	case CmdAdvLocks:
		if len(rows) == 0 {
			c.emit(noAdvLocksLine)
			return nil
		}
		if len(cols) != 2 || cols[0] != "k" || cols[1] != "lockers" {
			return fmt.Errorf("step %s: advlocks columns %v", c.step.Name, cols)
		}
		for _, r := range rows {
			c.emit(AdvLockLine(r[0], strings.Fields(r[1])))
		}
	}
	return nil
}
