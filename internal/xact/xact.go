package xact

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
)

// XID is a 64-bit transaction id. It never wraps.
type XID = uint64

// InvalidXID is never assigned to a transaction.
const InvalidXID XID = 0

// Status is a transaction's fate as recorded in the clog.
type Status uint8

const (
	InProgress Status = iota
	Committed
	Aborted
)

func (s Status) String() string {
	switch s {
	case InProgress:
		return "in progress"
	case Committed:
		return "committed"
	case Aborted:
		return "aborted"
	}
	return "unknown"
}

// clog entry encoding: 0 = in progress (or never assigned), 1 = aborted,
// >= FrozenCSN = committed with that CSN.
const (
	clogInProgress uint64 = 0
	clogAborted    uint64 = 1
	// FrozenCSN is the CSN reported for transactions below the truncation
	// point: committed before every snapshot.
	FrozenCSN uint64 = 2
)

// Xact is one transaction's shared record.
//
// It costs its transaction no allocation of its own when the caller
// provides the memory (BeginIn: the engine embeds it in its transaction),
// and no channel until somebody waits: most transactions — every plain
// read, every lock nobody queues behind — end without a waiter, so the
// Done channel is made on demand, by the first Done call (see done).
type Xact struct {
	id XID
	// done holds the Done channel once a waiter asked for it (nil
	// before). When the transaction ends, end swaps in closedDone and
	// closes the channel it replaced, if any; a Done call that comes
	// after finds closedDone, already closed. The compare-and-swap of
	// Done and the swap of end decide which came first, so a waiter
	// either gets the channel end will close or the one already closed:
	// never one that stays open.
	done atomic.Pointer[doneChan]
	// snapCSN is the CSN of the snapshot this transaction currently reads
	// with (0 = none yet); it holds back the horizon.
	snapCSN atomic.Uint64
	// internal marks a transaction the engine runs for itself (see
	// BeginInternal); fixed before the transaction is published.
	internal bool
	// top is a subtransaction's top-level transaction; nil for a
	// top-level one. Fixed at BeginSub.
	top *Xact
	// wrote is set (on the top-level transaction) by NoteWrite before the
	// transaction's first write: from then on CommitNoWrite takes the
	// full path of Commit. It never goes back.
	wrote atomic.Bool
	// subs are a top-level transaction's subtransactions that have not
	// been rolled back, in increasing xid order (a subxid is always
	// greater than every xid handed out before it). Read and written only
	// by the transaction's own goroutine: BeginSub, AbortSubsFrom and
	// IsCurrent are its calls, and Commit/Abort end it.
	subs []*Xact
}

// doneChan boxes a Done channel for Xact.done.
type doneChan struct{ c chan struct{} }

// closedDone is the Done channel of every ended transaction whose Done
// nobody asked for while it ran.
var closedDone = func() *doneChan {
	d := &doneChan{make(chan struct{})}
	close(d.c)
	return d
}()

// Done is closed when the transaction has committed or aborted. The
// first call makes the channel (a waiter's: the transaction itself never
// asks).
func (x *Xact) Done() <-chan struct{} {
	if d := x.done.Load(); d != nil {
		return d.c
	}
	d := &doneChan{make(chan struct{})}
	if x.done.CompareAndSwap(nil, d) {
		return d.c
	}
	return x.done.Load().c // ended meanwhile (closedDone), or another waiter's
}

// end closes the Done channel (or makes Done return a closed one): the
// transaction's fate is in the clog.
func (x *Xact) end() {
	if d := x.done.Swap(closedDone); d != nil && d != closedDone {
		close(d.c)
	}
}

// ID is the transaction's id.
func (x *Xact) ID() XID { return x.id }

// IsCurrent is the one test of "is xid the current transaction's own?",
// PostgreSQL's TransactionIdIsCurrentTransactionId — its own id today.
// Every such test in the engine goes through it (directly, or by
// Snapshot.IsCurrent, which holds the *Xact and asks it): savepoints will
// give a transaction subtransaction xids, and this is where they will
// count as current too (PostgreSQL walks the stack of the transaction's
// subxids, excluding aborted ones). InvalidXID is never current: no
// transaction has it.
//
// With subtransactions (BeginSub) it answers for the top-level xid and
// every subxid not rolled back (AbortSubsFrom), whichever of them x is;
// without, it stays the single comparison. Only the transaction's own
// goroutine may ask (see Xact.subs).
func (x *Xact) IsCurrent(xid XID) bool {
	if x.top == nil && len(x.subs) == 0 {
		return xid == x.id // x.id is never InvalidXID
	}
	return x.isCurrentSub(xid)
}

