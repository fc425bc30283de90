package tupled_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strconv"

	"github.com/tupled/tupled"
)

// Open an in-memory database, create a table, write a row and read it back.
func Example() {
	ctx := context.Background()
	db, err := tupled.Open("", nil) // "": in memory; a directory: on disk
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	if err := db.CreateTable(ctx, "kv"); err != nil {
		log.Fatal(err)
	}
	err = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.Insert(ctx, "kv", []byte("greeting"), []byte("hello"))
	})
	if err != nil {
		log.Fatal(err)
	}

	tx, err := db.Begin(ctx, &tupled.TxOptions{ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback()
	v, err := tx.Get(ctx, "kv", []byte("greeting"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", v)
	_, err = tx.Get(ctx, "kv", []byte("farewell"))
	fmt.Println(errors.Is(err, tupled.ErrNotFound))
	// Output:
	// hello
	// true
}

// A bank transfer: lock both accounts FOR NO KEY UPDATE (the strength
// Update takes anyway), in key order so that two opposite transfers cannot
// deadlock, then write both balances. RunTx commits, and retries the whole
// function if the transaction is chosen as a deadlock victim or fails to
// serialize; fn therefore computes everything from what it reads inside the
// transaction.
func ExampleDB_RunTx() {
	ctx := context.Background()
	db, err := tupled.Open("", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateTable(ctx, "accounts"); err != nil {
		log.Fatal(err)
	}
	err = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		if err := tx.Insert(ctx, "accounts", []byte("alice"), []byte("100")); err != nil {
			return err
		}
		return tx.Insert(ctx, "accounts", []byte("bob"), []byte("50"))
	})
	if err != nil {
		log.Fatal(err)
	}

	transfer := func(from, to string, amount int) error {
		return db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
			first, second := from, to
			if second < first {
				first, second = second, first
			}
			balance := map[string]int{}
			for _, name := range []string{first, second} {
				v, err := tx.Lock(ctx, "accounts", []byte(name), tupled.ForNoKeyUpdate, tupled.Wait)
				if err != nil {
					return err
				}
				if balance[name], err = strconv.Atoi(string(v)); err != nil {
					return err
				}
			}
			if balance[from] < amount {
				return fmt.Errorf("%s has only %d", from, balance[from])
			}
			balance[from] -= amount
			balance[to] += amount
			for _, name := range []string{from, to} {
				if err := tx.Update(ctx, "accounts", []byte(name), []byte(strconv.Itoa(balance[name]))); err != nil {
					return err
				}
			}
			return nil
		})
	}

	fmt.Println(transfer("alice", "bob", 30))
	fmt.Println(transfer("bob", "alice", 500)) // fn's error: rolled back, not retried

	err = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.Scan(ctx, "accounts", tupled.ScanOptions{}, func(key, value []byte) error {
			fmt.Printf("%s %s\n", key, value)
			return nil
		})
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// <nil>
	// bob has only 80
	// alice 70
	// bob 80
}

