package tupled_test

import (
	"context"
	"fmt"
	"log"

	"github.com/tupled/tupled"
)

// A session-level advisory lock as a leader election: one worker holds
// "job 7" across its transactions; the others' try fails until it lets go.
func ExampleSession_AdvisoryLock() {
	ctx := context.Background()
	db, err := tupled.Open("", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	job := tupled.AdvisoryKeyPair(1, 7) // pg_advisory_lock(1, 7)

	leader, other := db.NewSession(), db.NewSession()
	defer leader.Close() // a session's end releases its locks
	defer other.Close()

	if err := leader.AdvisoryLock(ctx, job, false); err != nil {
		log.Fatal(err)
	}
	tx, err := leader.Begin(ctx, nil) // a transaction of the session
	if err != nil {
		log.Fatal(err)
	}
	_ = tx.Rollback() // the session-level lock survives it

	ok, err := other.TryAdvisoryLock(ctx, job, false)
	fmt.Println("other got the job:", ok, err)

	released, _ := leader.AdvisoryUnlock(job, false)
	ok, err = other.TryAdvisoryLock(ctx, job, false)
	fmt.Println("released:", released, "other got the job:", ok, err)
	// Output:
	// other got the job: false <nil>
	// released: true other got the job: true <nil>
}

// A transaction-level advisory lock serializes a critical section across
// transactions; it is released at commit or rollback.
func ExampleTx_AdvisoryLock() {
	ctx := context.Background()
	db, err := tupled.Open("", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	err = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		// pg_advisory_xact_lock(42): waits while another transaction holds it
		return tx.AdvisoryLock(ctx, tupled.AdvisoryKeyInt64(42), false)
	})
	fmt.Println(err, len(db.Locks()) == 0)
	// Output: <nil> true
}
