package tupled_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tupled/tupled"
	"pgregory.net/rapid"
)

// An in-memory database's settled rows live in its tables' arenas (package
// engine, memstore.go) and come back into memory when a lock or a write
// needs them. These tests hold that machinery against a model: every
// committed state is what a map says, whatever moved where in between, and
// a value read without a copy keeps its bytes until its transaction ends
// while checkpoints (DB.Checkpoint: rows into the arenas, out of memory),
// vacuum and the arenas' compaction run beside it.

// TestArenaRowsModel: random transactions of inserts, updates, deletes,
// locks, reads and scans on an in-memory database, with checkpoints and
// vacuum passes between them, against a map; a reader goroutine checks
// meanwhile that every value it reads without a copy is one written for
// its key and does not change before its transaction ends.
func TestArenaRowsModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		db, err := tupled.Open("", &tupled.Options{VacuumInterval: -1, MemoryArena: true})
		require.NoError(rt, err)
		defer db.Close()
		require.NoError(rt, db.CreateTable(bg, "t"))
		const keys = 24
		k := func(i int) []byte { // key 0 is the empty key
			if i == 0 {
				return []byte{}
			}
			return fmt.Appendf(nil, "key%02d", i)
		}
		model := map[int]string{}
		var written sync.Map // key index -> *sync.Map of values ever written
		note := func(i int, v string) {
			m, _ := written.LoadOrStore(i, &sync.Map{})
			m.(*sync.Map).Store(v, true)
		}
		seq := 0

		stop := make(chan struct{})
		var readerErr atomic.Pointer[error]
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // the zero-copy reader
			defer wg.Done()
			fail := func(err error) { readerErr.CompareAndSwap(nil, &err) }
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				tx, err := db.Begin(bg, &tupled.TxOptions{ReadOnly: true})
				if err != nil {
					fail(err)
					return
				}
				type held struct {
					i    int
					v    []byte
					want string
				}
				var hs []held
				for j := range 4 {
					i := (n*5 + j*7) % keys
					v, err := tx.GetNoCopy(bg, "t", k(i))
					if errors.Is(err, tupled.ErrNotFound) {
						continue
					}
					if err != nil {
						fail(err)
						return
					}
					m, ok := written.Load(i)
					if !ok {
						fail(fmt.Errorf("key %d: read %q, never written", i, v))
						return
					}
					if _, ok := m.(*sync.Map).Load(string(v)); !ok {
						fail(fmt.Errorf("key %d: read %q, never written for it", i, v))
						return
					}
					hs = append(hs, held{i, v, string(v)})
				}
				_ = db.Checkpoint() // move rows under the held values
				for _, h := range hs {
					if string(h.v) != h.want {
						fail(fmt.Errorf("key %d: a value read without a copy changed from %q to %q inside its transaction", h.i, h.want, h.v))
					}
				}
				if err := tx.Commit(); err != nil {
					fail(err)
					return
				}
			}
		}()
		var once sync.Once
		stopReader := func() {
			once.Do(func() {
				close(stop)
				wg.Wait()
			})
			if p := readerErr.Load(); p != nil {
				rt.Fatal(*p)
			}
		}
		defer stopReader()

		for range rapid.IntRange(1, 40).Draw(rt, "txs") {
			switch rapid.IntRange(0, 9).Draw(rt, "step") {
			case 0:
				require.NoError(rt, db.Checkpoint())
				continue
			case 1:
				db.Vacuum()
				continue
			}
			tx, err := db.Begin(bg, nil)
			require.NoError(rt, err)
			next := maps(model)
			for range rapid.IntRange(1, 6).Draw(rt, "ops") {
				i := rapid.IntRange(0, keys-1).Draw(rt, "key")
				switch rapid.IntRange(0, 5).Draw(rt, "op") {
				case 0: // insert
					seq++
					v := fmt.Sprintf("v%d-%d", i, seq)
					note(i, v)
					err := tx.Insert(bg, "t", k(i), []byte(v))
					if _, ok := next[i]; ok {
						require.ErrorIs(rt, err, tupled.ErrDuplicateKey)
						require.NoError(rt, tx.Rollback())
						goto nextTx
					}
					require.NoError(rt, err)
					next[i] = v
				case 1: // update
					seq++
					v := fmt.Sprintf("u%d-%d", i, seq)
					note(i, v)
					err := tx.Update(bg, "t", k(i), []byte(v))
					if _, ok := next[i]; !ok {
						require.ErrorIs(rt, err, tupled.ErrNotFound)
						continue
					}
					require.NoError(rt, err)
					next[i] = v
				case 2: // delete
					err := tx.Delete(bg, "t", k(i))
					if _, ok := next[i]; !ok {
						require.ErrorIs(rt, err, tupled.ErrNotFound)
						continue
					}
					require.NoError(rt, err)
					delete(next, i)
				case 3: // lock
					strength := rapid.SampledFrom([]tupled.LockStrength{tupled.ForKeyShare, tupled.ForShare, tupled.ForNoKeyUpdate, tupled.ForUpdate}).Draw(rt, "strength")
					v, err := tx.Lock(bg, "t", k(i), strength, tupled.Wait)
					if want, ok := next[i]; ok {
						require.NoError(rt, err)
						require.Equal(rt, want, string(v))
					} else {
						require.ErrorIs(rt, err, tupled.ErrNotFound)
					}
				case 4: // read
					v, err := tx.Get(bg, "t", k(i))
					if want, ok := next[i]; ok {
						require.NoError(rt, err)
						require.Equal(rt, want, string(v))
					} else {
						require.ErrorIs(rt, err, tupled.ErrNotFound)
					}
				case 5: // scan
					got := []int{}
					require.NoError(rt, tx.Scan(bg, "t", tupled.ScanOptions{}, func(key, v []byte) error {
						j := 0
						if len(key) > 0 {
							fmt.Sscanf(string(key), "key%02d", &j)
						}
						require.Equal(rt, next[j], string(v), "key %d", j)
						got = append(got, j)
						return nil
					}))
					want := sortedKeys(next)
					require.Equal(rt, want, got)
				}
			}
			if rapid.Bool().Draw(rt, "commit") {
				require.NoError(rt, tx.Commit())
				model = next
			} else {
				require.NoError(rt, tx.Rollback())
			}
		nextTx:
		}
		stopReader() // its snapshots would hold vacuum back
		require.NoError(rt, db.Checkpoint())
		db.Vacuum()
		require.NoError(rt, db.Checkpoint())
		require.NoError(rt, db.RunTx(bg, &tupled.TxOptions{ReadOnly: true}, func(tx *tupled.Tx) error {
			for i := range keys {
				v, err := tx.GetNoCopy(bg, "t", k(i))
				if want, ok := model[i]; ok {
					require.NoError(rt, err)
					require.True(rt, bytes.Equal([]byte(want), v), "key %d: %q, want %q", i, v, want)
				} else {
					require.ErrorIs(rt, err, tupled.ErrNotFound)
				}
			}
			return nil
		}))
		require.Equal(rt, uint64(len(model)), db.Stats().TuplesLive, "one version per row, in memory or in the arena")
	})
}

func maps(m map[int]string) map[int]string {
	out := make(map[int]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedKeys(m map[int]string) []int {
	out := []int{}
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
