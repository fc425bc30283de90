package sqlfe

import (
	"context"
	"errors"
	"math"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// Locking scans: PostgreSQL's LockRows node and the row lookups of UPDATE
// and DELETE, with their EvalPlanQual recheck.
//
// sqlfe has no recheck of its own. A SELECT ... FOR <strength> [NOWAIT |
// SKIP LOCKED], and the rows an UPDATE or DELETE writes, are found by the
// API's locking scan (tupled.Tx.Scan with ScanOptions.Lock and Where), which
// checks Where on the version the snapshot sees, locks the row (under READ
// COMMITTED following a concurrent committed update to the newest version;
// under REPEATABLE READ that is 40001) and checks Where again on the version
// it locked when that is a newer one: a row that fails the recheck is left
// out but stays locked, as in PostgreSQL. That recheck is written once, in
// internal/engine/scan.go (engine.Tx.Scan); the WHERE clause reaches it as the
// scan's Where, which decodes the row and evaluates the compiled clause.
//
// A point lookup (WHERE key = x, key IN (...)) is one scan per key over
// [key, key+"\x00") with Limit 1; a key range is one range scan, in key
// order or reversed, with the statement's LIMIT (plus OFFSET) as the
// scan's Limit, so that rows past it are not locked.

// whereFailed carries an error of the WHERE clause (or of decoding a
// stored row) out of ScanOptions.Where, which cannot return one: Where
// panics with it, which ends the scan and leaves the Tx usable (the API's
// contract), and runLockScan recovers it as the statement's error.
type whereFailed struct{ err error }

// lockScan is one locking scan of t: the range [start, end) (a point is
// [key, key+"\x00") with limit 1), in key order or reversed, each row that
// satisfies where locked in strength with wait, at most limit rows (0: no
// limit). fn gets each locked row's key and the locked version decoded; it
// must not call tx's methods that write (collect, then write).
type lockScan struct {
	t        *catalog.Table
	where    expr
	e        *env
	strength tupled.LockStrength
	wait     tupled.WaitPolicy
}

// opts returns the ScanOptions of the scan of [start, end).
func (ls *lockScan) opts(start, end []byte, reverse bool, limit int64) tupled.ScanOptions {
	o := tupled.ScanOptions{Start: start, End: end, Reverse: reverse, Lock: ls.strength, Wait: ls.wait}
	if limit > 0 && limit <= math.MaxInt {
		o.Limit = int(limit)
	}
	if ls.where != nil {
		row := make([]types.Value, len(ls.t.Cols))
		o.Where = func(k, v []byte) bool {
			if err := catalog.DecodeRow(ls.t, k, v, row); err != nil {
				panic(whereFailed{err})
			}
			ls.e.row = row
			ok, err := truthy(ls.where, ls.e)
			if err != nil {
				panic(whereFailed{err})
			}
			return ok
		}
	}
	return o
}

// run runs one scan; fn returning errStop ends it without error.
func (ls *lockScan) run(ctx context.Context, tx *tupled.Tx, start, end []byte, reverse bool, limit int64, fn func(key []byte, row []types.Value) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			wf, ok := r.(whereFailed)
			if !ok {
				panic(r)
			}
			err = wf.err
		}
	}()
	err = tx.Scan(ctx, ls.t.Engine, ls.opts(start, end, reverse, limit), func(k, v []byte) error {
		row := make([]types.Value, len(ls.t.Cols))
		if err := catalog.DecodeRow(ls.t, k, v, row); err != nil {
			return err
		}
		return fn(k, row)
	})
	var fe *pgerror.Error
	switch {
	case err == nil, err == errStop:
		return nil
	case errors.As(err, &fe):
		return fe
	}
	return engineError(err, ls.t)
}

// point locks the row of key, if there is one the WHERE clause accepts,
// and passes it to fn.
func (ls *lockScan) point(ctx context.Context, tx *tupled.Tx, key []byte, fn func(key []byte, row []types.Value) error) error {
	end := append(key[:len(key):len(key)], 0)
	return ls.run(ctx, tx, key, end, false, 1, fn)
}

// lockRows locks the rows of t that acc selects and where accepts, in key
// order (reversed with reverse), at most want of them (want < 0: all),
// passing each to fn with the version locked.
func (s *Session) lockRows(ctx context.Context, tx *tupled.Tx, ls *lockScan, acc *access, reverse bool, want int64, fn func(key []byte, row []types.Value) error) error {
	if want == 0 {
		return nil
	}
	points, start, end, empty, err := acc.bounds(ls.e, ls.t)
	if err != nil || empty {
		return err
	}
	if points == nil {
		limit := int64(0)
		if want > 0 {
			limit = want
		}
		return ls.run(ctx, tx, start, end, reverse, limit, fn)
	}
	if acc.exact {
		// WHERE is just key = x / key IN (...): a row found at one of the
		// points satisfies it, and so does every newer version of it (a
		// key update is a delete and an insert), so there is nothing to
		// evaluate or recheck.
		pl := *ls
		pl.where = nil
		ls = &pl
	}
	if reverse {
		for i, j := 0, len(points)-1; i < j; i, j = i+1, j-1 {
			points[i], points[j] = points[j], points[i]
		}
	}
	n := int64(0)
	for _, k := range points {
		if want > 0 && n >= want {
			break
		}
		err := ls.point(ctx, tx, k, func(k []byte, row []types.Value) error {
			n++
			return fn(k, row)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
