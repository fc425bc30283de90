package heap

import "errors"

// ErrTableInUse: DropTable found a version written or locked by a
// transaction still in progress.
var ErrTableInUse = errors.New("heap: table in use by a running transaction")

// DropTable removes the named table from the catalog, unless one of its
// cached rows holds a version inserted, updated, deleted or locked by a
// transaction still in progress (ErrTableInUse; the table stays). Such
// state exists only in memory: eviction never drops a row with a live xmax
// or an unfrozen xmin (Evict), so walking the cached rows finds all of it.
//
// The table is unlinked first and checked second, each row under its latch:
// a writer that found the table before the unlink and changes a row after
// the check passed it writes into a table nobody can reach any more; its
// commit must then be refused by whoever logs it (the root package checks
// the table still exists). The caller serialises DDL and checkpoints.
func (h *Heap) DropTable(name string) (*Table, error) {
	h.mu.Lock()
	t := h.tables[name]
	if t == nil {
		h.mu.Unlock()
		return nil, ErrNoTable
	}
	delete(h.tables, name)
	h.mu.Unlock()
	if t.inUse() {
		h.mu.Lock()
		h.tables[name] = t
		h.mu.Unlock()
		return nil, ErrTableInUse
	}
	var n int64
	t.eachCached(func(r *Row) bool {
		r.Lock()
		n += int64(len(r.versions))
		r.Unlock()
		return true
	})
	h.tuplesLive.Add(-n)
	if bs, ok := t.store.(*backedStore); ok {
		h.tuplesOut.Add(-bs.out.Load())
	}
	return t, nil
}

// inUse reports whether a cached row holds a version of a running
// transaction: an uncommitted write or a row lock.
func (t *Table) inUse() bool {
	busy := false
	t.eachCached(func(r *Row) bool {
		r.Lock()
		defer r.Unlock()
		for _, v := range r.versions {
			if v.infomask&XminFrozen != XminFrozen && t.heap.xacts.IsInProgress(v.xmin) {
				busy = true
			} else if t.heap.IsRunningXmax(v) {
				busy = true
			}
		}
		return !busy
	})
	return busy
}

// AscendCached visits, in key order, the rows of [start, end) that are in
// memory, without reading the backend (for a memory table: every row).
// Row lock state lives only on cached rows (see DropTable), so this is the
// walk for anything that looks for locks. fn runs without the table's lock
// held.
func (t *Table) AscendCached(start, end []byte, fn func(*Row) bool) {
	var rows []*Row
	switch s := t.store.(type) {
	case *backedStore:
		rows = s.cached(start, end)
	case *memStore:
		s.Ascend(start, end, func(r *Row) bool {
			rows = append(rows, r)
			return true
		})
	}
	for _, r := range rows {
		if !fn(r) {
			return
		}
	}
}

// eachCached is AscendCached over every row in memory in no particular
// order: what DropTable walks (counting versions, looking for a running
// transaction's) needs no order, and sorting a million cached rows by key
// was most of the drop of a table ALTER TABLE had rewritten.
func (t *Table) eachCached(fn func(*Row) bool) {
	var rows []*Row
	switch s := t.store.(type) {
	case *backedStore:
		s.mu.RLock()
		rows = make([]*Row, 0, s.idx.len())
		s.idx.each(func(r *Row) bool {
			rows = append(rows, r)
			return true
		})
		s.mu.RUnlock()
	case *memStore:
		t.AscendCached(nil, nil, fn) // the B-tree's order costs nothing more
		return
	}
	for _, r := range rows {
		if !fn(r) {
			return
		}
	}
}

// CachedRows is the number of the table's rows held in memory: every row
// of a memory table, the cache of a persistent one (which may hold far
// fewer rows than the table). It is not a row count of the table.
func (t *Table) CachedRows() int { return t.store.Len() }

// RestoreTable puts back a table DropTable removed (the drop could not be
// made durable).
func (h *Heap) RestoreTable(t *Table) {
	h.mu.Lock()
	h.tables[t.name] = t
	h.mu.Unlock()
	var n int64
	t.eachCached(func(r *Row) bool {
		r.Lock()
		n += int64(len(r.versions))
		r.Unlock()
		return true
	})
	h.tuplesLive.Add(n)
	if bs, ok := t.store.(*backedStore); ok {
		h.tuplesOut.Add(bs.out.Load())
	}
}

// PrefixEnd is the smallest key greater than every key with prefix p (nil:
// none, p is all 0xff).
func PrefixEnd(p []byte) []byte { return prefixEnd(p) }
