package multixact

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/tupled/tupled/internal/invariants"
	"github.com/tupled/tupled/internal/stripe"
	"github.com/tupled/tupled/internal/tuplemode"
)

// ID is a 64-bit MultiXactId.
type ID = uint64

// InvalidID is never assigned.
const InvalidID ID = 0

// Status is PostgreSQL's MultiXactStatus: what a member did to the tuple.
type Status uint8

const (
	ForKeyShare    Status = iota // FOR KEY SHARE locker
	ForShare                     // FOR SHARE locker
	ForNoKeyUpdate               // FOR NO KEY UPDATE locker
	ForUpdate                    // FOR UPDATE locker
	NoKeyUpdate                  // updater that did not change the key
	Update                       // deleter / key updater
)

// IsUpdate is ISUPDATE_from_mxstatus.
func (s Status) IsUpdate() bool { return s > ForUpdate }

// statusMode is TUPLOCK_from_mxstatus: the row-lock mode a member holds.
var statusMode = [...]tuplemode.Mode{
	ForKeyShare:    tuplemode.KeyShare,
	ForShare:       tuplemode.Share,
	ForNoKeyUpdate: tuplemode.NoKeyExclusive,
	ForUpdate:      tuplemode.Exclusive,
	NoKeyUpdate:    tuplemode.NoKeyExclusive,
	Update:         tuplemode.Exclusive,
}

// LockMode is TUPLOCK_from_mxstatus: the row-lock mode the member holds.
func (s Status) LockMode() tuplemode.Mode { return statusMode[s] }

// lockerStatus and updaterStatus are get_mxact_status_for_lock (heapam.c):
// the member status of a locker, or of an updater, of each mode.
var (
	lockerStatus = [tuplemode.NumModes]Status{
		tuplemode.KeyShare:       ForKeyShare,
		tuplemode.Share:          ForShare,
		tuplemode.NoKeyExclusive: ForNoKeyUpdate,
		tuplemode.Exclusive:      ForUpdate,
	}
	updaterStatus = [tuplemode.NumModes]Status{
		tuplemode.NoKeyExclusive: NoKeyUpdate,
		tuplemode.Exclusive:      Update,
	}
)

// StatusFor is get_mxact_status_for_lock: the member status of a locker of
// mode m, or with isUpdate of an updater (only NoKeyExclusive, an update
// that keeps the key, and Exclusive, a delete or key update, are update
// modes; the others are a caller's bug and panic).
func StatusFor(m tuplemode.Mode, isUpdate bool) Status {
	if isUpdate {
		if m != tuplemode.NoKeyExclusive && m != tuplemode.Exclusive {
			panic(fmt.Sprintf("multixact: %v is not an update mode", m))
		}
		return updaterStatus[m]
	}
	return lockerStatus[m]
}

func (s Status) String() string {
	switch s {
	case ForKeyShare:
		return "ForKeyShare"
	case ForShare:
		return "ForShare"
	case ForNoKeyUpdate:
		return "ForNoKeyUpdate"
	case ForUpdate:
		return "ForUpdate"
	case NoKeyUpdate:
		return "NoKeyUpdate"
	case Update:
		return "Update"
	}
	return fmt.Sprintf("Status(%d)", s)
}

// Member is one (xid, status) entry.
type Member struct {
	Xid    uint64
	Status Status
}

// MultiXact is an immutable member set.
type MultiXact struct {
	id      ID
	members []Member // no duplicates, in order of addition (Create sorts); never modified after creation

	// Summaries of Members, computed once by create (the hot path asks
	// for them on every lock; see Summary and UpdateXid).
	updater   int32          // 1 + index of the updating member, 0 if lock-only
	strongest tuplemode.Mode // highest Status.LockMode of a member
	keysUpd   bool           // a member is ForUpdate or Update

	// arena, when not nil, is shared by the multixacts whose Members are
	// prefixes of one backing array with spare capacity. Expand appends a
	// locker in place (no copy) by claiming the next element; see Expand.
	arena *arena
}

// ID is the multixact's MultiXactId.
func (m *MultiXact) ID() ID { return m.id }

// Members are the members, without duplicates, in order of addition
// (Create sorts them). The slice is the multixact's own and never changes:
// the caller must not modify it (it is not copied: every row lock and
// visibility check of a multi xmax reads it). Its capacity is clipped to
// its length, so an append copies instead of writing into the arena room
// that later multixacts of the same array are handed (see Store.Add): an
// unclipped slice would let a caller's append overwrite another
// multixact's member.
func (m *MultiXact) Members() []Member { return m.members[:len(m.members):len(m.members)] }

