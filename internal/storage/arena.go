package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/google/btree"
)

// KindArena names the in-memory backend (OpenArena). It is not a kind Open
// accepts: it keeps nothing on disk, so there is no location to reopen.
const KindArena = "arena"

// The arena backend: an in-memory Backend the garbage collector barely sees.
//
// An in-memory database keeps its rows in the heap's persistent-table
// machinery (heap/backed.go) over this backend, the way an on-disk one
// does over pebble: the rows in use are Go objects (heap.Row, heap.Tuple),
// and every other row — committed, frozen, with no lock — is one record
// here. A million resident rows were five million Go objects full of
// pointers, which every collection walked (a quarter of the CPU of a read
// workload) and which, at GOGC's doubling, cost ~700 bytes per row of RSS.
// Here they are bytes.
//
// # Layout
//
// Records are appended to pages, []byte of arenaPageSize (a record larger
// than a quarter page gets a page of its own), as
//
//	[key length uint32][value length uint32][key][value]
//
// and never change. A record is named by a ref: its page's index plus one
// (bits 24–62) and its offset in the page (bits 0–23), so 0 is no record.
// Two indexes name the records that hold the current value of each key:
//
//   - a hash table (arenaHash) for Get: open addressing over 16-byte slots
//     of (tag, ref), searched with no lock. The tag is the key's hash with
//     the key's length in its low byte; a slot is filled once with one key
//     and only its ref changes after that (a Set of the key stores the new
//     record's ref, a Delete sets the tombstone bit and keeps the ref so
//     the key can still be compared). A lookup is a probe of the slot's
//     line plus one load of the record: two dependent cache misses, no
//     pointer chasing through row objects.
//   - a B-tree of (key prefix, ref) items (google/btree, copy-on-write
//     clones) for ordered reads. Its items hold no pointers, so its nodes'
//     item arrays are memory the collector does not scan.
//
// # Concurrency and snapshots
//
// Writers (Commit, and NewCursor, Scan and ReverseScan, which clone the
// B-tree) take mu. Get takes nothing: it loads the current generation and
// its hash table, and sees each key's value before or after a concurrent
// Commit of it (a Commit is atomic for scans and for a crash, of which an
// arena has none to survive, not for a Get of two keys). A scan or cursor
// works on a clone of the B-tree taken under mu, so it sees one snapshot:
// the batches committed before it started, entirely. Records never change
// and pages are ordinary Go memory, so a value handed out without a copy
// (GetNoCopy, a scan's pairs) stays valid for as long as the holder keeps
// it: the collector keeps its page alive, which is what lets the heap hand
// a reader a value with no copy and no epoch.
//
// # Reclaiming
//
// A Set of an existing key or a Delete leaves the old record dead. When the
// dead bytes exceed both the live ones and arenaCompactMin (4 MiB), a Commit
// compacts: it copies the live records, in key order, into a new
// generation (pages, directory, hash table and B-tree) and publishes it;
// readers and cursors that hold the old generation finish on it, and the
// collector frees its pages when the last of them lets go. The commit that
// compacts holds mu for the copy (~100 ms per million rows here), once per
// rewrite of the whole live data.
// Arena is the in-memory backend; the comment above is its design.
type Arena struct {
	mu  sync.Mutex
	gen atomic.Pointer[arenaGen]

	// Writer state, under mu.
	live, dead int64 // bytes of live and dead records
	keys       int64

	g    *guard
	ctr  counters
	seed maphash.Seed
}

const (
	arenaPageSize = 1 << 20
	arenaOffBits  = 20 // a page is 1 MiB; a record of its own page is at 0
	arenaOffMask  = 1<<arenaOffBits - 1
	// A hash slot is one word: the key's tag (25 bits of its hash, never
	// 0) above a tombstone bit above the record's ref (38 bits: 18 of page
	// index plus one, 20 of offset). 0 is an empty slot.
	arenaRefMask   = 1<<38 - 1
	arenaTombstone = uint64(1) << 38
	arenaTagShift  = 39
	// arenaPivot marks a B-tree item that is a search bound (arenaPivots).
	arenaPivot     = uint64(1) << 63
	arenaMaxPages  = 1 << 17 // the directory's size: 128 GiB of 1 MiB pages
	arenaRecHeader = 8
	arenaMinSlots  = 1024
)

// arenaGen is one generation of the arena: its pages, the hash table over
// them and the B-tree. Compaction replaces the whole generation.
type arenaGen struct {
	owner   *Arena
	dir     []atomic.Pointer[[]byte] // page i+1's bytes at dir[i]; filled by the writer
	tab     atomic.Pointer[arenaHash]
	bt      *btree.BTreeG[arenaItem]
	piv     arenaPivots
	last    []byte // the page being filled (writer only)
	lastRef uint64 // its index plus one, shifted into a ref
	npg     int    // pages in dir
	used    int    // bytes used of last
}

