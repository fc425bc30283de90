package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

// The shared suite: every test in this file runs against each entry of
// backendCases, through the Backend interface only.

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// backendCase makes, per test, an opener bound to one fresh location; each
// call of the opener opens (or reopens) the store at that location.
type backendCase struct {
	name   string
	kind   string
	newLoc func(t *testing.T) func() (Backend, error)
	// memOnly marks the pebble-on-vfs.MemFS variant: fast, so it runs the
	// whole suite; the heavy tests (forEachDiskBackend) skip it as it adds
	// nothing there.
	memOnly bool
	// volatile marks the arena: nothing survives a reopen (the opener
	// returns a fresh one), so the persistence tests skip it.
	volatile bool
}

var backendCases = []backendCase{
	{name: "pebble", kind: KindPebble, newLoc: func(t *testing.T) func() (Backend, error) {
		dir := t.TempDir()
		return func() (Backend, error) {
			return Open(KindPebble, dir, Options{CacheSize: 8 << 20, Logger: quietLogger()})
		}
	}},
	{name: "pebble-memfs", kind: KindPebble, memOnly: true, newLoc: func(t *testing.T) func() (Backend, error) {
		fs := vfs.NewMem()
		return func() (Backend, error) {
			return OpenPebble("/db", Options{FS: fs, CacheSize: 8 << 20, Logger: quietLogger()})
		}
	}},
	{name: "bbolt", kind: KindBbolt, newLoc: func(t *testing.T) func() (Backend, error) {
		dir := t.TempDir()
		return func() (Backend, error) {
			return Open(KindBbolt, dir, Options{Logger: quietLogger()})
		}
	}},
	{name: "arena", kind: KindArena, memOnly: true, volatile: true, newLoc: func(t *testing.T) func() (Backend, error) {
		return func() (Backend, error) { return OpenArena(), nil }
	}},
}

// forEachBackend runs fn as a subtest per backend with a fresh location;
// open reopens the same location. A backend left open by fn is closed.
func forEachBackend(t *testing.T, fn func(t *testing.T, bc backendCase, e *env)) {
	forBackends(t, false, fn)
}

// forEachDiskBackend runs fn for the backends on the OS filesystem only.
func forEachDiskBackend(t *testing.T, fn func(t *testing.T, bc backendCase, e *env)) {
	forBackends(t, true, fn)
}

func forBackends(t *testing.T, diskOnly bool, fn func(t *testing.T, bc backendCase, e *env)) {
	for _, bc := range backendCases {
		if diskOnly && bc.memOnly {
			continue
		}
		t.Run(bc.name, func(t *testing.T) {
			e := &env{t: t, opener: bc.newLoc(t)}
			t.Cleanup(func() {
				for _, b := range e.opened {
					_ = b.Close()
				}
			})
			fn(t, bc, e)
		})
	}
}

// env is one test's location of one backend.
type env struct {
	t      *testing.T
	opener func() (Backend, error)
	opened []Backend
}

// open opens the location, failing the test on error.
func (e *env) open() Backend {
	e.t.Helper()
	b, err := e.try()
	require.NoError(e.t, err)
	return b
}

// try opens the location.
func (e *env) try() (Backend, error) {
	b, err := e.opener()
	if err == nil {
		e.opened = append(e.opened, b)
	}
	return b, err
}

func commit(t *testing.T, b Backend, sync bool, fill func(Batch)) {
	t.Helper()
	bt := b.NewBatch()
	fill(bt)
	require.NoError(t, b.Commit(bt, sync))
}

func get(t *testing.T, b Backend, key string) (string, bool) {
	t.Helper()
	v, ok, err := b.Get([]byte(key))
	require.NoError(t, err)
	return string(v), ok
}

