package engine

// Foreign keys, enforced as PostgreSQL's RI triggers (ri_triggers.c) do,
// but inside the write that needs them rather than as after-row triggers:
//
//   - Inserting a referencing ("child") row, or changing its reference,
//     locks the referenced ("parent") row FOR KEY SHARE — RI_FKey_check's
//     SELECT 1 FROM parent WHERE key = $1 FOR KEY SHARE. That is the lock
//     FOR KEY SHARE was invented for: it conflicts only with a delete or a
//     key update of the parent, so a child insert neither waits for nor
//     blocks an update of the parent's other columns. Several concurrent
//     child inserters share the lock as a multixact. A missing (or, once
//     waited for, deleted) parent is ErrForeignKeyViolation (23503). The
//     check uses the statement's snapshot: under REPEATABLE READ a parent
//     inserted after the snapshot is missing, and one deleted or key-updated
//     since is a serialization failure, as the locking SELECT's would be.
//     An update that leaves the reference as it was checks nothing
//     (RI_FKey_fk_upd_check_required): the update-locked-tuple spec depends
//     on that.
//   - Deleting a parent row, or changing its key (UpdateKey, or an update
//     that changes the unique index the foreign key references), runs the
//     foreign key's action after the parent's own lock is taken — so a
//     child inserter holding FOR KEY SHARE on the parent has already been
//     waited for. NO ACTION and RESTRICT look for referencing rows (through
//     ChildIndex when there is one, else by a scan of the child table)
//     with a fresh snapshot, locking each FOR KEY SHARE, and fail with 23503
//     if one exists — under REPEATABLE READ too, even for a referencing
//     row committed after the snapshot. CASCADE deletes the children
//     (or, on a key change, rewrites their reference with SetRef), SET NULL
//     and SET DEFAULT rewrite them with SetRef; each of these is an ordinary
//     write of the child, so it fires the child's own foreign keys in turn
//     (a SET DEFAULT whose default parent is missing fails with 23503).
//     Under REPEATABLE READ, an action that would write a child the
//     transaction's snapshot does not see (inserted, or given its key,
//     after it) is a serialization failure (ri_PerformCheck's crosscheck
//     snapshot). Each of these REPEATABLE READ outcomes was checked with
//     PostgreSQL 15's isolationtester.
//
// NO ACTION and RESTRICT differ in PostgreSQL only in when they check
// (NO ACTION at the end of the statement, also accepting a parent row that
// reappeared with the same key); here every API call is a statement and
// both check at once, except that NO ACTION passes when a live parent row
// with the same key exists again (a unique-index reference whose key moved
// back).
//
// The registry is copy-on-write (fkState): writers read it without a lock.
// A ForeignKey's functions are not persisted (like an Index's Key): a
// program declares its foreign keys after every Open; the SQL front end
// keeps its own in its catalog.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/internal/tuplemode"
	"github.com/tupled/tupled/lockmgr"
)

// FKAction is what a foreign key does to referencing rows when their
// referenced row is deleted or its key changes (ON DELETE / ON UPDATE).
type FKAction int

const (
	NoAction   FKAction = iota // fail with 23503 if referencing rows exist (checked at the statement's end in PostgreSQL)
	Restrict                   // fail with 23503 if referencing rows exist
	Cascade                    // delete the referencing rows (ON DELETE) or rewrite their reference to the new key (ON UPDATE)
	SetNull                    // rewrite the referencing rows with SetRef(…, SetNull, nil)
	SetDefault                 // rewrite the referencing rows with SetRef(…, SetDefault, nil); the new reference is checked
)

func (a FKAction) String() string {
	switch a {
	case NoAction:
		return "NO ACTION"
	case Restrict:
		return "RESTRICT"
	case Cascade:
		return "CASCADE"
	case SetNull:
		return "SET NULL"
	case SetDefault:
		return "SET DEFAULT"
	}
	return fmt.Sprintf("FKAction(%d)", int(a))
}

