package tupled_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

// errorsDB opens a database for TestErrorFields: table t with rows a and
// b; customers (alice) and orders (o1 → alice) under the foreign key
// orders_customer_fkey (NO ACTION); users (u1 → x@y) with the unique
// index users_email_key on its value.
func errorsDB(t *testing.T) *tupled.DB {
	t.Helper()
	db := openDB(t, &tupled.Options{DeadlockTimeout: 20 * time.Millisecond}, map[string]string{"a": "1", "b": "2"})
	for _, tbl := range []string{"customers", "orders", "users"} {
		require.NoError(t, db.CreateTable(bg, tbl))
	}
	require.NoError(t, db.AddForeignKey(bg, tupled.ForeignKey{
		Name: "orders_customer_fkey", Table: "orders", RefTable: "customers",
		Ref: func(key, value []byte) ([]byte, bool) { return value, true },
	}))
	require.NoError(t, db.CreateIndex(bg, "users", "users_email_key", tupled.IndexOptions{
		Unique: true, Key: func(key, value []byte) ([]byte, bool) { return value, true },
	}))
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
		return errors.Join(
			tx.Insert(bg, "customers", []byte("alice"), nil),
			tx.Insert(bg, "orders", []byte("o1"), []byte("alice")),
			tx.Insert(bg, "users", []byte("u1"), []byte("x@y")),
			tx.Insert(bg, "t", []byte{0, 1}, nil))
	}))
	return db
}

