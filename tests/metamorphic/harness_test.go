package metamorphic_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tupled/tupled"
)

var ctx = context.Background()

// lockTimeout ends every lock wait: the harness runs all transactions from
// one goroutine, so a call that has to wait (Insert behind another
// transaction's insert of the key, Update, Delete, UpdateKey, Upsert, and
// every request with the Wait policy) can never be granted; it fails with
// ErrLockTimeout instead, on every backend alike. Nothing else runs
// (background vacuum and checkpoints are off), so whether a call waits is
// decided by the operations alone.
const lockTimeout = time.Millisecond

// config is what one run is: the seed, the operation count, and the options
// that the seed chooses for all three databases.
type config struct {
	seed       uint64
	ops        int
	checkEvery int  // compare the full committed contents every this many steps (and after every reopen)
	fastOff    bool // Options.ShareFastPathOff, the same on all three (it changes RowLocks' Multi)
	// The first open's CacheRows and SyncCommit for the on-disk databases
	// (each reopen chooses them again; see op.cacheRows).
	cacheRows  int
	syncCommit bool
}

// newConfig derives a run's options from its seed, so that the seed alone
// reproduces the run.
func newConfig(seed uint64, ops, checkEvery int) config {
	r := rand.New(rand.NewPCG(seed, 0x6d657461))
	return config{
		seed: seed, ops: ops, checkEvery: max(1, checkEvery),
		fastOff:    r.IntN(4) == 0,
		cacheRows:  []int{0, 0, 2, 5}[r.IntN(4)],
		syncCommit: r.IntN(3) != 0,
	}
}

func (c config) String() string {
	return fmt.Sprintf("seed %d, %d operations, ShareFastPathOff=%v, first open CacheRows=%d SyncCommit=%v",
		c.seed, c.ops, c.fastOff, c.cacheRows, c.syncCommit)
}

func (c config) repro() string {
	return fmt.Sprintf("go test ./tests/metamorphic -run TestMetamorphic -seed %d -ops %d", c.seed, c.ops)
}

// instance is one of the three databases and its open transactions.
type instance struct {
	name   string
	dir    string // "" for the in-memory one
	onDisk bool
	opts   tupled.Options // as first opened
	db     *tupled.DB
	txs    [nSlots]*tupled.Tx
	stale  [nSlots]*tupled.Tx // each slot's last ended transaction
	labels map[uint64]string  // Tx.ID -> "T<step of its Begin>", the same name on every backend
}

// result is what one operation returned on one instance: canon is what is
// compared; detail adds what is printed but may legitimately differ (the
// full error text).
type result struct {
	canon  string
	detail string
}

// harness applies one operation sequence to the four instances.
type harness struct {
	cfg  config
	inst []*instance
	gen  *generator
	log  []string // the last logSize operations and their results
	// perturb, when set (tests of the harness only), may rewrite the
	// canonical result of an instance before it is compared. what is
	// the operation, or "contents <table>" for a committed-contents check.
	perturb func(inst string, step int, what string, canon string) string
	// stats counts the outcomes the databases agreed on, by operation
	// ("Lock ErrSkipped", "Scan 2 rows"): -stats prints them, to check
	// that the generator still reaches conflicts, multixacts and errors.
	stats map[string]int
}

const logSize = 50

func newHarness(cfg config, dirs [2]string) (*harness, error) {
	h := &harness{cfg: cfg, gen: newGenerator(cfg.seed), stats: map[string]int{}}
	base := tupled.Options{
		LockTimeout:        lockTimeout,
		DeadlockTimeout:    time.Hour, // never checked: no cycle can form, every wait ends at lockTimeout
		VacuumInterval:     -1,        // DB.Vacuum only, as an operation
		CheckpointInterval: 24 * time.Hour,
		CheckpointWALSize:  -1, // DB.Checkpoint and Close only
		ShareFastPathOff:   cfg.fastOff,
	}
	disk := base
	disk.CacheRows, disk.SyncCommit = cfg.cacheRows, &cfg.syncCommit
	pebble, bbolt := disk, disk
	pebble.Backend, bbolt.Backend = tupled.Pebble, tupled.Bbolt
	// In memory with arenas: DB.Checkpoint moves settled rows out of
	// memory, and the small cache makes locks bring them back.
	arena := base
	arena.MemoryArena, arena.CacheRows = true, cfg.cacheRows
	h.inst = []*instance{
		{name: "memory", opts: base},
		{name: "arena", opts: arena},
		{name: "pebble", dir: dirs[0], onDisk: true, opts: pebble},
		{name: "bbolt", dir: dirs[1], onDisk: true, opts: bbolt},
	}
	for _, in := range h.inst {
		in.labels = map[uint64]string{}
		opts := in.opts
		db, err := tupled.Open(in.dir, &opts)
		if err != nil {
			h.close()
			return nil, fmt.Errorf("open %s: %w", in.name, err)
		}
		in.db = db
	}
	return h, nil
}

