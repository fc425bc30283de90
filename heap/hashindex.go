package heap

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"sync/atomic"
)

// hashIndex is an in-memory table's point-lookup index: an open-addressing
// hash table from key to *Row that readers search without any lock.
//
// # Why not a Go map
//
// Every row lock and every point read starts with this lookup. With a
// map[string]*Row under the store's RWMutex (the design before issue 28)
// the lookup was about a fifth of a 3-row FOR SHARE transaction's CPU on a
// million resident rows: the RWMutex's reader count is one cache line that
// every reader on every core writes, the map's control-group match and
// key compare (memeqbody) follow a pointer to the key's bytes, and the
// key's bytes are another cache miss. Here a lookup takes no lock and, for
// a key of at most 8 bytes, touches one slot — a single cache line — to
// decide the match, then loads the *Row it returns.
//
// # Layout
//
// A table is a power-of-two array of slots, probed linearly from the key's
// hash. A slot is 24 bytes:
//
//	tag    the key's 64-bit hash with its low byte replaced by the key's
//	       length (255: 255 bytes or more), never 0; 0 is an empty slot
//	prefix the key's first 8 bytes, little-endian, zero-padded
//	row    the *Row, or nil once the row was removed (a tombstone)
//
// For a key of at most 8 bytes, tag and prefix together are the key (the
// length is in the tag), so a match needs no look at the row's key; a
// longer key is compared with the row's key after tag and prefix match.
//
// # Concurrency
//
// Writers (insert, remove, growth) hold memStore.mu (a persistent
// table's rowIndex keeps one hashIndex per shard, its writers holding the
// shard's lock); readers hold nothing. What makes that safe:
//
//   - A slot is filled once: prefix and row are written, then tag is
//     stored (atomically) last; a reader loads tag first, so a non-zero tag
//     it sees comes with that slot's prefix and row. After that only row
//     changes, and only to nil (remove). A slot is never emptied and never
//     refilled with another key while the table is in use, so a reader that
//     matched tag and prefix can trust them; tombstones are dropped only
//     when the table is rebuilt.
//   - A key is inserted into the first empty slot of its probe sequence,
//     and a reader stops only at an empty slot, so a key present before a
//     lookup began (and not removed meanwhile) is always found. A reader
//     that meets a tombstone of its key goes on probing: the key may have
//     been inserted again further on.
//   - Growth (or a rebuild that drops tombstones) builds a new table off to
//     the side and publishes it with one atomic store. Readers that loaded
//     the old table finish on it, and it is never changed again: a row
//     removed after the swap may still be returned from it, as it may be
//     by any lookup that races with its removal, which is why callers pin
//     the row and check Row.Removed (pinned), as they always did. Nothing
//     a reader does waits for a writer.
//   - The table is never more than 3/4 full (live rows plus tombstones),
//     so every probe sequence reaches an empty slot.
//
// What this does not do yet (heap/doc.go, "Plan", items 2 and 3): the
// slots still hold *Row pointers, which the garbage collector scans, and
// the row's versions and value are separate heap objects. A plain read's
// next load is the Row's summary of its newest version (current.go).
type hashIndex struct {
	tab atomic.Pointer[hashTable]
	// used counts filled slots (live and tombstones) and live the live
	// ones, in the current table. Guarded by memStore.mu.
	used, live int
}

type hashTable struct {
	mask  uint64
	slots []hashSlot
}

type hashSlot struct {
	tag    atomic.Uint64
	prefix uint64
	row    atomic.Pointer[Row]
}

var hashIndexSeed = maphash.MakeSeed()

const hashIndexMinSlots = 16

func newHashIndex() *hashIndex {
	x := &hashIndex{}
	x.tab.Store(newHashTable(hashIndexMinSlots))
	return x
}

func newHashTable(n int) *hashTable {
	return &hashTable{mask: uint64(n - 1), slots: make([]hashSlot, n)}
}

// keyTag is key's tag (see hashIndex) and prefix.
func keyTag(key []byte) (tag, prefix uint64) {
	h := maphash.Bytes(hashIndexSeed, key)
	n := min(len(key), 255)
	tag = h&^0xff | uint64(n)
	if tag == 0 {
		tag = 1 << 8 // the empty key with a hash of 0 in its high bits
	}
	if len(key) >= 8 {
		prefix = binary.LittleEndian.Uint64(key)
	} else {
		var b [8]byte
		copy(b[:], key)
		prefix = binary.LittleEndian.Uint64(b[:])
	}
	return tag, prefix
}