// isCurrentSub is IsCurrent for a transaction with subtransactions.
func (x *Xact) isCurrentSub(xid XID) bool {
	t := x.Top()
	if xid == t.id {
		return true
	}
	subs := t.subs
	if len(subs) == 0 || xid < subs[0].id || xid > subs[len(subs)-1].id {
		return false
	}
	_, found := slices.BinarySearchFunc(subs, xid, func(s *Xact, id XID) int { return cmp.Compare(s.id, id) })
	return found
}

// NoteWrite records that x (or, for a subtransaction, its top level) is
// about to write: to put its xid into a tuple as an inserter or updater,
// or to make it a token whose visibility matters (an index build). It
// must come before the write can be seen by anyone; from then on the
// transaction commits with a fresh CSN whichever commit its caller asks
// for (see CommitNoWrite). tuplelock calls it at the start of every write.
func (x *Xact) NoteWrite() {
	if t := x.Top(); !t.wrote.Load() {
		t.wrote.Store(true)
	}
}

// Wrote reports whether NoteWrite was called for x's top level.
func (x *Xact) Wrote() bool { return x.Top().wrote.Load() }

// Top is the top-level transaction of a subtransaction, x itself for a
// top-level one.
func (x *Xact) Top() *Xact {
	if x.top != nil {
		return x.top
	}
	return x
}

// IsSub reports whether x is a subtransaction (BeginSub).
func (x *Xact) IsSub() bool { return x.top != nil }

// Snapshot decides visibility: a transaction's effects are visible iff it is
// the snapshot's own transaction (IsCurrent) or it committed with a CSN <=
// CSN(). A Snapshot is made by Manager.TakeSnapshot (a transaction's) or
// Manager.CommittedNow (no transaction's); the zero value sees nothing but
// frozen versions and has no transaction. It holds its transaction, not
// that transaction's xid, so that IsCurrent answers as Xact.IsCurrent
// does (subtransaction xids included, once there are savepoints).
type Snapshot struct {
	csn  uint64
	self *Xact // nil: the snapshot belongs to no transaction
}

// CSN is the snapshot's commit sequence number: commits at or below it are
// visible.
func (s Snapshot) CSN() uint64 { return s.csn }

// IsCurrent reports whether xid is the snapshot's own transaction's
// (Xact.IsCurrent); never for a snapshot of no transaction.
func (s Snapshot) IsCurrent(xid XID) bool { return s.self != nil && s.self.IsCurrent(xid) }

const liveShards = 64

type liveShard struct {
	mu sync.Mutex
	m  map[XID]*Xact
	_  [48]byte // one cache line per shard
}

// Manager hands out xids, records fates and takes snapshots.
//
// Its fields are grouped by who writes them, one cache line per group:
// Begin writes nextXid and nlive, a commit writes commitMu and lastCSN, and
// every status lookup reads clog's page table. Sharing a line, each begin
// and commit on one core would make the next status lookup on the other
// core miss.
type Manager struct {
	nextXid atomic.Uint64
	nlive   atomic.Int64
	_       [48]byte

	commitMu sync.Mutex
	lastCSN  atomic.Uint64
	_        [48]byte

	clog clog
	// finishedBelow: every xid below it has ended (RefreshFinished), so
	// IsInProgress answers for it without touching the clog — the lookup a
	// lock pays for the finished locker it finds in a row's xmax, on a
	// page the cache has long lost. Written rarely, read by every lookup.
	finishedBelow atomic.Uint64
	_             [40]byte

	live [liveShards]liveShard
}

// NewManager returns a manager whose first xid is 1.
func NewManager() *Manager {
	m := &Manager{}
	m.lastCSN.Store(FrozenCSN)
	for i := range m.live {
		m.live[i].m = make(map[XID]*Xact)
	}
	m.clog.init()
	return m
}

// Begin assigns a new xid and registers the transaction as running.
func (m *Manager) Begin() *Xact {
	x := new(Xact)
	m.begin(x, false)
	return x
}