// arenaItem is a B-tree item: the key's first 8 bytes, big-endian and
// zero-padded (most comparisons end there), and the record's ref. A
// search key that is not a record (a range's bound) is a pivot: its ref
// has arenaTombstone set and names a slot of arenaPivots.
type arenaItem struct {
	pre uint64
	ref uint64
}

// arenaPivots lends a search its bound's key for the B-tree's comparison
// function, which sees only items: 64 slots, taken by a CAS on a bitmap.
type arenaPivots struct {
	busy atomic.Uint64
	keys [64][]byte
}

func (p *arenaPivots) take(key []byte) uint64 {
	for {
		b := p.busy.Load()
		if b == ^uint64(0) {
			runtime.Gosched()
			continue
		}
		i := uint64(bits.TrailingZeros64(^b))
		if p.busy.CompareAndSwap(b, b|1<<i) {
			p.keys[i] = key
			return i
		}
	}
}

func (p *arenaPivots) give(i uint64) {
	p.keys[i] = nil
	for {
		b := p.busy.Load()
		if p.busy.CompareAndSwap(b, b&^(1<<i)) {
			return
		}
	}
}

// pivot is the B-tree item for key, valid until give(slot).
func (g *arenaGen) pivot(key []byte) (arenaItem, uint64) {
	i := g.piv.take(key)
	return arenaItem{pre: prefix8(key), ref: arenaPivot | i}, i
}

func prefix8(key []byte) uint64 {
	if len(key) >= 8 {
		return binary.BigEndian.Uint64(key)
	}
	var b [8]byte
	copy(b[:], key)
	return binary.BigEndian.Uint64(b[:])
}

func newArenaGen(a *Arena, slots int) *arenaGen {
	g := &arenaGen{owner: a, dir: make([]atomic.Pointer[[]byte], arenaMaxPages)}
	g.bt = btree.NewG(32, func(a, b arenaItem) bool {
		if a.pre != b.pre {
			return a.pre < b.pre
		}
		return bytes.Compare(g.itemKey(a), g.itemKey(b)) < 0
	})
	g.tab.Store(newArenaHash(slots))
	return g
}

func (g *arenaGen) itemKey(it arenaItem) []byte {
	if it.ref&arenaPivot != 0 {
		return g.piv.keys[it.ref&63]
	}
	k, _ := g.rec(it.ref)
	return k
}

// rec returns the key and value of the record ref names (no copies).
func (g *arenaGen) rec(ref uint64) (key, value []byte) {
	ref &= arenaRefMask
	p := *g.dir[ref>>arenaOffBits-1].Load()
	off := ref & arenaOffMask
	kl := uint64(binary.LittleEndian.Uint32(p[off:]))
	vl := uint64(binary.LittleEndian.Uint32(p[off+4:]))
	k := off + arenaRecHeader
	return p[k : k+kl : k+kl], p[k+kl : k+kl+vl : k+kl+vl]
}

// add appends a record and returns its ref. Writer only.
func (g *arenaGen) add(key, value []byte) (uint64, error) {
	n := arenaRecHeader + len(key) + len(value)
	if n > arenaPageSize/4 {
		if g.npg == arenaMaxPages {
			return 0, errArenaFull
		}
		p := make([]byte, n)
		g.put(p, key, value)
		g.dir[g.npg].Store(&p)
		g.npg++
		return uint64(g.npg) << arenaOffBits, nil
	}
	if g.last == nil || g.used+n > len(g.last) {
		if g.npg == arenaMaxPages {
			return 0, errArenaFull
		}
		p := make([]byte, arenaPageSize)
		g.last, g.used = p, 0
		g.dir[g.npg].Store(&p)
		g.npg++
		g.lastRef = uint64(g.npg) << arenaOffBits
	}
	off := g.used
	g.put(g.last[off:], key, value)
	g.used += (n + 7) &^ 7 // keep headers aligned
	return g.lastRef | uint64(off), nil
}

func (*arenaGen) put(p, key, value []byte) {
	binary.LittleEndian.PutUint32(p, uint32(len(key)))
	binary.LittleEndian.PutUint32(p[4:], uint32(len(value)))
	copy(p[arenaRecHeader:], key)
	copy(p[arenaRecHeader+len(key):], value)
}

// arenaCompactMin is the dead bytes below which no Commit compacts (a
// variable for tests).
var arenaCompactMin int64 = 4 << 20