// ForeignKey declares that every row of Table whose Ref is ok references
// a live row of RefTable.
type ForeignKey struct {
	Name     string // constraint name, unique in the database
	Table    string // the referencing ("child") table
	RefTable string // the referenced ("parent") table
	// RefIndex names a unique index of RefTable whose index key Ref
	// returns; "" means RefTable's primary key.
	RefIndex string
	// ChildIndex optionally names an index of Table whose index key is
	// Ref's result: deletes and key changes of a parent find its children
	// through it instead of scanning Table.
	ChildIndex string
	// Ref derives the referenced key from a referencing row; ok false: the
	// row references nothing (a NULL foreign key) and is never checked.
	// It must be deterministic and must not retain or modify its arguments.
	Ref func(key, value []byte) (ref []byte, ok bool)
	// OnDelete and OnUpdate are the actions on the parent's delete and key
	// change.
	OnDelete, OnUpdate FKAction
	// SetRef returns a referencing row's new value for the actions that
	// rewrite it: Cascade on a key change (newRef is the parent's new key),
	// SetNull and SetDefault (newRef nil). Required when one of them is
	// used.
	SetRef func(key, value []byte, action FKAction, newRef []byte) ([]byte, error)
}

// ErrForeignKeyViolation is a foreign key violation (23503); the error is
// a *FKError that says which.
var ErrForeignKeyViolation = errs.New("23503", "violates foreign key constraint")

// ErrDependentObjects is DROP TABLE of a table another table's foreign key
// references (2BP01).
var ErrDependentObjects = errs.New("2BP01", "other objects depend on it")

// FKError is a foreign key violation (it wraps ErrForeignKeyViolation).
type FKError struct {
	FK ForeignKey // the violated constraint
	// Referenced false: a referencing row (Key, Value of FK.Table) refers
	// to Ref, which RefTable does not have. Referenced true: the referenced
	// row (Key, Value of FK.RefTable) that was being deleted or given a new
	// key is still referenced by FK.Table's row with ChildKey.
	Referenced bool
	Key, Value []byte
	Ref        []byte
	ChildKey   []byte
}

func (e *FKError) Error() string {
	if e.Referenced {
		return fmt.Sprintf("update or delete on table %q violates foreign key constraint %q on table %q", e.FK.RefTable, e.FK.Name, e.FK.Table)
	}
	return fmt.Sprintf("insert or update on table %q violates foreign key constraint %q", e.FK.Table, e.FK.Name)
}

func (e *FKError) Unwrap() error { return ErrForeignKeyViolation }

// PgFields implements errs.Described, as PostgreSQL's ri_ReportViolation
// does: Table is the referencing table and Constraint the key's name in
// both directions; Detail names the referenced key ("key", or RefIndex
// when the reference is by a unique index).
func (e *FKError) PgFields() errs.Fields {
	col := "key"
	if e.FK.RefIndex != "" {
		col = e.FK.RefIndex
	}
	detail := fmt.Sprintf("Key (%s)=(%s) is not present in table %q.", col, errs.KeyText(e.Ref), e.FK.RefTable)
	if e.Referenced {
		detail = fmt.Sprintf("Key (%s)=(%s) is still referenced from table %q.", col, errs.KeyText(e.Ref), e.FK.Table)
	}
	return errs.Fields{Code: "23503", Message: e.Error(), Detail: detail, Table: e.FK.Table, Constraint: e.FK.Name}
}

// As lets errors.As find a *tupled.Error (errs.Public).
func (e *FKError) As(target any) bool { return errs.AsPublic(target, e) }

// fkSet is an immutable snapshot of the declared foreign keys.
type fkSet struct {
	byName   map[string]*ForeignKey
	byChild  map[string][]*ForeignKey // Table → its foreign keys
	byParent map[string][]*ForeignKey // RefTable → the foreign keys referencing it
}

// fkState is the engine's foreign key registry: read lock-free by every
// write, replaced under mu by DDL.
type fkState struct {
	mu  sync.Mutex
	set atomic.Pointer[fkSet]
}

func (s *fkState) load() *fkSet {
	if p := s.set.Load(); p != nil {
		return p
	}
	return &fkSet{}
}

// with returns a copy of the registry with fk added (add) or removed.
func (s *fkState) with(fk *ForeignKey, add bool) {
	old := s.load()
	n := &fkSet{byName: map[string]*ForeignKey{}, byChild: map[string][]*ForeignKey{}, byParent: map[string][]*ForeignKey{}}
	for name, f := range old.byName {
		if f == fk || (!add && name == fk.Name) {
			continue
		}
		n.byName[name] = f
		n.byChild[f.Table] = append(n.byChild[f.Table], f)
		n.byParent[f.RefTable] = append(n.byParent[f.RefTable], f)
	}
	if add {
		n.byName[fk.Name] = fk
		n.byChild[fk.Table] = append(n.byChild[fk.Table], fk)
		n.byParent[fk.RefTable] = append(n.byParent[fk.RefTable], fk)
	}
	s.set.Store(n)
}

