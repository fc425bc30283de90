package engine

import (
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestVacuumNowBetweenMaintenancePasses: a maintenance pass (an in-memory
// engine's move of rows into its arenas, an on-disk checkpoint) holds the
// horizon back with its snapshot while it runs. A vacuum the caller asks
// for once their transactions have ended still removes every dead
// version, however the passes fall around it: here every in-memory pass is
// slowed down while it holds its snapshot, and passes run back to back
// beside the updates and the vacuum. (Before VacuumNow, DB.Vacuum took
// its horizon during such a pass one time in a few hundred on a loaded
// machine, and TestMemoryFlatUnderEndlessUpdates found 1221 versions of
// 1000 rows.)
func TestVacuumNowBetweenMaintenancePasses(t *testing.T) {
	memPassHeld = func() { time.Sleep(2 * time.Millisecond) }
	t.Cleanup(func() { memPassHeld = nil })
	for _, dir := range []string{"", t.TempDir()} {
		t.Run(fmt.Sprintf("dir=%q", dir), func(t *testing.T) {
			e, err := Open(Config{Dir: dir, MemoryArena: dir == "", DeadlockTimeout: time.Second,
				CheckpointInterval: time.Hour, CheckpointWALSize: -1, CacheRows: 1 << 10, Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			defer e.Close()
			require.NoError(t, e.CreateTable("t"))
			const rows = 100
			key := func(i int) []byte { return []byte{byte(i)} }
			tx, err := e.Begin(TxOptions{})
			require.NoError(t, err)
			for i := range rows {
				require.NoError(t, tx.Insert(ctx, "t", key(i), []byte("0")))
			}
			require.NoError(t, tx.Commit())
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { // maintenance passes back to back
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if err := e.Checkpoint(); err != nil {
						t.Error(err)
						return
					}
				}
			}()
			for round := range 20 {
				for i := range rows {
					tx, err := e.Begin(TxOptions{})
					require.NoError(t, err)
					require.NoError(t, tx.Write(ctx, "t", key(i), []byte{byte(round)}, false, Block))
					require.NoError(t, tx.Commit())
				}
				e.VacuumNow()
				require.Equal(t, uint64(rows), e.Stats().TuplesLive, "round %d: only the newest version of each row survives", round)
			}
			close(stop)
			wg.Wait()
		})
	}
}
