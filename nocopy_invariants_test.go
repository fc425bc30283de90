//go:build invariants

package tupled_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tupled/tupled"
)

// poisoned reports whether v is all 0xDB, as the end of a transaction
// leaves the values it lent under the invariants tag.
func poisoned(v []byte) bool { return len(v) > 0 && len(bytes.Trim(v, "\xdb")) == 0 }

// TestNoCopyMisuseAfterEnd: under the invariants tag a value GetNoCopy or
// LockNoCopy lent reads as 0xDB bytes once its transaction has ended, by
// Commit or by Rollback, so a caller that keeps it past the end sees
// garbage in tests rather than a value that happens to be intact.
func TestNoCopyMisuseAfterEnd(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "alpha"})
	for _, end := range []string{"commit", "rollback"} {
		tx := begin(t, db, nil)
		g, err := tx.GetNoCopy(bg, "t", []byte("a"))
		require.NoError(t, err)
		l, err := tx.LockNoCopy(bg, "t", []byte("a"), tupled.ForShare, tupled.Wait)
		require.NoError(t, err)
		require.Equal(t, "alpha", string(g)) // valid while the transaction runs
		require.Equal(t, "alpha", string(l))
		if end == "commit" {
			require.NoError(t, tx.Commit())
		} else {
			require.NoError(t, tx.Rollback())
		}
		require.True(t, poisoned(g), "%s: GetNoCopy's value after the end reads %q", end, g)
		require.True(t, poisoned(l), "%s: LockNoCopy's value after the end reads %q", end, l)
	}
	// The copying calls' values are the caller's own: never touched.
	tx := begin(t, db, nil)
	v, err := tx.Get(bg, "t", []byte("a"))
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	require.Equal(t, "alpha", string(v))
}

// misuseEnv makes TestNoCopyRaceChild misuse a lent value.
const misuseEnv = "TUPLED_TEST_NOCOPY_MISUSE"

// TestNoCopyRaceChild is TestNoCopyRaceCaught's child process: with
// misuseEnv set it reads a lent value in a goroutine whose read is not
// ordered before the Commit that ends its validity. Without it, the same
// goroutine is joined before the Commit — correct use, which must pass
// under the race detector.
func TestNoCopyRaceChild(t *testing.T) {
	misuse := os.Getenv(misuseEnv) == "1"
	db := openDB(t, nil, map[string]string{"a": "alpha"})
	tx := begin(t, db, nil)
	v, err := tx.GetNoCopy(bg, "t", []byte("a"))
	require.NoError(t, err)
	var wg sync.WaitGroup
	var first byte
	wg.Add(1)
	go func() {
		defer wg.Done()
		first = v[0]
	}()
	if !misuse {
		wg.Wait()
	}
	require.NoError(t, tx.Commit())
	wg.Wait()
	_ = first
}

// TestNoCopyRaceCaught runs TestNoCopyRaceChild in a child process with
// misuseEnv set: when the race detector is on (go test -race -tags
// invariants, as CI runs), the child must fail with a data race report
// between the goroutine's read and the end of the transaction. Without
// the race detector the child's misuse goes unseen, so the test asserts
// the child passes.
func TestNoCopyRaceCaught(t *testing.T) {
	if os.Getenv(misuseEnv) != "" {
		return // the child itself: nothing to run here
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoCopyRaceChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), misuseEnv+"=1")
	out, err := cmd.CombinedOutput()
	if !raceEnabled {
		require.NoError(t, err, "%s", out)
		return
	}
	require.Error(t, err, "the child's misuse went unreported:\n%s", out)
	require.True(t, strings.Contains(string(out), "WARNING: DATA RACE") && strings.Contains(string(out), "endLent"),
		"the child failed without a race report on the lent value:\n%s", out)
}

// TestScanNoCopyMisuseAfterCall: under the invariants tag the key and
// value a NoCopy scan lent read as 0xDB bytes once the callback that got
// them has returned, so a caller that keeps them sees garbage in tests.
func TestScanNoCopyMisuseAfterCall(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "alpha", "b": "beta"})
	tx := begin(t, db, nil)
	var keys, vals [][]byte
	require.NoError(t, tx.Scan(bg, "t", tupled.ScanOptions{NoCopy: true}, func(k, v []byte) error {
		require.Equal(t, map[string]string{"a": "alpha", "b": "beta"}[string(k)], string(v)) // valid during the call
		keys, vals = append(keys, k), append(vals, v)
		return nil
	}))
	require.Len(t, keys, 2)
	for i := range keys {
		require.True(t, poisoned(keys[i]) && poisoned(vals[i]), "row %d after its call reads %q=%q", i, keys[i], vals[i])
	}
	require.NoError(t, tx.Commit())
}
