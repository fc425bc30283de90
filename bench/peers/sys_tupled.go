package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/tupled/tupled"
)

// tupledSys is tupled on disk through its public API: SyncCommit on (each
// writing Commit returns once its WAL record is fsynced, group commit
// sharing an fsync), the pebble backend or, as tupled-bbolt, the bbolt one.
// Reads lock with Tx.LockNoCopy(ForShare) (the value is not copied, as
// bbolt's Get does not copy it; the plain workload reads with GetNoCopy); a claim is Scan(ForUpdate, SkipLocked,
// Limit 1) with a Where on the job's status; a transfer locks both
// accounts FOR UPDATE in key order (RunTx retries what is retryable).
//
// The read workloads run each transaction on a tupled.Session taken from a
// pool, as a server runs a client's transactions on its connection's
// session (pgwire does, `tupled bench hotrow` does): a Session reuses its
// ended transaction's records, so a transaction allocates nothing. The
// guarantee is the same as DB.Begin's; bbolt's View allocates its Tx.
type tupledSys struct {
	db       *tupled.DB
	sessions sync.Pool // *tupled.Session holding no lock
}

var tupledTables = []string{"kv", "accounts", "jobs", "done", "w"}

// openTupledMem opens an in-memory tupled (nothing on disk; its dir is
// unused): see optionalSystems.
func openTupledMem() (system, error) { return openTupledWith("", nil) }

// openTupledArena is openTupledMem with Options.MemoryArena.
func openTupledArena() (system, error) {
	return openTupledWith("", &tupled.Options{MemoryArena: true})
}

func openTupled(dir string, bbolt bool) (system, error) {
	on := true
	opts := &tupled.Options{SyncCommit: &on}
	if bbolt {
		opts.Backend = tupled.Bbolt
	}
	return openTupledWith(dir, opts)
}

// openTupledWith opens tupled in dir ("": in memory) with opts and creates
// the harness's tables.
func openTupledWith(dir string, opts *tupled.Options) (system, error) {
	db, err := tupled.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	for _, t := range tupledTables {
		if err := db.CreateTableIfNotExists(context.Background(), t); err != nil {
			db.Close()
			return nil, err
		}
	}
	s := &tupledSys{db: db}
	s.sessions.New = func() any { return db.NewSession() }
	return s, nil
}

