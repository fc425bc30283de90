package tupled

import (
	"context"
	"errors"
	"iter"

	"github.com/tupled/tupled/internal/engine"
	"github.com/tupled/tupled/internal/invariants"
)

// Scans for queues.
//
// A scan is PostgreSQL's SELECT ... FROM table WHERE <Where> [ORDER BY key
// [DESC]] [LIMIT n] [FOR <strength> [NOWAIT | SKIP LOCKED]] over the key
// range of ScanOptions, run as ExecLockRows runs it above a scan node:
//
//  1. the scan visits the range in key order (or reverse order), and for
//     each key takes the version its snapshot sees;
//  2. Where is checked on that version: a row that fails it is left alone
//     (not locked, not returned, not counted toward Limit), as the scan
//     node's qualification filters rows before LockRows sees them;
//  3. with a lock strength, the version is locked (heap_lock_tuple): under
//     READ COMMITTED a version updated by a transaction that committed
//     meanwhile is followed down its update chain and the newest version is
//     locked instead; under REPEATABLE READ that is ErrSerialization. When
//     the version locked is not the one Where saw, Where is checked again on
//     the locked one (EvalPlanQual): a row that fails the recheck is left
//     out and not counted toward Limit, but the lock stays. PostgreSQL 15
//     does the same: session 1 runs UPDATE jobs SET done = true WHERE id = 1
//     without committing; session 2's SELECT * FROM jobs WHERE NOT done
//     ORDER BY id LIMIT 1 FOR UPDATE waits for it; after session 1 commits,
//     session 2 returns row 2, and pgrowlocks('jobs') then shows both row 1
//     (its new version) and row 2 locked FOR UPDATE by session 2 — a third
//     session's SELECT ... WHERE id = 1 FOR UPDATE NOWAIT fails with 55P03
//     until session 2 ends. Row locks are only released by the end of the
//     transaction, in PostgreSQL as here;
//  4. the row's copies go to the caller (fn, or the Rows iterator), and
//     count toward Limit.
//
// SkipLocked leaves out a row whose lock would have to wait, NoWait fails
// the scan with ErrLockNotAvailable; a row deleted by a transaction that
// committed meanwhile is left out (READ COMMITTED) or is ErrSerialization
// (REPEATABLE READ).

// Row is one row a scan yields: its key and the value of the version the
// scan read (or locked). Both slices are the caller's own: the engine never
// hands out the memory a row is stored in.
type Row struct {
	Key, Value []byte
}

// errStopRows ends the scan under Rows when the loop body breaks.
var errStopRows = errors.New("tupled: rows iteration stopped")

// Rows is Scan as a range-over-func iterator:
//
//	for row, err := range tx.Rows(ctx, "jobs", opts) {
//		if err != nil {
//			return err
//		}
//		... row.Key, row.Value ...
//	}
//
// Each row comes with a nil error; an error (any error Scan would return)
// is yielded once, with a zero Row, and ends the iteration. Breaking out of
// the loop ends the scan: nothing of it stays held (row locks already taken
// are the transaction's, as with Scan). The loop body may call tx's
// methods, as a Scan callback may. Each range over the iterator runs the
// scan again, with a snapshot of its own under READ COMMITTED.
func (tx *Tx) Rows(ctx context.Context, table string, opts ScanOptions) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		err := tx.scan(ctx, table, opts, func(key, value []byte) error {
			if !yield(Row{Key: key, Value: value}, nil) {
				return errStopRows
			}
			return nil
		})
		if err != nil && err != errStopRows {
			yield(Row{}, err)
		}
	}
}

// scan is Scan and Rows (see the comment at the top of this file): the
// engine's scan (engine.Tx.Scan, where the steps above are written once),
// with the Tx released while fn runs.
func (tx *Tx) scan(ctx context.Context, table string, opts ScanOptions, fn func(key, value []byte) error) error {
	return tx.scanVia(ctx, opts, fn, func(spec engine.ScanSpec, fn func(key, value []byte) error) error {
		return tx.t.Scan(ctx, table, spec, fn)
	})
}

