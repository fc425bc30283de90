package isospec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"sync/atomic"
	"time"

	"github.com/tupled/tupled"
)

// event is what a session reports while running a block: a notice (printed
// as "NAME: WARNING:  ...") or the completion of one command with the lines it
// printed. isolationtester's placement of notices depends on where they fall
// between command completions, so the order is kept.
type event struct {
	notice string
	lines  []string
}

func (e event) isNotice() bool { return e.notice != "" }

// blockRun is one block (step, or a session's setup/teardown) handed to a
// session goroutine.
type blockRun struct {
	name string // step name, or "setup"/"teardown"
	text string // the step text printed on the step line
	cmds []*Command
	ps   *PermStep // nil for setup/teardown blocks
	sess *session

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed by the session goroutine when the block ends

	// written by the session goroutine before done is closed
	events []event
	fatal  error // a spec or runner failure (not an engine error): ends the run

	finished bool // the runner has seen done
}

// session is one connection of the spec: it owns a goroutine that runs its
// blocks one at a time, and at most one open transaction.
type session struct {
	name string
	r    *runner
	reqs chan *blockRun
	exit chan struct{}

	// es owns the session's advisory locks and begins its transactions,
	// when the engine has sessions (SessionTarget); else nil.
	es TargetSession

	// owned by the session goroutine
	tx             Txn
	aborted        bool
	lockTimeout    time.Duration
	lockTimeoutSet bool

	// the ID of the transaction the session is running a command in (0 if none);
	// read by the runner to see whether the session waits in db.Locks().
	txID atomic.Uint64

	active *blockRun // runner side: the step in progress, if any
}

func (r *runner) newSession(name string) *session {
	s := &session{name: name, r: r, reqs: make(chan *blockRun), exit: make(chan struct{})}
	if se, ok := r.eng.(SessionTarget); ok {
		s.es = se.NewSession()
	}
	go s.loop()
	return s
}

func (s *session) loop() {
	defer close(s.exit)
	for br := range s.reqs {
		s.runBlock(br)
	}
}

func (s *session) runBlock(br *blockRun) {
	defer close(br.done)
	defer func() {
		if p := recover(); p != nil {
			br.fatal = fmt.Errorf("%s: %s %s: the engine panicked: %v\n%s", s.r.spec.Name, s.name, br.name, p, debug.Stack())
		}
	}()
	for _, c := range br.cmds {
		ev, stop, err := s.exec(br.ctx, c)
		br.events = append(br.events, ev...)
		if err != nil {
			br.fatal = fmt.Errorf("%s:%d: %s", s.r.spec.Name, c.Line, err)
			return
		}
		if stop {
			return // like a query string, a step stops at its first error
		}
	}
}

// finish rolls back what is left open; called after the goroutine has exited.
func (s *session) finish() (err error) {
	if s.es != nil {
		// The connection's end: its open transaction rolls back (below)
		// and its advisory locks go.
		defer func() {
			if cerr := s.es.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("session %s: closing: %v", s.name, cerr)
			}
		}()
	}
	if s.tx == nil {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("session %s: rollback at the end of the permutation panicked: %v", s.name, p)
		}
	}()
	tx := s.tx
	s.tx = nil
	s.txID.Store(0)
	err = tx.Rollback()
	if err != nil && !errors.Is(err, tupled.ErrTxDone) && !errors.Is(err, tupled.ErrTxAborted) {
		return fmt.Errorf("session %s: rollback at the end of the permutation: %v", s.name, err)
	}
	return nil
}

func notice(msg string) event { return event{notice: "WARNING:  " + msg} }

func lines(l ...string) []event { return []event{{lines: l}} }

// abortsTx reports whether an error of a command aborts its transaction: every
// error does, except the two that only say what the command found.
func abortsTx(err error) bool {
	return !errors.Is(err, tupled.ErrNotFound) && !errors.Is(err, tupled.ErrSkipped)
}

func errorEvent(err error, c *Command) []event {
	msg, state := PGError(err, c)
	return lines(ErrorLine(msg, state))
}

var errAbortedLine = func(c *Command) []event { return errorEvent(tupled.ErrTxAborted, c) }