var errArenaFull = errors.New("storage: arena: out of pages")

func recSize(key, value []byte) int64 { return int64(arenaRecHeader + len(key) + len(value)) }

// arenaHash is the Get index (see "Layout" above): one word per slot.
type arenaHash struct {
	mask       uint64
	slots      []atomic.Uint64
	used, live int // filled slots and live keys; writer only
}

func newArenaHash(n int) *arenaHash {
	n = max(arenaMinSlots, 1<<bits.Len(uint(n-1)))
	return &arenaHash{mask: uint64(n - 1), slots: make([]atomic.Uint64, n)}
}

// hash is key's hash; its high bits are the tag (slotTag).
func (a *Arena) hash(key []byte) uint64 { return maphash.Bytes(a.seed, key) }

// slotTag is the tag of hash h: its top 25 bits (0 is a tag like any
// other: a slot's ref is never 0, so neither is a filled slot).
func slotTag(h uint64) uint64 { return h >> arenaTagShift }

// arenaTagIndexed is the largest table whose first slot for a key is its
// tag's low bits: a rehash into a table up to this size moves slots by
// their tags without reading their keys.
const arenaTagIndexed = 1 << (64 - arenaTagShift)

// first is the first slot of hash h.
func (t *arenaHash) first(h uint64) uint64 {
	if len(t.slots) <= arenaTagIndexed {
		return slotTag(h) & t.mask
	}
	return h & t.mask
}

// find returns the index and word of key's slot (live or tombstoned), or
// -1 and 0.
func (g *arenaGen) find(t *arenaHash, h uint64, key []byte) (int, uint64) {
	tag := slotTag(h)
	for i := t.first(h); ; i = (i + 1) & t.mask {
		w := t.slots[i].Load()
		if w == 0 {
			return -1, 0
		}
		if w>>arenaTagShift == tag {
			if k, _ := g.rec(w); bytes.Equal(k, key) {
				return int(i), w
			}
		}
	}
}

// setRef makes key's slot hold ref, growing the table first if needed;
// it returns the ref the slot held (0 if none or a tombstone). Writer only.
func (g *arenaGen) setRef(h uint64, key []byte, ref uint64) uint64 {
	t := g.tab.Load()
	w := slotTag(h)<<arenaTagShift | ref
	if i, old := g.find(t, h, key); i >= 0 {
		t.slots[i].Store(w)
		if old&arenaTombstone != 0 {
			t.live++
			return 0
		}
		return old & arenaRefMask
	}
	if 4*(t.used+1) > 3*len(t.slots) {
		t = g.rehash(t, 2*(t.live+1))
	}
	t.insert(h, w)
	return 0
}

// insert puts word w of hash h into its first empty slot. Writer only.
func (t *arenaHash) insert(h, w uint64) {
	for i := t.first(h); ; i = (i + 1) & t.mask {
		if t.slots[i].Load() == 0 {
			t.slots[i].Store(w)
			t.used++
			t.live++
			return
		}
	}
}

// rehash publishes a table of about want slots (a power of two, at least
// 4/3 of the live keys) holding t's live slots, tombstones dropped.
// Writer only.
func (g *arenaGen) rehash(t *arenaHash, want int) *arenaHash {
	nt := newArenaHash(want)
	for i := range t.slots {
		w := t.slots[i].Load()
		if w == 0 || w&arenaTombstone != 0 {
			continue
		}
		if len(nt.slots) <= arenaTagIndexed {
			nt.insert(w>>arenaTagShift<<arenaTagShift, w) // the tag is all first needs
		} else {
			k, _ := g.rec(w)
			nt.insert(g.owner.hash(k), w)
		}
	}
	g.tab.Store(nt)
	return nt
}

// OpenArena returns an empty in-memory backend (see "The arena backend").
func OpenArena() *Arena {
	a := &Arena{g: newGuard(), seed: maphash.MakeSeed()}
	a.gen.Store(newArenaGen(a, arenaMinSlots))
	return a
}

func (a *Arena) Name() string { return KindArena }

// GetNoCopy is Get returning the stored bytes themselves, which never
// change and stay valid for as long as the caller holds them; the caller
// must not modify them.
func (a *Arena) GetNoCopy(key []byte) ([]byte, bool, error) {
	if err := validKey(key); err != nil {
		return nil, false, err
	}
	if err := a.g.enter(); err != nil {
		return nil, false, err
	}
	g := a.gen.Load()
	i, w := g.find(g.tab.Load(), a.hash(key), key)
	var v []byte
	ok := i >= 0 && w&arenaTombstone == 0
	if ok {
		_, v = g.rec(w)
	}
	a.g.exit()
	return v, ok, nil
}

