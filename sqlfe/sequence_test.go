package sqlfe

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/tupled/tupled"
)

// Sequences are durable: a standalone sequence's definition and state, a
// serial column's sequence after setval and ALTER SEQUENCE, and a dropped
// sequence's absence all survive closing and reopening a disk database.
// (What each statement answers is in testdata/sql/sequence.test, checked
// against PostgreSQL.)
func TestSequencesSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	open := func() (*tupled.DB, *Session) {
		db, err := tupled.Open(dir, &tupled.Options{VacuumInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		eng, err := NewExecutor(context.Background(), db, nil)
		if err != nil {
			t.Fatal(err)
		}
		return db, eng.NewSession(1, "test", nil)
	}
	db, s := open()
	mustRun(t, s, "CREATE SEQUENCE s INCREMENT BY 5 START 10 MAXVALUE 30", "CREATE SEQUENCE")
	mustRun(t, s, "SELECT nextval('s'), nextval('s')", "10|15\nSELECT 1")
	mustRun(t, s, "CREATE SEQUENCE gone", "CREATE SEQUENCE")
	mustRun(t, s, "DROP SEQUENCE gone", "DROP SEQUENCE")
	mustRun(t, s, "CREATE TABLE w (id serial PRIMARY KEY, x int); INSERT INTO w (x) VALUES (1), (2)", "CREATE TABLE\nINSERT 0 2")
	mustRun(t, s, "SELECT setval('w_id_seq', 40)", "40\nSELECT 1")
	mustRun(t, s, "ALTER SEQUENCE w_id_seq INCREMENT BY 10", "ALTER SEQUENCE")
	s.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, s = open()
	defer db.Close()
	defer s.Close()
	mustFail(t, s, "SELECT currval('s')", CodeObjectNotInState, `currval of sequence "s" is not yet defined in this session`)
	mustRun(t, s, "SELECT last_value, is_called FROM s", "15|t\nSELECT 1")
	mustRun(t, s, "SELECT nextval('s'), nextval('s'), nextval('s')", "20|25|30\nSELECT 1")
	mustFail(t, s, "SELECT nextval('s')", "2200H", `nextval: reached maximum value of sequence "s" (30)`)
	mustFail(t, s, "SELECT nextval('gone')", CodeUndefinedTable, `relation "gone" does not exist`)
	mustRun(t, s, "INSERT INTO w (x) VALUES (3) RETURNING id", "50\nINSERT 0 1")
	mustRun(t, s, "SELECT seqincrement FROM pg_sequence WHERE seqrelid = 'w_id_seq'::regclass", "10\nSELECT 1")
}

// Concurrent sessions never get the same value, and a value taken in a
// transaction that rolls back is not given back (nextval is not
// transactional).
func TestSequenceConcurrentNextval(t *testing.T) {
	eng, s := newTestSession(t)
	mustRun(t, s, "CREATE SEQUENCE c", "CREATE SEQUENCE")
	const sessions, each = 4, 50
	got := make([][]int64, sessions)
	var wg sync.WaitGroup
	for i := 0; i < sessions; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ss := eng.NewSession(int32(10+i), "test", nil)
			defer ss.Close()
			for j := 0; j < each; j++ {
				out, err := run(t, ss, "BEGIN; SELECT nextval('c'); ROLLBACK")
				if err != nil {
					t.Error(err)
					return
				}
				var v int64
				if _, err := fmt.Sscanf(out, "BEGIN\n%d", &v); err != nil {
					t.Errorf("%q: %v", out, err)
					return
				}
				got[i] = append(got[i], v)
			}
		}(i)
	}
	wg.Wait()
	seen := map[int64]bool{}
	for _, vs := range got {
		for _, v := range vs {
			if seen[v] {
				t.Fatalf("value %d handed out twice", v)
			}
			seen[v] = true
		}
	}
	for v := int64(1); v <= sessions*each; v++ {
		if !seen[v] {
			t.Fatalf("value %d never handed out (%d values)", v, len(seen))
		}
	}
	mustRun(t, s, "SELECT nextval('c')", fmt.Sprintf("%d\nSELECT 1", sessions*each+1))
}