// scanVia is scan with the engine's scan given (run: Scan, or IndexScan,
// index.go).
func (tx *Tx) scanVia(ctx context.Context, opts ScanOptions, fn func(key, value []byte) error, run func(engine.ScanSpec, func(key, value []byte) error) error) error {
	if err := tx.enter(); err != nil {
		return err
	}
	// While fn runs the Tx is released (held false) but the call still
	// counts as running: Close waits for the callback too.
	held := true
	tx.scans.Add(1) // the record stays out of the DB's pool until the scan ends (Tx.release)
	defer func() {
		tx.scans.Add(-1)
		tx.db.eng.Exit(tx.id)
		if held {
			tx.busy.Store(false)
		}
	}()
	// release runs f with the Tx released, as a callback may use it;
	// false if another goroutine took the Tx meanwhile.
	release := func(f func()) bool {
		tx.busy.Store(false)
		held = false
		f()
		if !tx.busy.CompareAndSwap(false, true) {
			return false
		}
		held = true
		return true
	}
	spec := engine.ScanSpec{Start: opts.Start, End: opts.End, Prefix: opts.Prefix, Reverse: opts.Reverse, Limit: opts.Limit, NoCopy: opts.NoCopy}
	if opts.Where != nil {
		spec.Where = func(key, value []byte) (ok bool, err error) {
			if !release(func() { ok = opts.Where(key, value) }) {
				return false, ErrTxBusy
			}
			return ok, nil
		}
	}
	if opts.Lock != NoLock {
		spec.Lock = true
		spec.Mode, spec.Policy = lockArgs(opts.Lock, opts.Wait)
	}
	return run(spec, func(key, value []byte) error {
		var lent []byte // NoCopy under the invariants tag: a scratch copy for this call, poisoned after it
		if opts.NoCopy && invariants.Enabled {
			lent = append(append(make([]byte, 0, len(key)+len(value)), key...), value...)
			key, value = lent[:len(key):len(key)], lent[len(key):]
		}
		var err error
		if !release(func() { err = fn(key, value) }) && err == nil {
			err = ErrTxBusy
		}
		if opts.NoCopy && invariants.Enabled {
			poison(lent)
		}
		return err
	})
}

// UpdateWait is Update with a wait policy for the row's lock: with Wait it
// is Update; with NoWait, if another transaction holds a lock that
// conflicts with FOR NO KEY UPDATE (or is writing the row), it fails at once
// with ErrLockNotAvailable (SQLSTATE 55P03, the transaction is aborted);
// with SkipLocked it returns ErrSkipped at once, writes nothing and leaves
// the transaction usable. In PostgreSQL terms, "update unless locked":
//
//	UPDATE t SET v = $2 WHERE k IN
//	    (SELECT k FROM t WHERE k = $1 FOR NO KEY UPDATE SKIP LOCKED)
//
// (or NOWAIT), in one call. ErrNotFound when no row qualifies. Under READ
// COMMITTED a row updated by a transaction that committed meanwhile is
// followed to its newest version, as Update does.
func (tx *Tx) UpdateWait(ctx context.Context, table string, key, value []byte, wait WaitPolicy) error {
	return tx.write(ctx, table, key, value, false, wait)
}

// DeleteWait is Delete with a wait policy for the row's lock, as UpdateWait
// is for Update; the lock it asks for is FOR UPDATE. "Delete unless locked",
// PostgreSQL's
//
//	DELETE FROM t WHERE k IN (SELECT k FROM t WHERE k = $1 FOR UPDATE SKIP LOCKED)
//
// is DeleteWait(ctx, t, k, SkipLocked), which returns ErrSkipped when the
// row is locked.
func (tx *Tx) DeleteWait(ctx context.Context, table string, key []byte, wait WaitPolicy) error {
	return tx.write(ctx, table, key, nil, true, wait)
}
