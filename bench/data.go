package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/tupled/tupled"
)

// dbCache keeps the databases of a run open across its variants, one per
// set of engine options (key), so that variants that can share data load it
// once. In memory every key's database stays open until close: variants
// run alternately (--rounds) then find their data where they left it, and
// no round pays for collecting the garbage of another's. On disk only one
// can be open (they share cfg.DataDir); opening another key closes it.
type dbCache struct {
	dbs map[string]*tupled.DB
}

// open returns a database with opts for cfg (in-memory, or cfg.DataDir),
// reusing the open one of the same key; fresh says it was just opened.
func (c *dbCache) open(cfg *Config, key string, opts tupled.Options) (db *tupled.DB, fresh bool, err error) {
	if db := c.dbs[key]; db != nil {
		return db, false, nil
	}
	if cfg.DataDir != "" {
		if err := c.close(); err != nil {
			return nil, false, err
		}
	}
	sync := cfg.SyncCommit
	opts.SyncCommit = &sync
	opts.Backend = cfg.Backend
	db, err = tupled.Open(cfg.DataDir, &opts)
	if err != nil {
		return nil, false, err
	}
	if c.dbs == nil {
		c.dbs = make(map[string]*tupled.DB)
	}
	c.dbs[key] = db
	return db, true, nil
}

// close closes every open database.
func (c *dbCache) close() error {
	var errs []error
	for k, db := range c.dbs {
		errs = append(errs, db.Close())
		delete(c.dbs, k)
	}
	return errors.Join(errs...)
}

// key4 is row i's key: 4 bytes big-endian, so keys sort by number (the
// pgbench aid).
func key4(i int) []byte {
	var k [4]byte
	binary.BigEndian.PutUint32(k[:], uint32(i))
	return k[:]
}

// accountValue is a pgbench_accounts-like row: abalance and filler (~90 bytes).
func accountValue(balance int64) []byte {
	v := make([]byte, 8, 8+84)
	binary.BigEndian.PutUint64(v, uint64(balance))
	for len(v) < cap(v) {
		v = append(v, ' ')
	}
	return v
}

func balanceOf(v []byte) int64 {
	if len(v) < 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

const metaTable = "bench_meta"

// ensureTable creates table with rows rows (keys key4(1..rows), values from
// value) unless a previous run left exactly that in the database (on-disk
// runs reuse their data). It reports how long loading took (0 when reused).
func ensureTable(ctx context.Context, db *tupled.DB, table string, rows int, value func(i int) []byte) (time.Duration, error) {
	t0 := time.Now()
	for _, name := range []string{metaTable, table} {
		if err := db.CreateTable(ctx, name); err != nil && !errors.Is(err, tupled.ErrTableExists) {
			return 0, err
		}
	}
	var have int
	err := db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		v, err := tx.Get(ctx, metaTable, []byte(table))
		if errors.Is(err, tupled.ErrNotFound) {
			have = 0
			return nil
		}
		if err != nil {
			return err
		}
		have, err = strconv.Atoi(string(v))
		return err
	})
	if err != nil {
		return 0, err
	}
	if have == rows {
		return 0, nil
	}
	if have != 0 {
		return 0, fmt.Errorf("table %s holds %d rows from an earlier run, not %d: use another --data directory", table, have, rows)
	}
	// Bulk load: the rows go in a few big transactions — one per core,
	// each a streamed commit (internal/durable/commit.go) of up to loadBatch rows, run
	// side by side on disjoint key ranges — instead of many small commits
	// that each wait for a WAL fsync. The collector runs less often while
	// the table grows (the load allocates a gigabyte that stays live; at
	// the default GOGC a third of its CPU went to marking it again and
	// again). A checkpoint then writes the rows to the backend, so that
	// the first measured round does not pay for the background checkpoint
	// the load's WAL would trigger. The row count goes into metaTable last:
	// a load cut short leaves no count, and the next run says so.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	workers := max(1, runtime.GOMAXPROCS(0))
	batch := min(loadBatch, (rows+workers-1)/workers)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		next = 1
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				lo := next
				next += batch
				stop := len(errs) > 0
				mu.Unlock()
				if lo > rows || stop {
					return
				}
				hi := min(lo+batch-1, rows)
				err := db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
					for i := lo; i <= hi; i++ {
						if err := tx.Insert(ctx, table, key4(i), value(i)); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, fmt.Errorf("loading %s: %w", table, err)
	}
	err = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.Insert(ctx, metaTable, []byte(table), []byte(strconv.Itoa(rows)))
	})
	if err != nil {
		return 0, fmt.Errorf("loading %s: %w", table, err)
	}
	if err := db.Checkpoint(); err != nil {
		return 0, fmt.Errorf("checkpoint after loading %s: %w", table, err)
	}
	return time.Since(t0), nil
}

// loadTxns is how many transactions ensureTable loads rows rows in.
func loadTxns(rows int) int {
	workers := max(1, runtime.GOMAXPROCS(0))
	batch := min(loadBatch, (rows+workers-1)/workers)
	return (rows + batch - 1) / batch
}

// loadBatch is the most rows ensureTable inserts in one transaction: a
// million ~90-byte rows is a ~120 MB write set, which memory holds easily;
// manyrows' 10M rows go in ten.
const loadBatch = 1_000_000

func isExists(err error) bool { return errors.Is(err, tupled.ErrTableExists) }
