package tupled

import (
	"github.com/tupled/tupled/internal/engine"
	"github.com/tupled/tupled/internal/errs"
)

// Limits. Every size is checked when a call asks for it, before anything
// is changed, and refused with PostgreSQL's SQLSTATE (the transaction is
// aborted; the database stays fully usable): everything the engine
// accepts it must be able to log, checkpoint into either backend and
// recover. A transaction's write set has no limit of its own beyond
// memory.
const (
	// MaxKeySize is the longest key (bytes) Insert stores, and the longest
	// key or Scan bound any operation accepts. PostgreSQL's B-tree refuses
	// index entries over 2704 bytes (54000, "index row size N exceeds btree
	// version 4 maximum 2704"); tupled allows 8 KiB, which leaves the row
	// key in the backend (a prefix of 3+MaxTableNameLen bytes and the key)
	// far inside storage.MaxKeySize.
	MaxKeySize = engine.MaxKeySize
	// MaxValueSize is the largest value (bytes) Insert and Update store:
	// 256 MiB. PostgreSQL allows 1 GB in one field, which it TOASTs into
	// 2 kB chunks; tupled hands a value to the backend whole, and both
	// backends handle one huge value poorly: pebble keeps it inside one
	// data block (decompressed whole by any read of a neighbouring key),
	// bbolt in one run of overflow pages. Measured with a 1 GiB value
	// (tests/crash's BenchmarkCommit1GB), checkpoint and recovery peaked at 6 GiB of
	// heap on bbolt and 12 GiB on pebble: enough to keep a smaller machine
	// from ever reopening the database. At 256 MiB the peak is a quarter
	// of that. Larger data belongs in several rows.
	MaxValueSize = engine.MaxValueSize
	// MaxTableNameLen is the longest table name (bytes) CreateTable
	// accepts; a longer one is refused (42622, name_too_long) rather than
	// truncated. A SQL identifier is at most NAMEDATALEN-1 = 63 bytes (the
	// parser truncates longer ones, as PostgreSQL does); the SQL front end
	// names engine tables after them plus a generation suffix ("t#2" for
	// a table dropped and created again), so the engine allows more.
	MaxTableNameLen = engine.MaxTableNameLen
)

var (
	// ErrProgramLimitExceeded: a key or value is larger than the engine
	// stores (SQLSTATE 54000, program_limit_exceeded).
	ErrProgramLimitExceeded = errs.ErrProgramLimitExceeded
	// ErrNameTooLong: a table name is longer than MaxTableNameLen
	// (SQLSTATE 42622, name_too_long).
	ErrNameTooLong = errs.ErrNameTooLong
)