func (s *tupledSys) load(ctx context.Context, table string, n int, value func(i uint64) []byte) error {
	for lo := 0; lo < n; lo += loadBatch {
		err := s.db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
			for i := lo; i < min(lo+loadBatch, n); i++ {
				if err := tx.Insert(ctx, table, key8(uint64(i)), value(uint64(i))); err != nil {
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

func (s *tupledSys) loadKV(ctx context.Context, rows, valueSize int) error {
	return s.load(ctx, "kv", rows, func(i uint64) []byte { return kvValue(i, valueSize) })
}

func (s *tupledSys) loadAccounts(ctx context.Context, n int, balance int64) error {
	return s.load(ctx, "accounts", n, func(uint64) []byte { return accountValue(balance) })
}

func (s *tupledSys) loadJobs(ctx context.Context, n int) error {
	return s.load(ctx, "jobs", n, jobValue)
}

func (s *tupledSys) readShare(ctx context.Context, keys []uint64) error {
	sess := s.sessions.Get().(*tupled.Session)
	defer s.sessions.Put(sess)
	tx, err := sess.Begin(ctx, nil)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if _, err := tx.LockNoCopy(ctx, "kv", key8(k), tupled.ForShare, tupled.Wait); err != nil {
			tx.Rollback()
			return fmt.Errorf("lock kv %d: %w", k, err)
		}
	}
	return tx.Commit()
}

// readPlain reads keys in a read-only transaction with GetNoCopy (bbolt's
// View reads without a copy too).
func (s *tupledSys) readPlain(ctx context.Context, keys []uint64) error {
	sess := s.sessions.Get().(*tupled.Session)
	defer s.sessions.Put(sess)
	tx, err := sess.Begin(ctx, &tupled.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	for _, k := range keys {
		if _, err := tx.GetNoCopy(ctx, "kv", key8(k)); err != nil {
			tx.Rollback()
			return fmt.Errorf("get kv %d: %w", k, err)
		}
	}
	return tx.Commit()
}

func (s *tupledSys) scan(ctx context.Context) (rows int, n int64, err error) {
	tx, err := s.db.Begin(ctx, &tupled.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, 0, err
	}
	defer tx.Rollback()
	err = tx.Scan(ctx, "kv", tupled.ScanOptions{}, func(k, v []byte) error {
		rows++
		n += int64(len(v))
		return nil
	})
	return rows, n, err
}

func isTodo(_, v []byte) bool { return len(v) >= 4 && string(v[:4]) == "todo" }

func (s *tupledSys) claim(ctx context.Context, worker int) (job uint64, ok bool, err error) {
	err = s.db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		ok = false
		var key []byte
		err := tx.Scan(ctx, "jobs", tupled.ScanOptions{
			Lock: tupled.ForUpdate, Wait: tupled.SkipLocked, Limit: 1, Where: isTodo,
		}, func(k, _ []byte) error {
			key = k
			return nil
		})
		if err != nil || key == nil {
			return err
		}
		job, ok = binary.BigEndian.Uint64(key), true
		if !keepJob(job) {
			if err := tx.Delete(ctx, "jobs", key); err != nil {
				return err
			}
		}
		return tx.Insert(ctx, "done", doneKey(job), workerValue(worker))
	})
	return job, ok, err
}

func (s *tupledSys) transfer(ctx context.Context, from, to uint64, amount int64) error {
	return s.db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		a, b := ordered(from, to)
		vals := map[uint64][]byte{}
		for _, k := range []uint64{a, b} {
			v, err := tx.Lock(ctx, "accounts", key8(k), tupled.ForUpdate, tupled.Wait)
			if err != nil {
				return err
			}
			vals[k] = v
		}
		fb, err := balanceOf(vals[from])
		if err != nil {
			return err
		}
		tb, err := balanceOf(vals[to])
		if err != nil {
			return err
		}
		if err := tx.Update(ctx, "accounts", key8(from), accountValue(fb-amount)); err != nil {
			return err
		}
		return tx.Update(ctx, "accounts", key8(to), accountValue(tb+credit(amount)))
	})
}

func (s *tupledSys) bankTotal(ctx context.Context) (total int64, n int, err error) {
	tx, err := s.db.Begin(ctx, &tupled.TxOptions{ReadOnly: true, Isolation: tupled.RepeatableRead})
	if err != nil {
		return 0, 0, err
	}
	defer tx.Rollback()
	err = tx.Scan(ctx, "accounts", tupled.ScanOptions{}, func(_, v []byte) error {
		b, err := balanceOf(v)
		total += b
		n++
		return err
	})
	return total, n, err
}

func (s *tupledSys) queueState(ctx context.Context) (left int, done []uint64, err error) {
	tx, err := s.db.Begin(ctx, &tupled.TxOptions{ReadOnly: true, Isolation: tupled.RepeatableRead})
	if err != nil {
		return 0, nil, err
	}
	defer tx.Rollback()
	if err := tx.Scan(ctx, "jobs", tupled.ScanOptions{}, func(_, _ []byte) error { left++; return nil }); err != nil {
		return 0, nil, err
	}
	err = tx.Scan(ctx, "done", tupled.ScanOptions{}, func(k, _ []byte) error {
		done = append(done, binary.BigEndian.Uint64(k))
		return nil
	})
	return left, done, err
}

func (s *tupledSys) write(ctx context.Context, key uint64, value []byte) error {
	tx, err := s.db.Begin(ctx, nil)
	if err != nil {
		return err
	}
	if err := tx.Insert(ctx, "w", key8(key), value); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (s *tupledSys) close() error { return s.db.Close() }
