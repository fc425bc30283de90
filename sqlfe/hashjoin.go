package sqlfe

import "github.com/tupled/tupled/sql/types"

// joinHash is the table of a hash join (nestedLoop with equality keys):
// the inner rows' indexes by join key, kept as chains — the first row of
// each key in a map, the next row of the same key in next — so that the
// build allocates nothing per row and a key's rows come out in the inner
// input's order. A key of one integer (or boolean) value, the common join
// on an id, is its own map key; any other key is its appendHashKey
// encoding. Which of the two a value takes depends on the value alone, on
// either side, so two keys meet exactly when appendHashKey's encodings
// would be equal.
type joinHash struct {
	ints map[int64]int32
	strs map[string]int32
	next []int32 // inner row → the next inner row of its key, or -1
	kb   []byte
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
	for i := n - 1; i >= 0; i-- {
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
			if h.ints == nil {
				h.ints = make(map[int64]int32, n)
			}
			if first, found := h.ints[k]; found {
				h.next[i] = first
			}
			h.ints[k] = int32(i)
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
	return nil
}

// first is the first inner row whose key equals xs's on e, or -1; the
// rest of them follow in h.next.
func (h *joinHash) first(xs []expr, e *env) (int32, error) {
	k, isInteger, ok, err := h.key(xs, e)
	if err != nil || !ok {
		return -1, err
	}
	if isInteger {
		if i, found := h.ints[k]; found {
			return i, nil
		}
		return -1, nil
	}
	if i, found := h.strs[string(h.kb)]; found {
		return i, nil
	}
	return -1, nil
}
