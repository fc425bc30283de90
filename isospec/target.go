package isospec

import (
	"context"

	"github.com/tupled/tupled"
)

// Target is the part of *tupled.DB the runner uses. It is an interface so that
// the runner's scheduling can be tested on its own; Tupled adapts the real DB.
type Target interface {
	CreateTable(ctx context.Context, name string) error
	Begin(ctx context.Context, opts *tupled.TxOptions) (Txn, error)
	Locks() []tupled.LockInfo
	RowLocks(ctx context.Context, table string) ([]tupled.RowLock, error)
	Close() error
}

// Txn is the part of *tupled.Tx the runner uses.
type Txn interface {
	ID() uint64
	Get(ctx context.Context, table string, key []byte) ([]byte, error)
	Lock(ctx context.Context, table string, key []byte, strength tupled.LockStrength, wait tupled.WaitPolicy) ([]byte, error)
	Insert(ctx context.Context, table string, key, value []byte) error
	Update(ctx context.Context, table string, key, value []byte) error
	Delete(ctx context.Context, table string, key []byte) error
	Scan(ctx context.Context, table string, opts tupled.ScanOptions, fn func(key, value []byte) error) error
	Commit() error
	Rollback() error
}

// SavepointTxn is the savepoint part of *tupled.Tx, which a Txn may have
// (the savepoint, release and rollback to commands need it).
type SavepointTxn interface {
	Savepoint(name string) error
	RollbackTo(name string) error
	Release(name string) error
}

// UpsertTxn is the upsert part of *tupled.Tx (the upsert command).
type UpsertTxn interface {
	Upsert(ctx context.Context, table string, key, value []byte, onConflict func([]byte) ([]byte, bool)) (tupled.UpsertOutcome, error)
}

// Opener opens a fresh engine for one permutation.
type Opener func(opts *tupled.Options) (Target, error)

// OpenTupled opens a purely in-memory tupled database.
func OpenTupled(opts *tupled.Options) (Target, error) {
	db, err := tupled.Open("", opts)
	if err != nil {
		return nil, err
	}
	return tupledDB{db}, nil
}

type tupledDB struct{ db *tupled.DB }

func (d tupledDB) CreateTable(ctx context.Context, name string) error {
	return d.db.CreateTable(ctx, name)
}

func (d tupledDB) Begin(ctx context.Context, opts *tupled.TxOptions) (Txn, error) {
	tx, err := d.db.Begin(ctx, opts)
	if err != nil {
		return nil, err
	}
	return tx, nil
}

func (d tupledDB) Locks() []tupled.LockInfo { return d.db.Locks() }

func (d tupledDB) RowLocks(ctx context.Context, table string) ([]tupled.RowLock, error) {
	return d.db.RowLocks(ctx, table)
}

func (d tupledDB) Close() error { return d.db.Close() }

// SessionTarget is a Target with sessions, the owners of session-level
// advisory locks (*tupled.Session). The runner gives each spec session one
// when the engine has them, and begins the session's transactions through
// it, as a PostgreSQL connection's transactions are its backend's.
type SessionTarget interface {
	Target
	NewSession() TargetSession
}

// TargetSession is the part of *tupled.Session the runner uses.
type TargetSession interface {
	ID() uint64
	Begin(ctx context.Context, opts *tupled.TxOptions) (Txn, error)
	AdvisoryLock(ctx context.Context, key tupled.AdvisoryKey, shared bool) error
	TryAdvisoryLock(ctx context.Context, key tupled.AdvisoryKey, shared bool) (bool, error)
	AdvisoryUnlock(key tupled.AdvisoryKey, shared bool) (bool, error)
	AdvisoryUnlockAll() error
	Close() error
}

// AdvisoryTxn is a Txn that takes transaction-level advisory locks
// (*tupled.Tx).
type AdvisoryTxn interface {
	Txn
	AdvisoryLock(ctx context.Context, key tupled.AdvisoryKey, shared bool) error
	TryAdvisoryLock(ctx context.Context, key tupled.AdvisoryKey, shared bool) (bool, error)
}

func (d tupledDB) NewSession() TargetSession { return tupledSession{d.db.NewSession()} }

type tupledSession struct{ *tupled.Session }

func (s tupledSession) Begin(ctx context.Context, opts *tupled.TxOptions) (Txn, error) {
	tx, err := s.Session.Begin(ctx, opts)
	if err != nil {
		return nil, err
	}
	return tx, nil
}
