package heap

import (
	"hash/maphash"
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
// only its map: the rules about which rows may enter or leave it (the
// removal count, bt) are backedStore.mu's, as before.
type rowIndex struct {
	shards [rowIndexShards]rowIndexShard
}

const rowIndexShards = 64

type rowIndexShard struct {
	mu sync.RWMutex
	m  map[string]*Row
	_  [32]byte // keep neighbouring shards' locks off one cache line
}

var rowIndexSeed = maphash.MakeSeed()

func newRowIndex() *rowIndex {
	x := &rowIndex{}
	for i := range x.shards {
		x.shards[i].m = make(map[string]*Row)
	}
	return x
}

func (x *rowIndex) shard(key []byte) *rowIndexShard {
	return &x.shards[maphash.Bytes(rowIndexSeed, key)%rowIndexShards]
}

// get returns key's row, or nil.
func (x *rowIndex) get(key []byte) *Row {
	sh := x.shard(key)
	sh.mu.RLock()
	r := sh.m[string(key)]
	sh.mu.RUnlock()
	return r
}

// putIfAbsent returns the row of r's key: the one there, else r, inserted
// — unless allowed (nil: always) says no, then nil and nothing inserted.
// allowed runs under the shard's lock and must not touch the index.
func (x *rowIndex) putIfAbsent(r *Row, allowed func() bool) *Row {
	sh := x.shard(r.key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if old := sh.m[string(r.key)]; old != nil {
		return old
	}
	if allowed != nil && !allowed() {
		return nil
	}
	sh.m[string(r.key)] = r
	return r
}

// deleteIf removes r if it is its key's row, and reports whether it was.
func (x *rowIndex) deleteIf(r *Row) bool {
	sh := x.shard(r.key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.m[string(r.key)] != r {
		return false
	}
	delete(sh.m, string(r.key))
	return true
}

// len is the number of rows (each shard counted under its lock).
func (x *rowIndex) len() int {
	n := 0
	for i := range x.shards {
		sh := &x.shards[i]
		sh.mu.RLock()
		n += len(sh.m)
		sh.mu.RUnlock()
	}
	return n
}

// each calls fn for the rows, a shard at a time under its read lock, until
// fn returns false; it starts at a random shard, and a map's order is
// random, so a caller that stops early (eviction) sees rows as good as
// random. fn must not touch the index.
func (x *rowIndex) each(fn func(*Row) bool) {
	first := rand.IntN(rowIndexShards)
	for j := range x.shards {
		sh := &x.shards[(first+j)%rowIndexShards]
		sh.mu.RLock()
		for _, r := range sh.m {
			if !fn(r) {
				sh.mu.RUnlock()
				return
			}
		}
		sh.mu.RUnlock()
	}
}