// scanAll returns the keys and values in [start, end).
func scanAll(t *testing.T, b Backend, start, end []byte) (keys, values []string) {
	t.Helper()
	require.NoError(t, b.Scan(start, end, func(k, v []byte) error {
		keys = append(keys, string(k))
		values = append(values, string(v))
		return nil
	}))
	return keys, values
}

func count(t *testing.T, b Backend, start, end []byte) int {
	t.Helper()
	n := 0
	require.NoError(t, b.Scan(start, end, func(k, v []byte) error { n++; return nil }))
	return n
}

func TestGetSetDelete(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		b := e.open()
		require.Equal(t, bc.kind, b.Name())

		_, ok := get(t, b, "missing")
		require.False(t, ok)

		key, val := []byte("k1"), []byte("v1")
		bt := b.NewBatch()
		bt.Set(key, val)
		bt.Set([]byte("empty"), nil)
		// The batch copied its input.
		key[0], val[0] = 'X', 'X'
		require.Equal(t, 2, bt.Len())
		require.Equal(t, len("k1v1empty"), bt.Size())
		require.NoError(t, b.Commit(bt, true))

		v, ok := get(t, b, "k1")
		require.True(t, ok)
		require.Equal(t, "v1", v)
		// An empty value is a value.
		ev, ok, err := b.Get([]byte("empty"))
		require.NoError(t, err)
		require.True(t, ok)
		require.Empty(t, ev)

		// Get returns a copy the caller owns.
		got, _, err := b.Get([]byte("k1"))
		require.NoError(t, err)
		got[0] = 'Z'
		v, _ = get(t, b, "k1")
		require.Equal(t, "v1", v)

		commit(t, b, false, func(bt Batch) { bt.Set([]byte("k1"), []byte("v2")) })
		v, _ = get(t, b, "k1")
		require.Equal(t, "v2", v, "overwrite")

		commit(t, b, false, func(bt Batch) {
			bt.Delete([]byte("k1"))
			bt.Delete([]byte("never-existed"))
		})
		_, ok = get(t, b, "k1")
		require.False(t, ok)
		_, ok = get(t, b, "empty")
		require.True(t, ok)

		// Later operations of a batch win over earlier ones.
		commit(t, b, false, func(bt Batch) {
			bt.Set([]byte("x"), []byte("1"))
			bt.Delete([]byte("x"))
			bt.Set([]byte("y"), []byte("1"))
			bt.Set([]byte("y"), []byte("2"))
		})
		_, ok = get(t, b, "x")
		require.False(t, ok)
		v, _ = get(t, b, "y")
		require.Equal(t, "2", v)
	})
}

func TestDeleteRange(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		b := e.open()
		commit(t, b, false, func(bt Batch) {
			for c := 'a'; c <= 'z'; c++ {
				bt.Set([]byte{byte(c)}, []byte{byte(c)})
				bt.Set([]byte{byte(c), '1'}, []byte{byte(c)})
			}
		})
		commit(t, b, true, func(bt Batch) {
			bt.Set([]byte("d2"), []byte("set before the range: deleted"))
			bt.DeleteRange([]byte("c"), []byte("f")) // c, c1, d, d1, d2, e, e1
			bt.Set([]byte("d"), []byte("set after the range: survives"))
			bt.DeleteRange([]byte("m"), []byte("m")) // empty range
		})
		keys, _ := scanAll(t, b, []byte("a"), []byte("h"))
		require.Equal(t, []string{"a", "a1", "b", "b1", "d", "f", "f1", "g", "g1"}, keys)
		v, _ := get(t, b, "d")
		require.Equal(t, "set after the range: survives", v)
		_, ok := get(t, b, "m")
		require.True(t, ok)

		// A range covering everything, including keys it must step over
		// that were deleted earlier in the same batch.
		commit(t, b, false, func(bt Batch) {
			bt.Delete([]byte("q"))
			bt.DeleteRange([]byte("a"), []byte("zzz"))
		})
		require.Zero(t, count(t, b, nil, nil))
	})
}

