package tupled_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

// requireLimit asserts err is the refusal of an over-limit size.
func requireLimit(t *testing.T, err error, state string, what string) {
	t.Helper()
	require.Error(t, err, what)
	require.Equal(t, state, tupled.SQLState(err), "%s: %v", what, err)
}

// TestLimits: at every limit the engine stores the row and keeps it across
// a reopen; one past it the call is refused with PostgreSQL's SQLSTATE
// (54000 for sizes, 42622 for names), the transaction is aborted, and the
// database stays fully usable — it commits, closes and reopens. Before the
// limits existed a key over bbolt's 32 KiB (with its table prefix) was
// acknowledged and then failed every checkpoint, Close and Open.
func TestLimits(t *testing.T) {
	cases := append([]struct {
		name string
		b    tupled.Backend
	}{{"memory", tupled.Pebble}}, backends...)
	for _, be := range cases {
		t.Run(be.name, func(t *testing.T) {
			dir := ""
			if be.name != "memory" {
				dir = t.TempDir()
			}
			opts := &tupled.Options{Backend: be.b, VacuumInterval: -1}
			db, err := tupled.Open(dir, opts)
			require.NoError(t, err)

			long := strings.Repeat("n", tupled.MaxTableNameLen)
			require.NoError(t, db.CreateTable(bg, long))
			err = db.CreateTable(bg, long+"n")
			requireLimit(t, err, "42622", "table name one past the limit")
			require.True(t, errors.Is(err, tupled.ErrNameTooLong))
			require.NoError(t, db.CreateTable(bg, "t"))

			keyAt := bytes.Repeat([]byte{'k'}, tupled.MaxKeySize)
			keyPast := append(bytes.Clone(keyAt), 'k')
			key32K := bytes.Repeat([]byte{'k'}, 32<<10) // bbolt's own limit: the finding's key
			require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
				if err := tx.Insert(bg, long, keyAt, []byte("in the long-named table")); err != nil {
					return err
				}
				if err := tx.Insert(bg, "t", keyAt, []byte("at the key limit")); err != nil {
					return err
				}
				return tx.Insert(bg, "t", []byte("x"), []byte("x"))
			}))
			valuePast := make([]byte, tupled.MaxValueSize+1) // never touched: the refusal must not copy it
			past := []struct {
				name string
				op   func(tx *tupled.Tx) error
			}{
				{"insert key", func(tx *tupled.Tx) error { return tx.Insert(bg, "t", keyPast, nil) }},
				{"insert 32 KiB key", func(tx *tupled.Tx) error { return tx.Insert(bg, "t", key32K, nil) }},
				{"insert key, long table name", func(tx *tupled.Tx) error { return tx.Insert(bg, long, keyPast, nil) }},
				{"get", func(tx *tupled.Tx) error { _, err := tx.Get(bg, "t", key32K); return err }},
				{"lock", func(tx *tupled.Tx) error {
					_, err := tx.Lock(bg, "t", keyPast, tupled.ForUpdate, tupled.NoWait)
					return err
				}},
				{"update key", func(tx *tupled.Tx) error { return tx.Update(bg, "t", keyPast, []byte("v")) }},
				{"delete", func(tx *tupled.Tx) error { return tx.Delete(bg, "t", key32K) }},
				{"scan start", func(tx *tupled.Tx) error {
					return tx.Scan(bg, "t", tupled.ScanOptions{Start: key32K}, func(k, v []byte) error { return nil })
				}},
				{"scan end", func(tx *tupled.Tx) error {
					return tx.Scan(bg, "t", tupled.ScanOptions{End: keyPast}, func(k, v []byte) error { return nil })
				}},
				{"locking scan end", func(tx *tupled.Tx) error {
					return tx.Scan(bg, "t", tupled.ScanOptions{End: key32K, Lock: tupled.ForShare}, func(k, v []byte) error { return nil })
				}},
				{"insert value", func(tx *tupled.Tx) error { return tx.Insert(bg, "t", []byte("big"), valuePast) }},
				{"update value", func(tx *tupled.Tx) error { return tx.Update(bg, "t", []byte("x"), valuePast) }},
			}
			for _, c := range past {
				tx, err := db.Begin(bg, nil)
				require.NoError(t, err)
				err = c.op(tx)
				requireLimit(t, err, "54000", c.name)
				require.True(t, errors.Is(err, tupled.ErrProgramLimitExceeded), c.name)
				_, err = tx.Get(bg, "t", []byte("x"))
				require.ErrorIs(t, err, tupled.ErrTxAborted, "%s: the error aborts the transaction", c.name)
				require.ErrorIs(t, tx.Commit(), tupled.ErrTxAborted, c.name)
			}
			// Still fully usable.
			require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
				return tx.Update(bg, "t", []byte("x"), []byte("after the refusals"))
			}))
			var valueAt []byte
			if !testing.Short() {
				// One value of exactly MaxValueSize, marked at both ends.
				valueAt = make([]byte, tupled.MaxValueSize)
				valueAt[0], valueAt[len(valueAt)-1] = 'a', 'z'
				require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
					return tx.Insert(bg, "t", []byte("big"), valueAt)
				}))
			}
			require.NoError(t, db.Close())
			if dir == "" {
				return
			}

			db, err = tupled.Open(dir, opts)
			require.NoError(t, err)
			defer func() { require.NoError(t, db.Close()) }()
			tx := begin(t, db, nil)
			v, err := tx.Get(bg, "t", keyAt)
			require.NoError(t, err)
			require.Equal(t, "at the key limit", string(v))
			v, err = tx.Get(bg, long, keyAt)
			require.NoError(t, err)
			require.Equal(t, "in the long-named table", string(v))
			v, err = tx.Get(bg, "t", []byte("x"))
			require.NoError(t, err)
			require.Equal(t, "after the refusals", string(v))
			if valueAt != nil {
				v, err = tx.Get(bg, "t", []byte("big"))
				require.NoError(t, err)
				require.Len(t, v, tupled.MaxValueSize)
				require.Equal(t, []byte{'a', 'z'}, []byte{v[0], v[len(v)-1]})
			}
			require.NoError(t, tx.Commit())
		})
	}
}
