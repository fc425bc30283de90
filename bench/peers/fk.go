package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/tupled/tupled"
)

// The fk workload (issue 28): children inserted under a hot parent while
// an updater keeps updating the parent's other data, all durable. Each
// child insert must find its parent and keep it from being deleted or
// re-keyed until the child is committed; an update of the parent's
// non-key data must neither wait for the child inserters nor block them.
// That is PostgreSQL's foreign key: the child insert locks the parent FOR
// KEY SHARE, the update takes FOR NO KEY UPDATE, and the two do not
// conflict.
//
//   - tupled: a declared foreign key (DB.AddForeignKey) from "fkchild" to
//     "fkparent": Insert of a child locks the parent FOR KEY SHARE itself;
//     the updater is a plain Update (FOR NO KEY UPDATE). Both durable.
//   - pebble + lock table: the same guarantee with two application locks
//     per parent, as an application without FOR KEY SHARE would write it:
//     a "key" lock (shared by child inserters, exclusive for a delete or
//     key change, which this workload never does) and a "row" lock
//     (exclusive for the updater). A child insert takes the key lock
//     shared, checks that the parent exists, commits its batch with
//     pebble.Sync and unlocks; the updater takes the row lock, reads,
//     commits its batch with pebble.Sync.
//
// Other systems have no fk workload (runFK fails for them).
type fkSystem interface {
	// loadFK creates the parents 0..parents-1 and an empty child table.
	loadFK(ctx context.Context, parents int) error
	// fkInsertChild inserts child id referencing parent, durably.
	fkInsertChild(ctx context.Context, id, parent uint64) error
	// fkUpdateParent rewrites parent's non-key data with n, durably.
	fkUpdateParent(ctx context.Context, parent uint64, n int64) error
	// fkChildren is the number of children committed.
	fkChildren(ctx context.Context) (int, error)
}

// runFK loads one parent into a fresh directory; then one client updates
// it over and over while cfg.Clients-1 clients insert children under it,
// for cfg.Duration. The figure is children inserted per second (the
// updater's transactions are not counted: res.Extra["parent_updates"]);
// afterwards the child table must hold exactly the children committed.
func runFK(ctx context.Context, s system, cfg config, res *result) error {
	fs, ok := s.(fkSystem)
	if !ok {
		return errors.New("fk: this system has no foreign-key workload (tupled and pebble have)")
	}
	if cfg.Clients < 2 {
		return fmt.Errorf("fk needs 2 clients or more (one updater), have %d", cfg.Clients)
	}
	if err := fs.loadFK(ctx, 1); err != nil {
		return fmt.Errorf("load fk: %w", err)
	}
	var next atomic.Uint64
	var updates atomic.Int64
	uctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var uerr error
	wg.Add(1)
	go func() { // the updater
		defer wg.Done()
		for n := int64(1); uctx.Err() == nil; n++ {
			if err := fs.fkUpdateParent(uctx, 0, n); err != nil {
				if uctx.Err() == nil {
					uerr = err
				}
				return
			}
			updates.Add(1)
		}
	}()
	err := clients(ctx, cfg.Clients-1, cfg.Duration, func(ctx context.Context, _ *rand.Rand) error {
		return fs.fkInsertChild(ctx, next.Add(1), 0)
	}, res)
	stop()
	wg.Wait()
	if err != nil {
		return err
	}
	if uerr != nil {
		return fmt.Errorf("fk: parent update: %w", uerr)
	}
	n, err := fs.fkChildren(ctx)
	if err != nil {
		return fmt.Errorf("fk: count children: %w", err)
	}
	if n != res.Ops {
		return fmt.Errorf("fk check failed: %d children committed, the table holds %d", res.Ops, n)
	}
	res.Extra["parent_updates"] = float64(updates.Load())
	res.Check = fmt.Sprintf("fk: %d children, each committed once, %d parent updates", n, updates.Load())
	return nil
}

func parentValue(n int64) []byte {
	v := make([]byte, 100)
	binary.BigEndian.PutUint64(v, uint64(n))
	return v
}

// childValue is a child's row: its parent's key, then padding.
func childValue(parent uint64) []byte {
	v := make([]byte, 100)
	binary.BigEndian.PutUint64(v, parent)
	return v
}

// tupled

func (s *tupledSys) loadFK(ctx context.Context, parents int) error {
	for _, t := range []string{"fkparent", "fkchild"} {
		if err := s.db.CreateTableIfNotExists(ctx, t); err != nil {
			return err
		}
	}
	if err := s.db.AddForeignKey(ctx, tupled.ForeignKey{
		Name: "fkchild_parent_fkey", Table: "fkchild", RefTable: "fkparent",
		Ref: func(_, v []byte) ([]byte, bool) { return v[:8], true },
	}); err != nil {
		return err
	}
	return s.load(ctx, "fkparent", parents, func(uint64) []byte { return parentValue(0) })
}

func (s *tupledSys) fkInsertChild(ctx context.Context, id, parent uint64) error {
	return s.db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.Insert(ctx, "fkchild", key8(id), childValue(parent))
	})
}

func (s *tupledSys) fkUpdateParent(ctx context.Context, parent uint64, n int64) error {
	return s.db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.Update(ctx, "fkparent", key8(parent), parentValue(n))
	})
}

func (s *tupledSys) fkChildren(ctx context.Context) (int, error) {
	tx, err := s.db.Begin(ctx, &tupled.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	n := 0
	err = tx.Scan(ctx, "fkchild", tupled.ScanOptions{}, func(_, _ []byte) error { n++; return nil })
	return n, err
}

// pebble + lock table: the parent's key lock is its key under prefix 'K',
// its row lock under 'R' (see fkSystem's comment).

func (s *pebbleSys) loadFK(_ context.Context, parents int) error {
	return s.load('p', parents, func(uint64) []byte { return parentValue(0) })
}

func (s *pebbleSys) fkInsertChild(_ context.Context, id, parent uint64) error {
	kl := pkey('K', parent)
	s.locks.lock(kl, false)
	defer s.locks.unlock(kl, false)
	if _, err := s.get(pkey('p', parent)); err != nil {
		return fmt.Errorf("parent %d: %w", parent, err)
	}
	b := s.db.NewBatch()
	if err := b.Set(pkey('c', id), childValue(parent), nil); err != nil {
		return err
	}
	return b.Commit(pebble.Sync)
}

func (s *pebbleSys) fkUpdateParent(_ context.Context, parent uint64, n int64) error {
	rl := pkey('R', parent)
	s.locks.lock(rl, true)
	defer s.locks.unlock(rl, true)
	if _, err := s.get(pkey('p', parent)); err != nil {
		return err
	}
	b := s.db.NewBatch()
	if err := b.Set(pkey('p', parent), parentValue(n), nil); err != nil {
		return err
	}
	return b.Commit(pebble.Sync)
}

func (s *pebbleSys) fkChildren(_ context.Context) (int, error) {
	n := 0
	err := s.iterate('c', func(_, _ []byte) error { n++; return nil })
	return n, err
}