func TestScan(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		b := e.open()
		var want []string
		for i := range 200 {
			want = append(want, fmt.Sprintf("key%03d", i))
		}
		shuffled := slices.Clone(want)
		rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		commit(t, b, false, func(bt Batch) {
			for _, k := range shuffled {
				bt.Set([]byte(k), []byte("v"+k))
			}
		})

		keys, values := scanAll(t, b, nil, nil)
		require.Equal(t, want, keys, "key order")
		for i := range keys {
			require.Equal(t, "v"+keys[i], values[i])
		}
		keys, _ = scanAll(t, b, []byte("key010"), []byte("key020"))
		require.Equal(t, want[10:20], keys, "[start, end)")
		keys, _ = scanAll(t, b, []byte("key0105"), []byte("key0125"))
		require.Equal(t, want[11:13], keys, "bounds between keys")
		keys, _ = scanAll(t, b, []byte("key190"), nil)
		require.Equal(t, want[190:], keys, "no end")
		keys, _ = scanAll(t, b, nil, []byte("key005"))
		require.Equal(t, want[:5], keys, "no start")
		keys, _ = scanAll(t, b, []byte{}, []byte{})
		require.Equal(t, want, keys, "empty bounds are unbounded")
		keys, _ = scanAll(t, b, []byte("key020"), []byte("key010"))
		require.Empty(t, keys, "start > end")
		keys, _ = scanAll(t, b, []byte("key020"), []byte("key020"))
		require.Empty(t, keys, "start == end")
		keys, _ = scanAll(t, b, []byte("zzz"), nil)
		require.Empty(t, keys, "past the last key")

		// Early stop: fn's error ends the scan and comes back unchanged.
		stop := errors.New("stop")
		var seen []string
		err := b.Scan(nil, nil, func(k, v []byte) error {
			seen = append(seen, string(k))
			if len(seen) == 3 {
				return stop
			}
			return nil
		})
		require.ErrorIs(t, err, stop)
		require.Equal(t, want[:3], seen)

		// Reads from inside fn are allowed.
		err = b.Scan([]byte("key000"), []byte("key003"), func(k, v []byte) error {
			got, ok, err := b.Get(k)
			if err != nil || !ok || !bytes.Equal(got, v) {
				return fmt.Errorf("Get(%q) inside Scan = %q %v %v", k, got, ok, err)
			}
			return b.Scan(k, nil, func(k2, v2 []byte) error { return stop })
		})
		require.ErrorIs(t, err, stop)

		require.Error(t, b.Scan(nil, nil, nil), "nil fn")
	})
}

// TestScanSnapshot: a scan reads one snapshot; a batch committed while it
// runs is not seen by it, not even partly.
func TestScanSnapshot(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		b := e.open()
		commit(t, b, false, func(bt Batch) {
			for i := range 100 {
				bt.Set(fmt.Appendf(nil, "k%03d", i), []byte("old"))
			}
		})
		done := make(chan error, 1)
		first := true
		var seen []string
		require.NoError(t, b.Scan(nil, nil, func(k, v []byte) error {
			if first {
				first = false
				// Commit from another goroutine; bbolt's writer may have to
				// wait for this read transaction, so do not wait forever.
				go func() {
					bt := b.NewBatch()
					bt.Set([]byte("k050"), []byte("new"))
					bt.Set([]byte("k999"), []byte("new"))
					bt.Delete([]byte("k099"))
					done <- b.Commit(bt, false)
				}()
				select {
				case err := <-done:
					done <- err
				case <-time.After(200 * time.Millisecond):
				}
			}
			seen = append(seen, string(k)+"="+string(v))
			return nil
		}))
		require.NoError(t, <-done)
		require.Len(t, seen, 100)
		for _, s := range seen {
			require.Contains(t, s, "=old")
		}
		v, _ := get(t, b, "k050")
		require.Equal(t, "new", v)
		require.Equal(t, 100, count(t, b, nil, nil))
	})
}