// An arena is the growth room of one member array: claimed counts the
// elements handed out, and heads[i-base] is the multixact whose last member
// is element i (base: the length of the array's first multixact), so an
// append allocates nothing. The ids of the heads were reserved with the
// array's first multixact: heads[j] is firstID+j, so an append touches no
// counter shared beyond the arena.
type arena struct {
	claimed atomic.Int32
	base    int
	firstID ID
	heads   []MultiXact
}

// UpdateXid returns the updater member's xid (0 if lock-only), as
// MultiXactIdGetUpdateXid.
func (m *MultiXact) UpdateXid() (uint64, Status) {
	if m.updater == 0 {
		return 0, 0
	}
	mb := m.members[m.updater-1]
	return mb.Xid, mb.Status
}

// Summary returns what GetMultiXactIdHintBits needs: the strongest member
// lock mode (0..3), whether a member is ForUpdate or Update (the key may
// change) and whether a member is an updater.
func (m *MultiXact) Summary() (strongest tuplemode.Mode, keysUpdated, hasUpdate bool) {
	return m.strongest, m.keysUpd, m.updater != 0
}

// Contains reports whether (xid, status) is a member.
func (m *MultiXact) Contains(xid uint64, status Status) bool {
	for _, mb := range m.members {
		if mb.Xid == xid && mb.Status == status {
			return true
		}
	}
	return false
}

// XidStatus tells the liveness of transactions (implemented by xact.Manager).
type XidStatus interface {
	IsInProgress(xid uint64) bool
	DidCommit(xid uint64) bool
}

// Stats are counters since NewStore.
type Stats struct {
	Created  uint64 // new multixacts made
	Reused   uint64 // Create/Expand answered from the intern cache or an existing member
	Appended uint64 // of Created: made by Expand appending in place, without a copy
	// MembersWritten counts the member entries the created multixacts
	// wrote: a multixact made by copying writes all its members, one made
	// by an append writes the one it appends (PostgreSQL writes every
	// member of every new multixact into pg_multixact/members).
	MembersWritten uint64
	Live           uint64 // multixacts referenced by tuples when vacuum last counted (SetLive)
}

// The intern cache: cacheShards shards of cacheWays direct-mapped slots,
// indexed by a hash of the member set. A slot holds the last multixact
// created with a set of that hash; a lookup compares members, so a
// collision only costs a miss. The shard mutex makes concurrent creations
// of one set yield one multixact. A slot keeps its multixact, and so its
// arena (up to maxRoom heads of pointers), alive: with 4096 slots a hot row
// kept ~33 MB of arenas alive that every garbage collection had to mark
// (a hot row's sets hold a new xid each and are never found again); 512
// slots keep that to a few MB and still intern what a transaction shares
// (with the FOR SHARE fast path off: 1.11 multixacts per 3-lock
// transaction, 1.05 with 4096).
const (
	cacheShards = 64
	cacheWays   = 8
	cacheSize   = cacheShards * cacheWays
)

// A slot keeps the hash beside the pointer: a lookup that misses — every
// lookup of a hot row's new set, which holds a new xid — then costs one
// load from the slot array, not a walk to a cold multixact and its members.
type cacheSlot struct {
	hash uint64
	m    *MultiXact
}

type cacheShard struct {
	mu    sync.Mutex
	slots [cacheWays]cacheSlot
	_     [40]byte
}

// Store hands out multixact ids and interns member sets.
//
// There is no id → multixact registry: tuples hold their multixact by
// pointer, so a multixact lives exactly as long as some tuple, waiter or
// cache slot refers to it, and the Go garbage collector reclaims it after
// vacuum has replaced the last xmax naming it (PostgreSQL needs the SLRU
// and its truncation for this; see doc.go).
type Store struct {
	// next is the last id handed out or reserved for an arena's heads.
	next atomic.Uint64
	made atomic.Uint64 // multixacts made by create (not appended)
	// madeMembers: the members of the multixacts made by create.
	madeMembers atomic.Uint64
	reused      atomic.Uint64
	live        atomic.Uint64
	// appended counts appends, striped by the appending xid: on a hot
	// row every lock appends, from every core.
	appended stripe.Counter
	cache    [cacheShards]cacheShard
}

// NewStore returns an empty store whose first id is 1.
func NewStore() *Store { return &Store{} }

// AdvanceID makes the next new multixact get at least next (after
// recovery: ids never go backwards across a restart). Call it before any
// Create.
func (s *Store) AdvanceID(next ID) {
	if next > s.next.Load()+1 {
		s.next.Store(next - 1)
	}
}

// NextID is the id the next new multixact will get.
func (s *Store) NextID() ID { return s.next.Load() + 1 }

