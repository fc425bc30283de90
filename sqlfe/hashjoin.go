package sqlfe

import (
	"sync"

	"github.com/tupled/tupled/sql/types"
)

// joinHash is the table of a hash join (nestedLoop with equality keys):
// the inner rows' indexes by join key, kept as chains — the first row of
// each key in a table, the next row of the same key in next — so that the
// build allocates nothing per row and a key's rows come out in the inner
// input's order. A key of one integer (or boolean) value, the common join
// on an id, is its own key in ints, an open-addressing table of its own
// (intTable); any other key is its appendHashKey encoding, in strs. Which
// of the two a value takes depends on the value alone, on either side, so
// two keys meet exactly when appendHashKey's encodings would be equal.
type joinHash struct {
	ints intTable
	strs map[string]int32
	next []int32 // inner row → the next inner row of its key, or -1
	kb   []byte
	sink int64 // what probeBatched's touches read (query_exec.go)
}

// intTable maps integer keys to the first inner row of each, by linear
// probing in a power-of-two array of slots at most four-fifths full. A slot
// holds its key, its first row and whether more rows follow in
// joinHash.next, so that a probe of a unique key — a join on a primary
// key — reads one slot and nothing else. It holds no pointers: the
// collector does not scan it.
type intTable struct {
	slots []intSlot
	shift uint // 64 - log2(len(slots))
}

type intSlot struct {
	k    int64
	row  int32 // the key's first row + 1; 0: an empty slot
	more bool  // the key has further rows (joinHash.next)
}

// init sizes the table for up to n keys, at most four-fifths full: a
// smaller table is fewer cache misses, and a probe of a key that is there
// still reads about one cache line (four slots).
func (t *intTable) init(n int) {
	size, bits := 8, uint(3)
	for size < n+n/4 {
		size, bits = size*2, bits+1
	}
	t.shift = 64 - bits
	if p, _ := slotPool.Get().(*[]intSlot); p != nil && cap(*p) >= size {
		t.slots = (*p)[:size]
		return
	}
	t.slots = make([]intSlot, size)
}

// release hands the slots back to slotPool, cleared: the join is over.
func (t *intTable) release() {
	if t.slots != nil {
		clear(t.slots)
		slotPool.Put(&t.slots)
		t.slots = nil
	}
}

// slotPool recycles intTables' slots between joins (2 MiB for 100k keys),
// as chunkPool does inner rows.
var slotPool sync.Pool // of *[]intSlot, cleared

// home is the slot where k's probe begins (Fibonacci hashing).
func (t *intTable) home(k int64) uint64 { return (uint64(k) * 0x9E3779B97F4A7C15) >> t.shift }

// slot is k's slot, or the empty slot where k would go.
func (t *intTable) slot(k int64) *intSlot {
	mask := uint64(len(t.slots) - 1)
	for h := t.home(k); ; h = (h + 1) & mask {
		s := &t.slots[h]
		if s.row == 0 || s.k == k {
			return s
		}
	}
}

// key evaluates xs on e into h.kb or the integer it returns; ok is false
// when a value is NULL (which equals nothing).
func (h *joinHash) key(xs []expr, e *env) (i int64, isInteger, ok bool, err error) {
	if len(xs) == 1 {
		v, err := xs[0].eval(e)
		if err != nil || v.Null {
			return 0, false, false, err
		}
		if types.IsInt(v.T) || v.T == types.TBool {
			return v.I, true, true, nil
		}
		h.kb = appendHashKey(h.kb[:0], v)
		return 0, false, true, nil
	}
	h.kb, ok, err = hashKeys(h.kb[:0], xs, e)
	return 0, false, ok, err
}

// build adds the n inner rows, setting e's row to each with set, keyed by
// xs. It walks them backwards, so that each chain, built by putting a
// row in front, lists its rows in inner order.
func (h *joinHash) build(n int, xs []expr, e *env, set func(i int)) error {
	h.next = make([]int32, n)
	// probeBatch rows at a time: their integer keys are evaluated, their
	// slots touched in a loop of their own (the cache misses overlap, as
	// in probeBatched), then the keys go in, in the same order.
	var ints [probeBatch]int64
	var rows [probeBatch]int32
	for hi := n; hi > 0; hi -= probeBatch {
		nb := 0
		for i := hi - 1; i >= max(hi-probeBatch, 0); i-- {
			set(i)
			k, isInteger, ok, err := h.key(xs, e)
			if err != nil {
				return err
			}
			h.next[i] = -1
			if !ok {
				continue
			}
			if isInteger {
				ints[nb], rows[nb] = k, int32(i)
				nb++
				continue
			}
			if h.strs == nil {
				h.strs = make(map[string]int32)
			}
			if first, found := h.strs[string(h.kb)]; found {
				h.next[i] = first
			}
			h.strs[string(h.kb)] = int32(i)
		}
		if nb == 0 {
			continue
		}
		if h.ints.slots == nil {
			h.ints.init(n)
		}
		var sink int32
		for b := range nb {
			sink += h.ints.slots[h.ints.home(ints[b])].row
		}
		h.sink += int64(sink)
		for b := range nb {
			s := h.ints.slot(ints[b])
			if s.row != 0 {
				h.next[rows[b]], s.more = s.row-1, true
			}
			s.k, s.row = ints[b], rows[b]+1
		}
	}
	return nil
}

// first is the first inner row whose key equals xs's on e, or -1; more
// reports whether the rest of them follow in h.next (false: it is the
// only one).
func (h *joinHash) first(xs []expr, e *env) (i int32, more bool, err error) {
	k, isInteger, ok, err := h.key(xs, e)
	if err != nil || !ok {
		return -1, false, err
	}
	if isInteger {
		if h.ints.slots == nil {
			return -1, false, nil
		}
		s := h.ints.slot(k)
		return s.row - 1, s.more, nil
	}
	if i, found := h.strs[string(h.kb)]; found {
		return i, true, nil
	}
	return -1, false, nil
}
