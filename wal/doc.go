// Package wal is tupled's write-ahead log: an append-only, segmented log of
// typed opaque records with CRC32C framing, group commit, torn-tail
// recovery and a fatal-error rule for write and fsync failures.
package wal
