package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"sync/atomic"
)

// A system is one storage engine under test, opened on a directory of its
// own inside a child process. Every method is safe for concurrent use by
// the workload's clients. The datasets are:
//
//   - kv: rows keys 0..rows-1, each value valueSize bytes (the read and
//     scan workloads);
//   - accounts: n accounts, each a balance in the first 8 bytes of a
//     100-byte value (bank transfers);
//   - jobs and done: the job queue; a claim moves a job from jobs to done
//     in one durable transaction;
//   - w: rows written one durable transaction at a time (write latency).
//
// Each system keeps what it offers natively for locking, and says so in
// its file's comment and in README.md.
type system interface {
	loadKV(ctx context.Context, rows, valueSize int) error
	loadAccounts(ctx context.Context, n int, balance int64) error
	loadJobs(ctx context.Context, n int) error

	// readShare reads keys in one transaction, each locked FOR SHARE (or
	// the system's nearest equivalent) until the transaction ends; a key
	// that is missing is an error.
	readShare(ctx context.Context, keys []uint64) error
	// scan reads every kv row in key order in one transaction and returns
	// how many there were and the sum of their values' lengths.
	scan(ctx context.Context) (rows int, bytes int64, err error)
	// claim takes the first job no one else holds, moves it from jobs to
	// done (done's value names worker) and commits, durably; ok is false
	// when it found no job it could take.
	claim(ctx context.Context, worker int) (job uint64, ok bool, err error)
	// transfer moves amount from account from to account to in one
	// durable transaction, retrying as the system requires.
	transfer(ctx context.Context, from, to uint64, amount int64) error
	// bankTotal is the sum of every account's balance, and their number.
	bankTotal(ctx context.Context) (total int64, n int, err error)
	// queueState is what the job queue holds now: the jobs left and the
	// ids in done.
	queueState(ctx context.Context) (left int, done []uint64, err error)
	// write inserts row key of table w in its own durable transaction.
	write(ctx context.Context, key uint64, value []byte) error
	close() error
}

// systems lists every system in the order the tables print them.
// tupled-mem is tupled in memory with every kv row loaded before the
// workload (in the child, untimed): no storage design can make tupled's
// reads faster than that, so it is the ceiling of the on-disk figures, and
// issue 28's in-memory goals are measured on it.
var systems = []string{"tupled", "tupled-mem", "tupled-bbolt", "bbolt", "badger", "pebble", "sqlite"}

// optionalSystems run only when -systems names them: tupled-arena is
// tupled in memory with Options.MemoryArena (settled rows in arenas).
var optionalSystems = []string{"tupled-arena"}

// plainReader is a system whose plain read (no row lock) differs from
// its readShare: readPlain reads keys in one transaction without locking
// them; a key that is missing is an error.
type plainReader interface {
	readPlain(ctx context.Context, keys []uint64) error
}

// openSystem opens (creating if need be) system name in dir.
func openSystem(name, dir string) (system, error) {
	switch name {
	case "tupled":
		return openTupled(dir, false)
	case "tupled-bbolt":
		return openTupled(dir, true)
	case "tupled-mem":
		return openTupledMem()
	case "tupled-arena":
		return openTupledArena()
	case "bbolt":
		return openBbolt(dir)
	case "badger":
		return openBadger(dir)
	case "pebble":
		return openPebble(dir)
	case "sqlite":
		return openSQLite(dir)
	}
	return nil, fmt.Errorf("unknown system %q (want one of %v)", name, systems)
}

// key8 is the 8-byte big-endian key of id, so keys sort by number.
func key8(id uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], id)
	return k[:]
}

// pkey is key8(id) behind a one-byte dataset prefix, for the systems with
// a single key space (pebble, badger).
func pkey(prefix byte, id uint64) []byte {
	k := make([]byte, 9)
	k[0] = prefix
	binary.BigEndian.PutUint64(k[1:], id)
	return k
}

// kvValue is row id's value of size bytes: id's key, then filler.
func kvValue(id uint64, size int) []byte {
	v := make([]byte, size)
	for i := range v {
		v[i] = byte('a' + (int(id)+i)%26)
	}
	if size >= 8 {
		binary.BigEndian.PutUint64(v, id)
	}
	return v
}

// accountValue is an account row: the balance, then filler to 100 bytes.
func accountValue(balance int64) []byte {
	v := make([]byte, 100)
	binary.BigEndian.PutUint64(v, uint64(balance))
	for i := 8; i < len(v); i++ {
		v[i] = ' '
	}
	return v
}

func balanceOf(v []byte) (int64, error) {
	if len(v) < 8 {
		return 0, fmt.Errorf("account value of %d bytes", len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// jobValue is a job's row: "todo" then a payload (the queue's Where, or its
// equivalent, tests the status).
func jobValue(id uint64) []byte {
	return append([]byte("todo:"), kvValue(id, 59)...)
}

var claimSeq atomic.Uint64

// doneKey is the key of a done row of job id: the job, then a sequence
// number of the claim, so that a job done twice shows as two rows.
func doneKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64(key8(id), claimSeq.Add(1))
}

// workerValue is done's value: the worker that did the job.
func workerValue(worker int) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(worker))
}

// ordered returns a and b in increasing order: locks are taken in key
// order so that transfers never deadlock with each other.
func ordered(a, b uint64) (uint64, uint64) {
	if a > b {
		return b, a
	}
	return a, b
}

// sortedKeys is keys in increasing order (a copy).
func sortedKeys(keys []uint64) []uint64 {
	s := append([]uint64(nil), keys...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}

// loadBatch is how many rows a load puts in one transaction.
const loadBatch = 10000