// TestErrorFields: every error the API returns with a SQLSTATE reads into
// a *tupled.Error with its code, table, constraint and detail, while
// errors.Is still matches its sentinel (on the error and on the *Error)
// and the text is the error's own.
func TestErrorFields(t *testing.T) {
	lock := func(tx *tupled.Tx, k string, w tupled.WaitPolicy) error {
		_, err := tx.Lock(bg, "t", []byte(k), tupled.ForUpdate, w)
		return err
	}
	cases := []struct {
		name     string
		call     func(t *testing.T, db *tupled.DB) error
		sentinel error
		want     tupled.Error // Code, Table, Constraint, Detail, Hint compared; Message must be err.Error()
	}{
		{"duplicate primary key", func(t *testing.T, db *tupled.DB) error {
			return begin(t, db, nil).Insert(bg, "t", []byte("a"), nil)
		}, tupled.ErrDuplicateKey, tupled.Error{Code: "23505", Table: "t", Constraint: "t_pkey", Detail: "Key (key)=(a) already exists."}},
		{"duplicate binary primary key", func(t *testing.T, db *tupled.DB) error {
			return begin(t, db, nil).Insert(bg, "t", []byte{0, 1}, nil)
		}, tupled.ErrDuplicateKey, tupled.Error{Code: "23505", Table: "t", Constraint: "t_pkey", Detail: `Key (key)=(\x0001) already exists.`}},
		{"duplicate unique index key", func(t *testing.T, db *tupled.DB) error {
			return begin(t, db, nil).Insert(bg, "users", []byte("u2"), []byte("x@y"))
		}, tupled.ErrDuplicateKey, tupled.Error{Code: "23505", Table: "users", Constraint: "users_email_key", Detail: "Key (users_email_key)=(x@y) already exists."}},
		{"unique index over duplicates", func(t *testing.T, db *tupled.DB) error {
			return db.CreateIndex(bg, "t", "t_same_key", tupled.IndexOptions{Unique: true, Key: func(k, v []byte) ([]byte, bool) { return []byte("same"), true }})
		}, tupled.ErrDuplicateKey, tupled.Error{Code: "23505", Table: "t", Constraint: "t_same_key"}},
		{"foreign key: missing parent", func(t *testing.T, db *tupled.DB) error {
			return begin(t, db, nil).Insert(bg, "orders", []byte("o2"), []byte("nobody"))
		}, tupled.ErrForeignKeyViolation, tupled.Error{Code: "23503", Table: "orders", Constraint: "orders_customer_fkey", Detail: `Key (key)=(nobody) is not present in table "customers".`}},
		{"foreign key: parent still referenced", func(t *testing.T, db *tupled.DB) error {
			return begin(t, db, nil).Delete(bg, "customers", []byte("alice"))
		}, tupled.ErrForeignKeyViolation, tupled.Error{Code: "23503", Table: "orders", Constraint: "orders_customer_fkey", Detail: `Key (key)=(alice) is still referenced from table "orders".`}},
		{"drop a referenced table", func(t *testing.T, db *tupled.DB) error {
			return db.DropTable(bg, "customers", nil)
		}, tupled.ErrDependentObjects, tupled.Error{Code: "2BP01", Detail: "constraint orders_customer_fkey on table orders depends on table customers",
			Hint: "Drop the foreign key (DropForeignKey) or the referencing table first."}},
		{"row lock NOWAIT", func(t *testing.T, db *tupled.DB) error {
			require.NoError(t, lock(begin(t, db, nil), "a", tupled.Wait))
			return lock(begin(t, db, nil), "a", tupled.NoWait)
		}, tupled.ErrLockNotAvailable, tupled.Error{Code: "55P03", Table: "t"}},
		{"table lock NOWAIT", func(t *testing.T, db *tupled.DB) error {
			require.NoError(t, begin(t, db, nil).LockTable(bg, "t", tupled.AccessExclusive, false))
			return begin(t, db, nil).LockTable(bg, "t", tupled.AccessShare, true)
		}, tupled.ErrLockNotAvailable, tupled.Error{Code: "55P03", Table: "t"}},
		{"lock timeout", func(t *testing.T, db *tupled.DB) error {
			require.NoError(t, lock(begin(t, db, nil), "a", tupled.Wait))
			return lock(begin(t, db, &tupled.TxOptions{LockTimeout: time.Millisecond}), "a", tupled.Wait)
		}, tupled.ErrLockTimeout, tupled.Error{Code: "55P03"}},
		{"deadlock", func(t *testing.T, db *tupled.DB) error {
			tx1, tx2 := begin(t, db, nil), begin(t, db, nil)
			require.NoError(t, lock(tx1, "a", tupled.Wait))
			require.NoError(t, lock(tx2, "b", tupled.Wait))
			e1 := async(func() error { return lock(tx1, "b", tupled.Wait) })
			eventually(t, "tx1 waits", func() bool { return waitingOn(db, tx1) })
			e2 := async(func() error { return lock(tx2, "a", tupled.Wait) })
			// One is the victim; the other gets its lock once the victim's go.
			return errors.Join(<-e1, <-e2)
		}, tupled.ErrDeadlock, tupled.Error{Code: "40P01"}},
		{"serialization failure", func(t *testing.T, db *tupled.DB) error {
			rr := begin(t, db, &tupled.TxOptions{Isolation: tupled.RepeatableRead})
			_, err := rr.Get(bg, "t", []byte("a"))
			require.NoError(t, err)
			require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error { return tx.Update(bg, "t", []byte("a"), []byte("3")) }))
			return rr.Update(bg, "t", []byte("a"), []byte("4"))
		}, tupled.ErrSerialization, tupled.Error{Code: "40001"}},
		{"aborted transaction", func(t *testing.T, db *tupled.DB) error {
			tx := begin(t, db, nil)
			require.Error(t, tx.Insert(bg, "t", []byte("a"), nil))
			_, err := tx.Get(bg, "t", []byte("b"))
			return err
		}, tupled.ErrTxAborted, tupled.Error{Code: "25P02"}},
		{"no savepoint", func(t *testing.T, db *tupled.DB) error {
			return begin(t, db, nil).RollbackTo("nope")
		}, tupled.ErrNoSavepoint, tupled.Error{Code: "3B001"}},
		{"no table", func(t *testing.T, db *tupled.DB) error {
			_, err := begin(t, db, nil).Get(bg, "missing", []byte("a"))
			return err
		}, tupled.ErrNoTable, tupled.Error{Code: "42P01"}},
		{"table exists", func(t *testing.T, db *tupled.DB) error { return db.CreateTable(bg, "t") }, tupled.ErrTableExists, tupled.Error{Code: "42P07"}},
		{"no index", func(t *testing.T, db *tupled.DB) error { return db.DropIndex(bg, "nope", false) }, tupled.ErrNoIndex, tupled.Error{Code: "42704"}},
		{"read-only transaction", func(t *testing.T, db *tupled.DB) error {
			return begin(t, db, &tupled.TxOptions{ReadOnly: true}).Insert(bg, "t", []byte("c"), nil)
		}, tupled.ErrReadOnly, tupled.Error{Code: "25006"}},
		{"key too long", func(t *testing.T, db *tupled.DB) error {
			return begin(t, db, nil).Insert(bg, "t", make([]byte, tupled.MaxKeySize+1), nil)
		}, tupled.ErrProgramLimitExceeded, tupled.Error{Code: "54000"}},
		{"invalid option", func(t *testing.T, db *tupled.DB) error {
			_, err := tupled.Open("", &tupled.Options{LockTimeout: -1})
			return err
		}, tupled.ErrInvalid, tupled.Error{Code: "22023"}},
		{"canceled context", func(t *testing.T, db *tupled.DB) error {
			ctx, cancel := context.WithCancel(bg)
			cancel()
			return db.AddForeignKey(ctx, tupled.ForeignKey{Name: "x", Table: "orders", RefTable: "customers"})
		}, context.Canceled, tupled.Error{Code: "57014"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := errorsDB(t)
			err := c.call(t, db)
			require.Error(t, err)
			for _, err := range []error{err, fmt.Errorf("wrapped: %w", err)} {
				var e *tupled.Error
				require.True(t, errors.As(err, &e), "errors.As(%v, *tupled.Error)", err)
				got := tupled.Error{Code: e.Code, Table: e.Table, Constraint: e.Constraint, Detail: e.Detail, Hint: e.Hint}
				require.Equal(t, c.want, got)
				require.Equal(t, tupled.SQLState(err), e.SQLState())
				require.True(t, strings.HasSuffix(err.Error(), e.Error()), "text %q, *Error's %q", err, e)
				if c.sentinel != nil {
					require.ErrorIs(t, err, c.sentinel)
					require.ErrorIs(t, e, c.sentinel)
				}
			}
		})
	}
}

