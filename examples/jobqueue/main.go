// Command jobqueue is a job queue on tupled's embedded API: producers
// enqueue jobs, workers claim them with a SKIP LOCKED scan that filters
// out finished jobs (PostgreSQL's SELECT ... WHERE NOT done ORDER BY id
// LIMIT 1 FOR UPDATE SKIP LOCKED), run them, and mark them done in the same
// transaction, so a job is done exactly once even when workers crash.
//
//	go run ./examples/jobqueue -jobs 1000 -workers 8
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"sync"
	"sync/atomic"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/keys"
)

const table = "jobs"

// A job's value is its state byte followed by its payload.
const (
	todo = 't'
	done = 'd'
)

// Queue is a job queue in a tupled table; keys are packed sequence
// numbers, so jobs are claimed in the order they were enqueued.
type Queue struct {
	db   *tupled.DB
	next atomic.Uint64
}

// Open makes the queue's table if it is not there yet.
func Open(ctx context.Context, db *tupled.DB) (*Queue, error) {
	if err := db.CreateTable(ctx, table); err != nil && !errors.Is(err, tupled.ErrTableExists) {
		return nil, err
	}
	q := &Queue{db: db}
	// Continue numbering after the last job already there.
	err := db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		for row, err := range tx.Rows(ctx, table, tupled.ScanOptions{Reverse: true, Limit: 1}) {
			if err != nil {
				return err
			}
			last, err := keys.NewReader(row.Key).Uint()
			q.next.Store(last)
			return err
		}
		return nil
	})
	return q, err
}

// Enqueue adds a job and returns its id.
func (q *Queue) Enqueue(ctx context.Context, payload []byte) (uint64, error) {
	id := q.next.Add(1)
	return id, q.db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.Insert(ctx, table, keys.MustPack(id), append([]byte{todo}, payload...))
	})
}

// claim is the queue's one query: the first job not done that no other
// worker holds, locked FOR UPDATE.
var claim = tupled.ScanOptions{
	Where: func(_, value []byte) bool { return value[0] == todo },
	Lock:  tupled.ForUpdate, Wait: tupled.SkipLocked, Limit: 1,
}

// Work claims one job and runs fn on it in the claiming transaction; the
// job is marked done only if fn succeeds and the transaction commits. It
// reports false when no job is free.
func (q *Queue) Work(ctx context.Context, fn func(tx *tupled.Tx, id uint64, payload []byte) error) (bool, error) {
	var found bool
	err := q.db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		found = false
		for job, err := range tx.Rows(ctx, table, claim) {
			if err != nil {
				return err
			}
			id, err := keys.NewReader(job.Key).Uint()
			if err != nil {
				return err
			}
			if err := fn(tx, id, job.Value[1:]); err != nil {
				return err
			}
			found = true
			job.Value[0] = done
			return tx.Update(ctx, table, job.Key, job.Value)
		}
		return nil
	})
	return found, err
}

func main() {
	jobs := flag.Int("jobs", 1000, "jobs to enqueue")
	workers := flag.Int("workers", 8, "concurrent workers")
	dir := flag.String("data", "", "database directory (default: in memory)")
	flag.Parse()
	ctx := context.Background()
	db, err := tupled.Open(*dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	q, err := Open(ctx, db)
	if err != nil {
		log.Fatal(err)
	}
	for i := range *jobs {
		if _, err := q.Enqueue(ctx, fmt.Appendf(nil, "job %d", i)); err != nil {
			log.Fatal(err)
		}
	}
	perWorker := make([]int, *workers)
	var wg sync.WaitGroup
	for w := range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ok, err := q.Work(ctx, func(*tupled.Tx, uint64, []byte) error { return nil })
				if err != nil {
					log.Fatal(err)
				}
				if !ok {
					return
				}
				perWorker[w]++
			}
		}()
	}
	wg.Wait()
	fmt.Printf("%d jobs done by %d workers: %v\n", *jobs, *workers, perWorker)
}
