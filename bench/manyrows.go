package bench

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/tupled/tupled"
)

// manyRows: one transaction locks every row of a big table (10M by default)
// FOR SHARE with a locking scan, like
//
//	BEGIN; SELECT count(*) FROM (SELECT 1 FROM accounts FOR SHARE) s; COMMIT;
//
// PostgreSQL keeps row locks in tuple headers, so locking ten million rows
// costs no lock-manager memory; tupled does the same (an xmax write per row,
// nothing in the lock manager). The figures are rows locked per second and
// how much the Go heap grew while the transaction held its locks (measured
// after a GC, before commit), plus the lock manager's entry count.
//
// Variants: share (the default), keyshare, update. Each client runs one such
// transaction over the whole table (use -c 1, the default).
type manyRows struct{ dbs dbCache }

func (*manyRows) Name() string              { return "manyrows" }
func (*manyRows) DefaultClients() int       { return 1 }
func (*manyRows) Variants(*Config) []string { return []string{"share"} }
func (*manyRows) All() []string             { return []string{"share", "keyshare", "update"} }
func (*manyRows) Baseline(*Config) string   { return "" }
func (w *manyRows) Close() error            { return w.dbs.close() }

func (w *manyRows) Prepare(ctx context.Context, cfg *Config, variant string) (*Prepared, error) {
	if cfg.Rows <= 0 {
		cfg.Rows = 10_000_000
	}
	rows := cfg.Rows
	// Vacuum would visit every row each second while the transaction runs;
	// the figure is about the locks, so it stays off here.
	db, fresh, err := w.dbs.open(cfg, "", tupled.Options{VacuumInterval: -1})
	if err != nil {
		return nil, err
	}
	if fresh {
		d, err := ensureTable(ctx, db, "accounts", rows, func(int) []byte { return accountValue(0) })
		if err != nil {
			return nil, err
		}
		if d > 0 {
			fmt.Fprintf(cfg.Out, "loaded %d rows in %.1f s\n", rows, d.Seconds())
		}
	}
	strength := map[string]tupled.LockStrength{"share": tupled.ForShare, "keyshare": tupled.ForKeyShare, "update": tupled.ForUpdate}[variant]
	var (
		growth     []float64
		lockCounts []int
		locked     []int
		scanTime   time.Duration
	)
	p := &Prepared{DB: db, Once: true}
	p.Txn = func(ctx context.Context, c *Client) error {
		heapBefore := heapInUse()
		tx, err := db.Begin(ctx, nil)
		if err != nil {
			return err
		}
		n := 0
		t0 := time.Now()
		err = tx.Scan(ctx, "accounts", tupled.ScanOptions{Lock: strength}, func(_, _ []byte) error {
			n++
			return nil
		})
		if err != nil {
			_ = tx.Rollback()
			return err
		}
		scanTime += time.Since(t0) // the GCs of heapInUse are not the locks' cost
		growth = append(growth, float64(heapInUse())-float64(heapBefore))
		lockCounts = append(lockCounts, len(db.Locks()))
		locked = append(locked, n)
		return tx.Commit()
	}
	p.After = func(r *Result) {
		var total int
		for _, n := range locked {
			total += n
		}
		r.AddExtra("rows locked", float64(total))
		if scanTime > 0 {
			// Summed over clients: with -c > 1 this is per client.
			r.AddExtra("rows locked per second", float64(total)/scanTime.Seconds()*float64(len(locked)))
		}
		var g float64
		for _, x := range growth {
			g = max(g, x)
		}
		r.AddExtra("heap growth while holding the locks (MB)", g/(1<<20))
		var lc int
		for _, x := range lockCounts {
			lc = max(lc, x)
		}
		r.AddExtra("lock-manager entries while holding the locks", float64(lc))
	}
	return p, nil
}

// heapInUse is the live Go heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
