package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/internal/tuplemode"
	"github.com/tupled/tupled/lockmgr"
	"github.com/tupled/tupled/tuplelock"
)

// Indexes: unique and non-unique secondary indexes over a table's rows.
//
// An index is a hidden engine table (its name begins with indexRelPrefix,
// which CreateTable refuses, and Tables leaves it out) whose rows, the
// index entries, are written in the same (sub)transaction as every write
// of a base row, with MVCC versions of their own:
//
//   - unique index: entry key = the index key; entry value = the base
//     row's key. Uniqueness is then the engine's primary-key uniqueness
//     (tuplelock.Locker.Insert, _bt_check_unique): an insert that finds an
//     in-progress inserter or deleter of the index key waits for it, then
//     fails with 23505 or succeeds — PostgreSQL's behaviour.
//   - non-unique index: entry key = the index key, escaped and terminated
//     (entryPrefix: 0x00 → 0x00 0xFF, then 0x00 0x01), followed by the base
//     key; a prefix scan of the escaped index key finds exactly its
//     entries, in base-key order. Its value is the base key as well.
//
// The index key is derived by the function given when the index is
// declared, IndexOptions.Key (like pebble's Comparer, the program supplies
// it at every open); ok=false means the row is not indexed (a NULL
// column: NULLs never conflict in a unique index, as in PostgreSQL).
//
// Writes: an insert inserts an entry; an update whose index key changed
// deletes the old entry and inserts the new one (one that leaves it alone
// writes nothing); a delete deletes the entry. The entries are ordinary
// writes of the transaction: a savepoint's rollback or an abort takes
// them with the base write, the WAL logs them with the write set, and
// recovery restores them as it restores any table. After a reopen an
// index's entries are there but its Key function is not: the index is
// found (loadIndexes) and stays unusable until CreateIndex is called again
// with the same name, table and uniqueness (which only registers Key).
// Until then a write to its table fails with 55000
// (object_not_in_prerequisite_state) rather than leave the index stale,
// and a lookup through it fails the same way; reads of the table itself
// work.
//
// Building (CreateIndex on a populated table) runs in an internal
// transaction that takes ShareLock on the table, as CREATE INDEX does
// (writers wait, readers do not), publishes the index, indexes every row
// its snapshot sees and commits. A unique build over duplicates fails with
// 23505 and leaves nothing behind. Entries written by the build are
// visible only to snapshots taken after it committed: a lookup by an older
// snapshot (a REPEATABLE READ transaction begun before) does not use the
// entries but scans the table with Key as its qualification — the same
// rows, slower. (PostgreSQL's entries have no visibility of their own;
// here they do, so a snapshot that cannot see the build must not trust
// them.)
//
// Lookups (IndexScan) are snapshot-consistent: the entries visible to the
// snapshot give the candidate base keys, and each base row is read (or
// locked) through Scan with the index key as qualification, so the row
// returned always has the key looked up: a locking lookup locks the base
// row, under READ COMMITTED follows its update chain and rechecks that the
// version locked still has the key (EvalPlanQual), skipping it otherwise.
type Index struct {
	name   string
	table  string
	unique bool
	rel    string // the hidden table of its entries
	tbl    *heap.Table
	// key is IndexOptions.Key; nil for an index found at open and not yet
	// registered again.
	key func(key, value []byte) ([]byte, bool)
	// built is the xid of the transaction that built it (0: built before
	// this open, visible to every snapshot).
	built uint64
}

// Name, Table and Unique describe the index.
func (ix *Index) Name() string  { return ix.name }
func (ix *Index) Table() string { return ix.table }
func (ix *Index) Unique() bool  { return ix.unique }

// IndexOptions declare an index: Unique, and Key, the function deriving a
// row's index key (ok=false: the row is not indexed). Key must be
// deterministic and must not retain its arguments.
type IndexOptions struct {
	Unique bool
	Key    func(key, value []byte) ([]byte, bool)
}

// ErrNoIndex is an index name that does not exist (42704).
var ErrNoIndex = errs.New("42704", "index does not exist")

