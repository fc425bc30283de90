package isospec

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/tupled/tupled"
)

// fakeTarget is a deliberately small row-lock engine used to test the
// runner's scheduling on its own: no MVCC (writes are visible at once), row
// locks with the conflict table of package tupled's documentation, waiters
// shown in Locks(), lock timeouts, and optional hooks to misbehave (panic,
// ignore cancellation).
type fakeTarget struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced whenever a lock is released
	nextID  uint64
	tables  map[string]map[string]string
	holders map[string]map[uint64]tupled.LockStrength // row -> tx -> strength
	waiters map[uint64]string                         // tx -> row it waits for
	opts    tupled.Options

	panicOnGet     bool // Get panics
	ignoreCancel   bool // Lock waits ignore ctx (an engine bug the runner must survive)
	closed         bool
	stuckReleased  chan struct{}
	lockTimeoutErr error
}

func newFake(opts *tupled.Options) *fakeTarget {
	f := &fakeTarget{changed: make(chan struct{}), tables: map[string]map[string]string{},
		holders: map[string]map[uint64]tupled.LockStrength{}, waiters: map[uint64]string{}, stuckReleased: make(chan struct{})}
	if opts != nil {
		f.opts = *opts
	}
	return f
}

func conflicts(a, b tupled.LockStrength) bool {
	return int(a)+int(b) > 4 || a == tupled.ForUpdate || b == tupled.ForUpdate
}

func (f *fakeTarget) CreateTable(ctx context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.tables[name]; ok {
		return tupled.ErrTableExists
	}
	f.tables[name] = map[string]string{}
	return nil
}

func (f *fakeTarget) Begin(ctx context.Context, opts *tupled.TxOptions) (Txn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	t := &fakeTx{f: f, id: f.nextID}
	if opts != nil {
		t.opts = *opts
	}
	return t, nil
}

func (f *fakeTarget) Locks() []tupled.LockInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []tupled.LockInfo
	for row, hs := range f.holders {
		for id := range hs {
			out = append(out, tupled.LockInfo{Tag: "tuple " + row, Mode: "x", TxID: id, Granted: true})
		}
	}
	for id, row := range f.waiters {
		out = append(out, tupled.LockInfo{Tag: "tuple " + row, Mode: "x", TxID: id, WaitStart: time.Now()})
	}
	return out
}

func (f *fakeTarget) RowLocks(ctx context.Context, table string) ([]tupled.RowLock, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []tupled.RowLock
	for row, hs := range f.holders {
		tb, key, _ := cutRow(row)
		if tb != table || len(hs) == 0 {
			continue
		}
		rl := tupled.RowLock{Key: []byte(key), Multi: len(hs) > 1}
		var ids []uint64
		for id := range hs {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			rl.Lockers = append(rl.Lockers, id)
			rl.Modes = append(rl.Modes, hs[id])
		}
		out = append(out, rl)
	}
	return out, nil
}

func (f *fakeTarget) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

func cutRow(row string) (string, string, bool) {
	for i := 0; i < len(row); i++ {
		if row[i] == '/' {
			return row[:i], row[i+1:], true
		}
	}
	return row, "", false
}

type fakeTx struct {
	f       *fakeTarget
	id      uint64
	opts    tupled.TxOptions
	done    bool
	aborted bool
}

func (t *fakeTx) ID() uint64 { return t.id }

func (t *fakeTx) check() error {
	if t.done {
		return tupled.ErrTxDone
	}
	if t.aborted {
		return tupled.ErrTxAborted
	}
	return nil
}

// fail aborts the transaction (releasing its locks) for errors that abort.
func (t *fakeTx) fail(err error) error {
	if err != nil && err != tupled.ErrNotFound && err != tupled.ErrSkipped {
		t.aborted = true
		t.f.mu.Lock()
		t.f.releaseLocked(t.id)
		t.f.mu.Unlock()
	}
	return err
}

func (f *fakeTarget) releaseLocked(id uint64) {
	for _, hs := range f.holders {
		delete(hs, id)
	}
	close(f.changed)
	f.changed = make(chan struct{})
}

func (t *fakeTx) lock(ctx context.Context, table, key string, s tupled.LockStrength, wait tupled.WaitPolicy) error {
	f := t.f
	row := table + "/" + key
	var deadline <-chan time.Time
	if lt := t.opts.LockTimeout; lt > 0 {
		deadline = time.After(lt)
	} else if lt := f.opts.LockTimeout; lt > 0 {
		deadline = time.After(lt)
	}
	for {
		f.mu.Lock()
		conflict := false
		for id, hs := range f.holders[row] {
			if id != t.id && conflicts(hs, s) {
				conflict = true
			}
		}
		if !conflict {
			if f.holders[row] == nil {
				f.holders[row] = map[uint64]tupled.LockStrength{}
			}
			if f.holders[row][t.id] < s {
				f.holders[row][t.id] = s
			}
			delete(f.waiters, t.id)
			f.mu.Unlock()
			return nil
		}
		switch wait {
		case tupled.NoWait:
			f.mu.Unlock()
			return tupled.ErrLockNotAvailable
		case tupled.SkipLocked:
			f.mu.Unlock()
			return tupled.ErrSkipped
		}
		f.waiters[t.id] = row
		ch := f.changed
		ignore := f.ignoreCancel
		f.mu.Unlock()
		if ignore {
			<-f.stuckReleased
			continue
		}
		select {
		case <-ch:
		case <-deadline:
			f.mu.Lock()
			delete(f.waiters, t.id)
			f.mu.Unlock()
			return tupled.ErrLockTimeout
		case <-ctx.Done():
			f.mu.Lock()
			delete(f.waiters, t.id)
			f.mu.Unlock()
			return fmt.Errorf("%w: %w", ctx.Err(), errCanceledForTest)
		}
	}
}