// SetLive records how many distinct multixacts tuples refer to (vacuum
// counts them as it goes over every row that has an xmax).
func (s *Store) SetLive(n uint64) { s.live.Store(n) }

// Stats returns counters.
func (s *Store) Stats() Stats {
	made, appended := s.made.Load(), s.appended.Load()
	return Stats{Created: made + appended, Reused: s.reused.Load(), Appended: appended, Live: s.live.Load(),
		MembersWritten: s.madeMembers.Load() + appended}
}

func compareMembers(a, b Member) int {
	if a.Xid != b.Xid {
		if a.Xid < b.Xid {
			return -1
		}
		return 1
	}
	return int(a.Status) - int(b.Status)
}

// Create makes (or reuses an identical) multixact from members, as
// MultiXactIdCreateFromMembers. It returns an error if more than one member
// is an updater. members is not modified.
func (s *Store) Create(members []Member) (*MultiXact, error) {
	ms := slices.Clone(members)
	slices.SortFunc(ms, compareMembers)
	ms = slices.Clip(slices.Compact(ms))
	if invariants.Enabled {
		for i := 1; i < len(ms); i++ {
			if compareMembers(ms[i-1], ms[i]) >= 0 {
				invariants.Fail(invUnique, "Create: members %v and %v not in strictly increasing (xid, status) order", ms[i-1], ms[i])
			}
		}
	}
	return s.create(ms) // no arena: see Add
}

// create interns ms, which is free of duplicates and owned by the
// callee from now on.
func (s *Store) create(ms []Member) (*MultiXact, error) {
	nm, err := s.summarize(ms)
	if err != nil {
		return nil, err
	}
	h := uint64(14695981039346656037)
	for _, m := range ms {
		h = (h ^ m.Xid) * 1099511628211
		h = (h ^ uint64(m.Status)) * 1099511628211
	}
	h ^= h >> 29
	sh := &s.cache[h%cacheShards]
	slot := &sh.slots[(h/cacheShards)%cacheWays]
	sh.mu.Lock()
	if slot.hash == h && slot.m != nil && slices.Equal(slot.m.members, ms) {
		m := slot.m
		sh.mu.Unlock()
		s.reused.Add(1)
		return m, nil
	}
	if room := cap(ms) - len(ms); room > 0 {
		nm.id = s.next.Add(uint64(1+room)) - uint64(room)
		nm.arena = &arena{base: len(ms), firstID: nm.id + 1, heads: make([]MultiXact, room)}
		nm.arena.claimed.Store(int32(len(ms)))
	} else {
		nm.id = s.next.Add(1)
	}
	*slot = cacheSlot{hash: h, m: nm}
	sh.mu.Unlock()
	s.made.Add(1)
	s.madeMembers.Add(uint64(len(ms)))
	return nm, nil
}

// summarize returns an id-less multixact of ms (no duplicates)
// with its summaries; an error if more than one member is an updater.
func (s *Store) summarize(ms []Member) (*MultiXact, error) {
	nm := &MultiXact{members: ms}
	for i, m := range ms {
		if m.Status.IsUpdate() {
			if nm.updater != 0 {
				return nil, fmt.Errorf("multixact: new multixact has more than one updating member")
			}
			nm.updater = int32(i) + 1
		}
		if lm := m.Status.LockMode(); lm > nm.strongest {
			nm.strongest = lm
		}
		if m.Status == ForUpdate || m.Status == Update {
			nm.keysUpd = true
		}
	}
	return nm, nil
}

// Expand returns a multixact with the members of m plus (xid, status), as
// MultiXactIdExpand: m itself if (xid, status) is already a member.
//
// The hot row (a new locker beside n others) costs O(1): when m's backing
// array has an unclaimed element and the newcomer is a locker, or the
// first updater (a no-key update of a row its lockers keep locked: the
// update does not copy them either), the new multixact is m's members
// plus that element, its header preallocated in the arena — nothing is
// copied or allocated and no member's liveness is checked. Finished lockers then stay in the
// set for a while; they never conflict (every conflict test asks whether a
// member is running), and tuplelock's Members filters them for display.
// Otherwise Expand copies only the members that can still matter (running,
// or a committed updater), in their order, into an array with room for as
// many appends again plus four, or for twice the appends the old array
// took if they filled it (at most maxRoom): a set holds at most its live
// members plus about maxRoom, and the O(n) copy and liveness checks are
// paid once per up to maxRoom appends. Copies are interned (a transaction
// locking many rows beside the same partners shares one set); appends are
// not.
func (s *Store) Expand(m *MultiXact, xid uint64, status Status, st XidStatus) (*MultiXact, error) {
	if m.Contains(xid, status) {
		s.reused.Add(1)
		return m, nil
	}
	return s.Add(m, xid, status, st)
}

