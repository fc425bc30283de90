package tupled_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/tupled/tupled"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var bg = context.Background()

// openDB opens an in-memory database with table "t" holding rows k -> v.
func openDB(t testing.TB, opts *tupled.Options, rows map[string]string) *tupled.DB {
	t.Helper()
	db, err := tupled.Open("", opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	require.NoError(t, db.CreateTable(bg, "t"))
	if len(rows) > 0 {
		require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
			for k, v := range rows {
				if err := tx.Insert(bg, "t", []byte(k), []byte(v)); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	return db
}

func begin(t testing.TB, db *tupled.DB, opts *tupled.TxOptions) *tupled.Tx {
	t.Helper()
	tx, err := db.Begin(bg, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

// waitingOn reports whether tx shows as a waiter in db.Locks().
func waitingOn(db *tupled.DB, tx *tupled.Tx) bool {
	for _, l := range db.Locks() {
		if !l.Granted && l.TxID == tx.ID() {
			return true
		}
	}
	return false
}

// eventually polls cond (observable state, not a sleep that hopes).
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// async runs f in a goroutine and returns a channel with its error.
func async(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

func key(i int) []byte { return []byte(fmt.Sprintf("k%05d", i)) }
