package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

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

// xidReserveChunk mirrors the engine's xid reservation block (internal/durable/durable.go):
// an on-disk database logs and fsyncs one reservation record per that many
// transaction ids.
const xidReserveChunk = 1 << 16

// Variants are goal P1's two, plain and share, by default: alternated
// over rounds they give P1's ratio. "off" replaces share by
// share/fastpath-off; "both" runs the two shares (P2's ratio). The other
// strengths run on request (--variants plain,keyshare,share,nokeyupdate,update).
func (*forShare) Variants(cfg *Config) []string {
	switch cfg.ShareFastPath {
	case "off":
		return []string{"plain", "share" + fastPathOffSuffix}
	case "both":
		return []string{"plain", "share", "share" + fastPathOffSuffix}
	}
	return []string{"plain", "share"}
}

// DefaultRows is the seed's pgbench scale 10.
func (*forShare) DefaultRows() int { return 1_000_000 }

// Describe says what a transaction does.
func (*forShare) Describe(cfg *Config) string {
	return fmt.Sprintf("the 2012 seed: each transaction reads 3 random rows of a %s-row table (plain) or locks them (share: FOR SHARE), %d clients",
		thousands(cfg.Rows), cfg.Clients)
}

// Reference: goal P1, the seed's figure and PostgreSQL's recorded one.
func (*forShare) Reference() *Reference {
	r := forShareReference
	return &r
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
	p := &Prepared{DB: db}
	if fresh {
		d, err := ensureTable(ctx, db, "accounts", rows, func(int) []byte { return accountValue(0) })
		if err != nil {
			return nil, err
		}
		p.LoadSeconds = d.Seconds()
		if d > 0 {
			how := "in memory"
			if cfg.DataDir != "" {
				how = fmt.Sprintf("%d transactions side by side, then a checkpoint", loadTxns(rows))
			}
			fmt.Fprintf(cfg.Out, "loaded %s rows in %.1f s (%s)\n", thousands(rows), d.Seconds(), how)
		}
	}
	strength, lock := forShareStrengths[name]
	before := db.Stats()
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
		clients := float64(cfg.Clients)
		mx := "multixacts created per transaction"
		r.AddExtra(mx, float64(s.MultiXactsCreated-before.MultiXactsCreated)/n)
		r.Explain(mx, fmt.Sprintf("a multixact is made only when a row is share-locked while another live transaction holds a lock on it: "+
			"0 for plain reads, and for nokeyupdate and update (a second locker waits instead); for keyshare and share, about "+
			"(rows the other clients hold) / rows per lock, at most 3 × 3 × %d / %s = %.2g; "+
			"about 1 with the fast path off (a transaction's set {me} is interned: made once for its 3 locks)", cfg.Clients, thousands(rows), 9*clients/float64(rows)))
		lm := "locks through a multixact per transaction"
		r.AddExtra(lm, float64(s.LocksMultiXact-before.LocksMultiXact)/n)
		r.Explain(lm, "of the 3 locks a transaction takes, those that went through a multixact; the rest are a bare xid in the row's xmax (the fast path): as rare as the line above, 3 with the fast path off")
		wf := "WAL fsyncs per transaction"
		r.AddExtra(wf, float64(s.WALFsyncs-before.WALFsyncs)/n)
		r.Explain(wf, fmt.Sprintf("a lock-only or read-only commit writes no WAL, so 0 but for the reservation of xids, one fsync per %d transactions = %.2g (0 in memory: there is no WAL)", xidReserveChunk, 1/float64(xidReserveChunk)))
	}
	return p, nil
}

func (w *forShare) Close() error { return w.dbs.close() }

// Defaults: goal P1's case, on disk with synchronous commit, as five
// alternated rounds of 2 s (with the bulk load and PostgreSQL's rounds,
// the whole main job takes about a minute on a quiet 2-core machine).
func (*forShare) Defaults() Defaults {
	return Defaults{Rounds: 5, Duration: 2 * time.Second, OnDisk: true}
}
