package lockmgr

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
)

// Advisory locks (PostgreSQL's pg_advisory_lock family, lockfuncs.c).
//
// # Keys
//
// An advisory lock is named by a bigint key or by a pair of int4 keys, and
// the two spaces are distinct, as in PostgreSQL: pg_advisory_lock(1) and
// pg_advisory_lock(0, 1) are different locks. PostgreSQL's LOCKTAG_ADVISORY
// has field1 = database, field2 = classid, field3 = objid, field4 = objsubid:
// a bigint key k is classid = k>>32, objid = k&0xffffffff, objsubid = 1; a
// pair (k1, k2) is classid = k1, objid = k2, objsubid = 2. Here a Tag of kind
// TagAdvisory carries classid<<32|objid in Xid and the objsubid in Key
// (AdvisoryTag), so a tag is still compared and hashed as a plain Tag. The
// modes are ExclusiveLock and ShareLock, with the ordinary conflict table,
// grant rule, FIFO queue, lock timeout, cancellation and deadlock detection.
//
// # Owners: the PGPROC and its LOCALLOCKs
//
// In PostgreSQL every lock of a backend is held by its PGPROC; whether a lock
// is session-level or transaction-level is bookkeeping in the backend's local
// lock table (LOCALLOCK, with per-owner counts: the session, or the
// transaction's resource owner). Transaction end releases the transaction's
// counts; pg_advisory_unlock releases one session count; a lock leaves the
// shared table when its local count reaches zero. A backend never conflicts
// with itself, so its session lock and its transaction lock on one key
// coexist.
//
// Here an Owner is that pair: the Proc that holds the locks in the shared
// table, and a local table of counts per (tag, mode), split into session and
// transaction counts. The shared table holds one count per (owner, tag,
// mode) while the local total is positive; re-entrant requests only count
// locally, as LockAcquire does with an existing LOCALLOCK.
//
// There are two kinds of owner:
//   - a transaction that belongs to no session (an embedded Tx): its own
//     Proc owns its advisory locks, all transaction-level (TxOwner);
//   - a SessionOwner (NewSession), PostgreSQL's backend: a Proc of its own, which
//     outlives the session's transactions, owns both its session-level locks
//     and the transaction-level ones of its transactions.
//
// # A session in the wait-for graph
//
// PostgreSQL's deadlock detector works per backend: the session holding an
// advisory lock and its transaction waiting for a row are one node. Here they
// are two Procs, the session's and the transaction's, joined both ways:
//   - SessionOwner.SetXact links the session to the transaction it is running;
//     the walker takes the current wait of a session Proc that holds a lock
//     to be its own wait if any, else its transaction's (Proc.wait). A waiting
//     session cannot release a lock, so the edge is as sound as any other.
//   - A session that blocks on an advisory lock while running a transaction
//     waits on the transaction's behalf: the waiter records it (waiter.on),
//     the transaction's Proc points at the wait too, and it is the
//     transaction that is entered in the waiting registry, under its xid. So
//     whoever waits for that xid (a row locked or updated by the transaction)
//     reaches the session's advisory wait.
//
// Nothing of this runs for tuple locks or transaction waits: a transaction's
// Proc that no session adopted has a nil sess, and a waiter's on is nil.

// AdvisoryTag returns the tag of the advisory lock with PostgreSQL's classid,
// objid and objsubid (1: a bigint key, 2: an int4 pair).
func AdvisoryTag(classid, objid uint32, objsubid uint16) Tag {
	return Tag{Kind: TagAdvisory, Xid: uint64(classid)<<32 | uint64(objid), Key: advisorySub[objsubid&3]}
}

// AdvisoryKeyTag returns the tag of pg_advisory_lock(key).
func AdvisoryKeyTag(key int64) Tag {
	return AdvisoryTag(uint32(uint64(key)>>32), uint32(key), 1)
}

