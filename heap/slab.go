package heap

import (
	"runtime"
	"sync"
	"unsafe"
)

// valueSlab holds the values of an in-memory table's versions in large
// pages outside the Go heap (issue 28's plan, item 2): a value is a
// []byte the garbage collector never scans nor counts, so a million
// resident rows no longer make a million small objects for it to mark,
// and the memory they fill does not raise the heap goal (GOGC) by as
// much again. pebble's block cache (manual.New) and Badger's skiplist
// arena keep their bytes out of the collector's sight for the same
// reason.
//
// # Layout
//
// A page is slabPageSize bytes from an anonymous mmap (pages_unix.go;
// elsewhere, a Go allocation). A value of n bytes, 0 < n <=
// slabMaxValue, takes one block of n rounded up to slabClass bytes, cut
// from the end of the newest page or taken from the free list of its
// size class; the Tuple holds the block as its value (a slice of length
// and capacity n, so a caller's append copies; Tuple.slab set). A larger value, or
// an empty one, stays the Go slice the caller gave (a version of a
// persistent table's row too: its value is the backend's).
//
// # Recycling: an epoch per freed block
//
// A value is never written after Apply copied it in, and package
// tupled's GetNoCopy and LockNoCopy hand it out as it is, valid until the
// reader's transaction ends. So when pruning or vacuum removes a version,
// its block is not reusable at once: a transaction that read the value
// before the removal may still hold it. free queues the block with the
// next xid to be assigned at the removal (every transaction running then
// has a smaller xid, since xact.Manager assigns a transaction's xid when
// it begins); reclaim moves a queued block to its free list once
// xact.Manager.OldestLive has passed that xid — every transaction that
// could hold the value has ended. Epochs only grow, so the queue is
// FIFO. Vacuum calls reclaim (once per pass, with one OldestLive), so a
// freed block waits at most one vacuum interval past its last reader.
//
// Pages are never returned to the system while the slab lives. Every
// Tuple whose value is in it points to it, as does its Table, so a
// cleanup attached to the slab unmaps its pages only once no version of
// the table and the table itself are reachable (a dropped table,
// forgotten); a value handed out by GetNoCopy and kept past its
// transaction's end, against the rule, may then fault. Within a table, memory follows
// the live values plus what waits for its epoch, and a churning workload
// (endless updates of the same rows) stays flat: TestSlabFlatUnderUpdates.
//
// # Concurrency
//
// mu guards everything here; allocation and free run under a row latch
// (Apply, pruning), and mu is taken after it, never the other way.
type valueSlab struct {
	mu       sync.Mutex
	mapped   *slabPages // every page mapped (the cleanup's, see newValueSlab)
	cur      []byte     // the unused end of the newest page
	freeList [slabClasses][][]byte
	pending  []slabFreed // in epoch order
	// inUse is the bytes in blocks holding a live value or waiting for
	// their epoch (tests and Table.SlabStats).
	inUse int
}

// slabPages are a slab's pages, apart from it so that its cleanup can
// hold them without holding the slab.
type slabPages struct{ pages [][]byte }

type slabFreed struct {
	epoch uint64
	block []byte
}

const (
	slabPageSize = 1 << 20
	slabClass    = 16
	slabMaxValue = 4096
	slabClasses  = slabMaxValue / slabClass
)

// newValueSlab returns an empty slab whose pages are unmapped once it is
// unreachable.
func newValueSlab() *valueSlab {
	s := &valueSlab{mapped: &slabPages{}}
	runtime.AddCleanup(s, func(m *slabPages) { m.release() }, s.mapped)
	return s
}

// copyIn returns value's copy in a block of the slab, or value itself
// (ok false) when it is empty or too large for one.
func (s *valueSlab) copyIn(value []byte) (b []byte, ok bool) {
	n := len(value)
	if n == 0 || n > slabMaxValue {
		return value, false
	}
	size := (n + slabClass - 1) &^ (slabClass - 1)
	c := size/slabClass - 1
	s.mu.Lock()
	var blk []byte
	if l := len(s.freeList[c]); l > 0 {
		blk = s.freeList[c][l-1]
		s.freeList[c][l-1] = nil
		s.freeList[c] = s.freeList[c][:l-1]
	} else {
		if len(s.cur) < size {
			p := mapPage(slabPageSize)
			s.mapped.pages = append(s.mapped.pages, p)
			s.cur = p
		}
		blk = s.cur[:size:size]
		s.cur = s.cur[size:]
	}
	s.inUse += size
	s.mu.Unlock()
	copy(blk, value)
	return blk[:n:n], true
}

// free queues the block of a removed version's value until every
// transaction running now has ended (epoch: the next xid to be
// assigned).
func (s *valueSlab) free(value []byte, epoch uint64) {
	s.mu.Lock()
	// The Tuple's slice is clipped to the value; the block goes on to
	// its class's size, which copyIn cut it to.
	size := (len(value) + slabClass - 1) &^ (slabClass - 1)
	blk := unsafe.Slice(unsafe.SliceData(value), size)
	s.pending = append(s.pending, slabFreed{epoch: epoch, block: blk})
	s.mu.Unlock()
}

// reclaim makes reusable the queued blocks whose epoch oldest (the
// smallest running xid, or the next xid if none runs) has reached.
func (s *valueSlab) reclaim(oldest uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := 0
	for ; i < len(s.pending) && s.pending[i].epoch <= oldest; i++ {
		b := s.pending[i].block
		c := len(b)/slabClass - 1
		s.freeList[c] = append(s.freeList[c], b)
		s.inUse -= len(b)
	}
	n := copy(s.pending, s.pending[i:])
	clear(s.pending[n:])
	s.pending = s.pending[:n]
}

// stats returns the bytes mapped and the bytes in use (live values and
// blocks waiting for their epoch).
func (s *valueSlab) stats() (mapped, inUse int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mapped.pages) * slabPageSize, s.inUse
}

// release unmaps every page: the slab is unreachable, and so is every
// version whose value is in it.
func (m *slabPages) release() {
	for _, p := range m.pages {
		unmapPage(p)
	}
	m.pages = nil
}

// CopiesValue reports whether Table.Apply copies a new version's value
// of n bytes into the table's slab, so that the caller may hand Apply its
// own buffer, valid only until its call returns (package engine's Insert
// and Write then skip their own copy). Otherwise the version keeps the
// slice it is given, which must then never change.
func (t *Table) CopiesValue(n int) bool { return t.slab != nil && n > 0 && n <= slabMaxValue }

// SlabStats reports an in-memory table's value slab (valueSlab): the
// bytes of pages mapped outside the Go heap, and the bytes of those
// holding live values or waiting for their epoch. A persistent table has
// none.
func (t *Table) SlabStats() (mapped, inUse int) {
	if t.slab == nil {
		return 0, 0
	}
	return t.slab.stats()
}
