package heap

import (
	"sync/atomic"

	"github.com/tupled/tupled/internal/xact"
)

// currentVersion is a row's latch-free summary of its current (newest)
// version: a pointer to it and, in one seqlock-style word, what a plain
// read needs to decide that version's visibility without the row latch.
// It is issue 28's "header beside the lookup": Table.ReadResident answers
// the common read — the newest version committed before the snapshot,
// with no xmax or only lockers in it — from the hash slot, this word, and
// the version's immutable xmin and value, with no latch, no pin and no
// store to any shared cache line.
//
// # What it replaces
//
// A plain read used to pin the row (an atomic add on the Row), take its
// latch (a compare-and-swap and a store), walk the version list (the
// slice's backing array, a dependent load) and read the version's header
// under the latch: four writes to the row's cache line, shared by every
// reader of the row on every core, and four dependent cache misses. Now
// it is the slot, the Row's line (this word and pointer) and the Tuple's
// line (xmin and value), all loads.
//
// # The word
//
//	bit 0     a writer is changing the summary (readers fall back)
//	bit 1     curFrozen: the version's xmin is frozen (visible to all)
//	bit 2     curNoUpdater: its xmax is invalid, 0 or lock-only — no
//	          update or delete, committed or not, is recorded in it
//	bits 3–63 a sequence number, bumped on every change
//
// Both bits are the row's state "at least as good as" the header's:
// curNoUpdater set means the header has no updater; clear means it may
// (the reader falls back to the latch and SatisfiesMVCC). Hint bits the
// latch holder sets later (XminCommitted, XmaxInvalid) are not mirrored
// unless a later publish happens to see them: a summary that knows less
// only sends more reads to the slow path.
//
// # Concurrency
//
// Writers hold the row latch (Table.Apply, pruning, vacuum), so there is
// one at a time. publish stores the word with bit 0 set, then the
// pointer, then the word with the new bits and the next sequence number;
// a reader loads the word, the pointer, and the word again, and uses
// what it read only if both loads of the word are equal and bit 0 is
// clear. Every field is an atomic, so the race detector sees no race,
// and Go's atomics are sequentially consistent, so equal words mean the
// pointer is the one published with them. The Tuple's xmin and value
// never change once Apply published it (they are written before the
// pointer is stored), so the reader reads them without the latch.
//
// A read decided this way is the read the latch would have given at the
// moment of the second load: a snapshot taken before the lookup cannot
// see any change made after it (a later updater commits after the
// snapshot), and a change made before it is in the summary. A row
// unlinked by vacuum has no versions (its summary is empty: readers fall
// back and look the key up again); a persistent table's row evicted after
// the lookup held the key's committed value as of the eviction, which is
// what the snapshot sees.
//
// publish skips the stores when neither the pointer nor the bits change —
// a FOR SHARE lock on a row with no xmax or another locker, the common
// lock, writes nothing here.
type currentVersion struct {
	word atomic.Uint64
	tup  atomic.Pointer[Tuple]
}

const (
	curWriting   = 1
	curFrozen    = 2
	curNoUpdater = 4
	curBits      = curWriting | curFrozen | curNoUpdater
	curSeqInc    = 8
)

// summaryBits are the word's bits for tup (nil: none). Latch held.
func summaryBits(tup *Tuple) uint64 {
	if tup == nil {
		return 0
	}
	var b uint64
	if tup.infomask&XminFrozen == XminFrozen {
		b |= curFrozen
	}
	if tup.infomask&XmaxInvalid != 0 || tup.xmax == 0 || IsLockedOnly(tup.infomask) {
		b |= curNoUpdater
	}
	return b
}

// publish brings r's summary up to date with its newest version. Latch
// held: every change of the version list or of the newest version's
// header calls it before the latch is released.
func (r *Row) publish() {
	var tup *Tuple
	if n := len(r.versions); n > 0 {
		tup = r.versions[n-1]
	}
	bits := summaryBits(tup)
	w := r.cur.word.Load()
	if r.cur.tup.Load() == tup && w&curBits == bits {
		return
	}
	r.cur.word.Store(w | curWriting)
	r.cur.tup.Store(tup)
	r.cur.word.Store((w&^curBits + curSeqInc) | bits)
}

// current returns r's newest version and its summary bits as published,
// or nil when a writer is changing them. No latch.
func (r *Row) current() (*Tuple, uint64) {
	w := r.cur.word.Load()
	if w&curWriting != 0 {
		return nil, 0
	}
	tup := r.cur.tup.Load()
	if r.cur.word.Load() != w {
		return nil, 0
	}
	return tup, w & curBits
}

// ReadResident is a plain read's latch-free fast path (see
// currentVersion): the value of key's version visible to snap, when the
// row is in memory and its newest version is visible to snap with no
// updater recorded; ok false otherwise, and the caller reads the row
// under its latch (Table.PinRow, Row.Lock, SatisfiesMVCC) — which may
// find a visible older version, or none. A row not in memory is read from
// the backend only when the backend hands out values without a copy (an
// in-memory database's arena; backedStore.readCold), and is not brought
// into memory. It sets no hint bit and takes no lock but, for a persistent
// table, the shard lock of its hash (read mode). The value is the
// version's own, valid under package tupled's GetNoCopy rule.
func (t *Table) ReadResident(key []byte, snap xact.Snapshot) (value []byte, ok bool) {
	r := t.store.Resident(key)
	if r == nil {
		if bs, isBacked := t.store.(*backedStore); isBacked {
			// Not in memory: the backend's value, when it can be read
			// without a copy (backedStore.readCold).
			if v, found, decided := bs.readCold(key); decided && found {
				return v, true
			}
		}
		return nil, false
	}
	tup, bits := r.current()
	if tup == nil || bits&curNoUpdater == 0 {
		return nil, false
	}
	if bits&curFrozen == 0 {
		if snap.IsCurrent(tup.xmin) {
			return nil, false // the caller's own insert: SatisfiesMVCC's rules
		}
		st, csn := t.heap.xacts.Status(tup.xmin)
		if st != xact.Committed || csn > snap.CSN() {
			return nil, false
		}
	}
	return tup.value, true
}