// AdvisoryPairTag returns the tag of pg_advisory_lock(key1, key2).
func AdvisoryPairTag(key1, key2 int32) Tag {
	return AdvisoryTag(uint32(key1), uint32(key2), 2)
}

var advisorySub = [4]string{"\x00", "\x01", "\x02", "\x03"}

// Advisory returns an advisory tag's classid, objid and objsubid, as
// PostgreSQL's pg_locks shows them.
func (t Tag) Advisory() (classid, objid uint32, objsubid uint16) {
	var sub uint16
	if len(t.Key) == 1 {
		sub = uint16(t.Key[0])
	}
	return uint32(t.Xid >> 32), uint32(t.Xid), sub
}

// advisoryString is Tag.String for TagAdvisory: "advisory <key>" for a
// bigint key, "advisory <key1>,<key2>" for a pair.
func (t Tag) advisoryString() string {
	c, o, sub := t.Advisory()
	if sub == 2 {
		return "advisory " + strconv.FormatInt(int64(int32(c)), 10) + "," + strconv.FormatInt(int64(int32(o)), 10)
	}
	return "advisory " + strconv.FormatInt(int64(t.Xid), 10)
}

// Level says who a lock's count belongs to.
type Level uint8

const (
	XactLevel    Level = iota // released at the end of the owner's current transaction
	SessionLevel              // released by Unlock, UnlockAll or the session's end
)

// Owner holds advisory locks: a SessionOwner's, or one transaction's (TxOwner).
// Its methods may be called from any goroutine, one lock request at a time
// (a request may block; the release methods never do).
type Owner struct {
	m    *Manager
	proc *Proc
	sess *SessionOwner // nil for a transaction's owner

	mu    sync.Mutex
	local map[localKey]*localLock // PostgreSQL's LOCALLOCK table, advisory part
}

type localKey struct {
	tag  Tag
	mode LockMode
}

type localLock struct{ session, xact int64 }

// TxOwner returns the owner of the advisory locks of the transaction of p,
// which belongs to no session: every lock it takes is transaction-level.
func (m *Manager) TxOwner(p *Proc) *Owner { return &Owner{m: m, proc: p} }

// SessionOwner is a backend's identity for session-level advisory locks: the
// PGPROC that outlives its transactions. See the comment at the top of
// advisory.go.
type SessionOwner struct {
	Owner
	id   uint64
	xact atomic.Pointer[Proc] // the transaction the session is running, or nil
}

// NewSession returns a new session with id id (what Locks reports as
// LockInfo.Session). It registers nothing.
func (m *Manager) NewSession(id uint64) *SessionOwner {
	s := &SessionOwner{id: id}
	s.Owner = Owner{m: m, proc: &Proc{sess: s}, sess: s}
	return s
}

// ID returns the session's id.
func (s *SessionOwner) ID() uint64 { return s.id }

// SetXact records the transaction (its Proc) the session is now running, or
// nil when it ends. The session's goroutine calls it, never while the session
// waits. It must be set whenever the session holds an advisory lock and runs
// a transaction, so that the deadlock detector follows a wait for the
// session's lock to whatever its transaction waits for.
func (s *SessionOwner) SetXact(p *Proc) { s.xact.Store(p) }

// Xact returns the Proc recorded by SetXact.
func (s *SessionOwner) Xact() *Proc { return s.xact.Load() }

// Holds reports whether the owner holds any advisory lock.
func (o *Owner) Holds() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.local) > 0
}

// wait is p's current wait as the deadlock detector sees a holder's: its own
// wait, or for a session that is not waiting itself, that of the transaction
// it runs (PostgreSQL's per-backend node).
func (p *Proc) wait() *waiter {
	if w := p.cur.Load(); w != nil || p.sess == nil {
		return w
	}
	if t := p.sess.xact.Load(); t != nil {
		return t.cur.Load()
	}
	return nil
}