// ErrIndexNotReady is a use of an index whose Key function was not
// registered since the database was opened (55000).
var ErrIndexNotReady = errs.New("55000", "index is not registered: call CreateIndex again after opening the database")

// indexRelPrefix begins every index's hidden table name; CreateTable
// refuses names that begin with it.
const indexRelPrefix = "\x00index\x00"

// indexRel is the hidden table name of an index: the prefix, 'u' or 'n',
// the base table's name length, ':', the table name, the index name.
func indexRel(table, name string, unique bool) string {
	f := "n"
	if unique {
		f = "u"
	}
	return indexRelPrefix + f + strconv.Itoa(len(table)) + ":" + table + name
}

// parseIndexRel is indexRel's inverse.
func parseIndexRel(rel string) (table, name string, unique, ok bool) {
	s, found := strings.CutPrefix(rel, indexRelPrefix)
	if !found || len(s) < 2 {
		return "", "", false, false
	}
	unique = s[0] == 'u'
	n, rest, found := strings.Cut(s[1:], ":")
	if !found {
		return "", "", false, false
	}
	l, err := strconv.Atoi(n)
	if err != nil || l < 0 || l > len(rest) {
		return "", "", false, false
	}
	return rest[:l], rest[l:], unique, true
}

// indexSet is the engine's indexes, replaced whole on every change
// (readers load it with one atomic load: every write consults it).
type indexSet struct {
	byTable map[string][]*Index
	byName  map[string]*Index
}

// indexState is the Engine's index registry.
type indexState struct {
	mu  sync.Mutex // serialises index DDL
	set atomic.Pointer[indexSet]
}

func (s *indexState) load() *indexSet {
	if p := s.set.Load(); p != nil {
		return p
	}
	return &indexSet{}
}

// with publishes the set with ix added (add) or removed; mu held.
func (s *indexState) with(ix *Index, add bool) {
	old := s.load()
	n := &indexSet{byTable: map[string][]*Index{}, byName: map[string]*Index{}}
	for k, v := range old.byName {
		if v != ix && k != ix.name {
			n.byName[k] = v
		}
	}
	for k, v := range old.byTable {
		for _, x := range v {
			if x != ix && x.name != ix.name {
				n.byTable[k] = append(n.byTable[k], x)
			}
		}
	}
	if add {
		n.byName[ix.name] = ix
		n.byTable[ix.table] = append(n.byTable[ix.table], ix)
	}
	s.set.Store(n)
}

// loadIndexes finds the indexes recovered from disk (at Open): each one
// unregistered (no Key) until CreateIndex registers it again.
func (e *Engine) loadIndexes() {
	e.idx.mu.Lock()
	defer e.idx.mu.Unlock()
	for _, t := range e.heap.Tables() {
		table, name, unique, ok := parseIndexRel(t.Name())
		if !ok {
			continue
		}
		e.idx.with(&Index{name: name, table: table, unique: unique, rel: t.Name(), tbl: t}, true)
	}
}

// isIndexRel reports whether name is an index's hidden table.
func isIndexRel(name string) bool { return strings.HasPrefix(name, indexRelPrefix) }

// Indexes returns table's indexes ("" : every index).
func (e *Engine) Indexes(table string) []*Index {
	s := e.idx.load()
	if table != "" {
		return append([]*Index(nil), s.byTable[table]...)
	}
	out := make([]*Index, 0, len(s.byName))
	for _, ix := range s.byName {
		out = append(out, ix)
	}
	return out
}