func TestLargeValues(t *testing.T) {
	// 16 MiB + 1 MiB in one batch: at least half of pebble's memtable, so
	// pebble commits it as a "flushable batch" (its large-batch path).
	big := make([]byte, 16<<20)
	rand.NewChaCha8([32]byte{3, 4}).Read(big)
	forEachDiskBackend(t, func(t *testing.T, bc backendCase, e *env) {
		b := e.open()
		maxKey := bytes.Repeat([]byte{'k'}, MaxKeySize)
		commit(t, b, true, func(bt Batch) {
			bt.Set([]byte("big"), big)
			bt.Set([]byte("mid"), big[:1<<20])
			bt.Set(maxKey, []byte("max key"))
		})
		got, ok, err := b.Get([]byte("big"))
		require.NoError(t, err)
		require.True(t, ok)
		require.True(t, bytes.Equal(big, got))
		v, _ := get(t, b, string(maxKey))
		require.Equal(t, "max key", v)

		// A large batch is reusable after Reset like any other.
		bt := b.NewBatch()
		bt.Set([]byte("big2"), big)
		require.NoError(t, b.Commit(bt, false))
		bt.Reset()
		bt.Set([]byte("small"), []byte("s"))
		bt.Delete([]byte("big2"))
		require.NoError(t, b.Commit(bt, false))
		_, ok = get(t, b, "big2")
		require.False(t, ok)
		v, _ = get(t, b, "small")
		require.Equal(t, "s", v)

		bt = b.NewBatch()
		bt.Set(append(maxKey, 'k'), nil)
		require.ErrorIs(t, b.Commit(bt, false), ErrKeyTooLarge)
		// Not touched by the allocator beyond its header: cheap.
		bt = b.NewBatch()
		bt.Set([]byte("huge"), make([]byte, MaxValueSize+1))
		require.ErrorIs(t, b.Commit(bt, false), ErrValueTooLarge)

		require.NoError(t, b.Close())
		b = e.open()
		got, ok, err = b.Get([]byte("big"))
		require.NoError(t, err)
		require.True(t, ok)
		require.True(t, bytes.Equal(big, got), "big value after reopen")
		got, _, err = b.Get([]byte("mid"))
		require.NoError(t, err)
		require.True(t, bytes.Equal(big[:1<<20], got))
	})
}

func TestHundredThousandKeys(t *testing.T) {
	const n, perBatch = 100_000, 10_000
	keys, vals := make([][]byte, n), make([][]byte, n)
	for i := range n {
		keys[i] = fmt.Appendf(nil, "row/%08d", i)
		vals[i] = fmt.Appendf(nil, "value-%d-%s", i, bytes.Repeat([]byte{'x'}, i%50))
	}
	key := func(i int) []byte { return keys[i] }
	val := func(i int) []byte { return vals[i] }
	forEachDiskBackend(t, func(t *testing.T, bc backendCase, e *env) {
		b := e.open()
		perm := rand.New(rand.NewPCG(5, 6)).Perm(n)
		for start := 0; start < n; start += perBatch {
			bt := b.NewBatch()
			for _, i := range perm[start : start+perBatch] {
				bt.Set(key(i), val(i))
			}
			require.Equal(t, perBatch, bt.Len())
			require.NoError(t, b.Commit(bt, false))
		}
		require.NoError(t, b.Sync())

		// Point reads now; the full scan after reopening.
		for _, i := range perm[:500] {
			v, ok, err := b.Get(key(i))
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, val(i), v)
		}
		require.NoError(t, b.Close())
		b = e.open()

		check := func(b Backend) {
			i := 0
			require.NoError(t, b.Scan(nil, nil, func(k, v []byte) error {
				if !bytes.Equal(k, key(i)) || !bytes.Equal(v, val(i)) {
					return fmt.Errorf("entry %d: %q=%q", i, k, v)
				}
				i++
				return nil
			}))
			require.Equal(t, n, i)
			for _, i := range perm[:500] {
				v, ok, err := b.Get(key(i))
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, val(i), v)
			}
			require.Equal(t, 1000, count(t, b, key(5000), key(6000)))
		}
		check(b)
	})
}

