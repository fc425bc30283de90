package storage

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// The arena's own tests; the shared suite (storage_test.go) runs it as the
// "arena" backend too.

// TestArenaModel: random batches of sets, deletes and range deletes, with
// compaction forced often, against a map; after each batch Get, GetNoCopy,
// both scan directions and a cursor read in pieces agree with the model,
// and values handed out without a copy earlier still hold what they held.
func TestArenaModel(t *testing.T) {
	saved := arenaCompactMin
	arenaCompactMin = 256
	t.Cleanup(func() { arenaCompactMin = saved })
	rapid.Check(t, func(rt *rapid.T) {
		b := OpenArena()
		defer b.Close()
		a := b
		model := map[string]string{}
		type held struct{ v, want []byte }
		var kept []held
		keyGen := rapid.StringMatching(`[a-d]{1,3}|[a-d]{9,12}`)
		for range rapid.IntRange(1, 30).Draw(rt, "batches") {
			bt := b.NewBatch()
			for range rapid.IntRange(1, 8).Draw(rt, "ops") {
				switch rapid.IntRange(0, 5).Draw(rt, "op") {
				case 0, 1, 2:
					k := keyGen.Draw(rt, "k")
					v := rapid.StringN(0, 40, -1).Draw(rt, "v")
					bt.Set([]byte(k), []byte(v))
					model[k] = v
				case 3, 4:
					k := keyGen.Draw(rt, "k")
					bt.Delete([]byte(k))
					delete(model, k)
				case 5:
					lo, hi := keyGen.Draw(rt, "lo"), keyGen.Draw(rt, "hi")
					if lo > hi {
						lo, hi = hi, lo
					}
					bt.DeleteRange([]byte(lo), []byte(hi))
					for k := range model {
						if k >= lo && k < hi {
							delete(model, k)
						}
					}
				}
			}
			require.NoError(rt, b.Commit(bt, false))
			keys := make([]string, 0, len(model))
			for k := range model {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				v, ok, err := a.GetNoCopy([]byte(k))
				require.NoError(rt, err)
				require.True(rt, ok, k)
				require.Equal(rt, model[k], string(v))
				kept = append(kept, held{v, []byte(model[k])})
			}
			_, ok, _ := b.Get([]byte("zzz"))
			require.False(rt, ok)
			var got []string
			require.NoError(rt, b.Scan(nil, nil, func(k, v []byte) error {
				got = append(got, string(k))
				require.Equal(rt, model[string(k)], string(v))
				return nil
			}))
			require.Equal(rt, keys, nonNil(got))
			got = got[:0]
			require.NoError(rt, b.ReverseScan(nil, nil, func(k, v []byte) error {
				got = append(got, string(k))
				return nil
			}))
			rev := slices.Clone(keys)
			slices.Reverse(rev)
			require.Equal(rt, rev, nonNil(got))
			// A bounded cursor read two pairs at a time.
			lo, hi := keyGen.Draw(rt, "clo"), keyGen.Draw(rt, "chi")
			reverse := rapid.Bool().Draw(rt, "reverse")
			var want []string
			for _, k := range keys {
				if k >= lo && k < hi {
					want = append(want, k)
				}
			}
			if reverse {
				slices.Reverse(want)
			}
			c, err := b.NewCursor([]byte(lo), []byte(hi), reverse)
			require.NoError(rt, err)
			got = got[:0]
			for {
				n := 0
				done, err := c.Read(func(k, _ []byte) bool {
					if n == 2 {
						return false
					}
					n++
					got = append(got, string(k))
					return true
				})
				require.NoError(rt, err)
				if done {
					break
				}
			}
			require.NoError(rt, c.Close())
			require.Equal(rt, nonNil(want), nonNil(got))
		}
		for _, h := range kept {
			require.True(rt, bytes.Equal(h.v, h.want), "a value handed out without a copy changed")
		}
		a.mu.Lock()
		live := a.live
		a.mu.Unlock()
		var sum int64
		for k, v := range model {
			sum += recSize([]byte(k), []byte(v))
		}
		require.Equal(rt, sum, live, "live bytes")
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TestArenaCompactsUnderOverwrites: rewriting the same keys over and over
// keeps the arena's memory near its live data (compaction), and readers
// running beside the writer never see a key missing or a wrong value.
func TestArenaCompactsUnderOverwrites(t *testing.T) {
	saved := arenaCompactMin
	arenaCompactMin = 1 << 20
	t.Cleanup(func() { arenaCompactMin = saved })
	b := OpenArena()
	defer b.Close()
	a := b
	const keys = 1000
	val := func(k, round int) []byte { return fmt.Appendf(bytes.Repeat([]byte{'x'}, 200), "%d/%d", k, round) }
	write := func(round int) {
		bt := b.NewBatch()
		for k := range keys {
			bt.Set(fmt.Appendf(nil, "key%05d", k), val(k, round))
		}
		require.NoError(t, b.Commit(bt, false))
	}
	write(0)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := (i*7 + r) % keys
				v, ok, err := a.GetNoCopy(fmt.Appendf(nil, "key%05d", k))
				if err != nil || !ok || !bytes.HasPrefix(v, bytes.Repeat([]byte{'x'}, 200)) || !bytes.Contains(v, fmt.Appendf(nil, "%d/", k)) {
					errs <- fmt.Errorf("key %d: %q %v %v", k, v, ok, err)
					return
				}
			}
		}()
	}
	for round := 1; round <= 60; round++ {
		write(round)
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	s := b.Stats()
	live := int64(keys) * recSize([]byte("key00000"), val(999, 60))
	require.Less(t, s.MemoryInUse, 2*live+arenaCompactMin+live, "dead records were not reclaimed: %d bytes for %d live", s.MemoryInUse, live)
	n := 0
	require.NoError(t, b.Scan(nil, nil, func(k, v []byte) error {
		require.True(t, bytes.HasSuffix(v, fmt.Appendf(nil, "/60")), "%s=%s", k, v)
		n++
		return nil
	}))
	require.Equal(t, keys, n)
}

// TestArenaLargeRecords: a value larger than a page gets a page of its
// own, at and one past the quarter-page limit.
func TestArenaLargeRecords(t *testing.T) {
	b := OpenArena()
	defer b.Close()
	for _, n := range []int{arenaPageSize/4 - arenaRecHeader - 1, arenaPageSize/4 - arenaRecHeader, arenaPageSize/4 - arenaRecHeader + 1, 3 * arenaPageSize} {
		v := bytes.Repeat([]byte{byte(n)}, n)
		bt := b.NewBatch()
		bt.Set([]byte{'k'}, v)
		bt.Set([]byte{'l'}, []byte("small"))
		require.NoError(t, b.Commit(bt, false))
		got, ok, err := b.Get([]byte{'k'})
		require.NoError(t, err)
		require.True(t, ok)
		require.True(t, bytes.Equal(v, got), "value of %d bytes", n)
		got, _, _ = b.Get([]byte{'l'})
		require.Equal(t, "small", string(got))
	}
}
