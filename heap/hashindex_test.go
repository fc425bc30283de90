package heap

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"
)

// hashKeys are the keys the hash index tests draw from: short keys that
// differ only in length or a trailing zero byte (the tag's length and the
// zero-padded prefix must tell them apart), the empty key, and long keys
// that share their first 8 bytes (the full compare must).
var hashKeys = func() [][]byte {
	ks := [][]byte{{}, {0}, {0, 0}, []byte("a"), []byte("a\x00"), []byte("ab"),
		[]byte("12345678"), []byte("12345678x"), []byte("12345678y"), []byte("123456789012345678")}
	for i := range 40 {
		ks = append(ks, fmt.Appendf(nil, "k%d", i), fmt.Appendf(nil, "long-shared-prefix-%03d", i))
	}
	return ks
}()

// stableKey is in every store the tests build and never removed: a
// concurrent reader must always find it, through every rebuild.
var stableKey = []byte("stable")

// TestMemStoreModel drives a memStore with random inserts, removals and
// lookups against a map, while reader goroutines look keys up without
// locks (run it under -race): a reader must never see a row under another
// key, and must always find the key that is never removed, whatever
// rebuild is going on.
func TestMemStoreModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := newMemStore()
		stable := s.GetOrCreate(stableKey)
		model := map[string]*Row{string(stableKey): stable}

		var stop atomic.Bool
		var wg sync.WaitGroup
		var bad atomic.Value
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; !stop.Load(); i++ {
					k := hashKeys[i%len(hashKeys)]
					if r := s.Get(k); r != nil && !bytes.Equal(r.key, k) {
						bad.Store(fmt.Sprintf("Get(%q) returned the row of %q", k, r.key))
					}
					if s.Get(stableKey) != stable {
						bad.Store("the stable key's row was not found")
					}
				}
			}()
		}
		defer func() { stop.Store(true); wg.Wait() }()

		keyGen := rapid.SampledFrom(hashKeys)
		rt.Repeat(map[string]func(*rapid.T){
			"insert": func(rt *rapid.T) {
				k := keyGen.Draw(rt, "key")
				r := s.GetOrCreate(k)
				if want, ok := model[string(k)]; ok && r != want {
					rt.Fatalf("GetOrCreate(%q) made a second row", k)
				}
				if !bytes.Equal(r.key, k) {
					rt.Fatalf("GetOrCreate(%q) returned the row of %q", k, r.key)
				}
				model[string(k)] = r
			},
			"remove": func(rt *rapid.T) {
				k := keyGen.Draw(rt, "key")
				r, ok := model[string(k)]
				if !ok {
					// Removing a row that is not the key's is a no-op.
					other := &Row{key: bytes.Clone(k)}
					s.Remove(other)
					return
				}
				s.Remove(r)
				delete(model, string(k))
				s.Remove(r) // twice: the second finds nothing
			},
			"churn": func(rt *rapid.T) {
				// Insert and remove one key many times: tombstones fill
				// the table and force rebuilds that drop them.
				k := keyGen.Draw(rt, "key")
				if _, ok := model[string(k)]; ok {
					return
				}
				for range rapid.IntRange(1, 100).Draw(rt, "times") {
					s.Remove(s.GetOrCreate(k))
				}
			},
			"get": func(rt *rapid.T) {
				k := keyGen.Draw(rt, "key")
				if got, want := s.Get(k), model[string(k)]; got != want {
					rt.Fatalf("Get(%q) = %p, want %p", k, got, want)
				}
			},
			"": func(rt *rapid.T) {
				if v := bad.Load(); v != nil {
					rt.Fatal(v)
				}
				if s.Len() != len(model) || s.idx.len() != len(model) {
					rt.Fatalf("Len %d, index %d, want %d", s.Len(), s.idx.len(), len(model))
				}
				var keys []string
				s.Ascend(nil, nil, func(r *Row) bool { keys = append(keys, string(r.key)); return true })
				want := make([]string, 0, len(model))
				for k := range model {
					want = append(want, k)
				}
				slices.Sort(want)
				if !slices.Equal(keys, want) {
					rt.Fatalf("B-tree holds %q, want %q", keys, want)
				}
			},
		})
	})
}

// TestHashIndexGrowth fills an index far past its first table while a
// reader looks up rows inserted before it started: none may go missing
// while the table is rebuilt under it. The reader also prefetches (a
// bulk load's hint, which reads slots without a lock) present and absent
// keys: under -race, that the hint's reads are safe against the growth.
func TestHashIndexGrowth(t *testing.T) {
	s := newMemStore()
	const early, total = 100, 20000
	rows := make([]*Row, early)
	for i := range rows {
		rows[i] = s.GetOrCreate(fmt.Appendf(nil, "%d", i))
	}
	done := make(chan struct{})
	var missing atomic.Int64
	go func() {
		defer close(done)
		for i := 0; s.Len() < total; i++ {
			j := i % early
			s.Prefetch([][]byte{rows[j].key, fmt.Appendf(nil, "%d", early+i)})
			if s.Get(rows[j].key) != rows[j] {
				missing.Add(1)
			}
		}
	}()
	for i := early; i < total; i++ {
		s.GetOrCreate(fmt.Appendf(nil, "%d", i))
	}
	<-done
	if n := missing.Load(); n != 0 {
		t.Fatalf("%d lookups of present rows found nothing during growth", n)
	}
	for i := range total {
		k := fmt.Appendf(nil, "%d", i)
		if r := s.Get(k); r == nil || !bytes.Equal(r.key, k) {
			t.Fatalf("row %q lost", k)
		}
	}
	if n := len(s.idx.tab.Load().slots); n*3 < total*4 {
		t.Fatalf("%d slots for %d rows: over 3/4 full", n, total)
	}
}

// TestHashIndexCollisions fakes what maphash makes too rare to meet: for
// every pair of keys, a slot holding the second key's row under the first
// key's hash, ahead of the first key's own slot. A lookup of the first
// key must pass over it and find its own row; the fake must never be
// returned for it.
func TestHashIndexCollisions(t *testing.T) {
	for _, a := range hashKeys {
		for _, b := range hashKeys {
			if bytes.Equal(a, b) {
				continue
			}
			x := newHashIndex()
			tab := x.tab.Load()
			tagA, _ := keyTag(a)
			tagB, prefixB := keyTag(b)
			// b's row as if b hashed like a: a's hash bits with b's
			// length byte, b's prefix.
			tab.put(tagA&^0xff|tagB&0xff, prefixB, &Row{key: bytes.Clone(b)})
			own := &Row{key: bytes.Clone(a)}
			x.used++
			x.insert(own)
			if got := x.get(a); got != own {
				t.Fatalf("get(%q) with %q colliding = %v, want its own row", a, b, got)
			}
		}
	}
}
