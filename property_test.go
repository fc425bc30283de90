package tupled_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/tupled/tupled"
)

// conflicts is the row-lock conflict table of the package documentation
// (go doc github.com/tupled/tupled, "Row locks").
func conflicts(a, b tupled.LockStrength) bool { return int(a-1)+int(b-1) >= 3 }

// TestRowLockModel drives random lock/commit/rollback sequences of several
// transactions (NOWAIT, so one goroutine can run them) against a reference
// model of who holds what. It checks that a lock is granted exactly when no
// other live transaction holds a conflicting lock, that RowLocks reports
// exactly the model's locks (so no two conflicting locks are ever held by
// different live transactions), and that every lock disappears when its
// transaction ends.
func TestRowLockModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		keys := []string{"a", "b", "c"}
		rows := map[string]string{}
		for _, k := range keys {
			rows[k] = "v" + k
		}
		fastOff := rapid.Bool().Draw(rt, "fastPathOff")
		db, err := tupled.Open("", &tupled.Options{ShareFastPathOff: fastOff, VacuumInterval: -1})
		require.NoError(rt, err)
		defer db.Close()
		require.NoError(rt, db.CreateTable(bg, "t"))
		require.NoError(rt, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
			for k, v := range rows {
				if err := tx.Insert(bg, "t", []byte(k), []byte(v)); err != nil {
					return err
				}
			}
			return nil
		}))

		const slots = 4
		txs := make([]*tupled.Tx, slots)
		model := make([]map[string]tupled.LockStrength, slots) // slot -> key -> strongest lock
		end := func(i int) {
			txs[i] = nil
			model[i] = nil
		}
		steps := rapid.IntRange(1, 60).Draw(rt, "steps")
		for s := 0; s < steps; s++ {
			i := rapid.IntRange(0, slots-1).Draw(rt, "slot")
			if txs[i] == nil {
				tx, err := db.Begin(bg, nil)
				require.NoError(rt, err)
				txs[i], model[i] = tx, map[string]tupled.LockStrength{}
				continue
			}
			switch rapid.IntRange(0, 5).Draw(rt, "op") {
			case 0:
				require.NoError(rt, txs[i].Commit())
				end(i)
			case 1:
				require.NoError(rt, txs[i].Rollback())
				end(i)
			default:
				k := rapid.SampledFrom(keys).Draw(rt, "key")
				st := tupled.LockStrength(rapid.IntRange(1, 4).Draw(rt, "strength"))
				want := true
				for j := range txs {
					if j != i && txs[j] != nil {
						if held, ok := model[j][k]; ok && conflicts(held, st) {
							want = false
						}
					}
				}
				v, err := txs[i].Lock(bg, "t", []byte(k), st, tupled.NoWait)
				if want {
					require.NoError(rt, err, "slot %d lock %s %v", i, k, st)
					require.Equal(rt, rows[k], string(v))
					if st > model[i][k] {
						model[i][k] = st
					}
				} else {
					require.ErrorIs(rt, err, tupled.ErrLockNotAvailable, "slot %d lock %s %v", i, k, st)
					require.NoError(rt, txs[i].Rollback())
					end(i)
				}
			}
			checkRowLocks(rt, db, txs, model)
		}
		for i := range txs {
			if txs[i] != nil {
				require.NoError(rt, txs[i].Commit())
				end(i)
			}
		}
		checkRowLocks(rt, db, txs, model)
	})
}

func checkRowLocks(rt *rapid.T, db *tupled.DB, txs []*tupled.Tx, model []map[string]tupled.LockStrength) {
	want := map[string]map[uint64]tupled.LockStrength{}
	for i, tx := range txs {
		if tx == nil {
			continue
		}
		for k, st := range model[i] {
			if want[k] == nil {
				want[k] = map[uint64]tupled.LockStrength{}
			}
			want[k][tx.ID()] = st
		}
	}
	rls, err := db.RowLocks(bg, "t")
	require.NoError(rt, err)
	got := map[string]map[uint64]tupled.LockStrength{}
	for _, rl := range rls {
		m := map[uint64]tupled.LockStrength{}
		for j, x := range rl.Lockers {
			if rl.Modes[j] > m[x] {
				m[x] = rl.Modes[j]
			}
		}
		got[string(rl.Key)] = m
		// No two different live lockers hold conflicting modes.
		for x1, m1 := range m {
			for x2, m2 := range m {
				require.False(rt, x1 != x2 && conflicts(m1, m2), "conflicting locks on %s: %d %v, %d %v", rl.Key, x1, m1, x2, m2)
			}
		}
	}
	require.Equal(rt, want, got)
}