func (a *Arena) Get(key []byte) ([]byte, bool, error) {
	v, ok, err := a.GetNoCopy(key)
	if !ok {
		return nil, ok, err
	}
	return bytes.Clone(v), true, nil
}

// snapshot returns the current generation and a clone of its B-tree.
func (a *Arena) snapshot() (*arenaGen, *btree.BTreeG[arenaItem]) {
	a.mu.Lock()
	g := a.gen.Load()
	bt := g.bt.Clone()
	a.mu.Unlock()
	return g, bt
}

func (a *Arena) Scan(start, end []byte, fn func(key, value []byte) error) error {
	return a.scan(start, end, false, fn)
}

func (a *Arena) ReverseScan(start, end []byte, fn func(key, value []byte) error) error {
	return a.scan(start, end, true, fn)
}

func (a *Arena) scan(start, end []byte, reverse bool, fn func(key, value []byte) error) error {
	if fn == nil {
		return errors.New("storage: scan with nil fn")
	}
	c, err := a.NewCursor(start, end, reverse)
	if err != nil {
		return err
	}
	defer c.Close()
	var ferr error
	_, err = c.Read(func(k, v []byte) bool {
		ferr = fn(k, v)
		return ferr == nil
	})
	if ferr != nil {
		return ferr
	}
	return err
}

// arenaCursor walks a snapshot (a B-tree clone) of one generation. It
// holds the backend's guard from NewCursor to Close, as a pebble iterator
// holds pebble open.
type arenaCursor struct {
	a          *Arena
	g          *arenaGen
	bt         *btree.BTreeG[arenaItem]
	start, end []byte
	reverse    bool
	at         arenaItem // the next item to pass, when started
	started    bool
	done       bool
	closed     bool
}

func (a *Arena) NewCursor(start, end []byte, reverse bool) (Cursor, error) {
	if err := a.g.enter(); err != nil {
		return nil, err
	}
	g, bt := a.snapshot()
	c := &arenaCursor{a: a, g: g, bt: bt, reverse: reverse}
	if len(start) > 0 {
		c.start = bytes.Clone(start)
	}
	if len(end) > 0 {
		c.end = bytes.Clone(end)
	}
	if c.start != nil && c.end != nil && bytes.Compare(c.start, c.end) >= 0 {
		c.done = true
	}
	return c, nil
}

func (c *arenaCursor) Read(fn func(key, value []byte) bool) (bool, error) {
	if c.closed {
		return true, ErrClosed
	}
	if c.done {
		return true, nil
	}
	g := c.g
	exhausted := true
	visit := func(it arenaItem) bool {
		k, v := g.rec(it.ref)
		if c.reverse {
			if c.start != nil && bytes.Compare(k, c.start) < 0 {
				return false
			}
		} else if c.end != nil && bytes.Compare(k, c.end) >= 0 {
			return false
		}
		if !fn(k, v) {
			c.at, c.started = it, true
			exhausted = false
			return false
		}
		return true
	}
	switch {
	case c.started:
		// Resume at the item fn refused last time (a real item of this
		// clone: no pivot needed).
		if c.reverse {
			c.bt.DescendLessOrEqual(c.at, visit)
		} else {
			c.bt.AscendGreaterOrEqual(c.at, visit)
		}
	case c.reverse && c.end != nil:
		piv, slot := g.pivot(c.end)
		first := true
		c.bt.DescendLessOrEqual(piv, func(it arenaItem) bool {
			if first {
				first = false
				if k, _ := g.rec(it.ref); bytes.Equal(k, c.end) {
					return true // end is exclusive
				}
			}
			return visit(it)
		})
		g.piv.give(slot)
	case c.reverse:
		c.bt.Descend(visit)
	case c.start != nil:
		piv, slot := g.pivot(c.start)
		c.bt.AscendGreaterOrEqual(piv, visit)
		g.piv.give(slot)
	default:
		c.bt.Ascend(visit)
	}
	if exhausted {
		c.done = true
	}
	return c.done, nil
}

func (c *arenaCursor) Close() error {
	if !c.closed {
		c.closed = true
		c.bt = nil
		c.a.g.exit()
	}
	return nil
}

func (a *Arena) NewBatch() Batch { return a.NewArenaBatch() }

// NewArenaBatch is NewBatch with the batch's own type, for SetOwned.
func (a *Arena) NewArenaBatch() *ArenaBatch { return &ArenaBatch{owner: a} }

