package utils

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

var bg = context.Background()

// Backend is one of the backends the suites run on, with its subtest name.
type Backend struct {
	Name string
	B    tupled.Backend
}

// Backends are both backends, pebble first.
var Backends = []Backend{{"pebble", tupled.Pebble}, {"bbolt", tupled.Bbolt}}

// Begin begins a transaction that the test's cleanup rolls back.
func Begin(t testing.TB, db *tupled.DB, opts *tupled.TxOptions) *tupled.Tx {
	t.Helper()
	tx, err := db.Begin(bg, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

// Get reads key k of table "t" in a transaction of its own; false if the
// row is absent.
func Get(t testing.TB, db *tupled.DB, k string) (string, bool) {
	t.Helper()
	tx := Begin(t, db, nil)
	defer tx.Rollback()
	v, err := tx.Get(bg, "t", []byte(k))
	if err == tupled.ErrNotFound {
		return "", false
	}
	require.NoError(t, err)
	return string(v), true
}

// Eventually polls cond (observable state, not a sleep that hopes).
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// Async runs f in a goroutine and returns a channel with its error.
func Async(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

// Key is the i-th key of the suites' tables: "k00042".
func Key(i int) []byte { return []byte(fmt.Sprintf("k%05d", i)) }
