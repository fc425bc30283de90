package isospec

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tupled/tupled"
)

// Config configures Run.
type Config struct {
	// Open opens a fresh engine per permutation; nil means OpenTupled.
	Open Opener
	// StepTimeout: a step still unfinished after this long is canceled (its
	// context is canceled, as isolationtester cancels a query after
	// PGISOLATIONTIMEOUT), and the run fails after twice as long. The options
	// block's step_timeout overrides it. Default 30s.
	StepTimeout time.Duration
	// PollInterval is how often a running step is checked for completion or for
	// a wait in db.Locks(). Default 1ms.
	PollInterval time.Duration
}

const (
	defaultStepTimeout  = 30 * time.Second
	defaultPollInterval = time.Millisecond
)

// try_complete_step flags, as in isolationtester.c.
const (
	stepNonblock = 1 << iota // report the step as waiting when it waits on a lock
	stepRetry                // the step was reported before: print "<... completed>"
)

// Run runs every permutation of spec and writes isolationtester-style output
// to out. An error means the run itself failed (a bad spec, a setup failure, an
// engine panic, a step that never finished); errors of steps are output.
func Run(ctx context.Context, spec *Spec, out io.Writer, cfg Config) error {
	dbOpts, ro, err := spec.options()
	if err != nil {
		return err
	}
	if cfg.Open == nil {
		cfg.Open = OpenTupled
	}
	if cfg.StepTimeout <= 0 {
		cfg.StepTimeout = defaultStepTimeout
	}
	if ro.stepTimeout > 0 {
		cfg.StepTimeout = ro.stepTimeout
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = defaultPollInterval
	}
	fmt.Fprintf(out, "Parsed test spec with %d sessions\n", len(spec.Sessions))
	for _, perm := range spec.Perms() {
		r := &runner{ctx: ctx, spec: spec, out: out, cfg: cfg, dbOpts: dbOpts}
		if err := r.runPermutation(perm); err != nil {
			return err
		}
	}
	return nil
}

type runner struct {
	ctx      context.Context
	spec     *Spec
	out      io.Writer
	cfg      Config
	dbOpts   *tupled.Options
	eng      Target
	sessions []*session
	control  *session // runs the global setup and teardown
}

func (r *runner) printf(format string, args ...any) { fmt.Fprintf(r.out, format, args...) }

func permHeader(perm *Permutation) string { return "starting permutation:" + permSteps(perm) }

// permSteps lists a permutation's steps, each preceded by a space, with their
// blocker annotations.
func permSteps(perm *Permutation) string {
	var b strings.Builder
	for _, ps := range perm.Steps {
		b.WriteString(" " + ps.Step.Name)
		if len(ps.Blockers) > 0 {
			var bl []string
			for _, x := range ps.Blockers {
				if x.Kind == BlockOnce {
					bl = append(bl, "*")
				} else {
					bl = append(bl, x.Step.Name)
				}
			}
			b.WriteString("(" + strings.Join(bl, ",") + ")")
		}
	}
	return b.String()
}

func (r *runner) open() (eng Target, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("opening the database panicked: %v", p)
		}
	}()
	opts := *r.dbOpts
	return r.cfg.Open(&opts)
}

func (r *runner) runPermutation(perm *Permutation) (err error) {
	r.printf("\n%s\n", permHeader(perm))
	eng, err := r.open()
	if err != nil {
		return fmt.Errorf("%s: %v", r.spec.Name, err)
	}
	r.eng = eng
	r.control = r.newSession("setup")
	for _, s := range r.spec.Sessions {
		r.sessions = append(r.sessions, r.newSession(s.Name))
	}
	defer func() {
		if cerr := r.cleanup(); err == nil {
			err = cerr
		}
	}()

	// Global setup, on the control session, like isolationtester's control
	// connection; then each session's setup.
	for _, b := range r.spec.Setup {
		if err := r.runSync(r.control, "setup", b, false); err != nil {
			return err
		}
	}
	if r.control.tx != nil {
		return fmt.Errorf("%s: setup leaves a transaction open", r.spec.Name)
	}
	for i, s := range r.spec.Sessions {
		if s.Setup != nil {
			if err := r.runSync(r.sessions[i], "setup", s.Setup, true); err != nil {
				return err
			}
		}
	}

	var waiting []*blockRun
	for _, ps := range perm.Steps {
		sess := r.sessions[ps.Step.Session]
		// The session of the next step is still busy with an earlier step: wait
		// for it, polling the other waiters meanwhile (they may unblock it).
		if sess.active != nil {
			start := time.Now()
			for sess.active != nil {
				old := sess.active
				still, err := r.tryCompleteStep(old, stepRetry)
				if err != nil {
					return err
				}
				if !still {
					waiting = remove(waiting, old)
				}
				if waiting, err = r.tryCompleteSteps(waiting, stepNonblock|stepRetry); err != nil {
					return err
				}
				if sess.active != nil {
					if td := time.Since(start); td > 2*r.cfg.StepTimeout {
						return fmt.Errorf("%s: step %s timed out after %d seconds", r.spec.Name, sess.active.name, int(td.Seconds()))
					}
					time.Sleep(r.cfg.PollInterval)
				}
			}
		}
		br := r.launch(sess, ps)
		mustWait, err := r.tryCompleteStep(br, stepNonblock)
		if err != nil {
			return err
		}
		if waiting, err = r.tryCompleteSteps(waiting, stepNonblock|stepRetry); err != nil {
			return err
		}
		if mustWait {
			waiting = append(waiting, br)
		}
	}
	// Wait for the steps still running.
	if waiting, err = r.tryCompleteSteps(waiting, stepRetry); err != nil {
		return err
	}
	if len(waiting) > 0 {
		return fmt.Errorf("%s: failed to complete permutation due to mutually-blocking steps", r.spec.Name)
	}

	for i, s := range r.spec.Sessions {
		if s.Teardown != nil {
			if err := r.runSync(r.sessions[i], "teardown", s.Teardown, true); err != nil {
				return err
			}
		}
	}
	if r.spec.Teardown != nil {
		if err := r.runSync(r.control, "teardown", r.spec.Teardown, false); err != nil {
			return err
		}
	}
	return nil
}

