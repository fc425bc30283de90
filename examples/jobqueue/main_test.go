package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/tupled/tupled"
)

// TestEveryJobOnce: 8 workers drain 200 jobs; every job runs exactly once,
// including those whose first worker failed (its claim rolled back), and
// no job is left undone. Then the queue reopens on disk and goes on
// numbering after the last job.
func TestEveryJobOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := tupled.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	q, err := Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	for i := range n {
		if _, err := q.Enqueue(ctx, fmt.Appendf(nil, "%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	ran := map[uint64]int{}
	failed := map[uint64]bool{}
	errBoom := errors.New("boom")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ok, err := q.Work(ctx, func(tx *tupled.Tx, id uint64, payload []byte) error {
					mu.Lock()
					defer mu.Unlock()
					if id%10 == 0 && !failed[id] { // every tenth job fails once
						failed[id] = true
						return errBoom
					}
					if string(payload) != fmt.Sprint(id-1) {
						t.Errorf("job %d has payload %q", id, payload)
					}
					ran[id]++
					return nil
				})
				if errors.Is(err, errBoom) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(ran) != n {
		t.Fatalf("%d jobs ran, want %d", len(ran), n)
	}
	for id, c := range ran {
		if c != 1 {
			t.Errorf("job %d ran %d times", id, c)
		}
	}
	if ok, err := q.Work(ctx, func(*tupled.Tx, uint64, []byte) error { t.Error("a done job was claimed"); return nil }); ok || err != nil {
		t.Fatalf("after draining: %v, %v", ok, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = tupled.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q, err = Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	id, err := q.Enqueue(ctx, []byte("after reopen"))
	if err != nil || id != n+1 {
		t.Fatalf("first job after reopen: id %d, %v", id, err)
	}
	var got uint64
	if ok, err := q.Work(ctx, func(_ *tupled.Tx, id uint64, _ []byte) error { got = id; return nil }); !ok || err != nil || got != n+1 {
		t.Fatalf("claim after reopen: %v %v job %d", ok, err, got)
	}
}
