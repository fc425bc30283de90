package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// bboltSys is bbolt with its defaults (each Update fsyncs before it
// returns). bbolt has no row locks: its writers are serialized by the
// database's own writer lock and its readers see an MVCC snapshot, so
// "FOR SHARE" reads are one View transaction and a claim or a transfer is
// one Update transaction (no one else can hold a job: SKIP LOCKED has
// nothing to skip).
type bboltSys struct {
	db *bolt.DB
}

var bboltBuckets = []string{"kv", "accounts", "jobs", "done", "w"}

func openBbolt(dir string) (system, error) {
	db, err := bolt.Open(filepath.Join(dir, "bolt.db"), 0o600, nil)
	if err != nil {
		return nil, err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range bboltBuckets {
			if _, err := tx.CreateBucketIfNotExists([]byte(b)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &bboltSys{db: db}, nil
}

func (s *bboltSys) load(bucket string, n int, value func(i uint64) []byte) error {
	for lo := 0; lo < n; lo += loadBatch {
		err := s.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte(bucket))
			b.FillPercent = 1 // sequential keys: pack the pages
			for i := lo; i < min(lo+loadBatch, n); i++ {
				if err := b.Put(key8(uint64(i)), value(uint64(i))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *bboltSys) loadKV(_ context.Context, rows, valueSize int) error {
	return s.load("kv", rows, func(i uint64) []byte { return kvValue(i, valueSize) })
}

func (s *bboltSys) loadAccounts(_ context.Context, n int, balance int64) error {
	return s.load("accounts", n, func(uint64) []byte { return accountValue(balance) })
}

func (s *bboltSys) loadJobs(_ context.Context, n int) error { return s.load("jobs", n, jobValue) }

func (s *bboltSys) readShare(_ context.Context, keys []uint64) error {
	return s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("kv"))
		for _, k := range keys {
			if b.Get(key8(k)) == nil {
				return fmt.Errorf("kv %d not found", k)
			}
		}
		return nil
	})
}

func (s *bboltSys) scan(_ context.Context) (rows int, n int64, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte("kv")).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			rows++
			n += int64(len(v))
		}
		return nil
	})
	return rows, n, err
}

func (s *bboltSys) claim(_ context.Context, worker int) (job uint64, ok bool, err error) {
	err = s.db.Update(func(tx *bolt.Tx) error {
		ok = false
		c := tx.Bucket([]byte("jobs")).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if !isTodo(k, v) {
				continue
			}
			job, ok = binary.BigEndian.Uint64(k), true
			if !keepJob(job) {
				if err := c.Delete(); err != nil {
					return err
				}
			}
			return tx.Bucket([]byte("done")).Put(doneKey(job), workerValue(worker))
		}
		return nil
	})
	return job, ok, err
}

func (s *bboltSys) transfer(_ context.Context, from, to uint64, amount int64) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("accounts"))
		fb, err := balanceOf(b.Get(key8(from)))
		if err != nil {
			return err
		}
		if err := b.Put(key8(from), accountValue(fb-amount)); err != nil {
			return err
		}
		tb, err := balanceOf(b.Get(key8(to)))
		if err != nil {
			return err
		}
		return b.Put(key8(to), accountValue(tb+credit(amount)))
	})
}

func (s *bboltSys) bankTotal(_ context.Context) (total int64, n int, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("accounts")).ForEach(func(_, v []byte) error {
			b, err := balanceOf(v)
			total += b
			n++
			return err
		})
	})
	return total, n, err
}

func (s *bboltSys) queueState(_ context.Context) (left int, done []uint64, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		left = tx.Bucket([]byte("jobs")).Stats().KeyN
		return tx.Bucket([]byte("done")).ForEach(func(k, _ []byte) error {
			done = append(done, binary.BigEndian.Uint64(k))
			return nil
		})
	})
	return left, done, err
}

func (s *bboltSys) write(_ context.Context, key uint64, value []byte) error {
	return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("w")).Put(key8(key), value) })
}

func (s *bboltSys) close() error { return s.db.Close() }
