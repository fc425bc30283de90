package main

import (
	"hash/maphash"
	"sync"
)

// lockTable is the application-level row lock table a Go program puts in
// front of pebble to get FOR SHARE / FOR UPDATE / SKIP LOCKED: one
// sync.RWMutex per locked key, in a map sharded by the key's hash, each
// entry counted by its users and dropped when none is left. It lives in
// the process only (a restart forgets every lock, as tupled's do); it has
// no deadlock detection, so callers lock in key order.
type lockTable struct {
	seed   maphash.Seed
	shards [64]lockShard
}

type lockShard struct {
	mu sync.Mutex
	m  map[string]*rowLock
}

type rowLock struct {
	rw   sync.RWMutex
	refs int // guarded by the shard's mu
}

func newLockTable() *lockTable {
	t := &lockTable{seed: maphash.MakeSeed()}
	for i := range t.shards {
		t.shards[i].m = make(map[string]*rowLock)
	}
	return t
}

func (t *lockTable) shard(key []byte) *lockShard {
	return &t.shards[maphash.Bytes(t.seed, key)%uint64(len(t.shards))]
}

func (t *lockTable) ref(key []byte) *rowLock {
	s := t.shard(key)
	s.mu.Lock()
	l := s.m[string(key)]
	if l == nil {
		l = &rowLock{}
		s.m[string(key)] = l
	}
	l.refs++
	s.mu.Unlock()
	return l
}

func (t *lockTable) unref(key []byte, l *rowLock) {
	s := t.shard(key)
	s.mu.Lock()
	if l.refs--; l.refs == 0 {
		delete(s.m, string(key))
	}
	s.mu.Unlock()
}

// lock takes key's lock, shared or exclusive, waiting for it.
func (t *lockTable) lock(key []byte, exclusive bool) {
	l := t.ref(key)
	if exclusive {
		l.rw.Lock()
	} else {
		l.rw.RLock()
	}
}

// tryLock takes key's exclusive lock if no one holds it (SKIP LOCKED).
func (t *lockTable) tryLock(key []byte) bool {
	l := t.ref(key)
	if l.rw.TryLock() {
		return true
	}
	t.unref(key, l)
	return false
}

// unlock releases a lock taken by lock or tryLock.
func (t *lockTable) unlock(key []byte, exclusive bool) {
	s := t.shard(key)
	s.mu.Lock()
	l := s.m[string(key)]
	s.mu.Unlock()
	if exclusive {
		l.rw.Unlock()
	} else {
		l.rw.RUnlock()
	}
	t.unref(key, l)
}
