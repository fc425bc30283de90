package tupled_test

import (
	"testing"

	"github.com/tupled/tupled"
)

// BenchmarkQueueClaim measures one claim of a queue whose head is busy: 100
// jobs done, then 7 held by other workers, then free ones. "where" claims
// with ScanOptions.Where; "workaround" with the plain Scan, Lock SKIP
// LOCKED and a recheck. Each claim is rolled back, so every iteration sees
// the same queue.
func BenchmarkQueueClaim(b *testing.B) {
	db := openDB(b, nil, nil)
	if err := db.CreateTable(bg, "jobs"); err != nil {
		b.Fatal(err)
	}
	if err := db.RunTx(bg, nil, func(tx *tupled.Tx) error {
		for i := range 200 {
			v := "todo"
			if i < 100 {
				v = "done"
			}
			if err := tx.Insert(bg, "jobs", key(i), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	for i := 100; i < 107; i++ {
		holder := begin(b, db, nil)
		if _, err := holder.Lock(bg, "jobs", key(i), tupled.ForUpdate, tupled.Wait); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name  string
		claim claimFunc
	}{{"where", claimWherePlain}, {"where-instrumented", claimWhere}, {"workaround", claimWorkaround}} {
		b.Run(c.name, func(b *testing.B) {
			q := &queueStats{}
			for b.Loop() {
				tx, err := db.Begin(bg, nil)
				if err != nil {
					b.Fatal(err)
				}
				k, _, err := c.claim(tx, q)
				if err != nil || string(k) != string(key(107)) {
					b.Fatalf("claimed %q, %v", k, err)
				}
				_ = tx.Rollback()
			}
			if q.skips.Load() > 0 {
				b.ReportMetric(float64(q.skips.Load())/float64(b.N), "skips/claim")
			}
		})
	}
}

// claimWherePlain is claimWhere without the test's bookkeeping.
func claimWherePlain(tx *tupled.Tx, _ *queueStats) ([]byte, []string, error) {
	var claimed []byte
	for row, err := range tx.Rows(bg, "jobs", tupled.ScanOptions{
		Where: func(k, v []byte) bool { return string(v) == "todo" },
		Lock:  tupled.ForUpdate, Wait: tupled.SkipLocked, Limit: 1,
	}) {
		if err != nil {
			return nil, nil, err
		}
		claimed = row.Key
	}
	return claimed, nil, nil
}
