package multixact

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"weak"
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

// LockMode is TUPLOCK_from_mxstatus as an int: 0 KeyShare, 1 Share,
// 2 NoKeyExclusive, 3 Exclusive (the order of tupled.LockStrength minus one).
func (s Status) LockMode() int {
	switch s {
	case ForKeyShare:
		return 0
	case ForShare:
		return 1
	case ForNoKeyUpdate, NoKeyUpdate:
		return 2
	default:
		return 3
	}
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

// ModesConflict is the row-lock conflict table over lock modes 0..3
// (KeyShare, Share, NoKeyExclusive, Exclusive).
func ModesConflict(a, b int) bool { return a+b >= 3 }

// Member is one (xid, status) entry.
type Member struct {
	Xid    uint64
	Status Status
}

// MultiXact is an immutable member set.
type MultiXact struct {
	ID      ID
	Members []Member // sorted; never modified after creation
}

// UpdateXid returns the updater member's xid (0 if lock-only), as
// MultiXactIdGetUpdateXid.
func (m *MultiXact) UpdateXid() (uint64, Status) {
	for _, mb := range m.Members {
		if mb.Status.IsUpdate() {
			return mb.Xid, mb.Status
		}
	}
	return 0, 0
}

// XidStatus tells the liveness of transactions (implemented by xact.Manager).
type XidStatus interface {
	IsInProgress(xid uint64) bool
	DidCommit(xid uint64) bool
}

// Stats are counters since NewStore.
type Stats struct {
	Created uint64 // new multixacts made
	Reused  uint64 // Create/Expand answered from the intern cache or an existing member
	Live    uint64 // registry entries not yet reclaimed
}

const (
	regShards = 32
	cacheSize = 4096
)

type regShard struct {
	mu sync.Mutex
	m  map[ID]weak.Pointer[MultiXact]
}

// Store hands out multixact ids and interns member sets.
type Store struct {
	next    atomic.Uint64
	created atomic.Uint64
	reused  atomic.Uint64
	live    atomic.Int64
	reg     [regShards]regShard

	cacheMu sync.Mutex
	cache   map[string]*MultiXact
}

// NewStore returns an empty store whose first id is 1.
func NewStore() *Store {
	s := &Store{cache: make(map[string]*MultiXact)}
	for i := range s.reg {
		s.reg[i].m = make(map[ID]weak.Pointer[MultiXact])
	}
	return s
}

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

// Get returns the multixact with this id, or nil if it was never created or
// has been reclaimed.
func (s *Store) Get(id ID) *MultiXact {
	sh := &s.reg[id%regShards]
	sh.mu.Lock()
	wp, ok := sh.m[id]
	sh.mu.Unlock()
	if !ok {
		return nil
	}
	return wp.Value()
}

// Stats returns counters.
func (s *Store) Stats() Stats {
	return Stats{Created: s.created.Load(), Reused: s.reused.Load(), Live: uint64(s.live.Load())}
}

func cacheKey(members []Member) string {
	b := make([]byte, 0, len(members)*9)
	for _, m := range members {
		b = binary.LittleEndian.AppendUint64(b, m.Xid)
		b = append(b, byte(m.Status))
	}
	return string(b)
}

// Create makes (or reuses an identical) multixact from members, as
// MultiXactIdCreateFromMembers. It returns an error if more than one member
// is an updater.
func (s *Store) Create(members []Member) (*MultiXact, error) {
	ms := slices.Clone(members)
	slices.SortFunc(ms, func(a, b Member) int {
		if a.Xid != b.Xid {
			if a.Xid < b.Xid {
				return -1
			}
			return 1
		}
		return int(a.Status) - int(b.Status)
	})
	ms = slices.Compact(ms)
	updaters := 0
	for _, m := range ms {
		if m.Status.IsUpdate() {
			updaters++
		}
	}
	if updaters > 1 {
		return nil, fmt.Errorf("multixact: new multixact has more than one updating member")
	}
	key := cacheKey(ms)
	s.cacheMu.Lock()
	if m, ok := s.cache[key]; ok {
		s.cacheMu.Unlock()
		s.reused.Add(1)
		return m, nil
	}
	m := &MultiXact{ID: s.next.Add(1), Members: ms}
	// Register the id before the multixact can be handed out from the
	// cache, so Get never misses a multixact some tuple already names.
	sh := &s.reg[m.ID%regShards]
	sh.mu.Lock()
	sh.m[m.ID] = weak.Make(m)
	sh.mu.Unlock()
	s.live.Add(1)
	s.created.Add(1)
	runtime.AddCleanup(m, s.forget, m.ID)
	if len(s.cache) >= cacheSize {
		clear(s.cache)
	}
	s.cache[key] = m
	s.cacheMu.Unlock()
	return m, nil
}

func (s *Store) forget(id ID) {
	sh := &s.reg[id%regShards]
	sh.mu.Lock()
	delete(sh.m, id)
	sh.mu.Unlock()
	s.live.Add(-1)
}

// Expand returns a multixact with the members of m that can still matter
// plus (xid, status), as MultiXactIdExpand: m itself if (xid, status) is
// already a member; otherwise a new one containing the members that are
// still running or are a committed updater.
func (s *Store) Expand(m *MultiXact, xid uint64, status Status, st XidStatus) (*MultiXact, error) {
	for _, mb := range m.Members {
		if mb.Xid == xid && mb.Status == status {
			s.reused.Add(1)
			return m, nil
		}
	}
	keep := make([]Member, 0, len(m.Members)+1)
	for _, mb := range m.Members {
		if st.IsInProgress(mb.Xid) || (mb.Status.IsUpdate() && st.DidCommit(mb.Xid)) {
			keep = append(keep, mb)
		}
	}
	keep = append(keep, Member{Xid: xid, Status: status})
	return s.Create(keep)
}

// IsRunning reports whether any member is still in progress
// (MultiXactIdIsRunning).
func IsRunning(m *MultiXact, st XidStatus) bool {
	for _, mb := range m.Members {
		if st.IsInProgress(mb.Xid) {
			return true
		}
	}
	return false
}