// exec runs one command. stop says the command failed (the rest of the block is
// skipped); err is a failure of the spec itself.
func (s *session) exec(ctx context.Context, c *Command) (ev []event, stop bool, err error) {
	switch c.Kind {
	case CmdBegin:
		if s.tx != nil {
			return append([]event{notice("there is already a transaction in progress")}, event{}), false, nil
		}
		opts, err := s.txOptions()
		if err != nil {
			return nil, false, err
		}
		opts.Isolation = c.Isolation
		opts.ReadOnly = c.ReadOnly
		tx, berr := s.begin(ctx, opts)
		if berr != nil {
			return errorEvent(berr, c), true, nil
		}
		s.tx, s.aborted = tx, false
		s.txID.Store(tx.ID())
		return lines(), false, nil

	case CmdCommit, CmdRollback:
		if s.tx == nil {
			return append([]event{notice("there is no transaction in progress")}, event{}), false, nil
		}
		tx := s.tx
		var cerr error
		if c.Kind == CmdCommit {
			cerr = tx.Commit()
		} else {
			cerr = tx.Rollback()
		}
		s.tx, s.aborted = nil, false
		s.txID.Store(0)
		// COMMIT of an aborted transaction is a rollback, silently, in PostgreSQL.
		if cerr != nil && !errors.Is(cerr, tupled.ErrTxAborted) {
			return errorEvent(cerr, c), true, nil
		}
		return lines(), false, nil

	case CmdSavepoint, CmdRelease, CmdRollbackTo:
		return s.savepoint(c)

	case CmdSleep:
		if s.tx != nil && s.aborted {
			return errAbortedLine(c), true, nil
		}
		t := time.NewTimer(c.Duration)
		defer t.Stop()
		select {
		case <-t.C:
			return lines(), false, nil
		case <-ctx.Done():
			return errorEvent(ctx.Err(), c), true, nil
		}

	case CmdSetLockTimeout:
		if s.tx != nil {
			if s.aborted {
				return errAbortedLine(c), true, nil
			}
			return nil, false, fmt.Errorf("set lock_timeout inside a transaction is not supported: tupled fixes a transaction's lock timeout at begin")
		}
		if c.Duration == 0 && s.r.dbOpts.LockTimeout != 0 {
			return nil, false, fmt.Errorf("set lock_timeout 0 cannot override the options block's lock_timeout: tupled reads 0 as the DB's default")
		}
		s.lockTimeout, s.lockTimeoutSet = c.Duration, true
		return lines(), false, nil

	case CmdRowLocks:
		if s.tx != nil && s.aborted {
			return errAbortedLine(c), true, nil
		}
		rls, rerr := s.r.eng.RowLocks(ctx, c.Table)
		if rerr != nil {
			return errorEvent(rerr, c), true, nil
		}
		return lines(s.r.rowLockLines(rls)...), false, nil

	case CmdAdvLock, CmdAdvUnlock, CmdAdvUnlockAll, CmdAdvLocks:
		return s.execAdvisory(ctx, c)

	case CmdFK:
		return s.execFK(ctx, c)

	case CmdCreate:
		if s.tx != nil && s.aborted {
			return errAbortedLine(c), true, nil
		}
		if cerr := s.r.eng.CreateTable(ctx, c.Table); cerr != nil {
			if s.tx != nil {
				s.aborted = true
			}
			return errorEvent(cerr, c), true, nil
		}
		return lines(), false, nil
	}

	// Data commands: in the open transaction, or in their own autocommit one.
	tx := s.tx
	auto := tx == nil
	if auto {
		opts, err := s.txOptions()
		if err != nil {
			return nil, false, err
		}
		t, berr := s.begin(ctx, opts)
		if berr != nil {
			return errorEvent(berr, c), true, nil
		}
		tx = t
		s.txID.Store(tx.ID())
	}
	out, derr := s.data(ctx, tx, c)
	if auto {
		if derr == nil || !abortsTx(derr) {
			if cerr := tx.Commit(); cerr != nil {
				derr = cerr
			}
		} else {
			tx.Rollback()
		}
		s.txID.Store(0)
	} else if derr != nil && abortsTx(derr) {
		s.aborted = true
	}
	switch {
	case derr == nil:
		return lines(out...), false, nil
	case errors.Is(derr, tupled.ErrNotFound):
		return lines(notFoundLine), false, nil
	case errors.Is(derr, tupled.ErrSkipped):
		return lines(skippedLine), false, nil
	}
	return errorEvent(derr, c), true, nil
}

// begin begins a transaction of the session: through its TargetSession when
// it has one.
func (s *session) begin(ctx context.Context, opts *tupled.TxOptions) (Txn, error) {
	if s.es != nil {
		return s.es.Begin(ctx, opts)
	}
	return s.r.eng.Begin(ctx, opts)
}

func (s *session) txOptions() (*tupled.TxOptions, error) {
	o := &tupled.TxOptions{}
	if s.lockTimeoutSet {
		o.LockTimeout = s.lockTimeout
	}
	return o, nil
}

