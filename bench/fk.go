package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/tupled/tupled"
)

// fk is `tupled bench fk`: the reason FOR KEY SHARE exists (seed 004), run
// as issue 13 asks. Clients insert children of a few hot parents through a
// declared foreign key — each insert locks its parent FOR KEY SHARE, as
// PostgreSQL's RI trigger does — while one more client keeps updating the
// parents' non-key column. The parents therefore always have many lockers
// at once: PostgreSQL records each new locker by creating a new multixact
// and copying every live member into it (pg_multixact/members grows by
// O(lockers) per lock); tupled appends the locker to the multixact in
// place (O(1)).
//
// Variants: "fk" (the children table declares the foreign key) and
// "nofk" (the same inserts into a table without one: what the check
// costs). PostgreSQL 15 runs "fk" with the same schema (bench/pg/fk-*.sql)
// in alternated rounds with tupled's, on a throw-away cluster, on disk with
// synchronous commit like tupled's default here.
type fk struct {
	dbs     dbCache
	updates atomic.Uint64 // parent updates done by the updater client
	// seq numbers each variant's children apart across rounds.
	seq atomic.Uint64
	// The orphan check after each fk round: children seen, first failure.
	children int
	checkErr error
}

// FKHotParents is the number of hot parents when --hot-rows is not given.
const FKHotParents = 4

func (*fk) Name() string              { return "fk" }
func (*fk) Variants(*Config) []string { return []string{"nofk", "fk"} }
func (*fk) All() []string             { return []string{"nofk", "fk"} }
func (*fk) Baseline(*Config) string   { return "nofk" }
func (w *fk) Close() error            { return w.dbs.close() }
func (*fk) DefaultRows() int          { return FKHotParents }
func (*fk) Defaults() Defaults {
	return Defaults{Rounds: 3, Duration: 3 * time.Second, OnDisk: true}
}
func (*fk) Describe(cfg *Config) string {
	return fmt.Sprintf("each transaction inserts one child of one of %d hot parents (FOR KEY SHARE on it through the foreign key), beside one client updating the parents' non-key column", fkParents(cfg))
}

func fkParents(cfg *Config) int {
	if cfg.HotRows > 0 {
		return cfg.HotRows
	}
	return FKHotParents
}

// fkChildValue is a child's value: its parent's number, then a payload.
func fkChildValue(parent int) []byte {
	v := make([]byte, 4, 40)
	binary.BigEndian.PutUint32(v, uint32(parent))
	return append(v, "child payload, 32 bytes of text."...)
}

// fkRef is the foreign key's Ref: the parent key a child's value names.
func fkRef(_, value []byte) ([]byte, bool) {
	if len(value) < 4 {
		return nil, false
	}
	return key4(int(binary.BigEndian.Uint32(value))), true
}

func (w *fk) Prepare(ctx context.Context, cfg *Config, variant string) (*Prepared, error) {
	parents := fkParents(cfg)
	db, fresh, err := w.dbs.open(cfg, "", tupled.Options{})
	if err != nil {
		return nil, err
	}
	if fresh {
		if _, err := ensureTable(ctx, db, "parent", parents, func(int) []byte { return accountValue(0) }); err != nil {
			return nil, err
		}
		for _, t := range []string{"child_fk", "child_nofk"} {
			if err := db.CreateTable(ctx, t); err != nil && !errors.Is(err, tupled.ErrTableExists) {
				return nil, err
			}
		}
		err := db.AddForeignKey(ctx, tupled.ForeignKey{Name: "child_fk_parent_fkey", Table: "child_fk", RefTable: "parent", Ref: fkRef})
		if err != nil {
			return nil, err
		}
	}
	table := "child_" + variant
	before := db.Stats()
	w.updates.Store(0)
	base := w.seq.Add(1) << 40
	p := &Prepared{DB: db}
	p.Txn = func(ctx context.Context, c *Client) error {
		tx, err := db.Begin(ctx, nil)
		if err != nil {
			return err
		}
		st := c.State.(*uint64)
		*st++
		k := make([]byte, 8)
		binary.BigEndian.PutUint64(k, base|uint64(c.ID)<<28|*st)
		c.RoundTrip()
		if err := tx.Insert(ctx, table, k, fkChildValue(1+c.Rand.IntN(parents))); err != nil {
			_ = tx.Rollback()
			return err
		}
		c.RoundTrip()
		return tx.Commit()
	}
	p.Setup = func(c *Client) error { c.State = new(uint64); return nil }
	// The updater: one more client, updating the parents' non-key column
	// for the whole run (a no-key update: it does not wait for the
	// children's FOR KEY SHARE locks, nor they for it).
	p.During = func(ctx context.Context) error {
		i := 0
		for ctx.Err() == nil {
			i++
			k := key4(1 + i%parents)
			err := db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
				v, err := tx.Lock(ctx, "parent", k, tupled.ForNoKeyUpdate, tupled.Wait)
				if err != nil {
					return err
				}
				return tx.Update(ctx, "parent", k, accountValue(balanceOf(v)+1))
			})
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("parent updater: %w", err)
			}
			w.updates.Add(1)
		}
		return nil
	}
	p.After = func(r *Result) {
		s := db.Stats()
		n := float64(r.Transactions)
		if n == 0 {
			return
		}
		r.AddExtra("parent updates/s", float64(w.updates.Load())/r.Seconds)
		r.AddExtra("multixacts created per child insert", float64(s.MultiXactsCreated-before.MultiXactsCreated)/n)
		r.AddExtra("multixact member entries written per child insert", float64(s.MultiXactMembersWritten-before.MultiXactMembersWritten)/n)
		if mx := s.MultiXactsCreated - before.MultiXactsCreated; mx > 0 {
			r.AddExtra("member entries written per multixact created", float64(s.MultiXactMembersWritten-before.MultiXactMembersWritten)/float64(mx))
		}
		r.Explain("multixact member entries written per child insert", "a new locker of a parent that has lockers: tupled appends one member in place; PostgreSQL copies every live member into a new multixact")
		r.Explain("member entries written per multixact created", "the cost of one lock on a parent that has lockers (each multixact is one new locker or the updater joining them): O(1) when it stays about 1-2 as clients grow; PostgreSQL's is the number of live lockers")
		if variant == "fk" && w.checkErr == nil {
			w.children, w.checkErr = w.checkNoOrphans(context.Background(), db)
		}
	}
	return p, nil
}

