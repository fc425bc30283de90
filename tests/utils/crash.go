package utils

// Shared machinery of the crash suites (tests/crash: crash_test.go,
// crash_bbolt_test.go, kill_test.go; tests/fault: fault_test.go): a
// concurrent workload over two tables, a ledger of what each commit wrote,
// and the check of a recovered database against it.
//
// The ledger. A writing transaction registers its write set under the
// ledger's mutex just before it calls Commit, and records its
// acknowledgement under the same mutex after Commit returned nil. A crash
// point takes a snapshot of the ledger and clones the file system while
// holding that mutex, so at the crash point:
//
//   - acknowledged: Commit returned nil before the crash;
//   - in flight: Commit was called but its acknowledgement was not recorded
//     (it may have returned nil just before the crash, or not at all); after
//     a failed Commit (I/O error) the commit stays in flight forever: its
//     fate is decided by recovery;
//   - no transaction can start Commit between snapshot and clone.
//
// Writes to one key are serialized by the row lock, which a writer holds
// until its Commit has returned, so an in-flight write to a key is later
// than every acknowledged write to it. Hence, for each key, the recovered
// state must be one of: the state of the last acknowledged write (absent if
// it deleted the key, or if no acknowledged commit ever wrote it — the
// initial state is an acknowledged write), or the state written by an
// in-flight commit. Every value carries a unique tag, so a value written by a
// transaction that rolled back, was left open, or never called Commit can
// never match. Atomicity of in-flight transfers is checked by the bank total.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

const (
	BankTable    = "bank"
	KVTable      = "kv"
	NAccounts    = 16
	InitBalance  = 1000
	NKVKeys      = 32
	BankTotalSum = NAccounts * InitBalance
)

func AcctKey(i int) string { return fmt.Sprintf("a%03d", i) }
func KVKey(i int) string   { return fmt.Sprintf("x%03d", i) }

// KState is the state of one key: absent, or present with a value.
type KState struct {
	Present bool
	Val     string
}

func (s KState) String() string {
	if !s.Present {
		return "<absent>"
	}
	return strconv.Quote(s.Val)
}

// Write is one write of a commit. ord orders the writes to one key: it is
// taken from a counter while the writer holds the row lock, so it grows with
// the key's write order (commits may record their acknowledgements in
// another order).
type Write struct {
	Table, Key string
	St         KState
	Ord        uint64
}

// Ledger records acknowledged and in-flight commits; with Out set, it also
// writes every event as one line (the child process of tests/crash/kill_test.go).
type Ledger struct {
	mu       sync.Mutex
	acked    map[string]KState // "table/key"
	ackedOrd map[string]uint64
	Inflight map[int64][]Write
	seq      int64
	MaxXid   uint64
	NAcked   int
	Out      io.Writer
	Hook     func() // called under mu after each ack (tests count/arm)
}

func NewLedger() *Ledger {
	return &Ledger{acked: map[string]KState{}, ackedOrd: map[string]uint64{}, Inflight: map[int64][]Write{}}
}

func LKey(table, key string) string { return table + "/" + key }

// SetInitial records the initial state: the bank accounts and no kv keys.
func (l *Ledger) SetInitial() {
	for i := 0; i < NAccounts; i++ {
		l.acked[LKey(BankTable, AcctKey(i))] = KState{true, fmt.Sprintf("%d:init", InitBalance)}
	}
}

func (l *Ledger) began(id uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id > l.MaxXid {
		l.MaxXid = id
		if l.Out != nil {
			fmt.Fprintf(l.Out, "b %d\n", id)
		}
	}
}

// register is called just before Commit; it returns the commit's ledger id.
func (l *Ledger) register(ws []Write) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	l.Inflight[l.seq] = ws
	if l.Out != nil {
		var sb strings.Builder
		fmt.Fprintf(&sb, "r %d", l.seq)
		for _, w := range ws {
			if w.St.Present {
				fmt.Fprintf(&sb, " %s/%s@%d=%s", w.Table, w.Key, w.Ord, w.St.Val)
			} else {
				fmt.Fprintf(&sb, " %s/%s@%d!", w.Table, w.Key, w.Ord)
			}
		}
		sb.WriteByte('\n')
		io.WriteString(l.Out, sb.String())
	}
	return l.seq
}

// ack is called once Commit returned nil.
func (l *Ledger) ack(seq int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.AckLocked(seq)
	if l.Out != nil {
		fmt.Fprintf(l.Out, "a %d\n", seq)
	}
	if l.Hook != nil {
		l.Hook()
	}
}