func remove(list []*blockRun, br *blockRun) []*blockRun {
	for i, x := range list {
		if x == br {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

func (r *runner) start(sess *session, name, text string, cmds []*Command, ps *PermStep) *blockRun {
	ctx, cancel := context.WithCancel(r.ctx)
	br := &blockRun{name: name, text: text, cmds: cmds, ps: ps, sess: sess, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	sess.reqs <- br
	return br
}

func (r *runner) launch(sess *session, ps *PermStep) *blockRun {
	br := r.start(sess, ps.Step.Name, ps.Step.Text, ps.Step.Cmds, ps)
	sess.active = br
	return br
}

// runSync runs a setup or teardown block to its end. Errors in it fail the
// run, as they make isolationtester exit.
func (r *runner) runSync(sess *session, what string, b *Block, showNotices bool) error {
	br := r.start(sess, what, b.Text, b.Cmds, nil)
	t := time.NewTimer(2 * r.cfg.StepTimeout)
	defer t.Stop()
	select {
	case <-br.done:
	case <-t.C:
		br.cancel()
		return fmt.Errorf("%s:%d: %s of session %s did not finish within %v", r.spec.Name, b.Line, what, sess.name, 2*r.cfg.StepTimeout)
	}
	br.cancel()
	if br.fatal != nil {
		return br.fatal
	}
	for _, ev := range br.events {
		if ev.isNotice() {
			if showNotices {
				r.printf("%s: %s\n", sess.name, ev.notice)
			}
			continue
		}
		for _, l := range ev.lines {
			if strings.HasPrefix(l, "ERROR:") {
				return fmt.Errorf("%s:%d: %s of session %s failed: %s", r.spec.Name, b.Line, what, sess.name, l)
			}
			r.printf("%s\n", l)
		}
	}
	return nil
}

// isWaiting reports whether the session's transaction waits for a lock: an
// entry of db.Locks() not granted and held by its transaction.
func (r *runner) isWaiting(s *session) bool {
	id := s.txID.Load()
	var sess uint64 // a session-level advisory lock may wait outside any transaction
	if s.es != nil {
		sess = s.es.ID()
	}
	if id == 0 && sess == 0 {
		return false
	}
	for _, l := range r.eng.Locks() {
		if !l.Granted && ((id != 0 && l.TxID == id) || (sess != 0 && l.Session == sess)) {
			return true
		}
	}
	return false
}

func hasBlocker(br *blockRun, kind BlockerKind) bool {
	if br.ps == nil {
		return false
	}
	for _, b := range br.ps.Blockers {
		if b.Kind == kind {
			return true
		}
	}
	return false
}

// stepHasBlocker: the step is reported as waiting while a step named in its
// annotation is the active step of its session.
func (r *runner) stepHasBlocker(br *blockRun) bool {
	for _, b := range br.ps.Blockers {
		if b.Kind != BlockOtherStep {
			continue
		}
		other := r.sessions[b.Step.Session]
		if other.active != nil && other.active.ps.Step == b.Step {
			return true
		}
	}
	return false
}

func (r *runner) waitingLine(br *blockRun) {
	r.printf("step %s: %s <waiting ...>\n", br.name, br.text)
}

// tryCompleteStep is isolationtester's try_complete_step: it waits for the step
// to finish, or (with stepNonblock) until it shows as waiting for a lock, and
// prints it. It returns true when the step is (still) waiting.
func (r *runner) tryCompleteStep(br *blockRun, flags int) (bool, error) {
	if flags&stepRetry == 0 && hasBlocker(br, BlockOnce) {
		r.waitingLine(br)
		return true, nil
	}
	start := time.Now()
	canceled := false
	timer := time.NewTimer(r.cfg.PollInterval)
	defer timer.Stop()
	for !br.finished {
		select {
		case <-br.done:
			br.finished = true
			continue
		case <-timer.C:
			timer.Reset(r.cfg.PollInterval)
		}
		if flags&stepNonblock != 0 && r.isWaiting(br.sess) {
			// The wait may have ended while we looked: check once more.
			select {
			case <-br.done:
				br.finished = true
				continue
			default:
			}
			if flags&stepRetry == 0 {
				r.waitingLine(br)
			}
			return true, nil
		}
		td := time.Since(start)
		if td > r.cfg.StepTimeout && !canceled {
			br.cancel()
			canceled = true
			r.printf("isolationtester: canceling step %s after %d seconds\n", br.name, int(td.Seconds()))
		}
		if td > 2*r.cfg.StepTimeout {
			return false, fmt.Errorf("%s: step %s timed out after %d seconds (the engine ignored the cancellation)", r.spec.Name, br.name, int(td.Seconds()))
		}
	}
	if br.fatal != nil {
		return false, br.fatal
	}
	if r.stepHasBlocker(br) {
		if flags&stepRetry == 0 {
			r.waitingLine(br)
		}
		return true, nil
	}
	r.printCompletion(br, flags&stepRetry != 0)
	br.sess.active = nil
	br.cancel()
	return false, nil
}

// printCompletion prints a finished step the way isolationtester does with
// libpq: notices that arrive before the first command completes, or right
// after it when it printed nothing, come before the step line; a later notice
// comes before the output of the command it follows (PostgreSQL 15 prints
// "step: SELECT f(); SELECT f()", the first result, the second's warning,
// the second result: advisory-shared-exclusive.pg.out).
func (r *runner) printCompletion(br *blockRun, retry bool) {
	ev := br.events
	i := 0
	notices := func() {
		for i < len(ev) && ev[i].isNotice() {
			r.printf("%s: %s\n", br.sess.name, ev[i].notice)
			i++
		}
	}
	notices()
	var first *event
	if i < len(ev) {
		first = &ev[i]
		i++
		if len(first.lines) == 0 {
			notices()
		}
	}
	if retry {
		r.printf("step %s: <... completed>\n", br.name)
	} else {
		r.printf("step %s: %s\n", br.name, br.text)
	}
	if first != nil {
		r.printLines(first.lines)
	}
	for i < len(ev) {
		notices()
		if i == len(ev) {
			break
		}
		res := ev[i]
		i++
		r.printLines(res.lines)
	}
}

func (r *runner) printLines(ls []string) {
	for _, l := range ls {
		r.printf("%s\n", l)
	}
}

// tryCompleteSteps is isolationtester's try_complete_steps: it tries each
// waiting step in order and returns those still waiting. When a step with a
// blocker annotation stays, and another step completed, it goes round again.
func (r *runner) tryCompleteSteps(waiting []*blockRun, flags int) ([]*blockRun, error) {
	for {
		old := len(waiting)
		haveBlocker := false
		w := 0
		for w < len(waiting) {
			still, err := r.tryCompleteStep(waiting[w], flags)
			if err != nil {
				return waiting, err
			}
			if still {
				if len(waiting[w].ps.Blockers) > 0 {
					haveBlocker = true
				}
				w++
			} else {
				waiting = append(waiting[:w], waiting[w+1:]...)
			}
		}
		if !(haveBlocker && len(waiting) < old) {
			return waiting, nil
		}
	}
}

// cleanup ends the permutation: it cancels what still runs, stops the session
// goroutines, rolls back every open transaction and closes the database.
func (r *runner) cleanup() error {
	var firstErr error
	all := append([]*session{r.control}, r.sessions...)
	for _, s := range all {
		if s.active != nil {
			s.active.cancel()
		}
		close(s.reqs)
	}
	deadline := time.NewTimer(2 * r.cfg.StepTimeout)
	defer deadline.Stop()
	stuck := false
	for _, s := range all {
		select {
		case <-s.exit:
			if err := s.finish(); err != nil && firstErr == nil {
				firstErr = err
			}
		case <-deadline.C:
			stuck = true
		}
		if stuck {
			break
		}
	}
	if stuck {
		// A goroutine is still inside the engine: closing the DB under it could
		// hang as well. Report instead of hanging.
		if firstErr == nil {
			firstErr = fmt.Errorf("%s: a session did not stop after its step was canceled; database left open", r.spec.Name)
		}
		return firstErr
	}
	if err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("closing the database panicked: %v", p)
			}
		}()
		return r.eng.Close()
	}(); err != nil && firstErr == nil {
		firstErr = fmt.Errorf("%s: close: %v", r.spec.Name, err)
	}
	return firstErr
}