// CreateIndex creates (and builds) index name on table, or registers the
// Key function of an index recovered from disk with the same name, table
// and uniqueness. Errors: errs.ErrNoTable (42P01); errs.ErrTableExists
// (42P07) for a name taken; errs.ErrInvalid for a nil Key or empty name;
// ErrDuplicateKey (23505, `could not create unique index "name"`) for a
// unique build over duplicate keys, which leaves nothing behind; the wait
// for ShareLock's errors (lock timeout, deadlock, ctx's end).
func (e *Engine) CreateIndex(ctx context.Context, table, name string, o IndexOptions) error {
	if name == "" || o.Key == nil {
		return errs.Op(errs.ErrInvalid, "tupled: an index needs a name and a Key function")
	}
	e.idx.mu.Lock()
	defer e.idx.mu.Unlock()
	if _, err := e.table(table); err != nil {
		return err
	}
	if ix := e.idx.load().byName[name]; ix != nil {
		if ix.key == nil && ix.table == table && ix.unique == o.Unique {
			e.idx.with(&Index{name: name, table: table, unique: ix.unique, rel: ix.rel, tbl: ix.tbl, key: o.Key}, true)
			return nil
		}
		return errs.Op(errs.ErrTableExists, fmt.Sprintf("relation %q already exists", name))
	}
	tx, err := e.Begin(TxOptions{})
	if err != nil {
		return err
	}
	if err := tx.lockRel(ctx, table, lockmgr.ShareLock, false); err != nil {
		err = tx.Fail(ctx, err)
		tx.Rollback()
		return err
	}
	rel := indexRel(table, name, o.Unique)
	if err := e.createTable(rel); err != nil {
		tx.Rollback()
		return err
	}
	itbl, err := e.heap.Table(rel)
	if err != nil {
		tx.Rollback()
		return err
	}
	// The build's xid is a visibility token (Index.built: a snapshot that
	// does not see it scans the table instead): its commit needs a CSN
	// even when the table is empty and no entry is written.
	tx.txn.Top().NoteWrite()
	ix := &Index{name: name, table: table, unique: o.Unique, rel: rel, tbl: itbl, key: o.Key, built: tx.ID()}
	e.idx.with(ix, true)
	undo := func(err error) error {
		tx.Rollback()
		e.idx.with(ix, false)
		_ = e.DropTable(rel, true)
		return err
	}
	err = tx.Scan(ctx, table, ScanSpec{}, func(key, value []byte) error {
		err := tx.insertEntry(ctx, ix, key, value)
		if errors.Is(err, errs.ErrDuplicateKey) {
			return &errs.OpError{Sentinel: errs.ErrDuplicateKey, Msg: fmt.Sprintf("could not create unique index %q", name), Table: table, Constraint: name}
		}
		return err
	})
	if err != nil {
		return undo(err)
	}
	if err := tx.Commit(); err != nil {
		return undo(err)
	}
	return nil
}

// DropIndex drops index name: errs.ErrNoIndex (42704) if there is none
// (nil with ifExists). It takes AccessExclusiveLock on the index's table,
// waiting for every transaction using it, as DROP INDEX does.
func (e *Engine) DropIndex(ctx context.Context, name string, ifExists bool) error {
	e.idx.mu.Lock()
	defer e.idx.mu.Unlock()
	ix := e.idx.load().byName[name]
	if ix == nil {
		if ifExists {
			return nil
		}
		return errs.Op(ErrNoIndex, fmt.Sprintf("index %q does not exist", name))
	}
	tx, err := e.Begin(TxOptions{})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := tx.lockRel(ctx, ix.table, lockmgr.AccessExclusiveLock, false); err != nil {
		return err
	}
	if err := e.DropTable(ix.rel, true); err != nil {
		return err
	}
	e.idx.with(ix, false)
	return nil
}

// dropTableIndexes drops the indexes of a dropped table.
func (e *Engine) dropTableIndexes(table string) {
	e.idx.mu.Lock()
	defer e.idx.mu.Unlock()
	for _, ix := range e.idx.load().byTable[table] {
		_ = e.DropTable(ix.rel, true)
		e.idx.with(ix, false)
	}
}

// entryPrefix is a non-unique index's escaped, terminated index key.
func entryPrefix(ikey []byte) []byte {
	out := make([]byte, 0, len(ikey)+2)
	for _, b := range ikey {
		out = append(out, b)
		if b == 0 {
			out = append(out, 0xff)
		}
	}
	return append(out, 0, 1)
}