// ForeignKeys returns the foreign keys whose Table or RefTable is table
// ("": all of them), in no order.
func (e *Engine) ForeignKeys(table string) []ForeignKey {
	var out []ForeignKey
	for _, f := range e.fks.load().byName {
		if table == "" || f.Table == table || f.RefTable == table {
			out = append(out, *f)
		}
	}
	return out
}

// ErrDuplicateObject is a constraint name already in use (42710).
var ErrDuplicateObject = errs.New("42710", "already exists")

// ErrNoForeignKey is a foreign key name that does not exist (42704).
var ErrNoForeignKey = errs.New("42704", "constraint does not exist")

func noForeignKey(name string) error {
	return errs.Op(ErrNoForeignKey, fmt.Sprintf("constraint %q does not exist", name))
}

// AddForeignKey declares fk, as ALTER TABLE … ADD FOREIGN KEY: it takes
// ShareRowExclusiveLock on both tables (so it waits for their writers,
// and their writers wait for it), then checks every existing row of
// fk.Table (a row whose reference is missing: *FKError, 23503, and the
// foreign key is not added). Errors: ErrNoTable (42P01), ErrInvalid
// (22023) for a missing name, Ref or (for a rewriting action) SetRef,
// ErrNoIndex (42704) or ErrInvalid for a RefIndex that is not a unique
// index of RefTable or a ChildIndex not of Table, ErrDuplicateObject
// (42710), and the lock wait's.
func (e *Engine) AddForeignKey(ctx context.Context, fk ForeignKey) error {
	return e.addForeignKey(ctx, nil, fk)
}

// AddForeignKey is Engine.AddForeignKey inside tx (SQL's ALTER TABLE or
// CREATE TABLE in a transaction that may already hold locks on the
// tables): the ShareRowExclusiveLocks are tx's, held until it ends, and
// the existing rows are checked with its snapshot. The declaration itself
// is not transactional: it stays when tx rolls back (drop it with
// DropForeignKey, or drop its table).
func (tx *Tx) AddForeignKey(ctx context.Context, fk ForeignKey) error {
	return tx.e.addForeignKey(ctx, tx, fk)
}

// addForeignKey declares fk, locking and checking in tx (nil: a
// transaction of its own).
func (e *Engine) addForeignKey(ctx context.Context, tx *Tx, fk ForeignKey) error {
	if err := checkFK(&fk); err != nil {
		return err
	}
	e.fks.mu.Lock()
	defer e.fks.mu.Unlock()
	for _, t := range []string{fk.Table, fk.RefTable} {
		if _, err := e.table(t); err != nil {
			return err
		}
	}
	if err := e.checkFKIndexes(&fk); err != nil {
		return err
	}
	if e.fks.load().byName[fk.Name] != nil {
		return errs.Op(ErrDuplicateObject, fmt.Sprintf("constraint %q for relation %q already exists", fk.Name, fk.Table))
	}
	own := tx == nil
	if own {
		var err error
		if tx, err = e.Begin(TxOptions{}); err != nil {
			return err
		}
		defer tx.Rollback()
	}
	for _, t := range []string{fk.Table, fk.RefTable} {
		if err := tx.lockRel(ctx, t, lockmgr.ShareRowExclusiveLock, false); err != nil {
			return tx.Fail(ctx, err)
		}
	}
	f := &fk
	e.fks.with(f, true)
	err := tx.Scan(ctx, fk.Table, ScanSpec{}, func(key, value []byte) error {
		ref, ok := f.Ref(key, value)
		if !ok {
			return nil
		}
		found, err := tx.fkParentExists(ctx, f, ref)
		if err == nil && !found {
			err = &FKError{FK: fk, Key: bytes.Clone(key), Value: bytes.Clone(value), Ref: bytes.Clone(ref)}
		}
		return err
	})
	if err == nil && own {
		err = tx.Commit()
	}
	if err != nil {
		e.fks.with(f, false)
	}
	return err
}

