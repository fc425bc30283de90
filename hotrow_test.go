package tupled_test

import (
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

// Many transactions lock one row FOR KEY SHARE (or FOR SHARE) at the same
// time and stay open: every one of them must end up a member of the row's
// multixact. The lock path builds the new multixact outside the row latch
// and installs it only if xmax did not change meanwhile; a lost install
// would drop a locker from xmax, and a writer would then not wait for it.
func TestConcurrentSharersAllRecorded(t *testing.T) {
	for _, strength := range []tupled.LockStrength{tupled.ForKeyShare, tupled.ForShare} {
		db := openDB(t, nil, map[string]string{"parent": "p"})
		const n = 64
		txs := make([]*tupled.Tx, n)
		var wg sync.WaitGroup
		for i := range txs {
			txs[i] = begin(t, db, nil)
		}
		for i := range txs {
			wg.Go(func() {
				_, err := txs[i].Lock(bg, "t", []byte("parent"), strength, tupled.Wait)
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		rls, err := db.RowLocks(bg, "t")
		require.NoError(t, err)
		require.Len(t, rls, 1)
		got := append([]uint64(nil), rls[0].Lockers...)
		sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
		var want []uint64
		for _, tx := range txs {
			want = append(want, tx.ID())
		}
		sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
		require.Equal(t, want, got, "%v: every locker is in the multixact", strength)
		require.True(t, rls[0].Multi)
		for _, m := range rls[0].Modes {
			require.Equal(t, strength, m)
		}
		for _, tx := range txs {
			require.NoError(t, tx.Commit())
		}
	}
}