// TestBankTransfersConserveTotal: 200 goroutines move money between accounts
// under READ COMMITTED, locking both rows FOR UPDATE in random order (so
// deadlocks happen and RunTx retries the victims). The total never changes.
func TestBankTransfersConserveTotal(t *testing.T) { bankTransfers(t, false) }

// TestBankTransfersWithSavepoints: the same, but each transfer first tries
// under a savepoint — writes garbage into both accounts, locks a third
// account (more deadlocks, some of them under the savepoint) — and rolls
// the try back at random, or releases it after undoing the garbage. A
// deadlock under the savepoint is survived by rolling back to it. The
// total never changes, and no rolled-back garbage survives.
func TestBankTransfersWithSavepoints(t *testing.T) { bankTransfers(t, true) }

func bankTransfers(t *testing.T, savepoints bool) {
	const accounts, perWorker, initial = 100, 10, 1000
	workers := 200
	if savepoints {
		workers = 100 // each detour locks a third account: deadlocks galore
	}
	rows := map[string]string{}
	for i := 0; i < accounts; i++ {
		rows[string(key(i))] = fmt.Sprint(initial)
	}
	db := openDB(t, &tupled.Options{DeadlockTimeout: 20 * time.Millisecond}, rows)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 7))
			for n := 0; n < perWorker; n++ {
				a, b, c := r.IntN(accounts), r.IntN(accounts), r.IntN(accounts)
				if a == b {
					continue
				}
				amount := r.IntN(50)
				rollback := r.IntN(2) == 0
				err := db.RunTx(context.Background(), nil, func(tx *tupled.Tx) error {
					va, err := tx.Lock(bg, "t", key(a), tupled.ForUpdate, tupled.Wait)
					if err != nil {
						return err
					}
					vb, err := tx.Lock(bg, "t", key(b), tupled.ForUpdate, tupled.Wait)
					if err != nil {
						return err
					}
					if savepoints {
						if err := tryUnderSavepoint(tx, a, b, c, va, vb, rollback); err != nil {
							return err
						}
					}
					var ba, bb int
					fmt.Sscan(string(va), &ba)
					fmt.Sscan(string(vb), &bb)
					if err := tx.Update(bg, "t", key(a), []byte(fmt.Sprint(ba-amount))); err != nil {
						return err
					}
					return tx.Update(bg, "t", key(b), []byte(fmt.Sprint(bb+amount)))
				})
				if err != nil && !tupled.IsRetryable(err) {
					errs <- err
					return
				}
			}
		}(uint64(w))
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(60 * time.Second):
		d1 := dumpLocks(db)
		time.Sleep(time.Second)
		t.Fatalf("transfers stuck:\n%s\n=== one second later:\n%s", d1, dumpLocks(db))
	}
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	total := 0
	tx := begin(t, db, nil)
	require.NoError(t, tx.Scan(bg, "t", tupled.ScanOptions{}, func(k, v []byte) error {
		var n int
		_, err := fmt.Sscan(string(v), &n)
		require.NoError(t, err, "account %s holds %q", k, v)
		total += n
		return nil
	}))
	require.Equal(t, accounts*initial, total)
	rl, err := db.RowLocks(bg, "t")
	require.NoError(t, err)
	require.Empty(t, rl)
	t.Logf("stats: %+v", db.Stats())
}

// tryUnderSavepoint is a transfer's detour: under savepoint "try" it
// writes garbage into accounts a and b and locks account c, then rolls the
// savepoint back, or restores a and b and releases it. A deadlock (or any
// retryable error) on c aborts the transaction only down to the savepoint:
// rolling back to it recovers.
func tryUnderSavepoint(tx *tupled.Tx, a, b, c int, va, vb []byte, rollback bool) error {
	if err := tx.Savepoint("try"); err != nil {
		return err
	}
	for _, k := range []int{a, b} {
		if err := tx.Update(bg, "t", key(k), []byte("garbage")); err != nil {
			return err
		}
	}
	if _, err := tx.Lock(bg, "t", key(c), tupled.ForUpdate, tupled.Wait); err != nil {
		if !tupled.IsRetryable(err) {
			return err
		}
		return tx.RollbackTo("try")
	}
	if rollback {
		return tx.RollbackTo("try")
	}
	if err := tx.Update(bg, "t", key(a), va); err != nil {
		return err
	}
	if err := tx.Update(bg, "t", key(b), vb); err != nil {
		return err
	}
	return tx.Release("try")
}