// close rolls back and closes everything (after a failure too).
func (h *harness) close() error {
	var first error
	for _, in := range h.inst {
		if in.db == nil {
			continue
		}
		for i, tx := range in.txs {
			if tx != nil {
				_ = tx.Rollback()
				in.txs[i] = nil
			}
		}
		if err := in.db.Close(); err != nil && first == nil {
			first = fmt.Errorf("close %s: %w", in.name, err)
		}
		in.db = nil
	}
	return first
}

// run generates and applies cfg.ops operations, comparing after each one,
// and returns the first mismatch (or failure of the harness itself).
func (h *harness) run() error {
	for step := 0; step < h.cfg.ops; step++ {
		o := h.gen.next(step)
		canon, err := h.step(step, o)
		if err != nil {
			return err
		}
		h.gen.observe(o, canon)
		if o.kind == opReopen || (step+1)%h.cfg.checkEvery == 0 {
			if err := h.checkContents(step, "after "+o.String()); err != nil {
				return err
			}
		}
	}
	if err := h.checkContents(h.cfg.ops, "at the end"); err != nil {
		return err
	}
	if err := h.close(); err != nil {
		return h.fail(h.cfg.ops, "final close", err.Error(), nil)
	}
	// The on-disk databases, closed, must also pass Verify.
	for _, in := range h.inst {
		if !in.onDisk {
			continue
		}
		res, err := tupled.Verify(in.dir, io.Discard)
		if err != nil || len(res.Problems) > 0 {
			return h.fail(h.cfg.ops, "tupled.Verify("+in.name+")", fmt.Sprintf("err=%v problems=%q", err, resProblems(res)), nil)
		}
	}
	return nil
}

func resProblems(r *tupled.VerifyResult) []string {
	if r == nil {
		return nil
	}
	return r.Problems
}

// step applies o to every instance, compares the results, and returns the
// result they agree on.
func (h *harness) step(step int, o op) (string, error) {
	what := o.String()
	res := make([]result, len(h.inst))
	for i, in := range h.inst {
		r, err := h.apply(in, step, o)
		if err != nil {
			return "", h.fail(step, what, fmt.Sprintf("%s: harness error: %v", in.name, err), nil)
		}
		if h.perturb != nil {
			r.canon = h.perturb(in.name, step, what, r.canon)
		}
		res[i] = r
	}
	h.remember(fmt.Sprintf("%5d %s => %s", step, what, res[0].canon))
	if !agree(res) {
		return "", h.fail(step, what, "results differ", res)
	}
	canon := res[0].canon
	h.stats[outcomeClass(what, canon)]++
	if o.kind != opGet && o.kind != opListTables && o.kind != opRowLocks && o.kind != opLocks && o.kind != opStale {
		for i, in := range h.inst {
			res[i] = result{canon: in.lockState()}
		}
		if !agree(res) {
			return "", h.fail(step, what, "lock state (DB.Locks and DB.RowLocks of every table) differs after the operation", res)
		}
	}
	return canon, nil
}

var (
	apiName  = regexp.MustCompile(`^(?:tx\d\.(?:\(ended\)\.)?|db\.)?([A-Za-z]+)`)
	errName  = regexp.MustCompile(`error\[\S* (\S+)`)
	rowCount = regexp.MustCompile(`"=`)
)

// outcomeClass is the bucket of an agreed result in the -stats table.
func outcomeClass(what, canon string) string {
	name := "?"
	if m := apiName.FindStringSubmatch(what); m != nil {
		name = m[1]
	}
	switch {
	case strings.HasPrefix(canon, "rows ["):
		c := fmt.Sprintf("%d rows", len(rowCount.FindAllString(canon, -1)))
		if m := errName.FindStringSubmatch(canon); m != nil {
			c += " then " + m[1]
		}
		return name + " " + c
	case strings.Contains(canon, "multi=true"):
		return name + " with a multixact"
	case strings.Contains(canon, "["):
		if m := errName.FindStringSubmatch(canon); m != nil {
			return name + " " + m[1]
		}
		if name == "RowLocks" {
			return name + " with lockers"
		}
	case strings.HasPrefix(canon, "outcome "):
		return name + " " + strings.Fields(canon)[1]
	case strings.HasPrefix(canon, "value "):
		return name + " value"
	}
	if m := errName.FindStringSubmatch(canon); m != nil {
		return name + " " + m[1]
	}
	if canon == "" {
		return name + " none"
	}
	return name + " ok"
}

