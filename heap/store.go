package heap

import (
	"bytes"
	"sync"
)

// rowStore is where a table's rows live. newMemStore keeps them in memory
// (a B-tree beside a hash); a persistent table's store (backed.go) keeps the
// rows in use in front of a storage.Backend. Ordered walks are each store's
// own (Table.Ascend).
//
// Implementations are safe for concurrent use; they never call back into the
// heap and never take row latches.
type rowStore interface {
	// Get returns the row for key, or nil.
	Get(key []byte) *Row
	// Resident returns the row for key if it is in memory, or nil; it
	// never reads a backend (Table.ReadResident).
	Resident(key []byte) *Row
	// GetOrCreate returns the row for key, creating an empty one if needed;
	// a row it creates keeps key itself (see Table.RowForInsert).
	GetOrCreate(key []byte) *Row
	// Remove unlinks r (vacuum, when it has no versions left).
	Remove(r *Row)
	// Len is the number of rows in memory.
	Len() int
	// Prefetch loads the first hash-index slot of each key (Table.Prefetch).
	Prefetch(keys [][]byte)
}

// memStore keeps rows in a B-tree for ordered scans and, beside it, a
// hash index for point lookups (hashIndex, whose comment is the design).
// Point lookups are the hot path of every row lock: a B-tree search of a
// million rows compares ~20 keys, each behind two pointers (row, then key
// bytes), about 4 µs of cache misses on this machine; the hash index is
// one hash and, for a key of up to 8 bytes, one slot's cache line and the
// row. Both structures hold the same rows. mu guards the B-tree and
// serializes the hash index's writers; Get takes no lock.
type memStore struct {
	mu  sync.RWMutex
	bt  rowTree
	idx *hashIndex
	// floor: no row with a smaller key is visible to any snapshot
	// (floor.go); Table.Ascend starts there.
	floor scanFloor
}

// newMemStore returns an empty in-memory store.
func newMemStore() *memStore {
	return &memStore{bt: newRowTree(), idx: newHashIndex()}
}

func (s *memStore) Get(key []byte) *Row { return s.idx.get(key) }

func (s *memStore) Resident(key []byte) *Row { return s.idx.get(key) }

func (s *memStore) Prefetch(keys [][]byte) { s.idx.touch(keys) }

func (s *memStore) GetOrCreate(key []byte) *Row {
	// the key is hashed once for the lookup, the locked second look and
	// the insert (three hashes were 4% of a bulk load's CPU)
	tag, prefix := keyTag(key)
	if r := s.idx.getTagged(key, tag, prefix); r != nil {
		return r
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.idx.getTagged(key, tag, prefix); r != nil {
		return r
	}
	r := &Row{key: key}
	s.bt.ReplaceOrInsert(r)
	s.idx.insertTagged(r, tag, prefix)
	return r
}

func (s *memStore) Remove(r *Row) {
	s.mu.Lock()
	if s.idx.remove(r) {
		s.bt.Delete(r)
	}
	s.mu.Unlock()
}

func (s *memStore) Ascend(start, end []byte, fn func(*Row) bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	iter := func(r *Row) bool {
		if end != nil && bytes.Compare(r.key, end) >= 0 {
			return false
		}
		return fn(r)
	}
	if start == nil {
		s.bt.Ascend(iter)
	} else {
		s.bt.AscendGreaterOrEqual(start, iter)
	}
}

func (s *memStore) Descend(start, end []byte, fn func(*Row) bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	iter := func(r *Row) bool {
		if start != nil && bytes.Compare(r.key, start) < 0 {
			return false
		}
		return fn(r)
	}
	if end == nil {
		s.bt.Descend(iter)
	} else {
		s.bt.DescendLessOrEqual(end, func(r *Row) bool {
			if bytes.Equal(r.key, end) {
				return true // the end is excluded
			}
			return iter(r)
		})
	}
}

func (s *memStore) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.bt.Len()
}