// checkFK checks a foreign key's declaration on its own.
func checkFK(fk *ForeignKey) error {
	switch {
	case fk.Name == "":
		return errs.Op(errs.ErrInvalid, "tupled: a foreign key needs a Name")
	case fk.Ref == nil:
		return errs.Op(errs.ErrInvalid, fmt.Sprintf("tupled: foreign key %q needs a Ref function", fk.Name))
	}
	for _, a := range []FKAction{fk.OnDelete, fk.OnUpdate} {
		if a < NoAction || a > SetDefault {
			return errs.Op(errs.ErrInvalid, fmt.Sprintf("tupled: foreign key %q: invalid action %d", fk.Name, int(a)))
		}
		if fk.SetRef == nil && (a == SetNull || a == SetDefault || (a == Cascade && a == fk.OnUpdate)) {
			return errs.Op(errs.ErrInvalid, fmt.Sprintf("tupled: foreign key %q: %v needs a SetRef function", fk.Name, a))
		}
	}
	return nil
}

// checkFKIndexes checks fk's RefIndex and ChildIndex against the indexes.
func (e *Engine) checkFKIndexes(fk *ForeignKey) error {
	set := e.idx.load()
	if fk.RefIndex != "" {
		ix := set.byName[fk.RefIndex]
		if ix == nil {
			return errs.Op(ErrNoIndex, fmt.Sprintf("index %q does not exist", fk.RefIndex))
		}
		if !ix.unique || ix.table != fk.RefTable {
			return errs.Op(errs.ErrInvalid, fmt.Sprintf("tupled: foreign key %q: %q is not a unique index of %q", fk.Name, fk.RefIndex, fk.RefTable))
		}
	}
	if fk.ChildIndex != "" {
		ix := set.byName[fk.ChildIndex]
		if ix == nil {
			return errs.Op(ErrNoIndex, fmt.Sprintf("index %q does not exist", fk.ChildIndex))
		}
		if ix.table != fk.Table {
			return errs.Op(errs.ErrInvalid, fmt.Sprintf("tupled: foreign key %q: %q is not an index of %q", fk.Name, fk.ChildIndex, fk.Table))
		}
	}
	return nil
}

// DropForeignKey removes foreign key name (ALTER TABLE … DROP CONSTRAINT),
// after taking AccessExclusiveLock on both its tables as PostgreSQL does.
// Errors: 42704 when there is none (nil with ifExists); the lock wait's.
func (e *Engine) DropForeignKey(ctx context.Context, name string, ifExists bool) error {
	e.fks.mu.Lock()
	defer e.fks.mu.Unlock()
	f := e.fks.load().byName[name]
	if f == nil {
		if ifExists {
			return nil
		}
		return noForeignKey(name)
	}
	tx, err := e.Begin(TxOptions{})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, t := range []string{f.Table, f.RefTable} {
		if err := tx.lockRel(ctx, t, lockmgr.AccessExclusiveLock, false); err != nil {
			return tx.Fail(ctx, err)
		}
	}
	e.fks.with(f, false)
	return nil
}

// checkDropTable refuses to drop a table another table's foreign key
// references (2BP01); a dropped table's own foreign keys, and those
// between it and itself, go with it (dropTableFKs).
func (e *Engine) checkDropTable(name string) error {
	for _, f := range e.fks.load().byParent[name] {
		if f.Table != name {
			return &errs.OpError{Sentinel: ErrDependentObjects, Msg: fmt.Sprintf("cannot drop table %s because other objects depend on it", name),
				Detail: fmt.Sprintf("constraint %s on table %s depends on table %s", f.Name, f.Table, name),
				Hint:   "Drop the foreign key (DropForeignKey) or the referencing table first."}
		}
	}
	return nil
}

// dropTableFKs forgets the foreign keys of a dropped table.
func (e *Engine) dropTableFKs(name string) {
	e.fks.mu.Lock()
	defer e.fks.mu.Unlock()
	for _, f := range e.fks.load().byChild[name] {
		e.fks.with(f, false)
	}
}