// BeginIn is Begin in memory the caller provides: x, a zero Xact that
// was never begun, becomes the running transaction (the engine embeds it
// in its own transaction record, so that beginning costs no allocation).
// x must stay where it is.
//
// x may also be the record of a top-level transaction that has ended
// (Commit, CommitNoWrite or Abort returned): BeginIn then reuses it for
// the new transaction (a Session's next transaction, package tupled). The
// record's generation is its xid: it changes with every reuse, and
// nobody outside the owner reads an Xact except under the live set's
// shard lock, where the xid asked for (Await, TopOf) is the record's own
// — so a late holder that waited for the ended transaction finds it
// ended, never the newer one (see Await).
func (m *Manager) BeginIn(x *Xact) {
	if x.id != InvalidXID {
		// Reuse: the ended transaction's record. Its live-set entry is
		// gone and its Done was closed (end); the waiters that got it
		// hold the channel, not the record. Order: the new xid is set
		// only in begin below, so the reset fields are the ended
		// transaction's until then, and register publishes both under
		// the shard lock.
		if x.top != nil {
			panic("xact: BeginIn reusing a subtransaction's record")
		}
		x.done.Store(nil)
		x.wrote.Store(false)
		x.subs = x.subs[:0]
	}
	m.begin(x, false)
}

// begin is Begin, for the engine's own transactions too (BeginInternal).
func (m *Manager) begin(x *Xact, internal bool) {
	x.id, x.internal = m.nextXid.Add(1), internal
	m.register(x)
	m.nlive.Add(1)
}

// register makes x's clog entry exist ("in progress") and x findable by
// Lookup.
func (m *Manager) register(x *Xact) {
	m.clog.ensure(x.id)
	s := &m.live[x.id%liveShards]
	s.mu.Lock()
	s.m[x.id] = x
	s.mu.Unlock()
}

// unregister removes x from the live set (Lookup no longer finds it).
func (m *Manager) unregister(x *Xact) {
	s := &m.live[x.id%liveShards]
	s.mu.Lock()
	delete(s.m, x.id)
	s.mu.Unlock()
}

// BeginSub assigns a subtransaction of top its own xid (PostgreSQL's
// AssignTransactionId for a subtransaction): greater than every xid handed
// out before, "in progress" in the clog, findable by Lookup, with a Done
// channel that closes when it is rolled back (AbortSubsFrom) or top ends.
// From then on top.IsCurrent(subxid) is true. The engine calls it lazily,
// at a subtransaction's first lock or write; tuplelock/README.md,
// "Savepoints and subtransactions", has the design. Only top's goroutine
// may call it; top must be a running top-level transaction.
//
// Subtransactions are not counted by NumLive and not listed by Live (they
// are transactions of their top level's), but OldestLive sees them: a
// subxid is running until its fate is known.
func (m *Manager) BeginSub(top *Xact) *Xact {
	top = top.Top()
	x := &Xact{id: m.nextXid.Add(1), top: top, internal: top.internal}
	m.register(x)
	top.subs = append(top.subs, x)
	return x
}

// AbortSubsFrom rolls back every subtransaction of top whose xid is at or
// above mark: ROLLBACK TO a savepoint established when NextXid() was
// mark. Every subxid assigned since then belongs to that savepoint or to
// one nested in it (xids only grow, and the savepoint stayed open), so
// this is the whole of what it rolls back. Their clog entries become
// "aborted" and then their Done channels close, as Abort does for a
// transaction: every row lock they recorded is from then on a finished
// xid, every version they made invisible. Only top's goroutine may call it.
func (m *Manager) AbortSubsFrom(top *Xact, mark XID) {
	top = top.Top()
	i := len(top.subs)
	for i > 0 && top.subs[i-1].id >= mark {
		i--
	}
	gone := top.subs[i:]
	for _, x := range gone {
		m.clog.set(x.id, clogAborted)
	}
	for _, x := range gone {
		m.unregister(x)
		x.end()
	}
	clear(gone)
	top.subs = top.subs[:i]
}

// Subs is the number of top's subtransactions not rolled back (tests and
// introspection; only top's goroutine may call it).
func (m *Manager) Subs(top *Xact) int { return len(top.Top().subs) }

// Commit records x as committed with a fresh CSN, then closes Done.
func (m *Manager) Commit(x *Xact) { m.finish(x, true) }

// CommitNoWrite is Commit for a transaction that may have written
// nothing: one that only read, or only locked rows (its xid is in xmax
// fields as a locker and in multixacts as a locker member, never as an
// inserter or updater). If x.Wrote() it is exactly Commit. Otherwise x
// is recorded as committed with the last CSN already published, without
// commitMu and without a new CSN: no snapshot can tell the difference,
// since nothing x did is subject to visibility; what changes — x is no
// longer in progress, so its row locks are gone — is the clog entry and
// Done, as for any commit. The package comment ("Commits that wrote
// nothing") has the argument.
func (m *Manager) CommitNoWrite(x *Xact) {
	if x.top != nil {
		panic("xact: Commit or Abort of a subtransaction (roll it back with AbortSubsFrom)")
	}
	if x.wrote.Load() {
		m.finish(x, true)
		return
	}
	c := m.lastCSN.Load()
	for _, sub := range x.subs {
		m.clog.set(sub.id, c)
	}
	m.clog.set(x.id, c)
	m.end(x)
}

