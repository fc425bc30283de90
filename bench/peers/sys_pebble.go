package main

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// pebbleSys is pebble/v2 (64 MiB block cache, as tupled's backend) with
// the application-level lockTable for row locks: "FOR SHARE" reads take
// each key's shared lock, in key order, then Get it; a transfer takes both
// accounts' exclusive locks in key order, reads them and commits one batch
// with pebble.Sync; a claim iterates the jobs, takes the first one whose
// lock is free (TryLock: SKIP LOCKED), checks that it is still there and
// still todo, and commits its move to done with pebble.Sync.
type pebbleSys struct {
	db    *pebble.DB
	locks *lockTable
}

func openPebble(dir string) (system, error) {
	db, err := pebble.Open(dir, &pebble.Options{
		CacheSize:          64 << 20,
		FormatMajorVersion: pebble.FormatNewest,
	})
	if err != nil {
		return nil, err
	}
	return &pebbleSys{db: db, locks: newLockTable()}, nil
}

func (s *pebbleSys) load(prefix byte, n int, value func(i uint64) []byte) error {
	for lo := 0; lo < n; lo += loadBatch {
		b := s.db.NewBatch()
		for i := lo; i < min(lo+loadBatch, n); i++ {
			if err := b.Set(pkey(prefix, uint64(i)), value(uint64(i)), nil); err != nil {
				return err
			}
		}
		if err := b.Commit(pebble.Sync); err != nil {
			return err
		}
	}
	return nil
}

func (s *pebbleSys) loadKV(_ context.Context, rows, valueSize int) error {
	return s.load('k', rows, func(i uint64) []byte { return kvValue(i, valueSize) })
}

func (s *pebbleSys) loadAccounts(_ context.Context, n int, balance int64) error {
	return s.load('a', n, func(uint64) []byte { return accountValue(balance) })
}

func (s *pebbleSys) loadJobs(_ context.Context, n int) error { return s.load('j', n, jobValue) }

// get returns a copy of key's value.
func (s *pebbleSys) get(key []byte) ([]byte, error) {
	v, closer, err := s.db.Get(key)
	if err != nil {
		return nil, err
	}
	v = append([]byte(nil), v...)
	closer.Close()
	return v, nil
}

func (s *pebbleSys) readShare(_ context.Context, keys []uint64) error {
	ks := make([][]byte, 0, len(keys))
	for _, k := range sortedKeys(keys) {
		ks = append(ks, pkey('k', k))
	}
	for _, k := range ks {
		s.locks.lock(k, false)
	}
	defer func() {
		for _, k := range ks {
			s.locks.unlock(k, false)
		}
	}()
	for i, k := range ks {
		if _, err := s.get(k); err != nil {
			return fmt.Errorf("kv %d: %w", keys[i], err)
		}
	}
	return nil
}

func (s *pebbleSys) iterate(prefix byte, fn func(k, v []byte) error) error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefix}, UpperBound: []byte{prefix + 1}})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		if err := fn(it.Key()[1:], it.Value()); err != nil {
			it.Close()
			return err
		}
	}
	return it.Close()
}

func (s *pebbleSys) scan(_ context.Context) (rows int, n int64, err error) {
	err = s.iterate('k', func(_, v []byte) error {
		rows++
		n += int64(len(v))
		return nil
	})
	return rows, n, err
}

func (s *pebbleSys) claim(_ context.Context, worker int) (job uint64, ok bool, err error) {
	var key []byte
	err = s.iterate('j', func(k, v []byte) error {
		if !isTodo(k, v) {
			return nil
		}
		pk := append([]byte{'j'}, k...)
		if !s.locks.tryLock(pk) {
			return nil // SKIP LOCKED
		}
		// The iterator's snapshot may be older than the holder who just
		// released this job: recheck under the lock.
		cur, err := s.get(pk)
		if err == pebble.ErrNotFound || (err == nil && !isTodo(k, cur)) {
			s.locks.unlock(pk, true)
			return nil
		}
		if err != nil {
			s.locks.unlock(pk, true)
			return err
		}
		key = pk
		return errFound
	})
	if err != errFound {
		return 0, false, err
	}
	defer s.locks.unlock(key, true)
	job = binary.BigEndian.Uint64(key[1:])
	b := s.db.NewBatch()
	if !keepJob(job) {
		if err := b.Delete(key, nil); err != nil {
			return 0, false, err
		}
	}
	if err := b.Set(append([]byte{'d'}, doneKey(job)...), workerValue(worker), nil); err != nil {
		return 0, false, err
	}
	return job, true, b.Commit(pebble.Sync)
}

func (s *pebbleSys) transfer(_ context.Context, from, to uint64, amount int64) error {
	a, b := ordered(from, to)
	ka, kb := pkey('a', a), pkey('a', b)
	s.locks.lock(ka, true)
	defer s.locks.unlock(ka, true)
	s.locks.lock(kb, true)
	defer s.locks.unlock(kb, true)
	fv, err := s.get(pkey('a', from))
	if err != nil {
		return err
	}
	tv, err := s.get(pkey('a', to))
	if err != nil {
		return err
	}
	fb, err := balanceOf(fv)
	if err != nil {
		return err
	}
	tb, err := balanceOf(tv)
	if err != nil {
		return err
	}
	batch := s.db.NewBatch()
	if err := batch.Set(pkey('a', from), accountValue(fb-amount), nil); err != nil {
		return err
	}
	if err := batch.Set(pkey('a', to), accountValue(tb+credit(amount)), nil); err != nil {
		return err
	}
	return batch.Commit(pebble.Sync)
}

func (s *pebbleSys) bankTotal(_ context.Context) (total int64, n int, err error) {
	err = s.iterate('a', func(_, v []byte) error {
		b, err := balanceOf(v)
		total += b
		n++
		return err
	})
	return total, n, err
}

func (s *pebbleSys) queueState(_ context.Context) (left int, done []uint64, err error) {
	if err := s.iterate('j', func(_, _ []byte) error { left++; return nil }); err != nil {
		return 0, nil, err
	}
	err = s.iterate('d', func(k, _ []byte) error {
		done = append(done, binary.BigEndian.Uint64(k))
		return nil
	})
	return left, done, err
}

func (s *pebbleSys) write(_ context.Context, key uint64, value []byte) error {
	return s.db.Set(pkey('w', key), value, pebble.Sync)
}

func (s *pebbleSys) close() error { return s.db.Close() }
