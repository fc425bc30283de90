package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/tupled/tupled"
)

// forShare is the 2012 seed: each transaction locks three random rows of a
// pgbench_accounts-like table (1M rows by default) and commits, like
//
//	BEGIN;
//	SELECT abalance FROM pgbench_accounts WHERE aid = :aid FOR SHARE;  -- ×3
//	COMMIT;
//
// Variants: plain (the same three reads without a lock), keyshare, share,
// nokeyupdate, update (the four strengths). With ShareFastPath "off" every
// locking variant runs with Options.ShareFastPathOff (a multixact for every
// lock: the pre-9.3 situation the seed measured); with "both" each locking
// variant runs twice, the second time as "<variant>/fastpath-off".
type forShare struct{ dbs dbCache }

func (*forShare) Name() string { return "forshare" }

var forShareStrengths = map[string]tupled.LockStrength{
	"keyshare":    tupled.ForKeyShare,
	"share":       tupled.ForShare,
	"nokeyupdate": tupled.ForNoKeyUpdate,
	"update":      tupled.ForUpdate,
}

const fastPathOffSuffix = "/fastpath-off"

func (*forShare) Variants(cfg *Config) []string {
	base := []string{"plain", "keyshare", "share", "nokeyupdate", "update"}
	switch cfg.ShareFastPath {
	case "off":
		out := []string{"plain"}
		for _, v := range base[1:] {
			out = append(out, v+fastPathOffSuffix)
		}
		return out
	case "both":
		out := base
		for _, v := range base[1:] {
			out = append(out, v+fastPathOffSuffix)
		}
		return out
	}
	return base
}

func (*forShare) All() []string {
	out := []string{"plain", "keyshare", "share", "nokeyupdate", "update"}
	for _, v := range out[1:] {
		out = append(out, v+fastPathOffSuffix)
	}
	return out
}

func (*forShare) Baseline(*Config) string { return "plain" }

// Ratios adds the fast path's effect: each strength with the fast path on
// over the same strength with it off (P2 is share's).
func (*forShare) Ratios(rep *Report) []Ratio {
	tps := map[string]float64{}
	for _, r := range rep.Results {
		tps[r.Variant] = r.TPS
	}
	var out []Ratio
	for _, r := range rep.Results {
		if off, ok := tps[r.Variant+fastPathOffSuffix]; ok && off > 0 {
			out = append(out, Ratio{Variant: r.Variant, Baseline: r.Variant + fastPathOffSuffix, TPS: r.TPS / off})
		}
	}
	return out
}

func (w *forShare) Prepare(ctx context.Context, cfg *Config, variant string) (*Prepared, error) {
	rows := cfg.Rows
	if rows <= 0 {
		rows = 1_000_000
	}
	cfg.Rows = rows
	name, off := strings.CutSuffix(variant, fastPathOffSuffix)
	key := "fastpath-on"
	if off {
		key = "fastpath-off"
	}
	db, fresh, err := w.dbs.open(cfg, key, tupled.Options{ShareFastPathOff: off})
	if err != nil {
		return nil, err
	}
	var load float64
	if fresh {
		d, err := ensureTable(ctx, db, "accounts", rows, func(int) []byte { return accountValue(0) })
		if err != nil {
			return nil, err
		}
		load = d.Seconds()
		if d > 0 {
			fmt.Fprintf(cfg.Out, "loaded %d rows in %.1f s\n", rows, load)
		}
	}
	strength, lock := forShareStrengths[name]
	before := db.Stats()
	p := &Prepared{DB: db}
	p.Txn = func(ctx context.Context, c *Client) error {
		tx, err := db.Begin(ctx, nil)
		if err != nil {
			return err
		}
		for range 3 {
			c.RoundTrip()
			k := key4(1 + c.Rand.IntN(rows))
			var v []byte
			if lock {
				v, err = tx.Lock(ctx, "accounts", k, strength, tupled.Wait)
			} else {
				v, err = tx.Get(ctx, "accounts", k)
			}
			if err != nil {
				_ = tx.Rollback()
				return err
			}
			_ = balanceOf(v)
		}
		c.RoundTrip()
		return tx.Commit()
	}
	p.After = func(r *Result) {
		s := db.Stats()
		n := float64(r.Transactions)
		if n == 0 {
			return
		}
		r.AddExtra("multixacts created per transaction", float64(s.MultiXactsCreated-before.MultiXactsCreated)/n)
		r.AddExtra("locks through a multixact per transaction", float64(s.LocksMultiXact-before.LocksMultiXact)/n)
		r.AddExtra("WAL fsyncs per transaction", float64(s.WALFsyncs-before.WALFsyncs)/n)
	}
	return p, nil
}

func (w *forShare) Close() error { return w.dbs.close() }
