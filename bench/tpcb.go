package bench

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/tupled/tupled"
)

// tpcb is pgbench's built-in TPC-B-like script over the embedded API:
//
//	UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
//	SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
//	UPDATE pgbench_tellers  SET tbalance = tbalance + :delta WHERE tid = :tid;
//	UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
//	INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (...);
//
// with scale s = Config.Rows/100000 (default 1: 100,000 accounts, 10
// tellers, 1 branch). Every transaction writes, so every commit appends a WAL
// record; with --data and sync commit on, concurrent commits share fsyncs
// (group commit): "WAL fsyncs per commit" is goal P8's figure (≤ 0.2 with 30
// writers). An update reads the row FOR NO KEY UPDATE first (what an UPDATE
// does in PostgreSQL); conflicts wait, deadlocks are not possible because the
// order accounts → tellers → branches is the same for everyone.
type tpcb struct{ dbs dbCache }

func (*tpcb) Name() string              { return "tpcb-like" }
func (*tpcb) Variants(*Config) []string { return []string{"tpcb"} }
func (*tpcb) All() []string             { return []string{"tpcb"} }
func (*tpcb) Baseline(*Config) string   { return "" }
func (w *tpcb) Close() error            { return w.dbs.close() }

type tpcbClient struct{ seq uint64 }

func (w *tpcb) Prepare(ctx context.Context, cfg *Config, variant string) (*Prepared, error) {
	if cfg.Rows <= 0 {
		cfg.Rows = 100_000
	}
	scale := max(cfg.Rows/100_000, 1)
	accounts, tellers, branches := cfg.Rows, 10*scale, scale
	db, fresh, err := w.dbs.open(cfg, "", tupled.Options{})
	if err != nil {
		return nil, err
	}
	if fresh {
		for _, t := range []struct {
			name string
			n    int
		}{{"pgbench_accounts", accounts}, {"pgbench_tellers", tellers}, {"pgbench_branches", branches}} {
			d, err := ensureTable(ctx, db, t.name, t.n, func(int) []byte { return accountValue(0) })
			if err != nil {
				return nil, err
			}
			if d > 0 {
				fmt.Fprintf(cfg.Out, "loaded %d rows into %s in %.1f s\n", t.n, t.name, d.Seconds())
			}
		}
		if err := db.CreateTable(ctx, "pgbench_history"); err != nil && !isExists(err) {
			return nil, err
		}
	}
	run := cfg.Seed // history keys are unique per run and client
	before := db.Stats()
	add := func(ctx context.Context, c *Client, tx *tupled.Tx, table string, key []byte, delta int64) (int64, error) {
		c.RoundTrip()
		v, err := tx.Lock(ctx, table, key, tupled.ForNoKeyUpdate, tupled.Wait)
		if err != nil {
			return 0, err
		}
		b := balanceOf(v) + delta
		return b, tx.Update(ctx, table, key, accountValue(b))
	}
	p := &Prepared{DB: db}
	p.Setup = func(c *Client) error { c.State = &tpcbClient{}; return nil }
	p.Txn = func(ctx context.Context, c *Client) error {
		st := c.State.(*tpcbClient)
		aid, tid, bid := 1+c.Rand.IntN(accounts), 1+c.Rand.IntN(tellers), 1+c.Rand.IntN(branches)
		delta := int64(c.Rand.IntN(10001) - 5000)
		tx, err := db.Begin(ctx, nil)
		if err != nil {
			return err
		}
		err = func() error {
			if _, err := add(ctx, c, tx, "pgbench_accounts", key4(aid), delta); err != nil {
				return err
			}
			c.RoundTrip()
			if _, err := tx.Get(ctx, "pgbench_accounts", key4(aid)); err != nil {
				return err
			}
			if _, err := add(ctx, c, tx, "pgbench_tellers", key4(tid), delta); err != nil {
				return err
			}
			if _, err := add(ctx, c, tx, "pgbench_branches", key4(bid), delta); err != nil {
				return err
			}
			st.seq++
			hk := make([]byte, 20)
			binary.BigEndian.PutUint64(hk, run)
			binary.BigEndian.PutUint32(hk[8:], uint32(c.ID))
			binary.BigEndian.PutUint64(hk[12:], st.seq)
			hv := make([]byte, 24)
			binary.BigEndian.PutUint32(hv, uint32(tid))
			binary.BigEndian.PutUint32(hv[4:], uint32(bid))
			binary.BigEndian.PutUint32(hv[8:], uint32(aid))
			binary.BigEndian.PutUint64(hv[12:], uint64(delta))
			c.RoundTrip()
			return tx.Insert(ctx, "pgbench_history", hk, hv)
		}()
		if err != nil {
			_ = tx.Rollback()
			return err
		}
		c.RoundTrip()
		return tx.Commit()
	}
	p.After = func(r *Result) {
		s := db.Stats()
		if n := float64(r.Transactions); n > 0 {
			r.AddExtra("WAL fsyncs per commit", float64(s.WALFsyncs-before.WALFsyncs)/n)
			r.AddExtra("WAL records per commit", float64(s.WALRecords-before.WALRecords)/n)
		}
	}
	return p, nil
}