// drop forgets a commit that failed without any doubt (its WAL record was
// voided): its writes must not be in any recovered state.
func (l *Ledger) drop(seq int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.Inflight, seq)
}

func (l *Ledger) AckLocked(seq int64) {
	for _, w := range l.Inflight[seq] {
		k := LKey(w.Table, w.Key)
		if w.Ord > l.ackedOrd[k] {
			l.acked[k], l.ackedOrd[k] = w.St, w.Ord
		}
	}
	delete(l.Inflight, seq)
	l.NAcked++
}

// Snapshot is the ledger at a crash point.
type Snapshot struct {
	acked    map[string]KState
	inflight map[string][]KState
	maxXid   uint64
	nAcked   int
}

func (l *Ledger) SnapshotLocked() Snapshot {
	s := Snapshot{acked: make(map[string]KState, len(l.acked)), inflight: map[string][]KState{}, maxXid: l.MaxXid, nAcked: l.NAcked}
	for k, v := range l.acked {
		s.acked[k] = v
	}
	for _, ws := range l.Inflight {
		for _, w := range ws {
			k := LKey(w.Table, w.Key)
			s.inflight[k] = append(s.inflight[k], w.St)
		}
	}
	return s
}

// CrashPoint runs fn (which clones the file system) with the ledger frozen
// and returns the ledger as of that moment.
func (l *Ledger) CrashPoint(fn func()) Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.SnapshotLocked()
	fn()
	return s
}

// Rebase makes a recovered state the new acknowledged baseline (kill test:
// the next child continues from it). Nothing is in flight any more.
func (l *Ledger) Rebase(state map[string]KState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acked = state
	l.ackedOrd = map[string]uint64{}
	l.Inflight = map[int64][]Write{}
}

// ReadState reads every row of both tables.
func ReadState(t testing.TB, db *tupled.DB) map[string]KState {
	t.Helper()
	st := map[string]KState{}
	tx, err := db.Begin(bg, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	for _, table := range []string{BankTable, KVTable} {
		require.NoError(t, tx.Scan(bg, table, tupled.ScanOptions{}, func(k, v []byte) error {
			st[LKey(table, string(k))] = KState{true, string(v)}
			return nil
		}))
	}
	return st
}

func balanceOf(v string) (int, error) {
	b, _, ok := strings.Cut(v, ":")
	if !ok {
		return 0, fmt.Errorf("malformed balance %q", v)
	}
	return strconv.Atoi(b)
}

// CheckRecovered checks a reopened database against the ledger snapshot
// taken at its crash point and returns the state it read. what names the
// crash point (seed included) in failure messages.
func CheckRecovered(t testing.TB, db *tupled.DB, s Snapshot, what string) map[string]KState {
	t.Helper()
	got := ReadState(t, db)
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range s.acked {
		keys[k] = true
	}
	for k := range s.inflight {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		g := got[k]
		allowed := append([]KState{s.acked[k]}, s.inflight[k]...)
		ok := false
		for _, a := range allowed {
			ok = ok || a == g
		}
		if !ok {
			require.Failf(t, "recovered state not allowed by the ledger",
				"%s: key %s recovered as %v; last acknowledged %v, in flight %v (%d commits acknowledged)",
				what, k, g, s.acked[k], s.inflight[k], s.nAcked)
		}
	}
	total := 0
	for i := 0; i < NAccounts; i++ {
		g := got[LKey(BankTable, AcctKey(i))]
		require.True(t, g.Present, "%s: account %d missing", what, i)
		b, err := balanceOf(g.Val)
		require.NoError(t, err, what)
		total += b
	}
	require.Equal(t, BankTotalSum, total, "%s: bank total not conserved", what)
	for _, table := range []string{BankTable, KVTable} {
		rl, err := db.RowLocks(bg, table)
		require.NoError(t, err, what)
		require.Empty(t, rl, "%s: live row lockers in %s after recovery", what, table)
	}
	tx, err := db.Begin(bg, nil)
	require.NoError(t, err, what)
	require.Greater(t, tx.ID(), s.maxXid, "%s: transaction ids went backwards", what)
	require.NoError(t, tx.Rollback())
	return got
}

// SetupTables creates both tables and the accounts.
func SetupTables(t testing.TB, db *tupled.DB) {
	t.Helper()
	require.NoError(t, db.CreateTable(bg, BankTable))
	require.NoError(t, db.CreateTable(bg, KVTable))
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
		for i := 0; i < NAccounts; i++ {
			if err := tx.Insert(bg, BankTable, []byte(AcctKey(i)), []byte(fmt.Sprintf("%d:init", InitBalance))); err != nil {
				return err
			}
		}
		return nil
	}))
}