func (a *Arena) Commit(b Batch, sync bool) error {
	if b == nil {
		return ErrNilBatch
	}
	x, ok := b.(*ArenaBatch)
	if !ok || x == nil || x.owner != a {
		return ErrForeignBatch
	}
	if err := a.g.enter(); err != nil {
		return err
	}
	defer a.g.exit()
	if x.err != nil {
		return x.err
	}
	if x.committed {
		return ErrBatchCommitted
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	g := a.gen.Load()
	for _, op := range x.ops {
		var err error
		switch op.kind {
		case opSet:
			err = a.set(g, op.key, op.value)
		case opDelete:
			a.del(g, op.key)
		case opDeleteRange:
			a.delRange(g, op.key, op.value)
		}
		if err != nil {
			return err // out of address space: what was applied stays
		}
	}
	x.committed = true
	a.ctr.committed(x.size, sync)
	if a.dead > arenaCompactMin && a.dead > a.live {
		a.compact()
	}
	return nil
}

func (a *Arena) set(g *arenaGen, key, value []byte) error {
	ref, err := g.add(key, value)
	if err != nil {
		return err
	}
	a.live += recSize(key, value)
	if old := g.setRef(a.hash(key), key, ref); old != 0 {
		ok, ov := g.rec(old)
		sz := recSize(ok, ov)
		a.live -= sz
		a.dead += sz
	} else {
		a.keys++
	}
	g.bt.ReplaceOrInsert(arenaItem{pre: prefix8(key), ref: ref})
	return nil
}

func (a *Arena) del(g *arenaGen, key []byte) {
	t := g.tab.Load()
	i, w := g.find(t, a.hash(key), key)
	if i < 0 || w&arenaTombstone != 0 {
		return
	}
	t.slots[i].Store(w | arenaTombstone)
	t.live--
	k, v := g.rec(w)
	sz := recSize(k, v)
	a.live -= sz
	a.dead += sz
	a.keys--
	g.bt.Delete(arenaItem{pre: prefix8(key), ref: w & arenaRefMask})
}

func (a *Arena) delRange(g *arenaGen, start, end []byte) {
	var keys [][]byte
	piv, slot := g.pivot(start)
	g.bt.AscendGreaterOrEqual(piv, func(it arenaItem) bool {
		k, _ := g.rec(it.ref)
		if bytes.Compare(k, end) >= 0 {
			return false
		}
		keys = append(keys, k)
		return true
	})
	g.piv.give(slot)
	for _, k := range keys {
		a.del(g, k)
	}
}

// compact copies the live records into a new generation (see
// "Reclaiming"). mu held.
func (a *Arena) compact() {
	old := a.gen.Load()
	ng := newArenaGen(a, int(a.keys)*2)
	var live int64
	old.bt.Ascend(func(it arenaItem) bool {
		k, v := old.rec(it.ref)
		ref, err := ng.add(k, v)
		if err != nil {
			live = -1
			return false
		}
		live += recSize(k, v)
		ng.setRef(a.hash(k), k, ref)
		ng.bt.ReplaceOrInsert(arenaItem{pre: it.pre, ref: ref})
		return true
	})
	if live < 0 {
		return // no room for a copy: keep the old generation
	}
	a.live, a.dead = live, 0
	a.gen.Store(ng)
}

func (a *Arena) Sync() error {
	if err := a.g.enter(); err != nil {
		return err
	}
	a.ctr.syncs.Add(1)
	a.g.exit()
	return nil
}

func (a *Arena) Close() error {
	if err := a.g.close(); err != nil {
		return err
	}
	a.mu.Lock()
	a.gen.Store(newArenaGen(a, arenaMinSlots))
	a.mu.Unlock()
	return nil
}

func (a *Arena) Stats() Stats {
	s := Stats{Backend: KindArena, BytesWritten: 0}
	a.ctr.fill(&s)
	a.mu.Lock()
	s.MemoryInUse = a.live + a.dead
	a.mu.Unlock()
	return s
}

// ArenaBatch records copies of its operations (SetOwned: the caller's
// bytes); Commit applies them in order under the backend's writer lock,
// copying each record into the arena's pages.
type ArenaBatch struct {
	owner *Arena
	opBatch
}

// SetOwned is Set without the batch's copy: key and value must not change
// until Commit has returned (an in-memory checkpoint passes the versions'
// own values, which never change).
func (x *ArenaBatch) SetOwned(key, value []byte) {
	if !x.usableState() || !x.validSet(key, value) {
		return
	}
	x.ops = append(x.ops, bboltOp{kind: opSet, key: key, value: value})
	x.size += len(key) + len(value)
}

// Grow makes room for n more operations.
func (x *ArenaBatch) Grow(n int) { x.ops = slices.Grow(x.ops, n) }