// fkParentExists reports whether the statement's snapshot sees a row of
// fk.RefTable with key (or RefIndex key) ref, without locking it.
func (tx *Tx) fkParentExists(ctx context.Context, fk *ForeignKey, ref []byte) (bool, error) {
	if fk.RefIndex == "" {
		_, err := tx.Get(ctx, fk.RefTable, ref)
		if errors.Is(err, errs.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	found := false
	err := tx.IndexScan(ctx, fk.RefIndex, ref, ScanSpec{Limit: 1}, func(_, _ []byte) error { found = true; return nil })
	return found, err
}

// fkLockParent is RI_FKey_check: it locks the parent row fk references
// with ref FOR KEY SHARE, and fails with a *FKError when there is none.
func (tx *Tx) fkLockParent(ctx context.Context, fk *ForeignKey, key, value, ref []byte) error {
	found := false
	var err error
	if fk.RefIndex != "" {
		s := ScanSpec{Limit: 1, Lock: true, Mode: tuplemode.KeyShare, Policy: Block}
		err = tx.IndexScan(ctx, fk.RefIndex, ref, s, func(_, _ []byte) error { found = true; return nil })
	} else {
		// A point lock, as the locking scan of one key would be, without
		// the scan's merge with the backend: the hot parent is in memory.
		// A parent whose key changed while we waited (a key update) is
		// gone from this key: missing, as EvalPlanQual's recheck of
		// "key = ref" on the new version would find.
		_, err = tx.Lock(ctx, fk.RefTable, ref, tuplemode.KeyShare, Block)
		found = err == nil
		if errors.Is(err, errs.ErrNotFound) {
			err = nil
		}
	}
	if err == nil && !found {
		err = tx.Fail(ctx, &FKError{FK: *fk, Key: bytes.Clone(key), Value: bytes.Clone(value), Ref: bytes.Clone(ref)})
	}
	return err
}

// fkInserted checks the foreign keys of a row just inserted into table.
func (tx *Tx) fkInserted(ctx context.Context, table string, key, value []byte) error {
	for _, fk := range tx.e.fks.load().byChild[table] {
		if ref, ok := fk.Ref(key, value); ok {
			if err := tx.fkLockParent(ctx, fk, key, value, ref); err != nil {
				return err
			}
		}
	}
	return nil
}

// fkChildChanged checks the foreign keys of a row of table whose value
// changed from old to value (and key from oldKey to key): a reference
// that did not change is not checked (RI_FKey_fk_upd_check_required).
func (tx *Tx) fkChildChanged(ctx context.Context, table string, oldKey, old, key, value []byte) error {
	for _, fk := range tx.e.fks.load().byChild[table] {
		ref, ok := fk.Ref(key, value)
		if !ok {
			continue
		}
		if ref0, ok0 := fk.Ref(oldKey, old); ok0 && bytes.Equal(ref0, ref) {
			continue
		}
		if err := tx.fkLockParent(ctx, fk, key, value, ref); err != nil {
			return err
		}
	}
	return nil
}

// parentRef is the key by which fk refers to table's row (key, value).
func (e *Engine) parentRef(fk *ForeignKey, key, value []byte) ([]byte, bool) {
	if fk.RefIndex == "" {
		return key, true
	}
	ix := e.idx.load().byName[fk.RefIndex]
	if ix == nil || ix.key == nil {
		return nil, false
	}
	return ix.key(key, value)
}

// fkParentChanged runs the actions of the foreign keys referencing table
// for its row (oldKey, old), deleted (isDelete) or now (key, value): a
// delete runs OnDelete, a change of the referenced key OnUpdate, anything
// else nothing.
func (tx *Tx) fkParentChanged(ctx context.Context, table string, oldKey, old, key, value []byte, isDelete bool) error {
	for _, fk := range tx.e.fks.load().byParent[table] {
		ref, ok := tx.e.parentRef(fk, oldKey, old)
		if !ok {
			continue
		}
		action := fk.OnDelete
		var newRef []byte
		if !isDelete {
			nr, nok := tx.e.parentRef(fk, key, value)
			if nok && bytes.Equal(nr, ref) {
				continue
			}
			action, newRef = fk.OnUpdate, nr
			if !nok {
				newRef = nil
			}
		}
		if err := tx.fkAct(ctx, fk, action, oldKey, old, ref, newRef); err != nil {
			return err
		}
	}
	return nil
}

// fkAct runs action on the rows referencing ref (the parent row
// (pkey, pvalue) deleted or given the key newRef).
func (tx *Tx) fkAct(ctx context.Context, fk *ForeignKey, action FKAction, pkey, pvalue, ref, newRef []byte) error {
	if action == NoAction {
		// ri_Check_Pk_Match: another live parent row with the same key
		// (a unique-index key that moved back) keeps the children valid.
		if found, err := tx.fkParentExists(ctx, fk, ref); err != nil || found {
			return err
		}
	}
	mode := tuplemode.KeyShare
	switch action {
	case Cascade:
		mode = tuplemode.Exclusive
		if newRef != nil {
			mode = tuplemode.NoKeyExclusive
		}
	case SetNull, SetDefault:
		mode = tuplemode.NoKeyExclusive
	}
	type child struct{ key, value []byte }
	var children []child
	limit := 0
	if action == NoAction || action == Restrict {
		limit = 1
	}
	err := tx.fkChildren(ctx, fk, ref, mode, limit, func(key, value []byte) error {
		children = append(children, child{bytes.Clone(key), bytes.Clone(value)})
		return nil
	})
	if err != nil {
		return err
	}
	for _, c := range children {
		var err error
		if action != NoAction && action != Restrict && tx.rr && !tx.seesAtSnapshot(ctx, fk.Table, c.key) {
			// ri_PerformCheck's crosscheck: the cascaded write finds a
			// child the transaction's snapshot does not see (inserted,
			// or given its key, after it).
			return tx.Fail(ctx, errs.Op(errs.ErrSerialization, "could not serialize access due to concurrent update"))
		}
		switch {
		case action == NoAction || action == Restrict:
			err = tx.Fail(ctx, &FKError{FK: *fk, Referenced: true, Key: bytes.Clone(pkey), Value: bytes.Clone(pvalue), Ref: bytes.Clone(ref), ChildKey: c.key})
		case action == Cascade && newRef == nil:
			err = tx.Write(ctx, fk.Table, c.key, nil, true, Block)
		default:
			var nv []byte
			nv, err = fk.SetRef(c.key, c.value, action, newRef)
			if err == nil {
				err = tx.Write(ctx, fk.Table, c.key, nv, false, Block)
				if r, ok := fk.Ref(c.key, nv); err == nil && action == SetDefault && ok && bytes.Equal(r, ref) {
					// RI_FKey_setdefault: a default equal to the key just
					// deleted or changed left the reference as it was,
					// which the child's own check skipped: check it (23503).
					err = tx.fkLockParent(ctx, fk, c.key, nv, ref)
				}
			} else {
				err = tx.Fail(ctx, err)
			}
		}
		if errors.Is(err, errs.ErrNotFound) {
			continue // already deleted by this statement's cascade
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// seesAtSnapshot reports whether the transaction's snapshot sees key's row
// of table.
func (tx *Tx) seesAtSnapshot(ctx context.Context, table string, key []byte) bool {
	tbl, err := tx.e.table(table)
	if err != nil {
		return false
	}
	tx.mu.Lock()
	snap := tx.snapshotLocked()
	tx.mu.Unlock()
	return tx.sees(tbl, key, snap)
}

// fkChildren calls fn with the rows of fk.Table that reference ref, seen
// with a fresh snapshot (also under REPEATABLE READ, as ri_PerformCheck's
// detectNewRows), each locked in mode first; limit > 0 stops after that
// many.
func (tx *Tx) fkChildren(ctx context.Context, fk *ForeignKey, ref []byte, mode tuplemode.Mode, limit int, fn func(key, value []byte) error) error {
	s := ScanSpec{Limit: limit, Lock: true, Mode: mode, Policy: Block}
	tx.mu.Lock()
	saved := tx.freshSnap
	tx.freshSnap = true
	tx.mu.Unlock()
	defer func() {
		tx.mu.Lock()
		tx.freshSnap = saved
		tx.mu.Unlock()
	}()
	if fk.ChildIndex != "" {
		return tx.IndexScan(ctx, fk.ChildIndex, ref, s, fn)
	}
	s.Where = func(key, value []byte) (bool, error) {
		r, ok := fk.Ref(key, value)
		return ok && bytes.Equal(r, ref), nil
	}
	return tx.Scan(ctx, fk.Table, s, fn)
}