// statsTable renders stats, one "count  bucket" line each, sorted.
func (h *harness) statsTable() string {
	keys := make([]string, 0, len(h.stats))
	for k := range h.stats {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%6d  %s\n", h.stats[k], k)
	}
	return b.String()
}

func agree(res []result) bool {
	for _, r := range res[1:] {
		if r.canon != res[0].canon {
			return false
		}
	}
	return true
}

func (h *harness) remember(line string) {
	if len(h.log) == logSize {
		copy(h.log, h.log[1:])
		h.log = h.log[:logSize-1]
	}
	h.log = append(h.log, line)
}

// fail formats a mismatch: the seed and how to reproduce it first, then
// the operation and each instance's result, then the recent operations.
func (h *harness) fail(step int, what, why string, res []result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "metamorphic mismatch: seed %d, step %d: %s\n  run: %s\n", h.cfg.seed, step, why, h.cfg)
	fmt.Fprintf(&b, "  reproduce: go test ./tests/metamorphic -run TestMetamorphic -seed %d -ops %d\n", h.cfg.seed, min(step+1, h.cfg.ops))
	fmt.Fprintf(&b, "  operation: %s\n", what)
	for i, r := range res {
		fmt.Fprintf(&b, "  %-6s: %s\n", h.inst[i].name, r.canon)
		if r.detail != "" {
			fmt.Fprintf(&b, "  %-6s  (%s)\n", "", r.detail)
		}
	}
	fmt.Fprintf(&b, "  last %d operations (step, operation => memory's result):\n", len(h.log))
	for _, l := range h.log {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	fmt.Fprintf(&b, "  seed %d; reproduce: %s", h.cfg.seed, h.cfg.repro())
	return errors.New(b.String())
}

// sentinels, in the order errClass tries them (specific before general).
var sentinels = []struct {
	name string
	err  error
}{
	{"ErrNotFound", tupled.ErrNotFound},
	{"ErrSkipped", tupled.ErrSkipped},
	{"ErrDuplicateKey", tupled.ErrDuplicateKey},
	{"ErrDeadlock", tupled.ErrDeadlock},
	{"ErrSerialization", tupled.ErrSerialization},
	{"ErrLockNotAvailable", tupled.ErrLockNotAvailable},
	{"ErrLockTimeout", tupled.ErrLockTimeout},
	{"ErrTxAborted", tupled.ErrTxAborted},
	{"ErrNoSavepoint", tupled.ErrNoSavepoint},
	{"ErrTxDone", tupled.ErrTxDone},
	{"ErrReadOnly", tupled.ErrReadOnly},
	{"ErrTableExists", tupled.ErrTableExists},
	{"ErrNoTable", tupled.ErrNoTable},
	{"ErrClosed", tupled.ErrClosed},
	{"ErrInvalid", tupled.ErrInvalid},
	{"ErrIO", tupled.ErrIO},
	{"ErrCorrupted", tupled.ErrCorrupted},
	{"ErrTxBusy", tupled.ErrTxBusy},
	{"ErrDiskFull", tupled.ErrDiskFull},
	{"ErrProgramLimitExceeded", tupled.ErrProgramLimitExceeded},
	{"ErrNameTooLong", tupled.ErrNameTooLong},
	{"ErrObjectInUse", tupled.ErrObjectInUse},
	{"errStop", errStop},
}

// errClass is the comparable form of an error: its SQLSTATE, every
// sentinel it matches, and its text (with the instance's directory
// replaced, should a message ever name a file).
func (in *instance) errClass(err error) string {
	if err == nil {
		return "ok"
	}
	var names []string
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			names = append(names, s.name)
		}
	}
	if len(names) == 0 {
		names = []string{"unknown"}
	}
	msg := err.Error()
	if in.dir != "" {
		msg = strings.ReplaceAll(msg, in.dir, "<dir>")
	}
	return fmt.Sprintf("error[%s %s %q]", tupled.SQLState(err), strings.Join(names, ","), msg)
}