// Abort records x as aborted, then closes Done.
func (m *Manager) Abort(x *Xact) { m.finish(x, false) }

// x must be a top-level transaction. Its subtransactions not rolled back
// share its fate: on commit they get x's CSN in the same commitMu hold,
// before the CSN is published, so a snapshot sees all of them or none.
func (m *Manager) finish(x *Xact, commit bool) {
	if x.top != nil {
		panic("xact: Commit or Abort of a subtransaction (roll it back with AbortSubsFrom)")
	}
	if commit {
		m.commitMu.Lock()
		c := m.lastCSN.Load() + 1
		for _, sub := range x.subs {
			m.clog.set(sub.id, c)
		}
		m.clog.set(x.id, c)
		m.lastCSN.Store(c)
		m.commitMu.Unlock()
	} else {
		for _, sub := range x.subs {
			m.clog.set(sub.id, clogAborted)
		}
		m.clog.set(x.id, clogAborted)
	}
	m.end(x)
}

// end is the rest of a top-level transaction's end once its fate (and its
// subtransactions') is in the clog: it leaves the live set and Done closes.
func (m *Manager) end(x *Xact) {
	for _, sub := range x.subs {
		m.unregister(sub)
		sub.end()
	}
	x.subs = nil
	m.unregister(x)
	m.nlive.Add(-1)
	x.snapCSN.Store(0)
	x.end()
}

// Lookup returns the live transaction with this xid, or nil if it has ended
// (or never existed). The record may be reused for a later transaction
// once xid has ended (BeginIn): a caller that outlives xid must not read
// it, and waiters use Await, tests and introspection TopOf.
func (m *Manager) Lookup(xid XID) *Xact {
	s := &m.live[xid%liveShards]
	s.mu.Lock()
	x := s.m[xid]
	s.mu.Unlock()
	return x
}

// Await is what a waiter needs of the running transaction xid
// (XactLockTableWait's view): its top-level xid and its Done channel,
// read under the live set's shard lock, where the record is xid's own
// (it leaves the set before its Done closes, and is reused only after).
// ok is false if xid has ended or never ran. The channel is closed when
// xid ends; it is never the channel of a later transaction that reuses
// the record (BeginIn), which is what lets a Session reuse it.
func (m *Manager) Await(xid XID) (top XID, done <-chan struct{}, ok bool) {
	s := &m.live[xid%liveShards]
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.m[xid]
	if x == nil {
		return InvalidXID, nil, false
	}
	return x.Top().id, x.Done(), true
}

// TopOf is the top-level xid of the running transaction xid (xid itself
// for a top-level one), or InvalidXID once xid has ended: Await without
// the channel, for introspection.
func (m *Manager) TopOf(xid XID) XID {
	s := &m.live[xid%liveShards]
	s.mu.Lock()
	defer s.mu.Unlock()
	if x := s.m[xid]; x != nil {
		return x.Top().id
	}
	return InvalidXID
}

// Status returns the fate of xid and, when committed, its CSN.
func (m *Manager) Status(xid XID) (Status, uint64) {
	v := m.clog.get(xid)
	switch {
	case v == clogInProgress:
		return InProgress, 0
	case v == clogAborted:
		return Aborted, 0
	default:
		return Committed, v
	}
}

// IsInProgress reports whether xid is still running.
func (m *Manager) IsInProgress(xid XID) bool {
	if xid < m.finishedBelow.Load() && xid != InvalidXID {
		return false
	}
	return m.clog.get(xid) == clogInProgress
}

// RefreshFinished advances the bound below which IsInProgress needs no
// clog lookup: past every xid whose fate the clog already records, up to
// the first still in progress. That is the clog's word, not the live set's,
// so a transaction between taking its xid and registering as live (whose
// entry is still "in progress") stops it. Cheap enough to call every few
// milliseconds: each call reads the entries of the xids that ended since
// the last.
func (m *Manager) RefreshFinished() {
	x := max(m.finishedBelow.Load(), m.clog.truncatedBelow(), 1)
	end := m.NextXid()
	for x < end && m.clog.get(x) != clogInProgress {
		x++
	}
	for {
		old := m.finishedBelow.Load()
		if x <= old || m.finishedBelow.CompareAndSwap(old, x) {
			return
		}
	}
}

