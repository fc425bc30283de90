package sqlfe

import (
	"context"
	"errors"
	"slices"

	"github.com/tupled/tupled"
)

// Bulk loads: rows into an engine table the session's transaction created
// (CREATE TABLE, a TRUNCATE or a table rewrite in the same transaction:
// Session.created) go in through tupled.Tx.BulkLoad, PostgreSQL's COPY
// FREEZE, instead of one Insert each: no other transaction can see that
// engine table before this one commits (the catalog entry naming it is
// the transaction's own), and if it rolls back the table is reclaimed. The
// engine refuses a load it cannot undo or check (an open savepoint, the
// table's indexes or foreign keys, rows already in it: ErrBulkRefused);
// the caller then inserts row by row, as before. COPY FROM (copy.go) and
// the table rewrites (altertable.go's rewriteTable) load so; pgbench -i's
// TRUNCATE, COPY, ALTER TABLE … ADD PRIMARY KEY take this path end to end.

// bulkChunk is how many rows a bulk load hands the engine at once: one
// backend batch or pebble sstable each.
const bulkChunk = 1 << 14

// ownsEngineTable reports whether the open transaction created engine
// table e.
func (s *Session) ownsEngineTable(e string) bool { return slices.Contains(s.created, e) }

// bulkBuf gathers rows for tupled.Tx.BulkLoad. The keys and values are
// copied into two growing buffers; a slice handed out stays valid when a
// buffer grows (the old array is kept), and the buffers are reused once
// the chunk is loaded.
type bulkBuf struct {
	keys, vals [][]byte
	kb, vb     []byte
}

func (b *bulkBuf) add(key, val []byte) {
	k := len(b.kb)
	b.kb = append(b.kb, key...)
	v := len(b.vb)
	b.vb = append(b.vb, val...)
	b.keys = append(b.keys, b.kb[k:len(b.kb):len(b.kb)])
	b.vals = append(b.vals, b.vb[v:len(b.vb):len(b.vb)])
}

func (b *bulkBuf) full() bool { return len(b.keys) >= bulkChunk }

func (b *bulkBuf) reset() {
	clear(b.keys)
	clear(b.vals)
	b.keys, b.vals, b.kb, b.vb = b.keys[:0], b.vals[:0], b.kb[:0], b.vb[:0]
}

// load loads the chunk into table; refused reports ErrBulkRefused (the
// chunk is kept, for the caller to insert). On ErrDuplicateKey n is the
// index of the row in the chunk.
func (b *bulkBuf) load(ctx context.Context, tx *tupled.Tx, table string) (n int, refused bool, err error) {
	if len(b.keys) == 0 {
		return 0, false, nil
	}
	n, err = tx.BulkLoad(ctx, table, b.keys, b.vals)
	if errors.Is(err, tupled.ErrBulkRefused) {
		return 0, true, nil
	}
	if err == nil {
		b.reset()
	}
	return n, false, err
}