// Workload drives the concurrent Workload against db until stopped.
type Workload struct {
	DB   *tupled.DB
	L    *Ledger
	Seed uint64
	Gen  int // tag prefix: unique across child processes of a kill test
	tags atomic.Uint64
	ords atomic.Uint64

	// IOErrOK: Commit and operations may fail with ErrIO (fault tests);
	// otherwise any unexpected error fails the workload.
	IOErrOK bool
	// CkptEvery: if > 0, a goroutine checkpoints every CkptEvery.
	CkptEvery time.Duration
	CkptMu    *sync.Mutex // held around each checkpoint, if set

	CommitErrs   atomic.Uint64
	FailedSeen   atomic.Uint64 // I/O errors seen so far (commits, operations, checkpoints)
	DiskFullSeen atomic.Uint64 // ErrDiskFull errors seen (with ioErrOK): not fatal
	DiskFullAcks atomic.Uint64 // commits acknowledged after the first ErrDiskFull
	firstErr     atomic.Pointer[error]
}

// tag returns a unique value tag.
func (w *Workload) tag() string {
	return fmt.Sprintf("g%dw%d", w.Gen, w.tags.Add(1))
}

// ord returns the order of a write (see Write); call it after the write
// succeeded, while the transaction holds the row.
func (w *Workload) ord() uint64 { return uint64(w.Gen)<<40 | w.ords.Add(1) }

// expected reports whether an error is an ordinary outcome of the
// concurrent workload (the transaction is then rolled back).
func (w *Workload) expected(err error) bool {
	switch {
	case errors.Is(err, tupled.ErrNotFound), errors.Is(err, tupled.ErrDuplicateKey),
		errors.Is(err, tupled.ErrLockNotAvailable), errors.Is(err, tupled.ErrSkipped),
		tupled.IsRetryable(err), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, tupled.ErrClosed):
		return true
	case w.IOErrOK && errors.Is(err, tupled.ErrIO):
		w.FailedSeen.Add(1)
		return true
	case w.IOErrOK && errors.Is(err, tupled.ErrDiskFull):
		w.DiskFullSeen.Add(1)
		return true
	}
	return false
}

func (w *Workload) report(err error) {
	w.firstErr.CompareAndSwap(nil, &err)
}

// Err is the first unexpected error of any worker.
func (w *Workload) Err() error {
	if p := w.firstErr.Load(); p != nil {
		return *p
	}
	return nil
}

func (w *Workload) begin(ctx context.Context) (*tupled.Tx, error) {
	tx, err := w.DB.Begin(ctx, nil)
	if err != nil {
		return nil, err
	}
	w.L.began(tx.ID())
	return tx, nil
}

// commit registers tx's write set, commits, and acknowledges.
func (w *Workload) commit(tx *tupled.Tx, ws []Write) error {
	seq := w.L.register(ws)
	afterFailure := w.FailedSeen.Load() > 0
	afterDiskFull := w.DiskFullSeen.Load() > 0
	err := tx.Commit()
	if err == nil {
		if afterFailure {
			w.report(errors.New("a writing Commit started after an I/O error returned nil"))
		}
		if afterDiskFull {
			w.DiskFullAcks.Add(1)
		}
		w.L.ack(seq)
		return nil
	}
	w.CommitErrs.Add(1)
	if w.IOErrOK && errors.Is(err, tupled.ErrDiskFull) {
		// Not fatal, and the commit's record was voided: it must never
		// come back, not even after a crash.
		w.DiskFullSeen.Add(1)
		if tupled.SQLState(err) != "53100" {
			w.report(fmt.Errorf("commit failed with SQLSTATE %q, want 53100: %w", tupled.SQLState(err), err))
		}
		w.L.drop(seq)
		return err
	}
	w.FailedSeen.Add(1)
	if !(w.IOErrOK && errors.Is(err, tupled.ErrIO)) && !errors.Is(err, tupled.ErrClosed) {
		w.report(fmt.Errorf("commit: %w", err))
	} else if !errors.Is(err, tupled.ErrClosed) && tupled.SQLState(err) != "58030" {
		w.report(fmt.Errorf("commit failed with SQLSTATE %q, want 58030: %w", tupled.SQLState(err), err))
	}
	return err
}

