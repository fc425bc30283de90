package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/internal/tuplemode"
	"github.com/tupled/tupled/lockmgr"
)

// Scans: PostgreSQL's SELECT ... FROM table WHERE <Where> [ORDER BY key
// [DESC]] [LIMIT n] [FOR <mode> [NOWAIT | SKIP LOCKED]] over a key range,
// run as ExecLockRows runs it above a scan node (package tupled's scan.go
// tells the steps and what PostgreSQL 15 does in each):
//
//  1. visit the range in key order (or reverse) and take each key's
//     version the snapshot sees;
//  2. check Where on it: a row that fails is left alone (not locked, not
//     returned, not counted);
//  3. with a lock mode, lock it (lockVersion: under READ COMMITTED the
//     newest version of an update chain, under REPEATABLE READ
//     ErrSerialization), and when the version locked is not the one Where
//     saw, check Where again on it (EvalPlanQual): failing the recheck
//     leaves the row out, locked;
//  4. pass copies of key and value to fn (a reading scan with NoCopy: the
//     stored bytes themselves); count toward Limit.
//
// This is the only EvalPlanQual recheck in the module: the API's Scan and
// Rows, and the SQL front end's locking SELECT, UPDATE and DELETE, all go
// through it.

// ScanSpec is a scan's range, order, limit, lock and qualification.
type ScanSpec struct {
	Start, End []byte // [Start, End); nil: unbounded
	Prefix     []byte // only keys that begin with it (nil or empty: all)
	Reverse    bool   // decreasing key order
	Limit      int    // 0: none; rows passed to fn
	Lock       bool   // lock each row in Mode with Policy
	Mode       tuplemode.Mode
	Policy     WaitPolicy
	// NoCopy passes fn the stored row's own key and value bytes instead
	// of copies, valid only during fn's call and never to be modified; a
	// reading scan only (with Lock it is ErrInvalid). The API's
	// ScanOptions.NoCopy is it.
	NoCopy bool
	// Where is the qualification (nil: every row). It gets copies valid
	// during the call only; an error from it ends the scan with that error.
	Where func(key, value []byte) (bool, error)
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

// scanRange is the range [lo, hi) of s: [Start, End) intersected with the
// keys that begin with Prefix; empty reports a range with no key in it.
func scanRange(s *ScanSpec) (lo, hi []byte, empty bool) {
	lo, hi = s.Start, s.End
	if len(s.Prefix) > 0 {
		if lo == nil || bytes.Compare(s.Prefix, lo) > 0 {
			lo = s.Prefix
		}
		if pe := prefixEnd(s.Prefix); pe != nil && (hi == nil || bytes.Compare(pe, hi) < 0) {
			hi = pe
		}
	}
	return lo, hi, lo != nil && hi != nil && bytes.Compare(lo, hi) >= 0
}

// inRange reports whether key lies in [lo, hi) and begins with prefix.
func inRange(key, lo, hi, prefix []byte) bool {
	return bytes.Compare(key, lo) >= 0 && (hi == nil || bytes.Compare(key, hi) < 0) && bytes.HasPrefix(key, prefix)
}

// Scan runs the scan s over table (see the comment above), calling fn with
// each row's key and value (the caller's own copies, in one allocation)
// until s.Limit rows were passed; fn's error stops the scan and is
// returned as it is. fn may call the transaction's methods; after fn
// returns the scan stops with StillActive's error if the transaction
// ended.
func (tx *Tx) Scan(ctx context.Context, table string, s ScanSpec, fn func(key, value []byte) error) error {
	relMode := lockmgr.AccessShareLock
	if s.Lock {
		relMode = lockmgr.RowShareLock
	}
	snap, err := tx.startOn(ctx, s.Lock, table, relMode)
	if err != nil {
		return err
	}
	if s.Limit < 0 {
		return tx.Fail(ctx, errs.Op(errs.ErrInvalid, fmt.Sprintf("tupled: invalid ScanOptions: negative Limit %d", s.Limit)))
	}
	if s.Lock && s.NoCopy {
		return tx.Fail(ctx, errs.Op(errs.ErrInvalid, "tupled: invalid ScanOptions: NoCopy with a lock strength (a locking scan's rows are copies)"))
	}
	if s.Lock {
		if err := checkLock(s.Mode, s.Policy); err != nil {
			return tx.Fail(ctx, err)
		}
	}
	tbl, err := tx.e.table(table)
	if err == nil {
		err = checkKey(table, s.Start)
	}
	if err == nil {
		err = checkKey(table, s.End)
	}
	if err == nil {
		err = checkKey(table, s.Prefix)
	}
	if err != nil {
		return tx.Fail(ctx, err)
	}
	lo, hi, empty := scanRange(&s)
	if empty {
		return nil
	}
	// where runs s.Where on copies of key and value in one buffer reused
	// from row to row: Where can neither change a stored row nor keep one
	// alive, and a filtering scan allocates once, not per row.
	// Where may call the transaction's methods (a SQL WHERE calling
	// pg_advisory_xact_lock); should it end the transaction, the scan
	// stops with whereErr, as after a callback that did.
	var scratch []byte
	var whereErr error
	where := func(key, value []byte) bool {
		if s.Where == nil {
			return true
		}
		scratch = append(append(scratch[:0], key...), value...)
		ok, err := s.Where(scratch[:len(key):len(key)], scratch[len(key):])
		if err == nil {
			err = tx.StillActive()
		}
		if err != nil {
			whereErr = err
			return false
		}
		return ok
	}
	n := 0
	var scanErr error
	// followed holds the keys a followed key update took rows to (see
	// below): their rows were inserted after the snapshot, and the scan,
	// reaching them later, would see only what fn's caller wrote there
	// meanwhile (PostgreSQL's command ids hide it): they are skipped.
	var followed map[string]struct{}
	visit := func(r *heap.Row) bool {
		if whereErr != nil {
			scanErr = whereErr
			return false
		}
		if followed != nil {
			if _, ok := followed[string(r.Key())]; ok {
				return true
			}
		}
		if err := ctx.Err(); err != nil {
			scanErr = tx.Fail(ctx, err)
			return false
		}
		if s.Lock {
			if r.Transient() && s.Where != nil && !where(r.Key(), r.Versions()[0].Value()) {
				// A copy of a row that is not in memory (its one
				// version frozen: visible to every snapshot) that
				// fails Where is left alone without being brought
				// in: a queue's claim passes many such rows.
				return true
			}
			// The row as it is in memory now: brought in if the scan
			// passed a copy, looked up again if it left memory since.
			r = tbl.PinScanned(r)
			if r == nil {
				return true
			}
			defer r.Unpin()
		}
		// A reading scan uses the row it was passed: a copy is the row's
		// state, and a row that left memory since kept its versions. A
		// copy's one version is frozen, visible to every snapshot (see
		// heap.Row.Transient), and nobody else holds the copy: no latch.
		var tup *heap.Tuple
		changed := false
		if r.Transient() {
			tup = r.Versions()[0]
		} else {
			r.Lock()
			tup = tx.e.visibleVersion(r, snap)
			changed = tup != nil && s.Lock && tx.rr && tx.e.olderVersionChanged(r, tup, snap)
			r.Unlock()
		}
		if tup == nil || !where(r.Key(), tup.Value()) {
			return true
		}
		if changed { // see visibleToChange
			scanErr = tx.Fail(ctx, errs.ErrSerialization)
			return false
		}
		if s.Lock {
			locked, err := tx.lockVersion(ctx, tbl, r, tup, s.Mode, s.Policy)
			var moved *movedError
			if errors.As(err, &moved) {
				// A committed key update moved the row (move.go):
				// lock it under its new key, where its qualification
				// — the scan's range too — is checked again.
				nr, nlocked, ferr := tx.lockMoved(ctx, tbl, moved.mv, &s)
				if nr != nil {
					defer nr.Unpin()
				}
				if ferr == nil && !inRange(nr.Key(), lo, hi, s.Prefix) {
					return true
				}
				if ferr == nil {
					if followed == nil {
						followed = map[string]struct{}{}
					}
					followed[string(nr.Key())] = struct{}{}
				}
				r, locked, err = nr, nlocked, ferr
			}
			if errors.Is(err, errs.ErrNotFound) || errors.Is(err, errs.ErrSkipped) {
				return true
			}
			if err != nil {
				scanErr = tx.Fail(ctx, err)
				return false
			}
			// EvalPlanQual: the version locked is a newer one; it must
			// still qualify. If not, the row is left out but stays locked.
			if locked != tup && !where(r.Key(), locked.Value()) {
				return true
			}
			tup = locked
		}
		k, value := r.Key(), tup.Value()
		if s.Lock || !(r.Transient() || s.NoCopy) {
			// One allocation holds both copies. A reading scan's
			// transient row is already a copy of its own (see
			// heap.Row.Transient): a full scan's rows mostly are, and
			// copying them again was a tenth of its time. A NoCopy
			// reading scan lends the stored bytes for fn's call.
			buf := make([]byte, len(k)+len(value))
			copy(buf, k)
			copy(buf[len(k):], value)
			k, value = buf[:len(k):len(k)], buf[len(k):]
		}
		err := fn(k, value) // both clipped: the batch's arena slices are (heap.backedStore.read)
		if err == nil {
			// The callback (or, meanwhile, another goroutine) may have
			// ended the transaction, or Close may have begun.
			err = tx.StillActive()
		}
		if err != nil {
			scanErr = err
			return false
		}
		n++
		return s.Limit == 0 || n < s.Limit
	}
	if s.Reverse {
		tbl.Descend(lo, hi, visit)
	} else {
		tbl.Ascend(lo, hi, visit)
	}
	if scanErr == nil {
		scanErr = whereErr
	}
	if scanErr == nil {
		// Rows the backend could not read were skipped.
		scanErr = tx.readFailed(ctx)
	}
	return scanErr
}