// entryKey is the key of the entry of (ikey, base key).
func (ix *Index) entryKey(ikey, key []byte) []byte {
	if ix.unique {
		return bytes.Clone(ikey)
	}
	return append(entryPrefix(ikey), key...)
}

func notReady(ix *Index) error {
	return errs.Op(ErrIndexNotReady, fmt.Sprintf("index %q is not registered since the database was opened", ix.name))
}

// insertEntry inserts ix's entry for the row (key, value), if it is
// indexed; a unique violation is ErrDuplicateKey naming the index.
func (tx *Tx) insertEntry(ctx context.Context, ix *Index, key, value []byte) error {
	ikey, ok := ix.key(key, value)
	if !ok {
		return nil
	}
	return tx.putEntry(ctx, ix, ikey, key)
}

func (tx *Tx) putEntry(ctx context.Context, ix *Index, ikey, key []byte) error {
	ek := ix.entryKey(ikey, key)
	if err := checkKey(ix.rel, ek); err != nil {
		return err
	}
	v := bytes.Clone(key)
	err := tx.e.tl.Insert(ctx, &tx.txn, ix.tbl, ek, v)
	if errors.Is(err, tuplelock.ErrDuplicateKey) {
		return &errs.OpError{Sentinel: errs.ErrDuplicateKey, Msg: fmt.Sprintf("duplicate key value violates unique constraint %q", ix.name),
			Table: ix.table, Constraint: ix.name, Detail: fmt.Sprintf("Key (%s)=(%s) already exists.", ix.name, errs.KeyText(ikey))}
	}
	if err != nil {
		return err
	}
	tx.logWrite(ix.rel, ek, v, false)
	return nil
}

// deleteEntry deletes the entry of (ikey, key): its newest version, which
// is committed or this transaction's (the base row's writers, who alone
// write it, were serialised by the base row's lock). A missing entry is
// left alone.
func (tx *Tx) deleteEntry(ctx context.Context, ix *Index, ikey, key []byte) error {
	ek := ix.entryKey(ikey, key)
	r := ix.tbl.PinRow(ek)
	if r == nil {
		return nil
	}
	defer r.Unpin()
	r.Lock()
	vs := r.Versions()
	var tup *heap.Tuple
	if len(vs) > 0 {
		tup = vs[len(vs)-1]
	}
	r.Unlock()
	if tup == nil {
		return nil
	}
	eng := tx.e.tl
	defer eng.ReleaseCarried(&tx.txn)
	for {
		res, err := eng.Update(ctx, &tx.txn, ix.tbl, r, tup, nil, true)
		if err != nil {
			return err
		}
		if res != heap.TMUpdated {
			break
		}
		tup = eng.LatestVersion(r, tup)
	}
	tx.logWrite(ix.rel, ek, nil, true)
	return nil
}

// indexInsert is the index maintenance of an insert into table.
func (tx *Tx) indexInsert(ctx context.Context, table string, key, value []byte) error {
	ixs := tx.e.idx.load().byTable[table]
	for _, ix := range ixs {
		if ix.key == nil {
			return notReady(ix)
		}
		if ix == tx.skipIndex {
			continue // UpsertOn inserted it
		}
		if err := tx.insertEntry(ctx, ix, key, value); err != nil {
			return err
		}
	}
	return nil
}

// indexWrite is the index maintenance of an update (old → value) or a
// delete of key's row in table.
func (tx *Tx) indexWrite(ctx context.Context, table string, key, old, value []byte, isDelete bool) error {
	ixs := tx.e.idx.load().byTable[table]
	for _, ix := range ixs {
		if ix.key == nil {
			return notReady(ix)
		}
		k0, ok0 := ix.key(key, old)
		var k1 []byte
		ok1 := false
		if !isDelete {
			k1, ok1 = ix.key(key, value)
			if ok0 == ok1 && bytes.Equal(k0, k1) {
				continue
			}
		}
		if ok0 {
			if err := tx.deleteEntry(ctx, ix, k0, key); err != nil {
				return err
			}
		}
		if ok1 {
			if err := tx.putEntry(ctx, ix, k1, key); err != nil {
				return err
			}
		}
	}
	return nil
}

