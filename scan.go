package tupled

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/tuplelock"
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

// prefixEnd is the smallest key greater than every key that begins with p,
// or nil when there is none (p empty or all 0xFF).
func prefixEnd(p []byte) []byte {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xff {
			e := bytes.Clone(p[:i+1])
			e[i]++
			return e
		}
	}
	return nil
}

// scanRange is the range [lo, hi) of opts: [Start, End) intersected with
// the keys that begin with Prefix; empty reports a range with no key in it.
func scanRange(opts *ScanOptions) (lo, hi []byte, empty bool) {
	lo, hi = opts.Start, opts.End
	if len(opts.Prefix) > 0 {
		if lo == nil || bytes.Compare(opts.Prefix, lo) > 0 {
			lo = opts.Prefix
		}
		if pe := prefixEnd(opts.Prefix); pe != nil && (hi == nil || bytes.Compare(pe, hi) < 0) {
			hi = pe
		}
	}
	return lo, hi, lo != nil && hi != nil && bytes.Compare(lo, hi) >= 0
}

// scan is Scan and Rows (see the comment at the top of this file).
func (tx *Tx) scan(ctx context.Context, table string, opts ScanOptions, fn func(key, value []byte) error) error {
	if err := tx.enter(); err != nil {
		return err
	}
	// While fn runs the Tx is released (held false) but the call still
	// counts as running: Close waits for the callback too.
	held := true
	defer func() {
		tx.db.active.Add(tx.txn.X.ID, ^uint64(0))
		if held {
			tx.busy.Store(false)
		}
	}()
	locking := opts.Lock != NoLock
	snap, err := tx.start(ctx, locking)
	if err != nil {
		return err
	}
	var mode tuplelock.Mode
	var policy tuplelock.WaitPolicy
	if opts.Limit < 0 {
		return tx.fail(ctx, &opError{sentinel: ErrInvalid, msg: fmt.Sprintf("tupled: invalid ScanOptions: negative Limit %d", opts.Limit)})
	}
	if locking {
		m, ok := tupleMode(opts.Lock)
		p, ok2 := waitPolicy(opts.Wait)
		if !ok || !ok2 {
			return tx.fail(ctx, &opError{sentinel: ErrInvalid, msg: fmt.Sprintf("tupled: invalid ScanOptions: lock strength %d, wait policy %d", opts.Lock, opts.Wait)})
		}
		mode, policy = m, p
	}
	tbl, err := tx.table(table)
	if err == nil {
		err = checkKey(table, opts.Start)
	}
	if err == nil {
		err = checkKey(table, opts.End)
	}
	if err == nil {
		err = checkKey(table, opts.Prefix)
	}
	if err != nil {
		return tx.fail(ctx, err)
	}
	lo, hi, empty := scanRange(&opts)
	if empty {
		return nil
	}
	// where runs opts.Where on copies of key and value in one buffer
	// reused from row to row: Where can neither change a stored row nor
	// keep one alive, and a filtering scan allocates once, not per row.
	var scratch []byte
	where := func(key, value []byte) bool {
		if opts.Where == nil {
			return true
		}
		scratch = append(append(scratch[:0], key...), value...)
		return opts.Where(scratch[:len(key):len(key)], scratch[len(key):])
	}
	n := 0
	var scanErr error
	visit := func(r *heap.Row) bool {
		if err := ctx.Err(); err != nil {
			scanErr = tx.fail(ctx, err)
			return false
		}
		r = tbl.PinRow(r.Key()) // the row as it is now (it may have been evicted and reloaded)
		if r == nil {
			return true
		}
		defer r.Unpin()
		r.Lock()
		tup := visibleVersion(tx.db.heap, r, snap)
		r.Unlock()
		if tup == nil || !where(r.Key(), tup.Value) {
			return true
		}
		if locking {
			locked, err := tx.lockVersion(ctx, tbl, r, tup, mode, policy)
			if errors.Is(err, ErrNotFound) || errors.Is(err, ErrSkipped) {
				return true
			}
			if err != nil {
				scanErr = tx.fail(ctx, err)
				return false
			}
			// EvalPlanQual: the version locked is a newer one; it must
			// still qualify. If not, the row is left out but stays locked.
			if locked != tup && !where(r.Key(), locked.Value) {
				return true
			}
			tup = locked
		}
		// One allocation holds both copies.
		k, value := r.Key(), tup.Value
		buf := make([]byte, len(k)+len(value))
		copy(buf, k)
		copy(buf[len(k):], value)
		tx.busy.Store(false)
		held = false
		err := fn(buf[:len(k):len(k)], buf[len(k):])
		if !tx.busy.CompareAndSwap(false, true) {
			if err == nil {
				err = ErrTxBusy
			}
			scanErr = err
			return false
		}
		held = true
		if err == nil {
			// The callback (or, meanwhile, another goroutine) may have
			// ended the transaction, or Close may have begun.
			err = tx.stillActive()
		}
		if err != nil {
			scanErr = err
			return false
		}
		n++
		return opts.Limit == 0 || n < opts.Limit
	}
	if opts.Reverse {
		tbl.Descend(lo, hi, visit)
	} else {
		tbl.Ascend(lo, hi, visit)
	}
	if scanErr == nil {
		// Rows the backend could not read were skipped.
		scanErr = tx.readFailed(ctx)
	}
	return scanErr
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

// checkWait refuses a WaitPolicy that is not one of the three.
func checkWait(w WaitPolicy) error {
	if _, ok := waitPolicy(w); !ok {
		return &opError{sentinel: ErrInvalid, msg: fmt.Sprintf("tupled: invalid wait policy %d", w)}
	}
	return nil
}

// lockForWrite takes the lock a write of tup will need, with a wait policy
// other than Wait: the sub-select FOR [NO KEY] UPDATE NOWAIT / SKIP LOCKED
// of PostgreSQL's "write unless locked". The write that follows finds the
// row locked by its own transaction and does not wait.
func (tx *Tx) lockForWrite(ctx context.Context, tbl *heap.Table, r *heap.Row, tup *heap.Tuple, isDelete bool, wait WaitPolicy) error {
	strength := ForNoKeyUpdate
	if isDelete {
		strength = ForUpdate
	}
	mode, _ := tupleMode(strength)
	policy, _ := waitPolicy(wait)
	_, err := tx.lockVersion(ctx, tbl, r, tup, mode, policy)
	return err
}
