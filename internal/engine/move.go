package engine

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"sync"
	"weak"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/lockmgr"
)

// Key updates: an UPDATE that changes a row's primary key.
//
// PostgreSQL's heap does not care what a tuple's key is: UPDATE t SET id = 2
// WHERE id = 3 writes a new tuple version and points the old one's t_ctid
// at it, exactly as a no-key update does; only the lock it takes differs
// (LockTupleExclusive: the key changed). A READ COMMITTED locking scan
// whose snapshot still sees id = 3 then follows t_ctid to the new version,
// rechecks its qualification there (EvalPlanQual) and returns id = 2
// (PostgreSQL's lock-committed-keyupdate spec); an UPDATE or DELETE does
// the same; under REPEATABLE READ it is a serialization failure "due to
// concurrent update".
//
// Here a row is found by its key, and one key's versions live in one
// heap.Row: a key update is the old key's delete (taking FOR UPDATE, as a
// delete does) plus the new key's insert, in one call, UpdateKey. What the
// heap cannot say — that the delete was the first half of an update, and
// where the second half is — is kept beside it, in Engine.moves: the old
// key's last version (the one the update deleted) maps to the new key and
// the version inserted there, with the (sub)transaction that moved it.
// lockVersion consults it only when a committed delete made a version
// obsolete (heap.TMDeleted) and that delete was the mover's: a row deleted
// by a plain Delete is never followed, nor one whose move aborted and which
// someone else then deleted.
//
// The map holds the old version weakly (a weak.Pointer is its key, and a
// cleanup removes the entry once the version is collected): once vacuum
// prunes the old version no snapshot can reach it, and the entry goes with
// it. The entry holds the new version strongly: it may be followed for as
// long as the old one is reachable. A row whose old version left memory
// (an on-disk engine's eviction after a checkpoint) is no longer followed:
// its delete then reads as a plain delete — the scan leaves the row out, as
// for a key that was deleted.

// move is where a key update took a row: the mover, the new key, and the
// version the mover inserted there.
type move struct {
	xid    uint64 // the (sub)transaction that updated the key
	newKey []byte
	newTup *heap.Tuple
}

// moves is Engine.moves (see above).
type moves struct {
	mu sync.Mutex
	m  map[weak.Pointer[heap.Tuple]]move
}

func (ms *moves) add(old *heap.Tuple, mv move) {
	wp := weak.Make(old)
	ms.mu.Lock()
	if ms.m == nil {
		ms.m = map[weak.Pointer[heap.Tuple]]move{}
	}
	_, had := ms.m[wp]
	ms.m[wp] = mv
	ms.mu.Unlock()
	if !had {
		runtime.AddCleanup(old, func(wp weak.Pointer[heap.Tuple]) {
			ms.mu.Lock()
			delete(ms.m, wp)
			ms.mu.Unlock()
		}, wp)
	}
}

// lookup returns where old was moved by the transaction updater, if it was.
func (ms *moves) lookup(old *heap.Tuple, updater uint64) (move, bool) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.m == nil {
		return move{}, false
	}
	mv, ok := ms.m[weak.Make(old)]
	return mv, ok && updater != 0 && mv.xid == updater
}

// movedError is lockVersion's error for a version whose key a committed
// key update changed: the scan follows it (lockMoved); every other caller
// locked or wrote one key, whose qualification the new key fails, and
// treats it as errs.ErrNotFound (it wraps it).
type movedError struct{ mv move }

func (e *movedError) Error() string { return errs.ErrNotFound.Error() }
func (e *movedError) Unwrap() error { return errs.ErrNotFound }

// movedTo reports the move that made tup (deleted by a committed
// transaction) obsolete, if a key update did.
func (e *Engine) movedTo(r *heap.Row, tup *heap.Tuple) (move, bool) {
	last := e.tl.LatestVersion(r, tup)
	r.Lock()
	upd := heap.UpdateXid(last)
	r.Unlock()
	return e.moves.lookup(last, upd)
}