// uniqueKeyChanged reports whether an update of key's row from old to
// value changes the key of one of table's unique indexes: such an update
// is a key update (FOR UPDATE strength, conflicting with FOR KEY SHARE).
func (e *Engine) uniqueKeyChanged(table string, key, old, value []byte) bool {
	for _, ix := range e.idx.load().byTable[table] {
		if !ix.unique || ix.key == nil {
			continue
		}
		k0, ok0 := ix.key(key, old)
		k1, ok1 := ix.key(key, value)
		if ok0 != ok1 || !bytes.Equal(k0, k1) {
			return true
		}
	}
	return false
}

// IndexScan runs s over the rows of index's table whose index key is ikey
// (s's Start, End, Prefix and Reverse are ignored; Where, Limit and the
// lock apply as in Scan), calling fn with each row's key and value, in
// base-key order. Locking follows Scan: the base row is locked and, under
// READ COMMITTED, a newer version locked must still have ikey (and pass
// Where) or it is skipped. Errors: ErrNoIndex (42704), ErrIndexNotReady
// (55000), and Scan's.
func (tx *Tx) IndexScan(ctx context.Context, index string, ikey []byte, s ScanSpec, fn func(key, value []byte) error) error {
	ix := tx.e.idx.load().byName[index]
	if ix == nil {
		if _, err := tx.start(ctx, false); err != nil {
			return err
		}
		return tx.Fail(ctx, errs.Op(ErrNoIndex, fmt.Sprintf("index %q does not exist", index)))
	}
	if ix.key == nil {
		if _, err := tx.start(ctx, false); err != nil {
			return err
		}
		return tx.Fail(ctx, notReady(ix))
	}
	relMode := lockmgr.AccessShareLock
	if s.Lock {
		relMode = lockmgr.RowShareLock
	}
	snap, err := tx.startOn(ctx, s.Lock, ix.table, relMode)
	if err != nil {
		return err
	}
	ikey = bytes.Clone(ikey)
	userWhere := s.Where
	s.Where = func(key, value []byte) (bool, error) {
		k, ok := ix.key(key, value)
		if !ok || !bytes.Equal(k, ikey) {
			return false, nil
		}
		if userWhere != nil {
			return userWhere(key, value)
		}
		return true, nil
	}
	s.Start, s.End, s.Prefix, s.Reverse = nil, nil, nil, false
	if ix.built != 0 && !tx.e.xacts.Visible(ix.built, snap) {
		// The snapshot predates the build: scan the table (see Index).
		return tx.Scan(ctx, ix.table, s, fn)
	}
	// The candidates: the base keys of the entries the snapshot sees.
	var keys [][]byte
	collect := func(r *heap.Row) bool {
		var tup *heap.Tuple
		if r.Transient() {
			tup = r.Versions()[0]
		} else {
			r.Lock()
			tup = tx.e.visibleVersion(r, snap)
			r.Unlock()
		}
		if tup != nil {
			keys = append(keys, bytes.Clone(tup.Value()))
		}
		return true
	}
	lo := ix.entryKey(ikey, nil)
	if ix.unique {
		if r := ix.tbl.PinRow(lo); r != nil {
			collect(r)
			r.Unpin()
		}
	} else {
		ix.tbl.Ascend(lo, prefixEnd(lo), collect)
	}
	if err := tx.readFailed(ctx); err != nil {
		return err
	}
	limit, n := s.Limit, 0
	s.Limit = 0
	errLimit := errors.New("limit")
	for _, k := range keys {
		s.Start, s.End = k, append(bytes.Clone(k), 0)
		err := tx.Scan(ctx, ix.table, s, func(key, value []byte) error {
			if err := fn(key, value); err != nil {
				return err
			}
			n++
			if limit > 0 && n >= limit {
				return errLimit
			}
			return nil
		})
		if err == errLimit {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// UpsertOn is Upsert with a unique index as the arbiter (INSERT … ON
// CONFLICT (<the index's columns or expressions>) DO …): the conflict is a
// live row with the new row's key in index, found by inserting the index
// entry first (PostgreSQL's speculative insertion checks the arbiter
// before it inserts the heap tuple; here, inserting the entry first means
// nothing is written on a conflict). The entry insert waits, as a unique
// insert does, for a transaction inserting or deleting the index key;
// then the row is inserted (its other indexes checked as by Insert), or
// the conflicting row is locked FOR NO KEY UPDATE and, should it still
// have the index key, onConflict gets its key and value (nil onConflict:
// DO NOTHING). A conflicting row deleted, or whose index key changed,
// before it was locked makes UpsertOn try again. A row the index does not
// index (NULL) never conflicts. Errors: ErrNoIndex, ErrIndexNotReady,
// errs.ErrInvalid for a non-unique index or one of another table, and
// Insert's, Lock's and Write's; under REPEATABLE READ a conflicting entry
// the snapshot does not see is 40001.
func (tx *Tx) UpsertOn(ctx context.Context, table, index string, key, value []byte, onConflict func(existingKey, existing []byte) ([]byte, bool)) (UpsertOutcome, error) {
	ix := tx.e.idx.load().byName[index]
	var ierr error
	switch {
	case ix == nil:
		ierr = errs.Op(ErrNoIndex, fmt.Sprintf("index %q does not exist", index))
	case ix.key == nil:
		ierr = notReady(ix)
	case !ix.unique || ix.table != table:
		ierr = errs.Op(errs.ErrInvalid, fmt.Sprintf("tupled: index %q is not a unique index of %q", index, table))
	}
	if ierr != nil {
		if _, err := tx.start(ctx, false); err != nil {
			return 0, err
		}
		return 0, tx.Fail(ctx, ierr)
	}
	ikey, ok := ix.key(key, value)
	if !ok {
		return UpsertInserted, tx.Insert(ctx, table, key, value)
	}
	for {
		snap, err := tx.startOn(ctx, true, table, lockmgr.RowExclusiveLock)
		if err != nil {
			return 0, err
		}
		if err := checkKey(table, key); err != nil {
			return 0, tx.Fail(ctx, err)
		}
		err = tx.putEntry(ctx, ix, ikey, key)
		if err == nil {
			tx.skipIndex = ix // its entry is in
			_, err = tx.insert(ctx, table, key, value, false)
			tx.skipIndex = nil
			if err == nil {
				err = tx.fkInserted(ctx, table, key, value) // fk.go
			}
			if err != nil {
				return 0, err
			}
			return UpsertInserted, nil
		}
		if !errors.Is(err, errs.ErrDuplicateKey) {
			return 0, tx.Fail(ctx, err)
		}
		r := ix.tbl.PinRow(ikey)
		if r == nil {
			continue
		}
		r.Lock()
		vs := r.Versions()
		bk := bytes.Clone(vs[len(vs)-1].Value())
		seen := tx.e.visibleVersion(r, snap) != nil
		r.Unlock()
		r.Unpin()
		if tx.rr && !seen {
			return 0, tx.Fail(ctx, errs.ErrSerialization)
		}
		if onConflict == nil {
			return UpsertUnchanged, nil
		}
		old, err := tx.Lock(ctx, table, bk, tuplemode.NoKeyExclusive, Block)
		if errors.Is(err, errs.ErrNotFound) {
			continue // deleted since: insert again
		}
		if err != nil {
			return 0, err
		}
		if k, ok := ix.key(bk, old); !ok || !bytes.Equal(k, ikey) {
			continue // no longer the conflicting row
		}
		nv, ok := onConflict(bk, old)
		if !ok {
			return UpsertUnchanged, nil
		}
		if err := tx.Write(ctx, table, bk, nv, false, Block); err != nil {
			return 0, err
		}
		return UpsertUpdated, nil
	}
}
