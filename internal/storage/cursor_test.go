package storage

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// readCursor reads c to its end in pieces of the sizes rng picks, checking
// that a pair refused (fn returned false) comes first in the next piece.
func readCursor(t *testing.T, c Cursor, rng *rand.Rand) (keys, values []string) {
	t.Helper()
	var refused string
	for pieces := 0; ; pieces++ {
		want := rng.IntN(5) // 0: refuse the first pair at once
		n := 0
		first := true
		done, err := c.Read(func(k, v []byte) bool {
			if first && refused != "" {
				require.Equal(t, refused, string(k), "a refused pair is not consumed")
			}
			first = false
			if n == want {
				refused = string(k)
				return false
			}
			n++
			keys = append(keys, string(k))
			values = append(values, string(v))
			return true
		})
		require.NoError(t, err)
		if done {
			return keys, values
		}
		require.Less(t, pieces, 10000, "cursor never ends")
	}
}

// TestCursorMatchesScan: a cursor read in pieces of any size (including a
// refusal at once) yields exactly what Scan and ReverseScan yield over the
// same range, on every backend, raw and with checksums.
func TestCursorMatchesScan(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		raw := e.open()
		for _, b := range []Backend{raw, WithChecksums(raw)} {
			commit(t, b, false, func(bt Batch) {
				for i := 0; i < 300; i += 1 + i%3 {
					bt.Set(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "v%d", i))
				}
			})
			rng := rand.New(rand.NewPCG(uint64(len(bc.name)), 9))
			bounds := [][2][]byte{{nil, nil}, {[]byte("k100"), []byte("k200")}, {[]byte("k1005"), nil}, {nil, []byte("k0")},
				{[]byte("k150"), []byte("k150")}, {[]byte("k2"), []byte("k1")}, {[]byte("k299"), []byte("k3")}}
			for _, bd := range bounds {
				for _, reverse := range []bool{false, true} {
					var wk, wv []string
					scan := b.Scan
					if reverse {
						scan = b.ReverseScan
					}
					require.NoError(t, scan(bd[0], bd[1], func(k, v []byte) error {
						wk, wv = append(wk, string(k)), append(wv, string(v))
						return nil
					}))
					for trial := 0; trial < 5; trial++ {
						c, err := b.NewCursor(bd[0], bd[1], reverse)
						require.NoError(t, err)
						gk, gv := readCursor(t, c, rng)
						require.Equal(t, wk, gk, "%q reverse=%v", bd, reverse)
						require.Equal(t, wv, gv)
						done, err := c.Read(func(k, v []byte) bool { t.Fatalf("read %q after the end", k); return true })
						require.NoError(t, err)
						require.True(t, done)
						require.NoError(t, c.Close())
						require.NoError(t, c.Close(), "a second Close does nothing")
					}
				}
			}
			if b == raw {
				// The checksummed pass writes sealed values over the raw ones.
				commit(t, raw, false, func(bt Batch) { bt.DeleteRange([]byte("k"), []byte("l")) })
			}
		}
	})
}

// TestCursorSnapshot: pebble's cursor reads the snapshot of its creation
// across pieces; bbolt's reads each piece from the newest state (see
// Cursor). Either way no pair is read twice or skipped among the keys
// that stay.
func TestCursorSnapshot(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		b := e.open()
		commit(t, b, false, func(bt Batch) {
			for _, k := range []string{"a", "c", "e", "g"} {
				bt.Set([]byte(k), []byte("old"))
			}
		})
		c, err := b.NewCursor(nil, nil, false)
		require.NoError(t, err)
		defer c.Close()
		var got []string
		done, err := c.Read(func(k, v []byte) bool {
			if string(k) == "c" {
				return false
			}
			got = append(got, string(k)+"="+string(v))
			return true
		})
		require.NoError(t, err)
		require.False(t, done)
		commit(t, b, false, func(bt Batch) {
			bt.Set([]byte("d"), []byte("new"))
			bt.Set([]byte("e"), []byte("new"))
		})
		done, err = c.Read(func(k, v []byte) bool { got = append(got, string(k)+"="+string(v)); return true })
		require.NoError(t, err)
		require.True(t, done)
		if bc.kind != KindBbolt { // one snapshot per cursor
			require.Equal(t, []string{"a=old", "c=old", "e=old", "g=old"}, got)
		} else {
			require.Equal(t, []string{"a=old", "c=old", "d=new", "e=new", "g=old"}, got)
		}
	})
}

// TestCloseWaitsForCursor: Close of the backend waits for an open cursor;
// the cursor keeps reading meanwhile, and the location reopens once it is
// closed.
func TestCloseWaitsForCursor(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		b := e.open()
		commit(t, b, false, func(bt Batch) { bt.Set([]byte("a"), []byte("1")); bt.Set([]byte("b"), []byte("2")) })
		c, err := b.NewCursor(nil, nil, false)
		require.NoError(t, err)
		_, err = c.Read(func(k, v []byte) bool { return false })
		require.NoError(t, err)
		closed := make(chan error, 1)
		go func() { closed <- b.Close() }()
		if bc.kind == KindPebble {
			// Close is visibly waiting once a new call fails.
			for {
				if _, _, err := b.Get([]byte("a")); err != nil {
					require.ErrorIs(t, err, ErrClosed)
					break
				}
			}
			select {
			case err := <-closed:
				t.Fatalf("Close returned while a cursor was open: %v", err)
			default:
			}
			var keys []string
			done, err := c.Read(func(k, v []byte) bool { keys = append(keys, string(k)); return true })
			require.NoError(t, err)
			require.True(t, done)
			require.Equal(t, []string{"a", "b"}, keys)
		}
		require.NoError(t, c.Close())
		require.NoError(t, <-closed)
		_, err = b.NewCursor(nil, nil, false)
		require.ErrorIs(t, err, ErrClosed)
		if bc.volatile {
			return
		}
		b2 := e.open()
		v, _ := get(t, b2, "b")
		require.Equal(t, "2", v)
	})
}

// TestCursorDamagedValue: a checksummed cursor stops at a damaged value
// with ErrCorrupted, after the intact pairs before it, and stays failed.
func TestCursorDamagedValue(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		raw := e.open()
		b := WithChecksums(raw)
		commit(t, b, false, func(bt Batch) {
			for _, k := range []string{"a", "b", "c"} {
				bt.Set([]byte(k), []byte("v"+k))
			}
		})
		commit(t, raw, false, func(bt Batch) { bt.Set([]byte("b"), []byte("not sealed")) })
		c, err := b.NewCursor(nil, nil, false)
		require.NoError(t, err)
		defer c.Close()
		var keys []string
		done, err := c.Read(func(k, v []byte) bool { keys = append(keys, string(k)); return true })
		require.ErrorIs(t, err, ErrCorrupted)
		require.True(t, done)
		require.Equal(t, []string{"a"}, keys)
		_, err = c.Read(func(k, v []byte) bool { return true })
		require.ErrorIs(t, err, ErrCorrupted)
	})
}