// TestErrorFieldsForeignKeyError: a foreign key violation reads into both
// *tupled.Error and *tupled.ForeignKeyError.
func TestErrorFieldsForeignKeyError(t *testing.T) {
	db := errorsDB(t)
	err := begin(t, db, nil).Insert(bg, "orders", []byte("o2"), []byte("nobody"))
	var e *tupled.Error
	var fe *tupled.ForeignKeyError
	require.True(t, errors.As(err, &e))
	require.True(t, errors.As(err, &fe))
	require.True(t, errors.As(e, &fe), "through the *Error too")
	require.Equal(t, "orders_customer_fkey", fe.FK.Name)
	require.Equal(t, `insert or update on table "orders" violates foreign key constraint "orders_customer_fkey"`, e.Message)
}

// TestErrorFieldsNoSQLState: an error without a SQLSTATE is not a
// *tupled.Error, and errors.As leaves the target alone.
func TestErrorFieldsNoSQLState(t *testing.T) {
	db := errorsDB(t)
	tx := begin(t, db, nil)
	_, notFound := tx.Get(bg, "t", []byte("zzz"))
	require.NoError(t, lock(t, db, "a"))
	_, skipped := tx.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.SkipLocked)
	own := errors.New("the callback's own error")
	fromRunTx := db.RunTx(bg, nil, func(*tupled.Tx) error { return own })
	require.NoError(t, tx.Rollback())
	_, done := tx.Get(bg, "t", []byte("a"))
	for _, err := range []error{notFound, skipped, fromRunTx, done, tupled.ErrClosed} {
		require.Error(t, err)
		var e *tupled.Error
		require.False(t, errors.As(err, &e), "%v", err)
		require.Nil(t, e)
	}
	require.ErrorIs(t, notFound, tupled.ErrNotFound)
	require.ErrorIs(t, skipped, tupled.ErrSkipped)
	require.ErrorIs(t, fromRunTx, own)
	require.ErrorIs(t, done, tupled.ErrTxDone)
}

// lock locks row k of t FOR UPDATE in a transaction of its own, left open
// until the test ends.
func lock(t *testing.T, db *tupled.DB, k string) error {
	_, err := begin(t, db, nil).Lock(bg, "t", []byte(k), tupled.ForUpdate, tupled.Wait)
	return err
}

// TestErrorSentinels: a sentinel itself reads into a *tupled.Error with
// its code and text.
func TestErrorSentinels(t *testing.T) {
	for _, c := range []struct {
		err  error
		code string
	}{
		{tupled.ErrDeadlock, "40P01"}, {tupled.ErrSerialization, "40001"}, {tupled.ErrDuplicateKey, "23505"},
		{tupled.ErrForeignKeyViolation, "23503"}, {tupled.ErrNoSavepoint, "3B001"}, {tupled.ErrIndexNotReady, "55000"},
		{tupled.ErrDiskFull, "53100"}, {tupled.ErrCorrupted, "XX001"}, {tupled.ErrObjectInUse, "55006"},
	} {
		var e *tupled.Error
		require.True(t, errors.As(c.err, &e), "%v", c.err)
		require.Equal(t, c.code, e.Code)
		require.Equal(t, c.err.Error(), e.Message)
		require.ErrorIs(t, e, c.err)
	}
}
