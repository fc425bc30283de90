package heap

import (
	"math/rand/v2"
	"sync"
)

// rowIndex is a persistent table's hash of the rows in memory, in shards
// that each have their own lock. A cold point read inserts the row it
// loaded; with one map under the table's mutex, every such insert took
// that mutex exclusively, and 30 clients reading random rows spent most of
// their time queued behind each other (a quarter of the machine idle, the
// mutex profile one line: backedStore.load). Loads now take the table's
// mutex shared and one shard's exclusively.
//
// Lock order: backedStore.mu, then a shard. What a shard's lock protects is
// only its table: the rules about which rows may enter or leave it (the
// removal count, bt) are backedStore.mu's, as before.
type rowIndex struct {
	shards [rowIndexShards]rowIndexShard
}

const rowIndexShards = 64 // a power of two: the shard is the tag's top bits

// A shard's table is a hashIndex (hashindex.go) used under the shard's
// lock, not the Go map it was: putIfAbsent hashes the key once and probes
// one slot sequence, where the map hashed and probed twice (a lookup, then
// the assignment), and a slot holds the row and the key's first bytes but
// no pointer to the key, so the collector follows one pointer per row
// fewer. A bulk load spent 17% of its time in the maps' lookups,
// assignments and growth.
type rowIndexShard struct {
	mu  sync.RWMutex
	idx *hashIndex
	_   [32]byte // keep neighbouring shards' locks off one cache line
}

func newRowIndex() *rowIndex {
	x := &rowIndex{}
	for i := range x.shards {
		x.shards[i].idx = newHashIndex()
	}
	return x
}

// shard is key's shard and keyTag.
func (x *rowIndex) shard(key []byte) (sh *rowIndexShard, tag, prefix uint64) {
	tag, prefix = keyTag(key)
	return &x.shards[tag>>(64-6)], tag, prefix
}

// get returns key's row, or nil.
func (x *rowIndex) get(key []byte) *Row {
	sh, tag, prefix := x.shard(key)
	sh.mu.RLock()
	r := sh.idx.getTagged(key, tag, prefix)
	sh.mu.RUnlock()
	return r
}

// touch is hashIndex.touch over the keys' shards. It takes no shard lock:
// a hashIndex's readers need none, and touch reads nothing it returns.
func (x *rowIndex) touch(keys [][]byte) {
	var sink uint64
	for _, k := range keys {
		sh, tag, _ := x.shard(k)
		t := sh.idx.tab.Load()
		sink += t.slots[tag>>8&t.mask].tag.Load()
	}
	touchSink.Store(sink)
}

// putIfAbsent returns the row of r's key: the one there, else r, inserted
// — unless allowed (nil: always) says no, then nil and nothing inserted.
// allowed runs under the shard's lock and must not touch the index.
func (x *rowIndex) putIfAbsent(r *Row, allowed func() bool) *Row {
	sh, tag, prefix := x.shard(r.key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if old := sh.idx.getTagged(r.key, tag, prefix); old != nil {
		return old
	}
	if allowed != nil && !allowed() {
		return nil
	}
	sh.idx.insertTagged(r, tag, prefix)
	return r
}

// deleteIf removes r if it is its key's row, and reports whether it was.
func (x *rowIndex) deleteIf(r *Row) bool {
	sh, _, _ := x.shard(r.key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.idx.remove(r)
}

// len is the number of rows (each shard counted under its lock).
func (x *rowIndex) len() int {
	n := 0
	for i := range x.shards {
		sh := &x.shards[i]
		sh.mu.RLock()
		n += sh.idx.len()
		sh.mu.RUnlock()
	}
	return n
}

// each calls fn for the rows, a shard at a time under its read lock, until
// fn returns false; it starts at a random shard, and a shard's order is
// its hash's, so a caller that stops early (eviction) sees rows as good as
// random. fn must not touch the index.
func (x *rowIndex) each(fn func(*Row) bool) {
	first := rand.IntN(rowIndexShards)
	for j := range x.shards {
		sh := &x.shards[(first+j)%rowIndexShards]
		sh.mu.RLock()
		more := sh.idx.each(fn)
		sh.mu.RUnlock()
		if !more {
			return
		}
	}
}