// get returns key's row, or nil. It takes no lock.
func (x *hashIndex) get(key []byte) *Row {
	tag, prefix := keyTag(key)
	return x.getTagged(key, tag, prefix)
}

// getTagged is get with key's keyTag computed.
func (x *hashIndex) getTagged(key []byte, tag, prefix uint64) *Row {
	t := x.tab.Load()
	for i := tag >> 8 & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		st := s.tag.Load()
		if st == 0 {
			return nil
		}
		if st != tag || s.prefix != prefix {
			continue
		}
		r := s.row.Load()
		if r != nil && (len(key) <= 8 || bytes.Equal(r.key, key)) {
			return r
		}
	}
}

// touch loads the first slot of each key's probe sequence, so that the
// cache misses of a batch of lookups (a bulk load's new keys: every one a
// miss in a table of millions) overlap here, independent loads the CPU
// runs side by side, instead of coming one per row, each waited for. It
// takes no lock, as get takes none, and changes nothing.
func (x *hashIndex) touch(keys [][]byte) {
	t := x.tab.Load()
	var sink uint64
	for _, k := range keys {
		tag, _ := keyTag(k)
		sink += t.slots[tag>>8&t.mask].tag.Load()
	}
	touchSink.Store(sink)
}

// touchSink keeps touch's loads from being optimized away.
var touchSink atomic.Uint64

// insert adds r, whose key has no live row in the index. memStore.mu held.
func (x *hashIndex) insert(r *Row) {
	tag, prefix := keyTag(r.key)
	x.insertTagged(r, tag, prefix)
}

// insertTagged is insert with r.key's keyTag computed.
func (x *hashIndex) insertTagged(r *Row, tag, prefix uint64) {
	t := x.tab.Load()
	if (x.used+1)*4 > len(t.slots)*3 {
		t = x.rebuild(t)
	}
	t.put(tag, prefix, r)
	x.used++
	x.live++
}

// put fills the first empty slot of tag's probe sequence (see hashIndex:
// tag last).
func (t *hashTable) put(tag, prefix uint64, r *Row) {
	for i := tag >> 8 & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.tag.Load() == 0 {
			s.prefix = prefix
			s.row.Store(r)
			s.tag.Store(tag)
			return
		}
	}
}

// rebuild publishes a new table holding old's live rows, sized so that
// they fill at most half of it, and returns it. memStore.mu held.
func (x *hashIndex) rebuild(old *hashTable) *hashTable {
	n := max(hashIndexMinSlots, 1<<bits.Len(uint((x.live+1)*2-1)))
	t := newHashTable(n)
	for i := range old.slots {
		s := &old.slots[i]
		if r := s.row.Load(); r != nil {
			t.put(s.tag.Load(), s.prefix, r)
		}
	}
	x.tab.Store(t)
	x.used = x.live
	return t
}

// remove removes r if it is its key's row, and reports whether it was.
// memStore.mu held.
func (x *hashIndex) remove(r *Row) bool {
	tag, prefix := keyTag(r.key)
	t := x.tab.Load()
	for i := tag >> 8 & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		st := s.tag.Load()
		if st == 0 {
			return false
		}
		if st == tag && s.prefix == prefix && s.row.Load() == r {
			s.row.Store(nil)
			x.live--
			if x.live*16 < len(t.slots) && len(t.slots) > 4*hashIndexMinSlots {
				// Mostly tombstones (eviction emptied a table a load
				// had grown): give the memory back.
				x.rebuild(t)
			}
			return true
		}
	}
}

// len is the number of live rows. memStore.mu held.
func (x *hashIndex) len() int { return x.live }

// each calls fn for the live rows, in slot order (as good as random),
// until fn returns false. The writers' lock held (it reads one table).
func (x *hashIndex) each(fn func(*Row) bool) bool {
	t := x.tab.Load()
	for i := range t.slots {
		if r := t.slots[i].row.Load(); r != nil && !fn(r) {
			return false
		}
	}
	return true
}