// errCanceledForTest stands for tupled's canceled-wait error in the fake.
var errCanceledForTest = fmt.Errorf("canceling statement due to user request")

func (t *fakeTx) Get(ctx context.Context, table string, key []byte) ([]byte, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if t.f.panicOnGet {
		panic("fake engine: Get exploded")
	}
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	v, ok := t.f.tables[table][string(key)]
	if !ok {
		return nil, tupled.ErrNotFound
	}
	return []byte(v), nil
}

func (t *fakeTx) Lock(ctx context.Context, table string, key []byte, s tupled.LockStrength, w tupled.WaitPolicy) ([]byte, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if err := t.lock(ctx, table, string(key), s, w); err != nil {
		return nil, t.fail(err)
	}
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	v, ok := t.f.tables[table][string(key)]
	if !ok {
		return nil, tupled.ErrNotFound
	}
	return []byte(v), nil
}

func (t *fakeTx) write(ctx context.Context, table string, key []byte, s tupled.LockStrength, fn func(m map[string]string) error) error {
	if err := t.check(); err != nil {
		return err
	}
	if err := t.lock(ctx, table, string(key), s, tupled.Wait); err != nil {
		return t.fail(err)
	}
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	m, ok := t.f.tables[table]
	if !ok {
		return t.fail(tupled.ErrNoTable)
	}
	return fn(m)
}

func (t *fakeTx) Insert(ctx context.Context, table string, key, value []byte) error {
	t.f.mu.Lock()
	_, dup := t.f.tables[table][string(key)]
	t.f.mu.Unlock()
	if dup {
		return t.fail(tupled.ErrDuplicateKey)
	}
	err := t.write(ctx, table, key, tupled.ForUpdate, func(m map[string]string) error {
		if _, ok := m[string(key)]; ok {
			return tupled.ErrDuplicateKey
		}
		m[string(key)] = string(value)
		return nil
	})
	if err == tupled.ErrDuplicateKey {
		return t.fail(err)
	}
	return err
}

func (t *fakeTx) Update(ctx context.Context, table string, key, value []byte) error {
	return t.write(ctx, table, key, tupled.ForNoKeyUpdate, func(m map[string]string) error {
		if _, ok := m[string(key)]; !ok {
			return tupled.ErrNotFound
		}
		m[string(key)] = string(value)
		return nil
	})
}

func (t *fakeTx) Delete(ctx context.Context, table string, key []byte) error {
	return t.write(ctx, table, key, tupled.ForUpdate, func(m map[string]string) error {
		if _, ok := m[string(key)]; !ok {
			return tupled.ErrNotFound
		}
		delete(m, string(key))
		return nil
	})
}

func (t *fakeTx) Scan(ctx context.Context, table string, o tupled.ScanOptions, fn func(k, v []byte) error) error {
	if err := t.check(); err != nil {
		return err
	}
	t.f.mu.Lock()
	var keys []string
	for k := range t.f.tables[table] {
		if (o.Start == nil || k >= string(o.Start)) && (o.End == nil || k < string(o.End)) {
			keys = append(keys, k)
		}
	}
	t.f.mu.Unlock()
	sort.Strings(keys)
	n := 0
	for _, k := range keys {
		if o.Lock != tupled.NoLock {
			if err := t.lock(ctx, table, k, o.Lock, o.Wait); err == tupled.ErrSkipped {
				continue
			} else if err != nil {
				return t.fail(err)
			}
		}
		t.f.mu.Lock()
		v, ok := t.f.tables[table][k]
		t.f.mu.Unlock()
		if !ok {
			continue
		}
		if err := fn([]byte(k), []byte(v)); err != nil {
			return err
		}
		n++
		if o.Limit > 0 && n >= o.Limit {
			break
		}
	}
	return nil
}

func (t *fakeTx) end() error {
	if t.done {
		return nil
	}
	t.done = true
	t.f.mu.Lock()
	t.f.releaseLocked(t.id)
	t.f.mu.Unlock()
	return nil
}

func (t *fakeTx) Commit() error {
	if t.done {
		return tupled.ErrTxDone
	}
	wasAborted := t.aborted
	t.end()
	if wasAborted {
		return tupled.ErrTxAborted
	}
	return nil
}

func (t *fakeTx) Rollback() error { return t.end() }

// runFake runs a spec on fake engines and returns the output.
func runFake(spec string, cfg Config, tweak func(*fakeTarget)) (string, error) {
	s, err := Parse("test.spec", spec)
	if err != nil {
		return "", err
	}
	cfg.Open = func(opts *tupled.Options) (Target, error) {
		f := newFake(opts)
		if tweak != nil {
			tweak(f)
		}
		return f, nil
	}
	var out bytes.Buffer
	err = Run(context.Background(), s, &out, cfg)
	return out.String(), err
}