// TestBatchInvalidIsAtomic: an invalid operation anywhere in a batch makes
// Commit fail before anything is applied; the backend stays usable.
func TestBatchInvalidIsAtomic(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		b := e.open()
		commit(t, b, true, func(bt Batch) { bt.Set([]byte("keep"), []byte("1")) })
		cases := []struct {
			name string
			bad  func(Batch)
			want error
		}{
			{"empty key in Set", func(bt Batch) { bt.Set(nil, []byte("v")) }, ErrEmptyKey},
			{"empty key in Delete", func(bt Batch) { bt.Delete([]byte{}) }, ErrEmptyKey},
			{"range start > end", func(bt Batch) { bt.DeleteRange([]byte("b"), []byte("a")) }, ErrBadRange},
			{"range without end", func(bt Batch) { bt.DeleteRange([]byte("a"), nil) }, ErrBadRange},
			{"oversized key", func(bt Batch) { bt.Delete(make([]byte, MaxKeySize+1)) }, ErrKeyTooLarge},
		}
		for _, c := range cases {
			bt := b.NewBatch()
			for i := range 50 {
				bt.Set(fmt.Appendf(nil, "a%02d", i), []byte("v"))
			}
			bt.Delete([]byte("keep"))
			c.bad(bt)
			for i := range 50 {
				bt.Set(fmt.Appendf(nil, "z%02d", i), []byte("v"))
			}
			require.ErrorIs(t, b.Commit(bt, true), c.want, c.name)
			require.ErrorIs(t, b.Commit(bt, true), c.want, "the error sticks: %s", c.name)
			require.Equal(t, 1, count(t, b, nil, nil), "nothing applied: %s", c.name)
			v, _ := get(t, b, "keep")
			require.Equal(t, "1", v)

			// Reset forgets the error; the batch is reusable.
			bt.Reset()
			require.Zero(t, bt.Len())
			bt.Set([]byte("ok"), []byte("1"))
			require.NoError(t, b.Commit(bt, false), c.name)
			commit(t, b, false, func(bt Batch) { bt.Delete([]byte("ok")) })
		}

		// A batch commits once; Reset makes it reusable.
		bt := b.NewBatch()
		bt.Set([]byte("once"), []byte("1"))
		require.NoError(t, b.Commit(bt, false))
		require.ErrorIs(t, b.Commit(bt, false), ErrBatchCommitted)
		bt.Set([]byte("more"), []byte("1"))
		require.ErrorIs(t, b.Commit(bt, false), ErrBatchCommitted)
		_, ok := get(t, b, "more")
		require.False(t, ok)
		bt.Reset()
		bt.Set([]byte("again"), []byte("2"))
		require.NoError(t, b.Commit(bt, true))
		v, _ := get(t, b, "again")
		require.Equal(t, "2", v)

		// Empty batches commit (and sync) fine.
		require.NoError(t, b.Commit(b.NewBatch(), false))
		require.NoError(t, b.Commit(b.NewBatch(), true))
	})
}

func TestReopenPersistence(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		if bc.volatile {
			t.Skip("the arena keeps nothing across a reopen")
		}
		b := e.open()
		commit(t, b, true, func(bt Batch) { bt.Set([]byte("synced"), []byte("1")) })
		commit(t, b, false, func(bt Batch) { bt.Set([]byte("unsynced"), []byte("2")) })
		commit(t, b, false, func(bt Batch) {
			bt.Set([]byte("gone"), []byte("3"))
			bt.DeleteRange([]byte("gone"), []byte("gonf"))
		})
		// Close makes every committed batch durable.
		require.NoError(t, b.Close())

		// The same process reopens the same location at once, repeatedly.
		for range 3 {
			b = e.open()
			keys, values := scanAll(t, b, nil, nil)
			require.Equal(t, []string{"synced", "unsynced"}, keys)
			require.Equal(t, []string{"1", "2"}, values)
			require.NoError(t, b.Close())
		}
	})
}