// UpdateKey replaces oldKey's row by one under newKey with value: an
// UPDATE that changes the primary key. It locks the old row as a delete
// does (FOR UPDATE strength, waiting for every locker; under READ
// COMMITTED following a concurrent committed update), then inserts newKey
// as Insert does (waiting for an in-progress inserter or deleter of it;
// errs.ErrDuplicateKey if a live row has it). READ COMMITTED locking scans
// whose snapshot saw the old row follow it to the new one (see moves).
// errs.ErrNotFound if no version of oldKey is visible; with newKey equal to
// oldKey it is a plain update.
func (tx *Tx) UpdateKey(ctx context.Context, table string, oldKey, newKey, value []byte) error {
	if bytes.Equal(oldKey, newKey) {
		return tx.Write(ctx, table, oldKey, value, false, Block)
	}
	snap, err := tx.startOn(ctx, true, table, lockmgr.RowExclusiveLock)
	if err != nil {
		return err
	}
	tbl, r, tup, err := tx.target(ctx, table, oldKey, snap, true, func() error {
		if err := checkKey(table, newKey); err != nil {
			return err
		}
		return checkValue(value)
	})
	if r != nil {
		defer r.Unpin()
	}
	if err != nil {
		return err
	}
	old, err := tx.writeVersion(ctx, tbl, r, tup, nil, true)
	if err != nil {
		return tx.Fail(ctx, err)
	}
	tx.logWrite(table, bytes.Clone(oldKey), nil, true)
	if err := tx.indexWrite(ctx, table, oldKey, old.Value(), nil, true); err != nil { // index.go
		return tx.Fail(ctx, err)
	}
	if _, err := tx.insert(ctx, table, newKey, value, false); err != nil {
		return err
	}
	if err := tx.fkChildChanged(ctx, table, oldKey, old.Value(), newKey, value); err != nil { // fk.go
		return err
	}
	if err := tx.fkParentChanged(ctx, table, oldKey, old.Value(), newKey, value, false); err != nil {
		return tx.Fail(ctx, err)
	}
	// The version just inserted: the newest one of newKey's row.
	nr := tbl.PinRow(newKey)
	if nr == nil {
		return nil
	}
	nr.Lock()
	vs := nr.Versions()
	var newTup *heap.Tuple
	if len(vs) > 0 {
		newTup = vs[len(vs)-1]
	}
	nr.Unlock()
	nr.Unpin()
	if newTup != nil {
		tx.e.moves.add(old, move{xid: tx.txn.Xact().ID(), newKey: bytes.Clone(newKey), newTup: newTup})
	}
	return nil
}

// lockMoved follows a key update for a READ COMMITTED locking scan: it
// locks, in mode, the version the mover inserted under its new key (or,
// under READ COMMITTED, the newest version of its update chain, following
// further key updates), and returns that row, pinned (the caller unpins
// it), its key and the version locked. errs.ErrNotFound when the new row
// is gone from memory or was deleted since.
func (tx *Tx) lockMoved(ctx context.Context, tbl *heap.Table, mv move, s *ScanSpec) (*heap.Row, *heap.Tuple, error) {
	for hops := 0; ; hops++ {
		if hops > 1000 {
			return nil, nil, errs.ErrNotFound
		}
		nr := tbl.PinRow(mv.newKey)
		if nr == nil {
			return nil, nil, errs.ErrNotFound
		}
		nr.Lock()
		found := false
		for _, v := range nr.Versions() {
			if v == mv.newTup {
				found = true
				break
			}
		}
		nr.Unlock()
		if !found {
			nr.Unpin()
			return nil, nil, errs.ErrNotFound
		}
		locked, err := tx.lockVersion(ctx, tbl, nr, mv.newTup, s.Mode, s.Policy)
		var me *movedError
		if errors.As(err, &me) {
			nr.Unpin()
			mv = me.mv
			continue
		}
		if err != nil {
			nr.Unpin()
			return nil, nil, err
		}
		return nr, locked, nil
	}
}
