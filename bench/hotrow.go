package bench

import (
	"context"

	"github.com/tupled/tupled"
)

// hotRow is the foreign-key parent pattern: every client's transaction locks
// the same row FOR KEY SHARE (as PostgreSQL's RI trigger does for a child
// insert) and commits. With many clients the row always has other live
// lockers, so every lock records a multixact — the hot-row cost the design
// hints name (copying the live members into a new immutable set per locker).
// Variants: plain (the same transaction reading the row), keyshare, share.
// Config.HotRows spreads the clients over that many hot rows (default 1).
// Each client runs its transactions through a Session of its own, as a
// pgbench client runs them on its connection (a Session reuses its
// transaction's record: no allocation per transaction, issue 28).
type hotRow struct{ dbs dbCache }

func (*hotRow) Name() string              { return "hotrow" }
func (*hotRow) Variants(*Config) []string { return []string{"plain", "keyshare"} }
func (*hotRow) All() []string             { return []string{"plain", "keyshare", "share"} }
func (*hotRow) Baseline(*Config) string   { return "plain" }
func (w *hotRow) Close() error            { return w.dbs.close() }

func (w *hotRow) Prepare(ctx context.Context, cfg *Config, variant string) (*Prepared, error) {
	hot := max(cfg.HotRows, 1)
	if cfg.Rows < hot {
		cfg.Rows = hot
	}
	db, fresh, err := w.dbs.open(cfg, "", tupled.Options{})
	if err != nil {
		return nil, err
	}
	if fresh {
		if _, err := ensureTable(ctx, db, "parent", cfg.Rows, func(int) []byte { return accountValue(0) }); err != nil {
			return nil, err
		}
	}
	strength, lock := map[string]tupled.LockStrength{"keyshare": tupled.ForKeyShare, "share": tupled.ForShare}[variant]
	before := db.Stats()
	p := &Prepared{DB: db}
	p.Setup = func(c *Client) error { c.State = db.NewSession(); return nil }
	p.Txn = func(ctx context.Context, c *Client) error {
		tx, err := c.State.(*tupled.Session).Begin(ctx, nil)
		if err != nil {
			return err
		}
		k := key4(1 + c.ID%hot)
		c.RoundTrip()
		if lock {
			_, err = tx.Lock(ctx, "parent", k, strength, tupled.Wait)
		} else {
			_, err = tx.Get(ctx, "parent", k)
		}
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
			r.AddExtra("multixacts created per transaction", float64(s.MultiXactsCreated-before.MultiXactsCreated)/n)
			r.AddExtra("of them appended in place (no copy)", float64(s.MultiXactsAppended-before.MultiXactsAppended)/n)
			r.AddExtra("locks through a multixact per transaction", float64(s.LocksMultiXact-before.LocksMultiXact)/n)
		}
	}
	return p, nil
}