// TestOpenTwiceFails: a location is used by one open backend at a time; a
// second open fails with an error (and does not hang).
func TestOpenTwiceFails(t *testing.T) {
	saved := bboltLockTimeout
	bboltLockTimeout = 100 * time.Millisecond
	t.Cleanup(func() { bboltLockTimeout = saved })
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		if bc.volatile {
			t.Skip("an arena has no location to open twice")
		}
		b := e.open()
		start := time.Now()
		_, err := e.try()
		require.Error(t, err, "second open of a location in use")
		require.Less(t, time.Since(start), 5*time.Second)
		t.Logf("%s: %v", bc.name, err)
		// Once the first is closed, the location opens again.
		require.NoError(t, b.Close())
		b = e.open()
		require.NoError(t, b.Close())
	})
}

func TestUseAfterClose(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		b := e.open()
		commit(t, b, true, func(bt Batch) { bt.Set([]byte("k"), []byte("v")) })
		pending := b.NewBatch()
		pending.Set([]byte("p"), []byte("v"))
		require.NoError(t, b.Close())

		require.ErrorIs(t, b.Close(), ErrClosed)
		_, _, err := b.Get([]byte("k"))
		require.ErrorIs(t, err, ErrClosed)
		require.ErrorIs(t, b.Scan(nil, nil, func(k, v []byte) error { return nil }), ErrClosed)
		require.ErrorIs(t, b.Commit(pending, true), ErrClosed)
		late := b.NewBatch()
		late.Set([]byte("q"), []byte("v"))
		late.Reset()
		late.Delete([]byte("q"))
		require.ErrorIs(t, b.Commit(late, false), ErrClosed)
		require.ErrorIs(t, b.Sync(), ErrClosed)
		s := b.Stats()
		require.Equal(t, uint64(1), s.Commits, "Stats after Close are the final ones")
		require.Equal(t, bc.kind, b.Name())
	})
}

func TestBadInput(t *testing.T) {
	var all []Backend
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		b := e.open()
		all = append(all, b)
		_, _, err := b.Get(nil)
		require.ErrorIs(t, err, ErrEmptyKey)
		_, _, err = b.Get(make([]byte, MaxKeySize+1))
		require.ErrorIs(t, err, ErrKeyTooLarge)
		require.ErrorIs(t, b.Commit(nil, true), ErrNilBatch)
		var nilBatch *pebbleBatch
		require.ErrorIs(t, b.Commit(nilBatch, true), ErrForeignBatch)
		// A batch of another instance of the same backend.
		other, err := bc.newLoc(t)()
		require.NoError(t, err)
		ob := other.NewBatch()
		ob.Set([]byte("k"), []byte("v"))
		require.ErrorIs(t, b.Commit(ob, true), ErrForeignBatch)
		require.NoError(t, other.Close())
	})
	// Batches across backend kinds (the subtests' backends are closed by
	// now; the kind check comes first).
	for i, b := range all {
		other := all[(i+1)%len(all)]
		if other.Name() == b.Name() {
			other = all[(i+2)%len(all)]
		}
		require.ErrorIs(t, b.Commit(other.NewBatch(), false), ErrForeignBatch)
	}

	_, err := Open("rocksdb", t.TempDir(), Options{})
	require.ErrorIs(t, err, ErrUnknownBackend)
	_, err = Open(KindBbolt, t.TempDir(), Options{FS: vfs.NewMem()})
	require.ErrorIs(t, err, ErrFSNotSupported)
	_, err = OpenBbolt(filepath.Join(t.TempDir(), "x"), Options{FS: vfs.NewMem()})
	require.ErrorIs(t, err, ErrFSNotSupported)
	_, err = Open(KindPebble, "", Options{})
	require.Error(t, err)
	_, err = Open(KindBbolt, "", Options{})
	require.Error(t, err)
	b, err := Open(KindBbolt, t.TempDir(), Options{FS: vfs.Default})
	require.NoError(t, err, "vfs.Default is the OS filesystem bbolt uses anyway")
	require.NoError(t, b.Close())
}