// data runs a data command in tx and returns its result lines.
func (s *session) data(ctx context.Context, tx Txn, c *Command) ([]string, error) {
	key := []byte(c.Key)
	switch c.Kind {
	case CmdGet:
		v, err := tx.Get(ctx, c.Table, key)
		if err != nil {
			return nil, err
		}
		return []string{ValueLine(string(v))}, nil
	case CmdLock:
		v, err := tx.Lock(ctx, c.Table, key, c.Strength, c.Wait)
		if err != nil {
			return nil, err
		}
		return []string{ValueLine(string(v))}, nil
	case CmdLockTable:
		lt, ok := tx.(interface {
			LockTable(ctx context.Context, table string, mode tupled.TableLockMode, nowait bool) error
		})
		if !ok {
			return nil, fmt.Errorf("locktable: this engine has no table locks")
		}
		return nil, lt.LockTable(ctx, c.Table, c.TableMode, c.TableNoWait)
	case CmdInsert:
		return nil, tx.Insert(ctx, c.Table, key, []byte(c.Value))
	case CmdUpdate:
		return nil, tx.Update(ctx, c.Table, key, []byte(c.Value))
	case CmdDelete:
		return nil, tx.Delete(ctx, c.Table, key)
	case CmdUpsert:
		ut, ok := tx.(UpsertTxn)
		if !ok {
			return nil, fmt.Errorf("upsert: this engine has no upsert")
		}
		var onConflict func([]byte) ([]byte, bool)
		if c.HasSet {
			onConflict = func(old []byte) ([]byte, bool) {
				if c.HasWhere && string(old) != c.Where {
					return nil, false
				}
				return []byte(c.Set), true
			}
		}
		switch out, err := ut.Upsert(ctx, c.Table, key, []byte(c.Value), onConflict); {
		case err != nil:
			return nil, err
		case out == tupled.UpsertInserted:
			return []string{ValueLine(c.Value)}, nil
		case out == tupled.UpsertUpdated:
			return []string{ValueLine(c.Set)}, nil
		}
		return []string{conflictLine}, nil
	case CmdScan:
		opts := tupled.ScanOptions{Limit: c.Limit, Lock: c.Strength, Wait: c.Wait}
		if c.HasFrom {
			opts.Start = []byte(c.From)
		}
		if c.HasTo {
			opts.End = []byte(c.To)
		}
		if c.HasPrefix {
			opts.Prefix = []byte(c.Prefix)
		}
		if c.HasWhere {
			want := c.Where
			opts.Where = func(k, v []byte) bool { return string(v) == want }
		}
		opts.Reverse = c.Reverse
		var rows []KV
		err := tx.Scan(ctx, c.Table, opts, func(k, v []byte) error {
			rows = append(rows, KV{string(k), string(v)})
			return nil
		})
		if err != nil {
			return nil, err
		}
		return []string{ScanLine(rows)}, nil
	}
	return nil, fmt.Errorf("internal: %s is not a data command", c.Kind)
}

// rowLockLines formats RowLocks naming each locker by the session whose
// transaction it is.
func (r *runner) rowLockLines(rls []tupled.RowLock) []string {
	if len(rls) == 0 {
		return []string{noLocksLine}
	}
	names := map[uint64]string{}
	for _, s := range r.sessions {
		if id := s.txID.Load(); id != 0 {
			names[id] = s.name
		}
	}
	sort.SliceStable(rls, func(i, j int) bool { return bytes.Compare(rls[i].Key, rls[j].Key) < 0 })
	var out []string
	for _, rl := range rls {
		var ls []Locker
		for i, id := range rl.Lockers {
			n, ok := names[id]
			if !ok {
				n = "?"
			}
			mode := "?"
			if i < len(rl.Modes) {
				mode = StrengthName(rl.Modes[i])
			}
			ls = append(ls, Locker{Session: n, Mode: mode})
		}
		out = append(out, RowLockLine(string(rl.Key), rl.Multi, ls))
	}
	return out
}

// savepoint runs savepoint, release and rollback to as PostgreSQL does
// in a transaction block: outside one 25P01; in an aborted transaction
// only rollback to; an error (an unknown name) aborts the transaction down
// to its innermost savepoint, which the engine does itself.
func (s *session) savepoint(c *Command) ([]event, bool, error) {
	what := map[CmdKind]string{CmdSavepoint: "SAVEPOINT", CmdRelease: "RELEASE SAVEPOINT", CmdRollbackTo: "ROLLBACK TO SAVEPOINT"}[c.Kind]
	if s.tx == nil {
		return lines(ErrorLine(what+" can only be used in transaction blocks", "25P01")), true, nil
	}
	st, ok := s.tx.(SavepointTxn)
	if !ok {
		return nil, false, fmt.Errorf("%s: this engine has no savepoints", c.Kind)
	}
	var err error
	switch c.Kind {
	case CmdSavepoint:
		if s.aborted {
			return errAbortedLine(c), true, nil
		}
		err = st.Savepoint(c.Name)
	case CmdRelease:
		if s.aborted {
			return errAbortedLine(c), true, nil
		}
		err = st.Release(c.Name)
	default:
		err = st.RollbackTo(c.Name)
		if err == nil {
			s.aborted = false
		}
	}
	if err != nil {
		s.aborted = true
		return errorEvent(err, c), true, nil
	}
	return lines(), false, nil
}