// A job queue: each worker claims the first job no other worker holds, with
// a locking scan that skips locked rows (SELECT ... ORDER BY key LIMIT 1
// FOR UPDATE SKIP LOCKED), works on it inside its transaction, and deletes
// it at commit. A worker that crashes or rolls back releases its job for
// the next one.
func ExampleTx_Scan_skipLocked() {
	ctx := context.Background()
	db, err := tupled.Open("", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateTable(ctx, "jobs"); err != nil {
		log.Fatal(err)
	}
	err = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		for _, job := range []string{"job-1", "job-2", "job-3"} {
			if err := tx.Insert(ctx, "jobs", []byte(job), []byte("payload of "+job)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}

	// claim locks the first job not locked by another transaction; "" if
	// there is none.
	claim := func(tx *tupled.Tx) (string, error) {
		var job string
		opts := tupled.ScanOptions{Limit: 1, Lock: tupled.ForUpdate, Wait: tupled.SkipLocked}
		err := tx.Scan(ctx, "jobs", opts, func(key, value []byte) error {
			job = string(key)
			return nil
		})
		return job, err
	}

	// Two workers, each in its own transaction (in a real program, its own
	// goroutine): neither waits for the other.
	a, err := db.Begin(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	b, err := db.Begin(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	jobA, err := claim(a)
	if err != nil {
		log.Fatal(err)
	}
	jobB, err := claim(b)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("worker a took", jobA)
	fmt.Println("worker b took", jobB)

	// a finishes its job; b fails and rolls back, which releases job-2.
	if err := a.Delete(ctx, "jobs", []byte(jobA)); err != nil {
		log.Fatal(err)
	}
	if err := a.Commit(); err != nil {
		log.Fatal(err)
	}
	_ = b.Rollback()

	err = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		job, err := claim(tx)
		if err != nil {
			return err
		}
		fmt.Println("next worker took", job)
		return tx.Delete(ctx, "jobs", []byte(job))
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// worker a took job-1
	// worker b took job-2
	// next worker took job-2
}

// A foreign-key parent lock. A transaction inserting an order locks its
// customer FOR KEY SHARE, as PostgreSQL's foreign-key check does: the
// customer cannot be deleted (or its key changed) until the order commits,
// but it can still be updated in its other columns, because Update is a
// no-key update (FOR NO KEY UPDATE) and does not conflict with FOR KEY
// SHARE. Delete takes FOR UPDATE, which does.
func ExampleTx_Lock_foreignKey() {
	ctx := context.Background()
	db, err := tupled.Open("", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	for _, t := range []string{"customers", "orders"} {
		if err := db.CreateTable(ctx, t); err != nil {
			log.Fatal(err)
		}
	}
	err = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.Insert(ctx, "customers", []byte("c1"), []byte("Alice"))
	})
	if err != nil {
		log.Fatal(err)
	}

	// The order entry: key-share lock the parent, then insert the child.
	order, err := db.Begin(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := order.Lock(ctx, "customers", []byte("c1"), tupled.ForKeyShare, tupled.Wait); err != nil {
		log.Fatal(err)
	}
	if err := order.Insert(ctx, "orders", []byte("o1"), []byte("c1")); err != nil {
		log.Fatal(err)
	}

	// Renaming the customer is not blocked by the order.
	err = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.Update(ctx, "customers", []byte("c1"), []byte("Alice Smith"))
	})
	fmt.Println("rename:", err)

	// Deleting the customer would wait for the order to commit: asked with
	// NOWAIT (the strength Delete takes is FOR UPDATE), it fails at once.
	err = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		if _, err := tx.Lock(ctx, "customers", []byte("c1"), tupled.ForUpdate, tupled.NoWait); err != nil {
			return err
		}
		return tx.Delete(ctx, "customers", []byte("c1"))
	})
	fmt.Println("delete:", tupled.SQLState(err), err)

	if err := order.Commit(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// rename: <nil>
	// delete: 55P03 could not obtain lock on row in relation "customers"
}

// NOWAIT: a lock request that finds the row locked in a conflicting
// strength fails at once with ErrLockNotAvailable (SQLSTATE 55P03) instead
// of waiting. As in PostgreSQL, the error aborts the transaction: every
// later call but Rollback fails with ErrTxAborted (25P02).
func ExampleTx_Lock_noWait() {
	ctx := context.Background()
	db, err := tupled.Open("", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateTable(ctx, "t"); err != nil {
		log.Fatal(err)
	}
	err = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.Insert(ctx, "t", []byte("k"), []byte("v"))
	})
	if err != nil {
		log.Fatal(err)
	}

	holder, err := db.Begin(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer holder.Rollback()
	if _, err := holder.Lock(ctx, "t", []byte("k"), tupled.ForUpdate, tupled.Wait); err != nil {
		log.Fatal(err)
	}

	tx, err := db.Begin(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback()
	_, err = tx.Lock(ctx, "t", []byte("k"), tupled.ForShare, tupled.NoWait)
	switch {
	case errors.Is(err, tupled.ErrLockNotAvailable):
		fmt.Println("busy:", tupled.SQLState(err), err)
	case err != nil:
		log.Fatal(err)
	}
	_, err = tx.Get(ctx, "t", []byte("k"))
	fmt.Println("then:", tupled.SQLState(err), errors.Is(err, tupled.ErrTxAborted))
	// Output:
	// busy: 55P03 could not obtain lock on row in relation "t"
	// then: 25P02 true
}

// REPEATABLE READ: the transaction reads one snapshot, so when a row it
// reads is changed by a transaction that commits after that snapshot was
// taken, its own update of the row fails with ErrSerialization (SQLSTATE
// 40001) instead of overwriting a value it never saw. RunTx retries the
// whole function in a new transaction, which sees the new value. fn must
// therefore be safe to run again: here it starts each attempt from what it
// reads, and the concurrent update is made on the first attempt only (a
// stand-in for another client, made step by step so the outcome is fixed).
func ExampleDB_RunTx_repeatableRead() {
	ctx := context.Background()
	db, err := tupled.Open("", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateTable(ctx, "counters"); err != nil {
		log.Fatal(err)
	}
	key := []byte("visits")
	err = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.Insert(ctx, "counters", key, []byte("10"))
	})
	if err != nil {
		log.Fatal(err)
	}

	attempts := 0
	err = db.RunTx(ctx, &tupled.TxOptions{Isolation: tupled.RepeatableRead}, func(tx *tupled.Tx) error {
		attempts++
		v, err := tx.Get(ctx, "counters", key) // takes the snapshot
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(string(v))
		if err != nil {
			return err
		}
		if attempts == 1 {
			// Another client adds 5 and commits after our snapshot.
			err := db.RunTx(ctx, nil, func(other *tupled.Tx) error {
				return other.Update(ctx, "counters", key, []byte("15"))
			})
			if err != nil {
				return err
			}
		}
		err = tx.Update(ctx, "counters", key, []byte(strconv.Itoa(n+1)))
		if err != nil {
			fmt.Printf("attempt %d read %d: %s %v\n", attempts, n, tupled.SQLState(err), err)
			return err // retryable: RunTx rolls back and runs fn again
		}
		fmt.Printf("attempt %d read %d: wrote %d\n", attempts, n, n+1)
		return nil
	})
	fmt.Println("RunTx:", err, "after", attempts, "attempts")
	// Output:
	// attempt 1 read 10: 40001 could not serialize access due to concurrent update
	// attempt 2 read 15: wrote 16
	// RunTx: <nil> after 2 attempts
}
