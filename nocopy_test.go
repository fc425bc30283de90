package tupled_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tupled/tupled"
)

// TestNoCopyReads: GetNoCopy and LockNoCopy return what Get and Lock
// return, with the same errors, and a value stays what it was until the
// transaction ends even when the row is updated and deleted and vacuum
// reclaims the version it came from.
func TestNoCopyReads(t *testing.T) {
	db := openDB(t, &tupled.Options{VacuumInterval: -1}, map[string]string{"a": "alpha", "b": "beta"})
	tx := begin(t, db, nil)
	ga, err := tx.GetNoCopy(bg, "t", []byte("a"))
	require.NoError(t, err)
	require.Equal(t, "alpha", string(ga))
	lb, err := tx.LockNoCopy(bg, "t", []byte("b"), tupled.ForShare, tupled.Wait)
	require.NoError(t, err)
	require.Equal(t, "beta", string(lb))
	_, err = tx.GetNoCopy(bg, "t", []byte("zz"))
	require.ErrorIs(t, err, tupled.ErrNotFound)
	_, err = tx.LockNoCopy(bg, "t", []byte("zz"), tupled.ForShare, tupled.Wait)
	require.ErrorIs(t, err, tupled.ErrNotFound)

	// Another transaction updates a and deletes it; vacuum reclaims every
	// version it can. tx's READ COMMITTED snapshot has moved on, but the
	// values it was lent are still its own until it ends.
	require.NoError(t, db.RunTx(bg, nil, func(w *tupled.Tx) error { return w.Update(bg, "t", []byte("a"), []byte("ALPHA")) }))
	require.NoError(t, db.RunTx(bg, nil, func(w *tupled.Tx) error { return w.Delete(bg, "t", []byte("a")) }))
	db.Vacuum()
	db.Vacuum()
	require.Equal(t, "alpha", string(ga))
	require.Equal(t, "beta", string(lb))
	_, err = tx.GetNoCopy(bg, "t", []byte("a"))
	require.ErrorIs(t, err, tupled.ErrNotFound)
	require.NoError(t, tx.Commit())

	ro := begin(t, db, &tupled.TxOptions{ReadOnly: true})
	_, err = ro.LockNoCopy(bg, "t", []byte("b"), tupled.ForShare, tupled.Wait)
	require.ErrorIs(t, err, tupled.ErrReadOnly)
	_, err = begin(t, db, nil).GetNoCopy(bg, "nosuch", []byte("b"))
	require.ErrorIs(t, err, tupled.ErrNoTable)
}

// TestNoCopyUnderVacuum: readers hold values lent by GetNoCopy and
// LockNoCopy across an updater that rewrites every row and vacuum passes
// that reclaim the versions they read (run it under -race): every value a
// reader holds must read, until its transaction ends, as the whole,
// self-consistent value it was when it was read.
func TestNoCopyUnderVacuum(t *testing.T) {
	const keys, rounds = 8, 200
	rows := map[string]string{}
	value := func(k, gen int) []byte { return fmt.Appendf(nil, "%d:%06d:%d", k, gen, k*1000003+gen) }
	valid := func(k int, v []byte) bool {
		var kk, gen, sum int
		_, err := fmt.Sscanf(string(v), "%d:%d:%d", &kk, &gen, &sum)
		return err == nil && kk == k && sum == k*1000003+gen && bytes.Equal(v, value(k, gen))
	}
	for k := range keys {
		rows[fmt.Sprint(k)] = string(value(k, 0))
	}
	db := openDB(t, &tupled.Options{VacuumInterval: -1}, rows)

	var wg sync.WaitGroup
	errc := make(chan error, 4)
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // the updater and vacuum
		defer wg.Done()
		defer close(stop)
		for gen := 1; gen <= rounds; gen++ {
			err := db.RunTx(bg, nil, func(tx *tupled.Tx) error {
				for k := range keys {
					if err := tx.Update(bg, "t", []byte(fmt.Sprint(k)), value(k, gen)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				errc <- err
				return
			}
			db.Vacuum()
		}
	}()
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
				err := db.RunTx(bg, nil, func(tx *tupled.Tx) error {
					held := map[int][]byte{}
					for j := range keys {
						k := (i + j) % keys
						var v []byte
						var err error
						if r == 0 {
							v, err = tx.GetNoCopy(bg, "t", []byte(fmt.Sprint(k)))
						} else {
							v, err = tx.LockNoCopy(bg, "t", []byte(fmt.Sprint(k)), tupled.ForKeyShare, tupled.Wait)
						}
						if err != nil {
							return err
						}
						held[k] = v
						for hk, hv := range held {
							if !valid(hk, hv) {
								return fmt.Errorf("value of %d held in the transaction reads %q", hk, hv)
							}
						}
					}
					return nil
				})
				if err != nil && !errors.Is(err, tupled.ErrDeadlock) {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
}

// TestScanNoCopy: a NoCopy scan passes its callback the rows a copying
// scan passes (same keys, values and order, forward, reverse, in a range
// and through an index), in memory and on disk; with a lock strength it
// is ErrInvalid and the transaction is aborted.
func TestScanNoCopy(t *testing.T) {
	for _, dir := range []string{"", t.TempDir()} {
		db, err := tupled.Open(dir, &tupled.Options{VacuumInterval: -1})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, db.Close()) })
		require.NoError(t, db.CreateTable(bg, "t"))
		require.NoError(t, db.CreateIndex(bg, "t", "t_by_len", tupled.IndexOptions{Key: func(key, value []byte) ([]byte, bool) {
			return []byte{byte(len(value))}, true
		}}))
		require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
			for i := range 50 {
				if err := tx.Insert(bg, "t", fmt.Appendf(nil, "k%03d", i), bytes.Repeat([]byte{'v'}, 1+i%4)); err != nil {
					return err
				}
			}
			return nil
		}))
		collect := func(tx *tupled.Tx, opts tupled.ScanOptions, index []byte) []string {
			var out []string
			fn := func(k, v []byte) error {
				out = append(out, string(k)+"="+string(v)) // copies, as the rule asks
				return nil
			}
			if index != nil {
				require.NoError(t, tx.IndexScan(bg, "t_by_len", index, opts, fn))
			} else {
				require.NoError(t, tx.Scan(bg, "t", opts, fn))
			}
			return out
		}
		tx := begin(t, db, nil)
		for _, c := range []struct {
			opts  tupled.ScanOptions
			index []byte
		}{
			{tupled.ScanOptions{}, nil},
			{tupled.ScanOptions{Reverse: true, Limit: 7}, nil},
			{tupled.ScanOptions{Start: []byte("k010"), End: []byte("k020")}, nil},
			{tupled.ScanOptions{Where: func(_, v []byte) bool { return len(v) == 2 }}, nil},
			{tupled.ScanOptions{}, []byte{3}},
		} {
			want := collect(tx, c.opts, c.index)
			require.NotEmpty(t, want)
			c.opts.NoCopy = true
			require.Equal(t, want, collect(tx, c.opts, c.index), "%+v", c.opts)
		}
		require.NoError(t, tx.Commit())

		tx = begin(t, db, nil)
		err = tx.Scan(bg, "t", tupled.ScanOptions{NoCopy: true, Lock: tupled.ForShare}, func(k, v []byte) error { return nil })
		require.ErrorIs(t, err, tupled.ErrInvalid)
		require.ErrorIs(t, tx.Insert(bg, "t", []byte("x"), []byte("y")), tupled.ErrTxAborted)
	}
}