var errStop = errors.New("metamorphic: callback stop")

// label is the backend-independent name of a transaction id.
func (in *instance) label(id uint64) string {
	if l, ok := in.labels[id]; ok {
		return l
	}
	return "xid?" + strconv.FormatUint(id, 10) // not one of ours: a mismatch unless every backend shows it
}

func valueOf(v []byte, err error, in *instance) string {
	if err != nil {
		return in.errClass(err)
	}
	return fmt.Sprintf("value %s", shortVal(string(v)))
}

// apply runs o on in. The error is the harness's own (never the engine's:
// those are results).
func (h *harness) apply(in *instance, step int, o op) (result, error) {
	var tx *tupled.Tx
	if o.kind < opStale {
		tx = in.txs[o.slot]
		if tx == nil && o.kind != opBegin {
			return result{}, fmt.Errorf("slot %d has no transaction", o.slot)
		}
	}
	key, val := []byte(o.key), []byte(o.val)
	switch o.kind {
	case opBegin:
		t, err := in.db.Begin(ctx, &tupled.TxOptions{Isolation: o.iso, ReadOnly: o.readOnly})
		if err != nil {
			return result{canon: in.errClass(err)}, nil
		}
		in.txs[o.slot] = t
		in.labels[t.ID()] = fmt.Sprintf("T%d", step)
		return result{canon: "ok"}, nil
	case opCommit, opRollback:
		var err error
		if o.kind == opCommit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		in.txs[o.slot], in.stale[o.slot] = nil, tx
		return result{canon: in.errClass(err)}, nil
	case opInsert:
		return result{canon: in.errClass(tx.Insert(ctx, o.table, key, val))}, nil
	case opUpdate:
		if o.waitAPI {
			return result{canon: in.errClass(tx.UpdateWait(ctx, o.table, key, val, o.wait))}, nil
		}
		return result{canon: in.errClass(tx.Update(ctx, o.table, key, val))}, nil
	case opDelete:
		if o.waitAPI {
			return result{canon: in.errClass(tx.DeleteWait(ctx, o.table, key, o.wait))}, nil
		}
		return result{canon: in.errClass(tx.Delete(ctx, o.table, key))}, nil
	case opUpsert:
		var seen []string // what onConflict was called with
		var fn func([]byte) ([]byte, bool)
		if o.upsert != upsertDoNothing {
			fn = func(existing []byte) ([]byte, bool) {
				seen = append(seen, shortVal(string(existing)))
				if o.upsert == upsertMaybe && len(existing)%2 == 0 {
					return nil, false
				}
				return []byte(o.val + "^" + string(existing[:min(6, len(existing))])), true
			}
		}
		out, err := tx.Upsert(ctx, o.table, key, val, fn)
		c := in.errClass(err)
		if err == nil {
			c = "outcome " + outcomeName(out)
		}
		return result{canon: fmt.Sprintf("%s onConflict(%s)", c, strings.Join(seen, ","))}, nil
	case opUpdateKey:
		return result{canon: in.errClass(tx.UpdateKey(ctx, o.table, key, []byte(o.key2), val))}, nil
	case opGet:
		v, err := tx.Get(ctx, o.table, key)
		return result{canon: valueOf(v, err, in)}, nil
	case opLock:
		v, err := tx.Lock(ctx, o.table, key, o.strength, o.wait)
		return result{canon: valueOf(v, err, in)}, nil
	case opScan:
		return result{canon: in.scan(tx, step, o)}, nil
	case opSavepoint:
		return result{canon: in.errClass(tx.Savepoint(o.name))}, nil
	case opRollbackTo:
		return result{canon: in.errClass(tx.RollbackTo(o.name))}, nil
	case opRelease:
		return result{canon: in.errClass(tx.Release(o.name))}, nil
	case opStale:
		t := in.stale[o.slot]
		if t == nil {
			return result{}, fmt.Errorf("slot %d has no ended transaction", o.slot)
		}
		v, err := t.Get(ctx, o.table, key)
		return result{canon: valueOf(v, err, in)}, nil
	case opCreateTable:
		return result{canon: in.errClass(in.db.CreateTableWith(ctx, o.table, &tupled.CreateTableOptions{IfNotExists: o.flag}))}, nil
	case opDropTable:
		return result{canon: in.errClass(in.db.DropTable(ctx, o.table, &tupled.DropTableOptions{IfExists: o.flag}))}, nil
	case opListTables:
		ts, err := in.db.ListTables(ctx)
		if err != nil {
			return result{canon: in.errClass(err)}, nil
		}
		return result{canon: fmt.Sprint(ts)}, nil
	case opVacuum:
		// VacuumResult counts the engine's work, not a result: an on-disk
		// heap loads rows from its backend, frozen and with one version,
		// while the in-memory heap keeps every version until vacuum, so
		// the counts legitimately differ. Even the two on-disk databases'
		// counts differ from run to run of one seed (the engine's
		// background loop reaches some versions first). The lock state
		// and the contents compared after it are what must agree.
		r := in.db.Vacuum()
		return result{canon: "ok", detail: fmt.Sprintf("%+v", r)}, nil
	case opCheckpoint:
		return result{canon: in.errClass(in.db.Checkpoint())}, nil
	case opReopen:
		return in.reopen(o)
	case opRowLocks:
		return result{canon: in.rowLocks(o.table)}, nil
	case opLocks:
		return result{canon: in.locks()}, nil
	}
	return result{}, fmt.Errorf("unknown op kind %d", o.kind)
}

