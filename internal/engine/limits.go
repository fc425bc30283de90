package engine

import (
	"fmt"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/internal/storage"
)

// Limits.
//
// Everything the engine accepts it must be able to log, checkpoint into
// either backend and recover; so every size is checked when it is asked
// for, before anything is changed, and refused with PostgreSQL's SQLSTATE
// (the transaction is aborted, as PostgreSQL aborts it on any error; the
// database stays fully usable). A key longer than MaxKeySize, or a table
// name longer than MaxTableNameLen, would otherwise be acknowledged and
// then break the checkpoint that writes it to the backend (bbolt refuses
// keys over 32 KiB, storage.MaxKeySize) and every recovery after it.
//
// A transaction's write set has no limit of its own beyond memory: a commit
// record larger than a WAL segment is logged as several records (see
// logCommit in internal/durable/commit.go).
// The limits (package tupled's MaxKeySize, MaxValueSize and
// MaxTableNameLen document them for callers, with the reasons).
const (
	MaxKeySize      = 8 << 10   // longest key or scan bound
	MaxValueSize    = 256 << 20 // largest value
	MaxTableNameLen = 255       // longest table name
)

// checkKey refuses a key (or Scan bound) longer than MaxKeySize, and one
// whose row key in the backend would be too long for it (possible only in
// a table with a name longer than MaxTableNameLen, created before there
// was a limit).
func checkKey(table string, key []byte) error {
	if len(key) > MaxKeySize || heap.RowKeyLen(table, len(key)) > storage.MaxKeySize {
		return &errs.OpError{Sentinel: errs.ErrProgramLimitExceeded,
			Msg: fmt.Sprintf("key size %d exceeds maximum %d for table %q", len(key), MaxKeySize, table)}
	}
	return nil
}

// checkValue refuses a value longer than MaxValueSize.
func checkValue(value []byte) error {
	if len(value) > MaxValueSize {
		return &errs.OpError{Sentinel: errs.ErrProgramLimitExceeded,
			Msg: fmt.Sprintf("value size %d exceeds maximum %d", len(value), MaxValueSize)}
	}
	return nil
}

// checkTableName refuses a table name longer than MaxTableNameLen.
func checkTableName(name string) error {
	if len(name) > MaxTableNameLen {
		return &errs.OpError{Sentinel: errs.ErrNameTooLong,
			Msg: fmt.Sprintf("table name of %d bytes is too long (maximum %d)", len(name), MaxTableNameLen)}
	}
	return nil
}