// Run starts the workers and returns a function that stops them and waits.
func (w *Workload) Run(ctx context.Context, transfers, kvs, lockers, multis int) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	n := 0
	spawn := func(f func(ctx context.Context, rng *rand.Rand) error) {
		n++
		rng := rand.New(rand.NewPCG(w.Seed, uint64(n)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if err := f(ctx, rng); err != nil && !w.expected(err) {
					w.report(err)
					return
				}
			}
		}()
	}
	for i := 0; i < transfers; i++ {
		spawn(w.transfer)
	}
	for i := 0; i < kvs; i++ {
		spawn(w.kv)
	}
	for i := 0; i < lockers; i++ {
		spawn(w.locker)
	}
	for i := 0; i < multis; i++ {
		spawn(w.multi)
	}
	if w.CkptEvery > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tk := time.NewTicker(w.CkptEvery)
			defer tk.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tk.C:
				}
				if w.CkptMu != nil {
					w.CkptMu.Lock()
				}
				err := w.DB.Checkpoint()
				if w.CkptMu != nil {
					w.CkptMu.Unlock()
				}
				if err != nil && !w.expected(err) {
					w.report(fmt.Errorf("checkpoint: %w", err))
					return
				}
			}
		}()
	}
	return func() { cancel(); wg.Wait() }
}

// doTransfer moves a random amount from account a to b inside tx (row locks
// in key order, no-key-update strength: compatible with key-share lockers).
func (w *Workload) doTransfer(ctx context.Context, tx *tupled.Tx, rng *rand.Rand, a, b int) ([]Write, error) {
	lo, hi := min(a, b), max(a, b)
	bal := map[int]int{}
	for _, i := range []int{lo, hi} {
		v, err := tx.Lock(ctx, BankTable, []byte(AcctKey(i)), tupled.ForNoKeyUpdate, tupled.Wait)
		if err != nil {
			return nil, err
		}
		if bal[i], err = balanceOf(string(v)); err != nil {
			return nil, err
		}
	}
	amt := rng.IntN(50)
	bal[a] -= amt
	bal[b] += amt
	var ws []Write
	for _, i := range []int{a, b} {
		v := fmt.Sprintf("%d:%s", bal[i], w.tag())
		if err := tx.Update(ctx, BankTable, []byte(AcctKey(i)), []byte(v)); err != nil {
			return nil, err
		}
		ws = append(ws, Write{BankTable, AcctKey(i), KState{true, v}, w.ord()})
	}
	return ws, nil
}

func twoAccounts(rng *rand.Rand) (int, int) {
	a := rng.IntN(NAccounts)
	b := (a + 1 + rng.IntN(NAccounts-1)) % NAccounts
	return a, b
}

func (w *Workload) transfer(ctx context.Context, rng *rand.Rand) error {
	tx, err := w.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	a, b := twoAccounts(rng)
	ws, err := w.doTransfer(ctx, tx, rng, a, b)
	if err != nil {
		return err
	}
	if rng.IntN(10) == 0 {
		return tx.Rollback() // its tags must never show
	}
	return w.commit(tx, ws)
}

// kv inserts, updates and deletes keys of the kv table; sometimes it rolls
// back, and sometimes it leaves its transaction open (with writes) for a
// while, so a crash finds uncommitted versions in memory.
func (w *Workload) kv(ctx context.Context, rng *rand.Rand) error {
	tx, err := w.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var ws []Write
	for n := 1 + rng.IntN(2); n > 0; n-- {
		k := KVKey(rng.IntN(NKVKeys))
		_, err := tx.Lock(ctx, KVTable, []byte(k), tupled.ForUpdate, tupled.Wait)
		switch {
		case errors.Is(err, tupled.ErrNotFound):
			v := w.tag()
			if err := tx.Insert(ctx, KVTable, []byte(k), []byte(v)); err != nil {
				return err
			}
			ws = append(ws, Write{KVTable, k, KState{true, v}, w.ord()})
		case err != nil:
			return err
		case rng.IntN(2) == 0:
			if err := tx.Delete(ctx, KVTable, []byte(k)); err != nil {
				return err
			}
			ws = append(ws, Write{KVTable, k, KState{}, w.ord()})
		default:
			v := w.tag()
			if err := tx.Update(ctx, KVTable, []byte(k), []byte(v)); err != nil {
				return err
			}
			ws = append(ws, Write{KVTable, k, KState{true, v}, w.ord()})
		}
	}
	switch rng.IntN(12) {
	case 0:
		return tx.Rollback()
	case 1:
		sleepCtx(ctx, time.Duration(rng.IntN(3000))*time.Microsecond)
		return tx.Rollback()
	}
	return w.commit(tx, ws)
}