// Add is Expand for a caller that knows (xid, status) is no member of m
// (tuplelock's hot path: the transaction has written no xmax yet, or it has
// just looked, as heap_lock_tuple does before it adds a locker).
func (s *Store) Add(m *MultiXact, xid uint64, status Status, st XidStatus) (*MultiXact, error) {
	nm, appended, err := s.AddUncounted(m, xid, status, st)
	if appended {
		s.CountAppend(xid)
	}
	return nm, err
}

// AddUncounted is Add that leaves an append uncounted: appended says it
// appended in place, and the caller counts it with CountAppend once it
// has released the row latch it holds (tuplelock's hot row: the striped
// counter's line is another core's as often as not, and a cache miss
// inside the latch hold is one every waiting locker pays).
func (s *Store) AddUncounted(m *MultiXact, xid uint64, status Status, st XidStatus) (nm *MultiXact, appended bool, err error) {
	add := Member{Xid: xid, Status: status}
	if invariants.Enabled && m.Contains(xid, status) {
		invariants.Fail(invUnique, "Add of (%d, %v), already a member of multixact %d", xid, status, m.id)
	}
	if n := len(m.members); m.arena != nil && !(status.IsUpdate() && m.updater != 0) && n < cap(m.members) &&
		m.arena.claimed.CompareAndSwap(int32(n), int32(n+1)) {
		// Element n of the members and its head are ours alone: claimed,
		// and beyond every len handed out.
		ms := m.members[:n+1]
		ms[n] = add
		j := n - m.arena.base
		nm := &m.arena.heads[j]
		*nm = MultiXact{id: m.arena.firstID + ID(j), members: ms, strongest: max(m.strongest, status.LockMode()),
			keysUpd: m.keysUpd || status == ForUpdate || status == Update, updater: m.updater, arena: m.arena}
		if status.IsUpdate() {
			nm.updater = int32(n) + 1
		}
		if invariants.Enabled {
			checkOneUpdater(nm)
		}
		return nm, true, nil
	}
	// Filter into a stack buffer (a hot row's set fits), then allocate
	// room for appends: as many as the survivors plus four, or, when m
	// filled its own room by appending (a hot row), twice that room up to
	// maxRoom, so the copies on a hot row get rarer as it stays hot.
	room := 0
	if m.arena != nil && len(m.members) == cap(m.members) {
		room = min(2*(cap(m.members)-m.arena.base), maxRoom)
	}
	var buf [64]Member
	keep := buf[:0]
	for _, mb := range m.members {
		if st.IsInProgress(mb.Xid) || (mb.Status.IsUpdate() && st.DidCommit(mb.Xid)) {
			keep = append(keep, mb)
		}
	}
	keep = append(keep, add)
	room = max(room, len(keep)+4)
	ms := make([]Member, len(keep), len(keep)+room)
	copy(ms, keep)
	nm, err = s.create(ms)
	if invariants.Enabled && err == nil {
		checkOneUpdater(nm)
	}
	return nm, false, err
}

// CountAppend counts an append AddUncounted made for xid (Stats.Appended).
func (s *Store) CountAppend(xid uint64) { s.appended.Add(xid, 1) }

// Names of the invariants of doc.go checked under -tags invariants.
const (
	invOneUpdater = "multixact.one-updater"    // at most one member is an updater
	invUnique     = "multixact.members-unique" // no duplicate (xid, status)
)

// checkOneUpdater checks that at most one of m's members is an updater
// and that m's summary names it (invariants.Enabled only; O(members)).
// Create refuses a second updater with an error; an append relies on its
// predecessor's summary, which this checks.
func checkOneUpdater(m *MultiXact) {
	at := int32(0)
	for i, mb := range m.members {
		if mb.Status.IsUpdate() {
			if at != 0 {
				invariants.Fail(invOneUpdater, "multixact %d: members %v and %v both update", m.id, m.members[at-1], mb)
			}
			at = int32(i) + 1
		}
	}
	if at != m.updater {
		invariants.Fail(invOneUpdater, "multixact %d: updater summary %d, members say %d", m.id, m.updater, at)
	}
}

// maxRoom bounds the appends an array makes room for (its heads and
// members: 64 bytes each).
const maxRoom = 128

// IsRunning reports whether any member is still in progress
// (MultiXactIdIsRunning).
func IsRunning(m *MultiXact, st XidStatus) bool {
	// Newest first: finished lockers collect at the front (see Expand).
	for i := len(m.members) - 1; i >= 0; i-- {
		if st.IsInProgress(m.members[i].Xid) {
			return true
		}
	}
	return false
}