// TestConcurrentReadersOneWriter: one writer moves a group of keys from
// version n to n+1 in each batch; readers must always see the whole group
// at one version (atomic visibility, snapshot scans) and versions never go
// backwards.
func TestConcurrentReadersOneWriter(t *testing.T) {
	const group, readers = 16, 4
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		b := e.open()
		gk := func(i int) []byte { return fmt.Appendf(nil, "g/%02d", i) }
		write := func(version int, sync bool) error {
			bt := b.NewBatch()
			for i := range group {
				bt.Set(gk(i), fmt.Appendf(nil, "%08d", version))
			}
			bt.Set(fmt.Appendf(nil, "log/%08d", version), nil)
			return b.Commit(bt, sync)
		}
		require.NoError(t, write(0, false))

		var stop atomic.Bool
		var wg sync.WaitGroup
		errs := make(chan error, readers+1)
		for r := range readers {
			wg.Go(func() {
				last := -1
				for !stop.Load() {
					var vals []string
					if err := b.Scan([]byte("g/"), []byte("g0"), func(k, v []byte) error {
						vals = append(vals, string(v))
						return nil
					}); err != nil {
						errs <- err
						return
					}
					if len(vals) != group {
						errs <- fmt.Errorf("reader %d: group of %d keys", r, len(vals))
						return
					}
					for _, v := range vals {
						if v != vals[0] {
							errs <- fmt.Errorf("reader %d: torn group %v", r, vals)
							return
						}
					}
					var ver int
					fmt.Sscanf(vals[0], "%d", &ver)
					if ver < last {
						errs <- fmt.Errorf("reader %d: version went back %d -> %d", r, last, ver)
						return
					}
					last = ver
					// A point read sees at least the scanned version.
					v, ok, err := b.Get(gk(r))
					if err != nil || !ok || string(v) < vals[0] {
						errs <- fmt.Errorf("reader %d: Get = %q %v %v after scan saw %s", r, v, ok, err, vals[0])
						return
					}
				}
			})
		}
		// At least 20 versions, and for at least 300 ms: a fixed amount of
		// work, so a slow (loaded, -race) machine only makes it longer.
		version := 0
		deadline := time.Now().Add(300 * time.Millisecond)
		for version < 20 || time.Now().Before(deadline) {
			version++
			if err := write(version, version%10 == 0); err != nil {
				errs <- err
				break
			}
		}
		stop.Store(true)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, version+1, count(t, b, []byte("log/"), []byte("log0")))
		t.Logf("%s: %d versions written under %d concurrent readers", bc.name, version, readers)
	})
}

// TestConcurrentWriters: Commit may be called from many goroutines (the
// engine's checkpointer and others); bbolt serialises them, pebble groups
// them.
func TestConcurrentWriters(t *testing.T) {
	const writers, each = 4, 50
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		b := e.open()
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					bt := b.NewBatch()
					bt.Set(fmt.Appendf(nil, "w%d/%03d", w, i), []byte("v"))
					if err := b.Commit(bt, i%5 == 0); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, writers*each, count(t, b, nil, nil))
		require.Equal(t, uint64(writers*each), b.Stats().Commits)
	})
}

