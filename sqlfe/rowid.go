package sqlfe

import (
	"context"
	"sync"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
)

// A table created without a PRIMARY KEY gets a hidden key column, as a
// PostgreSQL heap gives every row a ctid: a bigint row identifier that no
// name reaches (its Name is "", which no SQL identifier spells), that
// SELECT *, RETURNING * and an INSERT without a column list leave out,
// and that INSERT fills from the table's rowid counter. Rows are keyed, so
// locked and scanned, by it: a scan returns them in insertion order, as a
// freshly filled heap does. (PostgreSQL's heap order also changes when an
// update moves a row; here an update keeps the row's place.)
//
// The counter of each such table lives in the Executor: seeded, on the
// table's first insert after the Executor started, with the highest rowid a
// fresh snapshot sees, then handed out by one atomic step per row. Rowids
// are never reused while the Executor runs; an aborted insert's rowid may be
// reused after a restart, which is harmless since no row holds it.
type rowidCounters struct {
	mu   sync.Mutex
	next map[string]int64 // engine table name -> next rowid
}

// nextRowid returns a rowid no row of t has had since the Executor started.
func (e *Executor) nextRowid(ctx context.Context, t *catalog.Table) (int64, error) {
	if err := e.seedRowid(ctx, t); err != nil {
		return 0, err
	}
	e.rowids.mu.Lock()
	defer e.rowids.mu.Unlock()
	n := e.rowids.next[t.Engine]
	e.rowids.next[t.Engine] = n + 1
	return n, nil
}

// seedRowid makes sure t's rowid counter is known: the first time, from
// the highest rowid a transaction of its own sees (without holding the
// counters' mutex while it reads). A statement that is about to lock t in
// a mode that conflicts with that read (TRUNCATE, LOCK TABLE, a table
// rewrite) seeds first: once its own transaction holds the lock, the read
// would wait for that transaction forever (pgbench -i's TRUNCATE then
// INSERT did).
func (e *Executor) seedRowid(ctx context.Context, t *catalog.Table) error {
	if !t.HiddenKey() {
		return nil
	}
	e.rowids.mu.Lock()
	_, ok := e.rowids.next[t.Engine]
	e.rowids.mu.Unlock()
	if ok {
		return nil
	}
	n := int64(1)
	err := e.db.RunTx(ctx, &tupled.TxOptions{ReadOnly: true}, func(tx *tupled.Tx) error {
		return tx.Scan(ctx, t.Engine, tupled.ScanOptions{Reverse: true, Limit: 1}, func(k, _ []byte) error {
			v, err := catalog.DecodeKey(t, k)
			if err != nil {
				return err
			}
			n = v.I + 1
			return nil
		})
	})
	if err != nil {
		return err
	}
	e.rowids.mu.Lock()
	defer e.rowids.mu.Unlock()
	if e.rowids.next == nil {
		e.rowids.next = map[string]int64{}
	}
	if cur, ok := e.rowids.next[t.Engine]; !ok || cur < n {
		e.rowids.next[t.Engine] = n
	}
	return nil
}