// DidCommit reports whether xid committed.
func (m *Manager) DidCommit(xid XID) bool { return m.clog.get(xid) >= FrozenCSN }

// NextXid is the xid the next Begin will get.
func (m *Manager) NextXid() XID { return m.nextXid.Load() + 1 }

// LastCSN is the CSN of the most recent commit.
func (m *Manager) LastCSN() uint64 { return m.lastCSN.Load() }

// TakeSnapshot takes a snapshot for x and publishes it as x's current
// snapshot, so the horizon cannot pass it. See the package comment for why
// the loop is needed.
func (m *Manager) TakeSnapshot(x *Xact) Snapshot {
	for {
		c := m.lastCSN.Load()
		x.snapCSN.Store(c)
		if m.lastCSN.Load() == c {
			return Snapshot{csn: c, self: x}
		}
	}
}

// CommittedNow is a snapshot of everything committed now, owned by no
// transaction (introspection: pgrowlocks-like views). It is not
// published, so vacuum may prune versions it would see: read rows under
// their latch only, as such a view does.
func (m *Manager) CommittedNow() Snapshot { return Snapshot{csn: m.lastCSN.Load()} }

// Visible reports whether the effects of xid are visible to snap.
func (m *Manager) Visible(xid XID, snap Snapshot) bool {
	if snap.IsCurrent(xid) {
		return true
	}
	v := m.clog.get(xid)
	return v >= FrozenCSN && v <= snap.csn
}

// Horizon returns a CSN such that every live or future snapshot has
// CSN >= it. The load of lastCSN comes before the scan; see TakeSnapshot.
func (m *Manager) Horizon() uint64 {
	h := m.lastCSN.Load()
	m.forLive(func(x *Xact) {
		if c := x.snapCSN.Load(); c != 0 && c < h {
			h = c
		}
	})
	return h
}

// OldestLive returns the smallest running xid, or NextXid() if none runs.
func (m *Manager) OldestLive() XID {
	o := m.NextXid()
	m.forLive(func(x *Xact) {
		if x.id < o {
			o = x.id
		}
	})
	return o
}

// Live returns the ids of running transactions (unordered).
func (m *Manager) Live() []XID {
	out := make([]XID, 0, m.nlive.Load())
	m.forLive(func(x *Xact) {
		if x.top == nil {
			out = append(out, x.id)
		}
	})
	return out
}

// NumLive is the number of running transactions.
func (m *Manager) NumLive() int { return int(m.nlive.Load()) }

func (m *Manager) forLive(fn func(*Xact)) {
	for i := range m.live {
		s := &m.live[i]
		s.mu.Lock()
		for _, x := range s.m {
			fn(x)
		}
		s.mu.Unlock()
	}
}

// FreezeCutoff returns the xid below which every transaction has ended and,
// if it committed, committed at or below horizon: tuples whose xmin/xmax are
// below it can be frozen and their clog entries dropped.
func (m *Manager) FreezeCutoff(horizon uint64) XID {
	limit := m.OldestLive()
	x := max(m.clog.truncatedBelow(), 1) // xid 0 is never assigned
	for ; x < limit; x++ {
		v := m.clog.get(x)
		if v == clogInProgress || (v >= FrozenCSN && v > horizon) {
			break
		}
	}
	return x
}

// TruncateClog drops commit-status entries of xids below cutoff; the caller
// guarantees no tuple or multixact still refers to them unfrozen, except as
// a finished single locker (lock-only xmax): a dropped entry reads as
// committed, and of a locker every reader asks only "still running?".
func (m *Manager) TruncateClog(cutoff XID) { m.clog.truncate(cutoff) }

// ClogEntries is the number of commit-status entries currently kept.
func (m *Manager) ClogEntries() uint64 { return m.clog.entries() }

// AdvanceXid makes the next Begin hand out at least next: after recovery,
// ids that a previous incarnation may have shown to anyone are never handed
// out again. The skipped ids below next's clog page get no entry (they read
// as frozen, like truncated ones) and those in it read as aborted: nothing
// refers to them, since recovery leaves only frozen rows. So the cost and
// the clog's size stay one page however high next is. Call it before any
// Begin.
func (m *Manager) AdvanceXid(next XID) {
	if next <= m.NextXid() {
		return
	}
	m.clog.truncate(next)
	m.clog.ensure(next)
	for x := max(m.clog.truncatedBelow(), 1); x < next; x++ {
		m.clog.set(x, clogAborted)
	}
	m.nextXid.Store(next - 1)
}