// reopen ends every open transaction (Rollback, as Close would), then
// closes the on-disk database and opens its directory again. The in-memory
// database cannot survive Close, so for it a reopen is only the rollbacks:
// its contents are then what the reopened on-disk databases must have
// recovered.
func (in *instance) reopen(o op) (result, error) {
	var parts []string
	for i, tx := range in.txs {
		if tx != nil {
			parts = append(parts, fmt.Sprintf("tx%d.Rollback=%s", i, in.errClass(tx.Rollback())))
			in.txs[i] = nil
		}
		in.stale[i] = nil // a call on it would meet a closed DB on disk only
	}
	in.labels = map[uint64]string{}
	if !in.onDisk {
		parts = append(parts, "close=ok open=ok")
		return result{canon: strings.Join(parts, " ")}, nil
	}
	cerr := in.db.Close()
	in.db = nil
	opts := in.opts
	opts.CacheRows = o.cacheRows
	opts.SyncCommit = &o.syncCommit
	db, err := tupled.Open(in.dir, &opts)
	if err != nil {
		return result{}, fmt.Errorf("reopen %s (close: %v): %w", in.name, cerr, err)
	}
	in.db = db
	parts = append(parts, "close="+in.errClass(cerr), "open=ok")
	return result{canon: strings.Join(parts, " ")}, nil
}

func outcomeName(o tupled.UpsertOutcome) string {
	switch o {
	case tupled.UpsertInserted:
		return "Inserted"
	case tupled.UpsertUpdated:
		return "Updated"
	case tupled.UpsertUnchanged:
		return "Unchanged"
	}
	return fmt.Sprintf("UpsertOutcome(%d)", int(o))
}

func whereFunc(w whereKind) func(k, v []byte) bool {
	switch w {
	case whereEvenLen:
		return func(k, v []byte) bool { return len(v)%2 == 0 }
	case whereKey12:
		return func(k, v []byte) bool { return bytes.HasSuffix(k, []byte("1")) || bytes.HasSuffix(k, []byte("2")) }
	}
	return nil
}

func bytesOf(s *string) []byte {
	if s == nil {
		return nil
	}
	return []byte(*s)
}

// scan runs a Scan or a Rows loop and renders every row it yielded, what
// the callback's own calls returned, and the scan's error.
func (in *instance) scan(tx *tupled.Tx, step int, o op) string {
	sc := o.scan
	opts := tupled.ScanOptions{
		Start: bytesOf(sc.start), End: bytesOf(sc.end), Prefix: bytesOf(sc.prefix),
		Limit: sc.limit, Reverse: sc.reverse, Where: whereFunc(sc.where), Lock: sc.lock, Wait: sc.wait,
	}
	var rows []string
	// body handles one row; stop reports that the consumer stops here.
	body := func(k, v []byte) (stop bool) {
		r := fmt.Sprintf("%q=%s", k, shortVal(string(v)))
		if sc.callback == cbUpdateEach {
			r += " upd:" + in.errClass(tx.Update(ctx, o.table, k, []byte(fmt.Sprintf("u%d", step))))
		}
		rows = append(rows, r)
		return sc.callback == cbStop && len(rows) >= sc.stopAfter
	}
	var err error
	if sc.viaRows {
		for row, rerr := range tx.Rows(ctx, o.table, opts) {
			if rerr != nil {
				err = rerr
				break
			}
			if body(row.Key, row.Value) {
				break
			}
		}
	} else {
		err = tx.Scan(ctx, o.table, opts, func(k, v []byte) error {
			if body(k, v) {
				return errStop
			}
			return nil
		})
	}
	return fmt.Sprintf("rows [%s] %s", strings.Join(rows, " "), in.errClass(err))
}