// locker takes FOR SHARE / FOR KEY SHARE locks on a few rows, holds them a
// moment and commits (a lock-only commit: no WAL record) or rolls back.
func (w *Workload) locker(ctx context.Context, rng *rand.Rand) error {
	tx, err := w.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	strength := tupled.ForKeyShare
	if rng.IntN(2) == 0 {
		strength = tupled.ForShare
	}
	for n := 1 + rng.IntN(3); n > 0; n-- {
		table, k := BankTable, AcctKey(rng.IntN(NAccounts))
		if rng.IntN(3) == 0 {
			table, k = KVTable, KVKey(rng.IntN(NKVKeys))
		}
		wait := tupled.NoWait
		if n == 1 {
			wait = tupled.Wait
		}
		if _, err := tx.Lock(ctx, table, []byte(k), strength, wait); err != nil && !errors.Is(err, tupled.ErrNotFound) {
			return err
		}
	}
	sleepCtx(ctx, time.Duration(rng.IntN(1000))*time.Microsecond)
	if rng.IntN(3) == 0 {
		return tx.Rollback()
	}
	return tx.Commit()
}

// multi makes multixacts beside updaters: two transactions hold FOR KEY
// SHARE on an account while a third transfers from it (its no-key update
// joins the lockers in a multixact) and commits; then the lockers end.
func (w *Workload) multi(ctx context.Context, rng *rand.Rand) error {
	a, b := twoAccounts(rng)
	var lockers []*tupled.Tx
	defer func() {
		for _, l := range lockers {
			l.Rollback()
		}
	}()
	for i := 0; i < 2; i++ {
		l, err := w.begin(ctx)
		if err != nil {
			return err
		}
		lockers = append(lockers, l)
		if _, err := l.Lock(ctx, BankTable, []byte(AcctKey(a)), tupled.ForKeyShare, tupled.Wait); err != nil {
			return err
		}
	}
	tx, err := w.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ws, err := w.doTransfer(ctx, tx, rng, a, b)
	if err != nil {
		return err
	}
	if rng.IntN(8) == 0 {
		err = tx.Rollback()
	} else {
		err = w.commit(tx, ws)
	}
	if err != nil {
		return err
	}
	for _, l := range lockers {
		if rng.IntN(2) == 0 {
			if err := l.Commit(); err != nil {
				return err
			}
		}
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// The seed and options of every suite that crashes a database.

var flagCrashSeed = flag.Uint64("crash.seed", 0, "seed of the crash suites (0 = random)")

// CrashSeed is the seed of a crash suite: -crash.seed, or a random one. It
// logs the seed, and again if the test fails, with the flag that reruns it.
func CrashSeed(t testing.TB) uint64 {
	seed := *flagCrashSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (rerun with -crash.seed=%d)", seed, seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("FAILED with seed %d (rerun with -crash.seed=%d)", seed, seed)
		}
	})
	return seed
}

// CrashOpts are the options of a database under a crash workload: fs and
// backend be, a short deadlock timeout, vacuum and the row-cache size drawn
// from rng, and no background checkpoints (the workload checkpoints itself).
func CrashOpts(fs vfs.FS, be tupled.Backend, rng *rand.Rand) *tupled.Options {
	vac := time.Duration(1+rng.IntN(20)) * time.Millisecond
	if rng.IntN(4) == 0 {
		vac = -1
	}
	return &tupled.Options{
		FS: fs, Backend: be, DeadlockTimeout: 20 * time.Millisecond,
		VacuumInterval: vac, CacheRows: 4 + rng.IntN(64),
		CheckpointInterval: time.Hour, // the workload checkpoints itself
	}
}

// ReopenOpts are the options that reopen a crash image: no vacuum and no
// background checkpoints, so the check reads what recovery left.
func ReopenOpts(fs vfs.FS, be tupled.Backend) *tupled.Options {
	return &tupled.Options{FS: fs, Backend: be, VacuumInterval: -1, CheckpointInterval: time.Hour}
}

// VerifyClone opens a crash image and checks it against the ledger.
func VerifyClone(t testing.TB, clone vfs.FS, dir string, be tupled.Backend, s Snapshot, what string) {
	t.Helper()
	db, err := tupled.Open(dir, ReopenOpts(clone, be))
	require.NoError(t, err, "%s: reopen after crash", what)
	defer func() { require.NoError(t, db.Close(), what) }()
	CheckRecovered(t, db, s, what)
}
