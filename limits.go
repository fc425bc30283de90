package tupled

import (
	"encoding/binary"
	"fmt"

	"github.com/tupled/tupled/storage"
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
// logCommit in bigcommit.go).
const (
	// MaxKeySize is the longest key (bytes) Insert stores, and the longest
	// key or Scan bound any operation accepts. PostgreSQL's B-tree refuses
	// index entries over 2704 bytes (54000, "index row size N exceeds btree
	// version 4 maximum 2704"); tupled allows 8 KiB, which leaves the row
	// key in the backend (a prefix of 3+MaxTableNameLen bytes and the key)
	// far inside storage.MaxKeySize.
	MaxKeySize = 8 << 10
	// MaxValueSize is the largest value (bytes) Insert and Update store:
	// 256 MiB. PostgreSQL allows 1 GB in one field, which it TOASTs into
	// 2 kB chunks; tupled hands a value to the backend whole, and both
	// backends handle one huge value poorly: pebble keeps it inside one
	// data block (decompressed whole by any read of a neighbouring key),
	// bbolt in one run of overflow pages. Measured with a 1 GiB value
	// (BenchmarkCommit1GB), checkpoint and recovery peaked at 6 GiB of
	// heap on bbolt and 12 GiB on pebble: enough to keep a smaller machine
	// from ever reopening the database. At 256 MiB the peak is a quarter
	// of that. Larger data belongs in several rows.
	MaxValueSize = 256 << 20
	// MaxTableNameLen is the longest table name (bytes) CreateTable
	// accepts; a longer one is refused (42622, name_too_long) rather than
	// truncated. A SQL identifier is at most NAMEDATALEN-1 = 63 bytes (the
	// parser truncates longer ones, as PostgreSQL does); the SQL front end
	// names engine tables after them plus a generation suffix ("t#2" for
	// a table dropped and created again), so the engine allows more.
	MaxTableNameLen = 255
)

var (
	// ErrProgramLimitExceeded: a key or value is larger than the engine
	// stores (SQLSTATE 54000, program_limit_exceeded).
	ErrProgramLimitExceeded = newStateError("54000", "program limit exceeded")
	// ErrNameTooLong: a table name is longer than MaxTableNameLen
	// (SQLSTATE 42622, name_too_long).
	ErrNameTooLong = newStateError("42622", "identifier too long")
)

// rowKeyLen is len(heap.RowKey(table, key)) without building it.
func rowKeyLen(table string, keyLen int) int {
	var b [binary.MaxVarintLen64]byte
	return 1 + binary.PutUvarint(b[:], uint64(len(table))) + len(table) + keyLen
}

// checkKey refuses a key (or Scan bound) longer than MaxKeySize, and one
// whose row key in the backend would be too long for it (possible only in
// a table with a name longer than MaxTableNameLen, created before there
// was a limit).
func checkKey(table string, key []byte) error {
	if len(key) > MaxKeySize || rowKeyLen(table, len(key)) > storage.MaxKeySize {
		return &opError{sentinel: ErrProgramLimitExceeded,
			msg: fmt.Sprintf("key size %d exceeds maximum %d for table %q", len(key), MaxKeySize, table)}
	}
	return nil
}

// checkValue refuses a value longer than MaxValueSize.
func checkValue(value []byte) error {
	if len(value) > MaxValueSize {
		return &opError{sentinel: ErrProgramLimitExceeded,
			msg: fmt.Sprintf("value size %d exceeds maximum %d", len(value), MaxValueSize)}
	}
	return nil
}

// checkTableName refuses a table name longer than MaxTableNameLen.
func checkTableName(name string) error {
	if len(name) > MaxTableNameLen {
		return &opError{sentinel: ErrNameTooLong,
			msg: fmt.Sprintf("table name of %d bytes is too long (maximum %d)", len(name), MaxTableNameLen)}
	}
	return nil
}

// storable reports whether the backend can hold a row (table, key, value):
// recovery skips a logged write it cannot (one the engine accepted before
// there were limits) rather than failing on it for ever.
func storable(table string, key, value []byte) bool {
	return rowKeyLen(table, len(key)) <= storage.MaxKeySize && len(value) <= storage.MaxValueSize
}