// rowLocks renders DB.RowLocks(table) with the lockers named by label.
func (in *instance) rowLocks(table string) string {
	rl, err := in.db.RowLocks(ctx, table)
	if err != nil {
		return in.errClass(err)
	}
	var b strings.Builder
	for _, r := range rl {
		var ls []string
		for i, id := range r.Lockers {
			ls = append(ls, in.label(id)+":"+strengthName(r.Modes[i]))
		}
		sort.Strings(ls) // member order is the multixact's, not part of the contract
		fmt.Fprintf(&b, "%q multi=%v [%s]; ", r.Key, r.Multi, strings.Join(ls, " "))
	}
	return b.String()
}

// locks renders DB.Locks, transaction ids named by label, sorted (the
// order of entries is unspecified). A "transaction N" tag whose N is not a
// Tx.ID is a subtransaction's (a savepoint's) id, held by its top-level
// transaction: it is named after the holder and its rank among the
// holder's subtransaction ids (ids only grow, on every backend alike).
func (in *instance) locks() string {
	locks := in.db.Locks()
	subs := map[string][]uint64{} // holder label -> unknown xids in its tags
	for _, l := range locks {
		if id, ok := xidTag(l.Tag); ok {
			if _, known := in.labels[id]; !known {
				subs[in.label(l.TxID)] = append(subs[in.label(l.TxID)], id)
			}
		}
	}
	subName := map[uint64]string{}
	for holder, ids := range subs {
		slices.Sort(ids)
		ids = slices.Compact(ids)
		for i, id := range ids {
			subName[id] = fmt.Sprintf("%s.sub%d", holder, i+1)
		}
	}
	var ls []string
	for _, l := range locks {
		tag := l.Tag
		if id, ok := xidTag(tag); ok {
			if n, ok := subName[id]; ok {
				tag = "transaction " + n
			} else {
				tag = "transaction " + in.label(id)
			}
		}
		ls = append(ls, fmt.Sprintf("%s/%s/%s/granted=%v/fast=%v", tag, l.Mode, in.label(l.TxID), l.Granted, l.FastPath))
	}
	sort.Strings(ls)
	return strings.Join(ls, " ")
}

func xidTag(tag string) (uint64, bool) {
	s, ok := strings.CutPrefix(tag, "transaction ")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

func (in *instance) lockState() string {
	var b strings.Builder
	b.WriteString("Locks: " + in.locks())
	for _, t := range tablePool {
		b.WriteString("\n    RowLocks(" + t + "): " + in.rowLocks(t))
	}
	return b.String()
}

// checkContents compares the table list and every table's committed rows,
// read by a fresh READ COMMITTED transaction.
func (h *harness) checkContents(step int, when string) error {
	res := make([]result, len(h.inst))
	for i, in := range h.inst {
		ts, err := in.db.ListTables(ctx)
		res[i] = result{canon: fmt.Sprintf("%v %s", ts, in.errClass(err))}
	}
	if !agree(res) {
		return h.fail(step, "ListTables "+when, "table lists differ", res)
	}
	for _, t := range append(append([]string{}, tablePool...), "missing") {
		what := "contents " + t
		for i, in := range h.inst {
			res[i] = result{canon: in.contents(t)}
			if h.perturb != nil {
				res[i].canon = h.perturb(in.name, step, what, res[i].canon)
			}
		}
		if !agree(res) {
			return h.fail(step, what+" "+when, "committed contents differ", res)
		}
	}
	return nil
}

func (in *instance) contents(table string) string {
	tx, err := in.db.Begin(ctx, &tupled.TxOptions{ReadOnly: true})
	if err != nil {
		return "Begin: " + in.errClass(err)
	}
	defer tx.Rollback()
	var b strings.Builder
	n := 0
	err = tx.Scan(ctx, table, tupled.ScanOptions{}, func(k, v []byte) error {
		n++
		fmt.Fprintf(&b, "%q=%s ", k, shortVal(string(v)))
		return nil
	})
	return fmt.Sprintf("%d rows: %s%s", n, b.String(), in.errClass(err))
}