// TestMemoryFlatUnderEndlessUpdates runs 1M updates on 1k rows (a quarter of
// them beside a FOR KEY SHARE locker, so multixacts are made and must be
// reclaimed too) and reports the heap before and after: versions, Go heap,
// multixacts and commit-status entries stay flat.
func TestMemoryFlatUnderEndlessUpdates(t *testing.T) {
	t.Run("objects", func(t *testing.T) { memoryFlatUnderEndlessUpdates(t, false) })
	t.Run("arena", func(t *testing.T) { memoryFlatUnderEndlessUpdates(t, true) })
}

// memoryFlatUnderEndlessUpdates is TestMemoryFlatUnderEndlessUpdates, with
// Options.MemoryArena or without: with it, every checkpoint rewrites the
// updated rows' records and the arena must reclaim the old ones.
func memoryFlatUnderEndlessUpdates(t *testing.T, arena bool) {
	const rows, updates = 1000, 1_000_000
	n := updates
	if testing.Short() {
		n = 100_000
	}
	db := openDB(t, &tupled.Options{VacuumInterval: 200 * time.Millisecond, MemoryArena: arena}, nil)
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
		for i := 0; i < rows; i++ {
			if err := tx.Insert(bg, "t", key(i), []byte("0")); err != nil {
				return err
			}
		}
		return nil
	}))
	measure := func() (tupled.Stats, uint64) {
		db.Vacuum()
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return db.Stats(), ms.HeapAlloc
	}
	val := []byte("some value of a row")
	work := func(from, to int) {
		for i := from; i < to; i++ {
			k := key(i % rows)
			var locker *tupled.Tx
			if i%4 == 0 {
				var err error
				locker, err = db.Begin(bg, nil)
				require.NoError(t, err)
				_, err = locker.Lock(bg, "t", k, tupled.ForKeyShare, tupled.Wait)
				require.NoError(t, err)
			}
			tx, err := db.Begin(bg, nil)
			require.NoError(t, err)
			require.NoError(t, tx.Update(bg, "t", k, val))
			require.NoError(t, tx.Commit())
			if locker != nil {
				require.NoError(t, locker.Commit())
			}
		}
	}
	work(0, n/10) // warm up
	before, heapBefore := measure()
	work(n/10, n)
	after, heapAfter := measure()
	t.Logf("%d updates on %d rows: tuple versions %d -> %d, Go heap %.1f MB -> %.1f MB, multixacts live %d -> %d (created %d), clog entries %d -> %d, versions reclaimed %d",
		n, rows, before.TuplesLive, after.TuplesLive, float64(heapBefore)/1e6, float64(heapAfter)/1e6,
		before.MultiXactsLive, after.MultiXactsLive, after.MultiXactsCreated, before.CommitLogEntries, after.CommitLogEntries, after.TuplesReclaimed)
	require.Equal(t, uint64(rows), after.TuplesLive, "only the newest version of each row survives vacuum")
	require.Less(t, heapAfter, heapBefore+16<<20, "Go heap grew by more than 16 MB")
	require.LessOrEqual(t, after.CommitLogEntries, before.CommitLogEntries+2*16384, "commit log must be truncated")
	require.Less(t, after.MultiXactsLive, uint64(8192), "multixacts must be reclaimed")
	require.Greater(t, after.MultiXactsCreated, uint64(n/8))
}

// dumpLocks renders who holds and awaits what, for a failure message.
func dumpLocks(db *tupled.DB) string {
	var b strings.Builder
	for _, l := range db.Locks() {
		if strings.HasPrefix(l.Tag, "transaction") && l.Granted {
			continue
		}
		fmt.Fprintf(&b, "tx %d %s %s granted=%v waited=%v\n", l.TxID, l.Mode, l.Tag, l.Granted, time.Since(l.WaitStart).Round(time.Millisecond))
	}
	rl, _ := db.RowLocks(bg, "t")
	for _, r := range rl {
		fmt.Fprintf(&b, "row %s: lockers %v modes %v multi=%v\n", r.Key, r.Lockers, r.Modes, r.Multi)
	}
	return b.String()
}
