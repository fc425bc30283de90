package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

// badgerSys is badger/v4 with SyncWrites (each commit is fsynced before it
// returns) and otherwise its default options. badger has no locks: its
// transactions are optimistic (serializable snapshot isolation, a commit
// that read a key another transaction wrote meanwhile fails with
// ErrConflict and is retried here). "FOR SHARE" reads are one read-only
// View; a claim or a transfer is one Update, retried on conflict.
type badgerSys struct {
	db *badger.DB
}

func openBadger(dir string) (system, error) {
	db, err := badger.Open(badger.DefaultOptions(dir).WithSyncWrites(true).WithLogger(nil))
	if err != nil {
		return nil, err
	}
	return &badgerSys{db: db}, nil
}

// update runs fn in an Update transaction, again while it conflicts.
func (s *badgerSys) update(ctx context.Context, fn func(txn *badger.Txn) error) error {
	for {
		err := s.db.Update(fn)
		if !errors.Is(err, badger.ErrConflict) {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

func (s *badgerSys) load(prefix byte, n int, value func(i uint64) []byte) error {
	wb := s.db.NewWriteBatch()
	for i := 0; i < n; i++ {
		if err := wb.Set(pkey(prefix, uint64(i)), value(uint64(i))); err != nil {
			wb.Cancel()
			return err
		}
	}
	return wb.Flush()
}

func (s *badgerSys) loadKV(_ context.Context, rows, valueSize int) error {
	return s.load('k', rows, func(i uint64) []byte { return kvValue(i, valueSize) })
}

func (s *badgerSys) loadAccounts(_ context.Context, n int, balance int64) error {
	return s.load('a', n, func(uint64) []byte { return accountValue(balance) })
}

func (s *badgerSys) loadJobs(_ context.Context, n int) error { return s.load('j', n, jobValue) }

func (s *badgerSys) readShare(_ context.Context, keys []uint64) error {
	return s.db.View(func(txn *badger.Txn) error {
		for _, k := range keys {
			it, err := txn.Get(pkey('k', k))
			if err != nil {
				return fmt.Errorf("kv %d: %w", k, err)
			}
			if err := it.Value(func([]byte) error { return nil }); err != nil {
				return err
			}
		}
		return nil
	})
}

// each calls fn for every row under prefix, in key order.
func each(txn *badger.Txn, prefix byte, fn func(k, v []byte) error) error {
	it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 100, Prefix: []byte{prefix}})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		item := it.Item()
		if err := item.Value(func(v []byte) error { return fn(item.Key()[1:], v) }); err != nil {
			return err
		}
	}
	return nil
}

func (s *badgerSys) scan(_ context.Context) (rows int, n int64, err error) {
	err = s.db.View(func(txn *badger.Txn) error {
		return each(txn, 'k', func(_, v []byte) error {
			rows++
			n += int64(len(v))
			return nil
		})
	})
	return rows, n, err
}

var errFound = errors.New("found")

func (s *badgerSys) claim(ctx context.Context, worker int) (job uint64, ok bool, err error) {
	err = s.update(ctx, func(txn *badger.Txn) error {
		ok = false
		var key []byte
		err := each(txn, 'j', func(k, v []byte) error {
			if !isTodo(k, v) {
				return nil
			}
			key = append([]byte{'j'}, k...)
			return errFound
		})
		if err != nil && err != errFound {
			return err
		}
		if key == nil {
			return nil
		}
		job, ok = binary.BigEndian.Uint64(key[1:]), true
		if !keepJob(job) {
			if err := txn.Delete(key); err != nil {
				return err
			}
		}
		return txn.Set(append([]byte{'d'}, doneKey(job)...), workerValue(worker))
	})
	return job, ok, err
}

func (s *badgerSys) transfer(ctx context.Context, from, to uint64, amount int64) error {
	return s.update(ctx, func(txn *badger.Txn) error {
		get := func(k uint64) (int64, error) {
			it, err := txn.Get(pkey('a', k))
			if err != nil {
				return 0, err
			}
			v, err := it.ValueCopy(nil)
			if err != nil {
				return 0, err
			}
			return balanceOf(v)
		}
		fb, err := get(from)
		if err != nil {
			return err
		}
		tb, err := get(to)
		if err != nil {
			return err
		}
		if err := txn.Set(pkey('a', from), accountValue(fb-amount)); err != nil {
			return err
		}
		return txn.Set(pkey('a', to), accountValue(tb+credit(amount)))
	})
}

func (s *badgerSys) bankTotal(_ context.Context) (total int64, n int, err error) {
	err = s.db.View(func(txn *badger.Txn) error {
		return each(txn, 'a', func(_, v []byte) error {
			b, err := balanceOf(v)
			total += b
			n++
			return err
		})
	})
	return total, n, err
}

func (s *badgerSys) queueState(_ context.Context) (left int, done []uint64, err error) {
	err = s.db.View(func(txn *badger.Txn) error {
		if err := each(txn, 'j', func(_, _ []byte) error { left++; return nil }); err != nil {
			return err
		}
		return each(txn, 'd', func(k, _ []byte) error {
			done = append(done, binary.BigEndian.Uint64(k))
			return nil
		})
	})
	return left, done, err
}

func (s *badgerSys) write(_ context.Context, key uint64, value []byte) error {
	return s.db.Update(func(txn *badger.Txn) error { return txn.Set(pkey('w', key), value) })
}

func (s *badgerSys) close() error { return s.db.Close() }