// Lock acquires mode (ExclusiveLock or ShareLock) on the advisory lock tag
// for o at level lvl: pg_advisory_lock and friends. A lock o already holds in
// mode is granted again at once and counted. Otherwise the request follows
// Manager.Lock's rules: w.NoWait gives ErrWouldBlock, a blocked request ends
// with nil, ErrDeadlock, ErrLockTimeout, ErrShutdown or ctx's error, and on
// error nothing more is held. A SessionOwner's request waits on behalf of the
// transaction recorded by SetXact, if any.
func (o *Owner) Lock(ctx context.Context, tag Tag, mode LockMode, lvl Level, w Wait) error {
	if tag.Kind != TagAdvisory || (mode != ExclusiveLock && mode != ShareLock) {
		return errors.New("lockmgr: not an advisory lock request")
	}
	k := localKey{tag, mode}
	o.mu.Lock()
	if ll := o.local[k]; ll != nil {
		ll.count(lvl, 1)
		o.mu.Unlock()
		return nil
	}
	o.mu.Unlock()
	var on *Proc
	if o.sess != nil {
		on = o.sess.xact.Load()
	}
	if err := o.m.acquire(ctx, o.proc, on, tag, mode, w); err != nil {
		return err
	}
	o.mu.Lock()
	if o.local == nil {
		o.local = make(map[localKey]*localLock)
	}
	ll := &localLock{}
	ll.count(lvl, 1)
	o.local[k] = ll
	o.mu.Unlock()
	return nil
}

func (ll *localLock) count(lvl Level, d int64) {
	if lvl == SessionLevel {
		ll.session += d
	} else {
		ll.xact += d
	}
}

// Unlock releases one session-level acquisition of mode on tag
// (pg_advisory_unlock[_shared]). It returns false, releasing nothing, if o
// holds no session-level lock of that mode on tag (PostgreSQL then warns
// "you don't own a lock of type <mode>"); transaction-level acquisitions
// are not released by it.
func (o *Owner) Unlock(tag Tag, mode LockMode) bool { return o.unlockOne(tag, mode, SessionLevel) }

// UnlockXact releases one transaction-level acquisition of mode on tag:
// what a rolled-back savepoint took (PostgreSQL releases a subtransaction's
// locks at its abort). It reports whether there was one.
func (o *Owner) UnlockXact(tag Tag, mode LockMode) bool { return o.unlockOne(tag, mode, XactLevel) }

// unlockOne releases one acquisition of mode on tag at level lvl, and the
// lock itself with its last acquisition at either level.
func (o *Owner) unlockOne(tag Tag, mode LockMode, lvl Level) bool {
	k := localKey{tag, mode}
	o.mu.Lock()
	ll := o.local[k]
	if ll == nil || (lvl == SessionLevel && ll.session == 0) || (lvl == XactLevel && ll.xact == 0) {
		o.mu.Unlock()
		return false
	}
	ll.count(lvl, -1)
	last := ll.session == 0 && ll.xact == 0
	if last {
		delete(o.local, k)
	}
	o.mu.Unlock()
	if last {
		o.m.Unlock(o.proc, tag, mode)
	}
	return true
}

// UnlockAll releases every acquisition at level lvl: SessionLevel is
// pg_advisory_unlock_all (and a session's end), XactLevel is the end of the
// owner's transaction, commit or abort. It never blocks and may be called
// from any goroutine, but not while the owner's request is blocked.
func (o *Owner) UnlockAll(lvl Level) {
	o.mu.Lock()
	var drop []localKey
	for k, ll := range o.local {
		if lvl == SessionLevel {
			ll.session = 0
		} else {
			ll.xact = 0
		}
		if ll.session == 0 && ll.xact == 0 {
			drop = append(drop, k)
			delete(o.local, k)
		}
	}
	o.mu.Unlock()
	for _, k := range drop {
		o.m.Unlock(o.proc, k.tag, k.mode)
	}
}