// checkNoOrphans is the run's correctness check: every child of the fk
// table names a parent that exists, and the children counted by the
// clients are all there.
func (w *fk) checkNoOrphans(ctx context.Context, db *tupled.DB) (children int, err error) {
	err = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		children = 0
		return tx.Scan(ctx, "child_fk", tupled.ScanOptions{}, func(k, v []byte) error {
			children++
			pk, ok := fkRef(k, v)
			if !ok {
				return fmt.Errorf("child %x has no parent reference", k)
			}
			if _, err := tx.Get(ctx, "parent", pk); err != nil {
				return fmt.Errorf("child %x: parent %x: %w (an orphan)", k, pk, err)
			}
			return nil
		})
	})
	return children, err
}

// FKReport is `tupled bench fk`'s result: tupled's and PostgreSQL's rounds.
type FKReport struct {
	Report *Report     `json:"tupled"`
	PG     *FKPGResult `json:"postgresql,omitempty"`
	// Ratio is tupled's fk tps / PostgreSQL's, per round, and its spread.
	Ratio    *Spread `json:"ratio_to_postgresql,omitempty"`
	Children int     `json:"children_checked"`
}

// FKPGResult is PostgreSQL's side of `tupled bench fk`.
type FKPGResult struct {
	How  string `json:"how"`
	Note string `json:"note,omitempty"`
	// Per round: children inserted per second (steady seconds), parent
	// updates per second, and per child insert the multixacts created and
	// the member entries written (pg_control_checkpoint's next multixact
	// id and offset around the round).
	TPS, UpdatesPerSec, MultiPerChild, MembersPerChild []float64
}

