package heap

import (
	"bytes"
	"errors"

	"github.com/tupled/tupled/internal/storage"
)

// Bulk loads.
//
// A bulk load (Table.BulkLoad; the engine's Tx.BulkLoad, which COPY into
// a table made or truncated in the same transaction uses, as PostgreSQL's
// COPY FREEZE) adds rows that are committed and frozen from the start:
// one version each, XminFrozen, no xmax. It skips everything an insert
// pays for — the transaction's write set, its WAL, the lock-manager and
// visibility work — and is sound only because the caller guarantees that
// no other transaction can see the table until the loading one ends (it
// holds the table ACCESS EXCLUSIVE) and that the table is emptied if that
// transaction does not commit (the engine drops and re-creates it).
//
// A persistent table's loaded rows go straight to its backend and stay
// out of memory: a call's rows in increasing order above every key the
// table holds as one sstable pebble ingests (storage.Ingester: no WAL, no
// memtable, no flush, and for a new table's key range no compaction),
// others as one batch, not synced (the engine syncs the backend before
// the loading transaction's commit record); the ceiling is
// raised before the batch is committed, so "no key above ceil is in the
// backend" holds throughout. An in-memory table's rows are made in
// memory. Keys in increasing order above every key the table holds (a
// serial key, pgbench's aid, a rewrite in key order) cost no lookup; any
// other key is looked up in the table and among the call's own keys.

// ErrBulkDuplicate reports the row of a bulk load whose key the table, or
// the load, already holds; BulkLoad returns its index with it.
var ErrBulkDuplicate = errors.New("heap: duplicate key in a bulk load")

// Empty reports whether the table holds no row at all: none in memory
// (live or dead) and none in its backend.
func (t *Table) Empty() bool {
	if t.store.Len() > 0 {
		return false
	}
	if s, ok := t.store.(*backedStore); ok {
		return s.absentFromBackend(nil) && s.ceil.Load() == nil
	}
	return true
}

// BulkLoad adds rows keys[i] → values[i] (both copied), each one frozen
// version (see "Bulk loads"). It returns how many it added: all of them,
// or on ErrBulkDuplicate the index of the first row whose key is in the
// table or earlier in keys (rows before it may have been added; the
// caller then aborts the loading transaction, which empties the table).
// A backend error is returned as it is.
func (t *Table) BulkLoad(keys, values [][]byte) (int, error) {
	switch s := t.store.(type) {
	case *memStore:
		return s.bulkLoad(t, keys, values)
	case *backedStore:
		return s.bulkLoad(keys, values)
	}
	return 0, errors.New("heap: bulk load into an unknown store")
}

func (s *memStore) bulkLoad(t *Table, keys, values [][]byte) (int, error) {
	s.mu.Lock() // once for the call: no other transaction uses the table
	defer s.mu.Unlock()
	for i, k := range keys {
		tag, prefix := keyTag(k)
		if s.idx.getTagged(k, tag, prefix) != nil {
			return i, ErrBulkDuplicate
		}
		kv := make([]byte, len(k)+len(values[i]))
		copy(kv, k)
		copy(kv[len(k):], values[i])
		r := loadedRow(kv[:len(k):len(k)], kv[len(k):])
		r.stored = false // no backend
		s.bt.ReplaceOrInsert(r)
		s.idx.insertTagged(r, tag, prefix)
		t.heap.tuplesLive.Add(1)
	}
	return len(keys), nil
}

func (s *backedStore) bulkLoad(keys, values [][]byte) (int, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	s.absentFromBackend(nil) // the ceiling known
	var hi []byte            // the largest key the table may hold, this call's included
	if c := s.ceil.Load(); c != nil {
		hi = *c
	}
	var mine map[string]struct{} // this call's keys, once one is not above hi
	// the backend's keys, in one buffer (a slice stays valid when it grows)
	bk := make([][]byte, len(keys))
	size := 0
	for _, k := range keys {
		size += len(s.prefix) + len(k)
	}
	buf := make([]byte, 0, size) // never grows: no copy of the keys so far
	for i, k := range keys {
		if hi != nil && bytes.Compare(k, hi) <= 0 {
			if mine == nil {
				mine = make(map[string]struct{}, len(keys))
				for _, e := range keys[:i] {
					mine[string(e)] = struct{}{}
				}
			}
			if _, dup := mine[string(k)]; dup || s.load(k) != nil {
				return i, ErrBulkDuplicate
			}
		} else {
			hi = k
		}
		if mine != nil {
			mine[string(k)] = struct{}{}
		}
		at := len(buf)
		buf = append(append(buf, s.prefix...), k...)
		bk[i] = buf[at:len(buf):len(buf)]
	}
	s.raiseCeil(hi)
	if ing, ok := s.be.(storage.Ingester); ok && mine == nil && storage.CanIngest(s.be) {
		// increasing, above everything: one sstable of their own
		if err := ing.Ingest(bk, values); err != nil {
			return 0, err
		}
	} else {
		b := s.be.NewBatch()
		for i := range bk {
			b.Set(bk[i], values[i])
		}
		if err := s.be.Commit(b, false); err != nil {
			return 0, err
		}
	}
	if s.arena != nil {
		s.out.Add(int64(len(keys)))
		s.heap.tuplesOut.Add(int64(len(keys)))
	}
	return len(keys), nil
}