// TestCloseWaitsForCalls: Close waits for a scan in flight; calls that
// start after Close began (even from inside that scan) get ErrClosed.
func TestCloseWaitsForCalls(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		b := e.open()
		commit(t, b, false, func(bt Batch) {
			bt.Set([]byte("a"), []byte("1"))
			bt.Set([]byte("b"), []byte("2"))
		})
		inScan := make(chan struct{})
		closed := make(chan error, 1)
		var innerErr error
		var n int
		scanErr := b.Scan(nil, nil, func(k, v []byte) error {
			n++
			if n == 1 {
				close(inScan)
				go func() { closed <- b.Close() }()
				// Wait until Close is visibly waiting: a new call fails.
				for {
					_, _, err := b.Get([]byte("a"))
					if err != nil {
						innerErr = err
						break
					}
					time.Sleep(time.Millisecond)
				}
				select {
				case err := <-closed:
					return fmt.Errorf("Close returned during a scan: %v", err)
				case <-time.After(20 * time.Millisecond):
				}
			}
			return nil
		})
		require.NoError(t, scanErr)
		require.Equal(t, 2, n)
		require.ErrorIs(t, innerErr, ErrClosed)
		require.NoError(t, <-closed)
		if bc.volatile {
			return
		}
		// And the location reopens at once.
		b2 := e.open()
		v, _ := get(t, b2, "b")
		require.Equal(t, "2", v)
	})
}

func TestStats(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		b := e.open()
		s := b.Stats()
		require.Equal(t, bc.kind, s.Backend)
		require.Zero(t, s.Commits)
		require.Zero(t, s.Syncs)

		logical := 0
		for i := range 5 {
			commit(t, b, i < 3, func(bt Batch) {
				k, v := fmt.Appendf(nil, "key%d", i), bytes.Repeat([]byte{'v'}, 100)
				bt.Set(k, v)
				logical += len(k) + len(v)
			})
		}
		require.NoError(t, b.Sync())
		require.NoError(t, b.Sync())
		// Refused commits do not count.
		bad := b.NewBatch()
		bad.Set(nil, nil)
		require.Error(t, b.Commit(bad, true))

		s = b.Stats()
		require.Equal(t, uint64(5), s.Commits)
		require.Equal(t, uint64(3), s.SyncCommits)
		require.Equal(t, uint64(5), s.Syncs, "3 sync commits + 2 Syncs")
		require.Equal(t, uint64(logical), s.LogicalBytes)
		require.False(t, s.Failed)
		if bc.kind == KindArena {
			require.Zero(t, s.Fsyncs)
			require.Zero(t, s.BytesWritten)
			require.Positive(t, s.MemoryInUse)
			require.NoError(t, b.Close())
			return
		}
		require.GreaterOrEqual(t, s.Fsyncs, int64(1))
		require.Greater(t, s.BytesWritten, int64(logical))
		if bc.kind == KindPebble {
			require.Positive(t, s.MemoryInUse)
		} else {
			require.Equal(t, int64(-1), s.MemoryInUse)
			require.GreaterOrEqual(t, s.Fsyncs, int64(2*5+2))
		}
		t.Logf("%s: %+v", bc.name, s)
		require.NoError(t, b.Close())
		require.Equal(t, s.Commits, b.Stats().Commits)
	})
}

// TestOpenCreatesDirectories: Open creates missing parent directories.
func TestOpenCreatesDirectories(t *testing.T) {
	for _, kind := range []string{KindPebble, KindBbolt} {
		dir := filepath.Join(t.TempDir(), "a", "b", kind)
		b, err := Open(kind, dir, Options{Logger: quietLogger()})
		require.NoError(t, err, kind)
		commit(t, b, true, func(bt Batch) { bt.Set([]byte("k"), []byte(kind)) })
		require.NoError(t, b.Close())
		b, err = Open(kind, dir, Options{Logger: quietLogger()})
		require.NoError(t, err, kind)
		v, _ := get(t, b, "k")
		require.Equal(t, kind, v)
		require.NoError(t, b.Close())
	}
}
