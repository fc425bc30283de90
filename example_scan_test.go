package tupled_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/tupled/tupled"
)

// A job queue consumer: claim the first job not yet done that no other
// worker holds (PostgreSQL's SELECT ... WHERE NOT done ORDER BY id LIMIT 1
// FOR UPDATE SKIP LOCKED), then mark it done. Jobs that are done are never
// locked; jobs another worker holds are passed over.
func ExampleTx_Rows() {
	ctx := context.Background()
	db, _ := tupled.Open("", nil)
	defer db.Close()
	_ = db.CreateTable(ctx, "jobs")
	_ = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		for _, id := range []string{"job1", "job2", "job3"} {
			if err := tx.Insert(ctx, "jobs", []byte(id), []byte("todo")); err != nil {
				return err
			}
		}
		return nil
	})

	claim := tupled.ScanOptions{
		Where: func(key, value []byte) bool { return string(value) == "todo" },
		Lock:  tupled.ForUpdate, Wait: tupled.SkipLocked, Limit: 1,
	}
	other, _ := db.Begin(ctx, nil) // another worker, holding job1
	_, _ = other.Lock(ctx, "jobs", []byte("job1"), tupled.ForUpdate, tupled.Wait)

	err := db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		for job, err := range tx.Rows(ctx, "jobs", claim) {
			if err != nil {
				return err
			}
			fmt.Printf("claimed %s\n", job.Key)
			return tx.Update(ctx, "jobs", job.Key, []byte("done"))
		}
		fmt.Println("nothing to do")
		return nil
	})
	fmt.Println(err)
	_ = other.Rollback()
	// Output:
	// claimed job2
	// <nil>
}

// "Delete unless locked" in one call: PostgreSQL's DELETE ... WHERE k IN
// (SELECT k ... FOR UPDATE SKIP LOCKED).
func ExampleTx_DeleteWait() {
	ctx := context.Background()
	db, _ := tupled.Open("", nil)
	defer db.Close()
	_ = db.CreateTable(ctx, "sessions")
	_ = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.Insert(ctx, "sessions", []byte("s1"), []byte("expired"))
	})
	holder, _ := db.Begin(ctx, nil)
	_, _ = holder.Lock(ctx, "sessions", []byte("s1"), tupled.ForShare, tupled.Wait)

	tx, _ := db.Begin(ctx, nil)
	err := tx.DeleteWait(ctx, "sessions", []byte("s1"), tupled.SkipLocked)
	fmt.Println(errors.Is(err, tupled.ErrSkipped)) // in use: left alone
	_ = holder.Commit()
	fmt.Println(tx.DeleteWait(ctx, "sessions", []byte("s1"), tupled.SkipLocked))
	fmt.Println(tx.Commit())
	// Output:
	// true
	// <nil>
	// <nil>
}