// RunFK runs `tupled bench fk`: tupled's variants and PostgreSQL's fk
// round alternated, then the table.
func RunFK(ctx context.Context, cfg *Config) (*FKReport, error) {
	w := &fk{}
	out := cfg.Out
	rounds := max(cfg.Rounds, 1)
	var pg *pgFK
	fr := &FKReport{}
	if cfg.PG == "auto" || cfg.PG == "on" {
		c, err := findPG()
		if err == nil {
			pg = &pgFK{c: c, parents: fkParents(cfg)}
			err = pg.start(ctx)
		}
		if err != nil {
			if cfg.PG == "on" {
				return nil, fmt.Errorf("PostgreSQL: %w", err)
			}
			fr.PG = &FKPGResult{Note: "not measured: " + err.Error()}
			pg = nil
		}
		if pg != nil {
			defer pg.c.stop()
			defer pg.conn.Close(context.Background())
			fr.PG = &FKPGResult{}
		}
	}
	// tupled's rounds are Run's (alternating nofk and fk); PostgreSQL's
	// round runs after each of them, so that the two systems alternate.
	var pgErr error
	hook := func(round int) {
		if pg == nil || pgErr != nil {
			return
		}
		secs := max(2, int(cfg.Duration.Seconds()+0.5))
		r, err := pg.round(ctx, cfg.Clients, secs)
		if err != nil {
			pgErr = err
			return
		}
		fr.PG.TPS = append(fr.PG.TPS, r.tps)
		fr.PG.UpdatesPerSec = append(fr.PG.UpdatesPerSec, r.updates)
		fr.PG.MultiPerChild = append(fr.PG.MultiPerChild, r.multi)
		fr.PG.MembersPerChild = append(fr.PG.MembersPerChild, r.members)
		fmt.Fprintf(out, "round %d/%d  %-24s %10.1f tps  (PostgreSQL 15; %.0f parent updates/s, %.2f multixacts and %.1f member entries per child insert)\n",
			round, rounds, "fk", r.tps, r.updates, r.multi, r.members)
	}
	cfg.afterRound = hook
	rep, err := Run(ctx, w, cfg)
	if err != nil {
		return nil, err
	}
	fr.Report = rep
	if w.checkErr != nil {
		return nil, fmt.Errorf("fk: %w", w.checkErr)
	}
	fr.Children = w.children
	if pgErr != nil {
		if cfg.PG == "on" {
			return nil, pgErr
		}
		fr.PG.Note = "PostgreSQL failed: " + pgErr.Error()
	}
	if pg != nil && fr.PG != nil {
		fr.PG.How = pg.how(cfg.Clients, max(2, int(cfg.Duration.Seconds()+0.5)))
		var rs []float64
		for i, rr := range rep.allRounds() {
			for _, r := range rr {
				if r.Variant == "fk" && i < len(fr.PG.TPS) && fr.PG.TPS[i] > 0 {
					rs = append(rs, r.TPS/fr.PG.TPS[i])
				}
			}
		}
		if len(rs) > 0 {
			s := spreadOf("tupled fk", "PostgreSQL fk", rs)
			fr.Ratio = &s
		}
	}
	printFKTable(out, fr)
	return fr, nil
}

func printFKTable(out io.Writer, fr *FKReport) {
	fmt.Fprintf(out, "\n== fk: child inserts through a foreign key to hot parents, tupled vs PostgreSQL 15 (medians over rounds)\n")
	fmt.Fprintf(out, "%-12s %12s %16s %18s %22s %20s\n", "system", "children/s", "parent updates/s", "multixacts/insert", "member entries/insert", "members/multixact")
	for _, rr := range [][]*Result{lastFK(fr.Report)} {
		for _, r := range rr {
			fmt.Fprintf(out, "%-12s %12.0f %16.0f %18.2f %22.2f %20.2f\n", "tupled "+r.Variant, r.TPS, r.Extra["parent updates/s"],
				r.Extra["multixacts created per child insert"], r.Extra["multixact member entries written per child insert"],
				r.Extra["member entries written per multixact created"])
		}
	}
	if pg := fr.PG; pg != nil && len(pg.TPS) > 0 {
		perMulti := 0.0
		if m := median(pg.MultiPerChild); m > 0 {
			perMulti = median(pg.MembersPerChild) / m
		}
		fmt.Fprintf(out, "%-12s %12.0f %16.0f %18.2f %22.2f %20.2f\n", "PostgreSQL", median(pg.TPS), median(pg.UpdatesPerSec), median(pg.MultiPerChild), median(pg.MembersPerChild), perMulti)
		fmt.Fprintf(out, "PostgreSQL: %s\n", pg.How)
	} else if pg != nil && pg.Note != "" {
		fmt.Fprintf(out, "PostgreSQL: %s\n", pg.Note)
	}
	if fr.Ratio != nil {
		verdict := "MET"
		if fr.Ratio.Median < 3 {
			verdict = "NOT MET"
		}
		fmt.Fprintf(out, "tupled fk / PostgreSQL fk tps: %.2f× (median of %d alternated rounds, range %.2f–%.2f); goal ≥ 3×: %s\n",
			fr.Ratio.Median, len(fr.Ratio.Rounds), fr.Ratio.Min, fr.Ratio.Max, verdict)
	}
	if fr.Children > 0 {
		fmt.Fprintf(out, "checked: %d children, every one's parent exists (no orphan)\n", fr.Children)
	}
}

// lastFK is tupled's results with median tps and extras over the rounds,
// one per variant.
func lastFK(rep *Report) []*Result {
	by := map[string][]*Result{}
	var order []string
	for _, rr := range rep.allRounds() {
		for _, r := range rr {
			if _, ok := by[r.Variant]; !ok {
				order = append(order, r.Variant)
			}
			by[r.Variant] = append(by[r.Variant], r)
		}
	}
	var res []*Result
	for _, v := range order {
		rs := by[v]
		m := &Result{Variant: v, Extra: map[string]float64{}}
		var tps []float64
		for _, r := range rs {
			tps = append(tps, r.TPS)
		}
		m.TPS = median(tps)
		for name := range rs[0].Extra {
			var xs []float64
			for _, r := range rs {
				xs = append(xs, r.Extra[name])
			}
			m.Extra[name] = median(xs)
		}
		res = append(res, m)
	}
	return res
}
