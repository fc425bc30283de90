package tupled

// TEMPORARY: signatures of API.md while the engine is being written. Replaced by db.go/tx.go.

import "context"

type DB struct{}
type Tx struct{}

func Open(dir string, opts *Options) (*DB, error)                                      { panic("engine not yet implemented") }
func (db *DB) Close() error                                                            { panic("x") }
func (db *DB) CreateTable(ctx context.Context, name string) error                      { panic("x") }
func (db *DB) Begin(ctx context.Context, opts *TxOptions) (*Tx, error)                 { panic("x") }
func (db *DB) RunTx(ctx context.Context, opts *TxOptions, fn func(tx *Tx) error) error { panic("x") }
func (db *DB) Locks() []LockInfo                                                       { panic("x") }
func (db *DB) RowLocks(ctx context.Context, table string) ([]RowLock, error)           { panic("x") }
func (db *DB) Stats() Stats                                                            { panic("x") }
func (tx *Tx) ID() uint64                                                              { panic("x") }
func (tx *Tx) Get(ctx context.Context, table string, key []byte) ([]byte, error)       { panic("x") }
func (tx *Tx) Lock(ctx context.Context, table string, key []byte, strength LockStrength, wait WaitPolicy) ([]byte, error) {
	panic("x")
}
func (tx *Tx) Insert(ctx context.Context, table string, key, value []byte) error { panic("x") }
func (tx *Tx) Update(ctx context.Context, table string, key, value []byte) error { panic("x") }
func (tx *Tx) Delete(ctx context.Context, table string, key []byte) error        { panic("x") }
func (tx *Tx) Scan(ctx context.Context, table string, opts ScanOptions, fn func(key, value []byte) error) error {
	panic("x")
}
func (tx *Tx) Commit() error   { panic("x") }
func (tx *Tx) Rollback() error { panic("x") }
