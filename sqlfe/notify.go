package sqlfe

import (
	"context"
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// LISTEN, UNLISTEN and NOTIFY (and pg_notify), as PostgreSQL's async.c:
//
//   - A session's LISTEN and UNLISTEN take effect when its transaction
//     commits (nothing if it rolls back); NOTIFY and pg_notify queue a
//     notification that is sent when the transaction commits, to every
//     session then listening on the channel, the sender included, in the
//     order the commits reach the hub (two transactions committing at the
//     same instant may reach it in either order). A transaction's notifications with the same
//     channel and payload are sent once. Rolled back (or rolled back to a
//     savepoint before them), they are never sent.
//   - A listening session receives its notifications between
//     transactions: the wire layer takes them (Session.TakeNotifications)
//     before each ReadyForQuery outside a transaction block, and while the
//     session is idle, woken by Session.OnNotify.
//   - A payload is at most 7999 bytes (22023), a channel an identifier
//     (63 bytes: a longer name is truncated, as the parser does).
//   - DISCARD ALL and UNLISTEN * stop them all; a session that ends stops
//     listening at once.
//
// The hub is the Executor's (notifyHub); each session's inbox is guarded
// by its own mutex, so a sender never waits for a receiver.

// Notification is one NOTIFY as a listener receives it.
type Notification struct {
	PID     int32 // the sending session's
	Channel string
	Payload string
}

// maxNotifyPayload is PostgreSQL's NOTIFY_PAYLOAD_MAX_LENGTH - 1.
const maxNotifyPayload = 7999

// notifyHub is which sessions listen on which channel.
type notifyHub struct {
	mu        sync.Mutex
	listeners map[string]map[*Session]bool
}

// notifyState is a session's part: what its open transaction will do at
// commit, the channels it listens on, and the notifications it has not
// yet taken.
type notifyState struct {
	queued  []Notification // this transaction's NOTIFYs
	listens []listenOp     // this transaction's LISTEN/UNLISTENs

	mu       sync.Mutex
	channels map[string]bool
	inbox    []Notification
	onNotify func()
}

type listenOp struct {
	channel string // "": UNLISTEN *
	listen  bool
}

// OnNotify sets the function called (from the committing session's
// goroutine) when a notification arrives for s; it must not block.
func (s *Session) OnNotify(fn func()) {
	s.notify.mu.Lock()
	s.notify.onNotify = fn
	s.notify.mu.Unlock()
}

// TakeNotifications returns and forgets the notifications s has received.
func (s *Session) TakeNotifications() []Notification {
	s.notify.mu.Lock()
	defer s.notify.mu.Unlock()
	out := s.notify.inbox
	s.notify.inbox = nil
	return out
}

// queueNotify queues channel's notification with payload in the open
// transaction (or the one the statement runs in).
func (s *Session) queueNotify(channel, payload string) error {
	switch {
	case channel == "":
		return pgerror.Errorf(pgerror.CodeInvalidParamValue, "channel name cannot be empty")
	case len(channel) > maxIdentLen:
		return pgerror.Errorf(pgerror.CodeInvalidParamValue, "channel name too long")
	case len(payload) > maxNotifyPayload:
		return pgerror.Errorf(pgerror.CodeInvalidParamValue, "payload string too long")
	}
	n := Notification{PID: s.pid, Channel: channel, Payload: payload}
	for _, q := range s.notify.queued {
		if q == n {
			return nil // once per transaction
		}
	}
	s.notify.queued = append(s.notify.queued, n)
	return nil
}

// maxIdentLen is NAMEDATALEN - 1.
const maxIdentLen = 63

// commitNotify applies the committed transaction's LISTENs and sends its
// notifications; called after a successful commit (and for a statement
// that ran without an engine transaction).
func (s *Session) commitNotify() {
	queued, listens := s.notify.queued, s.notify.listens
	s.notify.queued, s.notify.listens = nil, nil
	if len(queued) == 0 && len(listens) == 0 {
		return
	}
	h := &s.eng.notify
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, op := range listens {
		s.notify.mu.Lock()
		switch {
		case op.channel == "":
			for ch := range s.notify.channels {
				delete(h.listeners[ch], s)
			}
			s.notify.channels = nil
		case op.listen:
			if h.listeners == nil {
				h.listeners = map[string]map[*Session]bool{}
			}
			if h.listeners[op.channel] == nil {
				h.listeners[op.channel] = map[*Session]bool{}
			}
			h.listeners[op.channel][s] = true
			if s.notify.channels == nil {
				s.notify.channels = map[string]bool{}
			}
			s.notify.channels[op.channel] = true
		default:
			delete(h.listeners[op.channel], s)
			delete(s.notify.channels, op.channel)
		}
		s.notify.mu.Unlock()
	}
	for _, n := range queued {
		for l := range h.listeners[n.Channel] {
			l.notify.mu.Lock()
			l.notify.inbox = append(l.notify.inbox, n)
			wake := l.notify.onNotify
			l.notify.mu.Unlock()
			if wake != nil {
				wake()
			}
		}
	}
}

// abortNotify forgets the rolled-back transaction's LISTENs and NOTIFYs.
func (s *Session) abortNotify() { s.notify.queued, s.notify.listens = nil, nil }

// unlistenAll stops s's listening at once (the session ends).
func (s *Session) unlistenAll() {
	h := &s.eng.notify
	h.mu.Lock()
	defer h.mu.Unlock()
	s.notify.mu.Lock()
	defer s.notify.mu.Unlock()
	for ch := range s.notify.channels {
		delete(h.listeners[ch], s)
	}
	s.notify.channels = nil
}

// notifyMark is how much of the transaction's LISTEN/NOTIFY work a
// savepoint has seen; rollbackNotify returns to it.
func (s *Session) notifyMark() [2]int { return [2]int{len(s.notify.queued), len(s.notify.listens)} }

func (s *Session) rollbackNotify(m [2]int) {
	s.notify.queued = s.notify.queued[:min(m[0], len(s.notify.queued))]
	s.notify.listens = s.notify.listens[:min(m[1], len(s.notify.listens))]
}

func (s *Session) planListen(st *pg.ListenStmt) (*plan, error) {
	return &plan{run: func(_ context.Context, s *Session, _ []types.Value) (*Result, error) {
		s.notify.listens = append(s.notify.listens, listenOp{channel: st.Conditionname, listen: true})
		return &Result{Tag: "LISTEN"}, nil
	}}, nil
}

func (s *Session) planUnlisten(st *pg.UnlistenStmt) (*plan, error) {
	return &plan{run: func(_ context.Context, s *Session, _ []types.Value) (*Result, error) {
		s.notify.listens = append(s.notify.listens, listenOp{channel: st.Conditionname}) // "": UNLISTEN *
		return &Result{Tag: "UNLISTEN"}, nil
	}}, nil
}

func (s *Session) planNotify(st *pg.NotifyStmt) (*plan, error) {
	return &plan{run: func(_ context.Context, s *Session, _ []types.Value) (*Result, error) {
		if err := s.queueNotify(st.Conditionname, st.Payload); err != nil {
			return nil, err
		}
		return &Result{Tag: "NOTIFY"}, nil
	}}, nil
}

// pgNotify is pg_notify(channel, payload), NOTIFY as a function.
func pgNotify(e *env, a []types.Value) (types.Value, error) {
	if a[0].Null {
		return types.Value{}, pgerror.Errorf(pgerror.CodeInvalidParamValue, "channel name cannot be empty")
	}
	payload := ""
	if !a[1].Null {
		payload = a[1].S
	}
	if err := e.s.queueNotify(a[0].S, payload); err != nil {
		return types.Value{}, err
	}
	return types.Value{T: types.TVoid}, nil
}

// planDiscard is DISCARD ALL | PLANS | SEQUENCES | TEMP. ALL, outside a
// transaction block only (25001), is PostgreSQL's list: CLOSE ALL, RESET
// ALL, DEALLOCATE ALL (the protocol's prepared statements too:
// Result.DiscardAll tells the wire layer), UNLISTEN *, the session's
// advisory locks released, and the other three. PLANS has nothing to do
// (plans are per prepared statement, analysed again when the catalog
// changes); SEQUENCES forgets currval, lastval and cached values; TEMP
// drops the session's temporary tables (temp.go; outside a transaction
// block only here, 0A000 inside one).
func (s *Session) planDiscard(st *pg.DiscardStmt) (*plan, error) {
	tag := map[pg.DiscardMode]string{pg.DiscardMode_DISCARD_ALL: "DISCARD ALL", pg.DiscardMode_DISCARD_PLANS: "DISCARD PLANS",
		pg.DiscardMode_DISCARD_SEQUENCES: "DISCARD SEQUENCES", pg.DiscardMode_DISCARD_TEMP: "DISCARD TEMP"}[st.Target]
	if tag == "" {
		return nil, pgerror.NotSupported("this form of DISCARD is not supported")
	}
	reset, err := s.planSet(&pg.VariableSetStmt{Kind: pg.VariableSetKind_VAR_RESET_ALL})
	if err != nil {
		return nil, err
	}
	return &plan{ctl: st.Target == pg.DiscardMode_DISCARD_ALL, run: func(ctx context.Context, s *Session, params []types.Value) (*Result, error) {
		res := &Result{Tag: tag}
		switch st.Target {
		case pg.DiscardMode_DISCARD_ALL:
			if s.block == blkExplicit || s.block == blkFailed {
				return nil, pgerror.Errorf(pgerror.CodeActiveTx, "DISCARD ALL cannot run inside a transaction block")
			}
			s.cursors = nil // CLOSE ALL
			if _, err := reset.run(ctx, s, params); err != nil {
				return nil, err
			}
			s.sqlPrep = nil // DEALLOCATE ALL
			s.unlistenAll()
			s.notify.mu.Lock()
			s.notify.inbox = nil
			s.notify.mu.Unlock()
			if err := s.advSession().AdvisoryUnlockAll(); err != nil {
				return nil, err
			}
			s.seqSess, s.lastSeq = nil, ""
			s.dropAllTemps()
			res.DiscardAll = true
		case pg.DiscardMode_DISCARD_SEQUENCES:
			s.seqSess, s.lastSeq = nil, ""
		case pg.DiscardMode_DISCARD_TEMP:
			if s.block == blkExplicit || s.block == blkFailed || len(s.temps.pending) > 0 {
				return nil, pgerror.NotSupported("DISCARD TEMP inside a transaction block is not supported")
			}
			s.dropAllTemps()
		}
		return res, nil
	}}, nil
}
