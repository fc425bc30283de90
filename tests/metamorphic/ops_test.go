package metamorphic_test

import (
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"regexp"
	"strings"

	"github.com/tupled/tupled"
)

// The generator's universe: a few tables, a handful of keys (two prefixes, so
// that Prefix scans select something), a few savepoint names and transaction
// slots. It is small on purpose: conflicts, duplicate keys, re-inserts of
// deleted keys and repeated savepoint names must be common.
const nSlots = 4

var (
	tablePool = []string{"t0", "t1", "t2"}
	keyPool   = []string{"a0", "a1", "a2", "b0", "b1", "c"}
	spPool    = []string{"sp0", "sp1", "sp2"}
)

type opKind int

const (
	opBegin opKind = iota
	opCommit
	opRollback
	opInsert
	opUpdate
	opDelete
	opUpsert
	opUpdateKey
	opGet
	opLock
	opScan
	opSavepoint
	opRollbackTo
	opRelease
	opStale // a call on the slot's last ended transaction (ErrTxDone)
	opCreateTable
	opDropTable
	opListTables
	opVacuum
	opCheckpoint
	opReopen
	opRowLocks
	opLocks
)

// upsertMode is the onConflict of an Upsert.
type upsertMode int

const (
	upsertDoNothing upsertMode = iota // onConflict nil
	upsertDoUpdate                    // always writes value + "^" + a prefix of the existing value
	upsertMaybe                       // declines when the existing value has an even length
)

// whereKind is a scan's qualification (ScanOptions.Where).
type whereKind int

const (
	whereNone    whereKind = iota
	whereEvenLen           // the value has an even length
	whereKey12             // the key ends in '1' or '2'
)

// callbackKind is what a Scan callback (or a Rows loop body) does per row.
type callbackKind int

const (
	cbCollect    callbackKind = iota // record the row
	cbStop                           // record, then stop after scanSpec.stopAfter rows (Scan: a callback error; Rows: break)
	cbUpdateEach                     // record, then tx.Update the row from inside the callback
)

type scanSpec struct {
	start, end, prefix *string // nil: unbounded / no prefix
	limit              int
	reverse            bool
	where              whereKind
	lock               tupled.LockStrength
	wait               tupled.WaitPolicy
	viaRows            bool // Tx.Rows instead of Tx.Scan
	callback           callbackKind
	stopAfter          int
}

// op is one generated operation. Every field is decided by the generator
// from the seed alone: the sequence never depends on results, so a seed
// (and a prefix of its operations, -ops) replays exactly.
type op struct {
	kind     opKind
	slot     int
	table    string
	key      string
	key2     string // UpdateKey's new key
	val      string
	strength tupled.LockStrength
	wait     tupled.WaitPolicy
	waitAPI  bool // UpdateWait / DeleteWait (with wait) instead of Update / Delete
	iso      tupled.IsolationLevel
	readOnly bool
	upsert   upsertMode
	scan     scanSpec
	name     string // savepoint
	flag     bool   // CreateTable: IfNotExists; DropTable: IfExists
	// Reopen: the options the on-disk databases are opened with again.
	// They must not change any result: the row cache bound (a small one
	// makes the background loop evict rows, so reads go to the backend)
	// and synchronous commit.
	cacheRows  int
	syncCommit bool
}

func strPtr(s string) *string { return &s }

func q(s *string) string {
	if s == nil {
		return "nil"
	}
	return fmt.Sprintf("%q", *s)
}

// shortVal renders a value for results and logs: a long value by its ends,
// its length and its checksum (the generator's long values differ at the
// end).
func shortVal(v string) string {
	if len(v) > 24 {
		return fmt.Sprintf("%q…%q(%d bytes, crc %08x)", v[:4], v[len(v)-8:], len(v), crc32.ChecksumIEEE([]byte(v)))
	}
	return fmt.Sprintf("%q", v)
}

func (o op) String() string {
	s := fmt.Sprintf("tx%d.", o.slot)
	switch o.kind {
	case opBegin:
		return s + fmt.Sprintf("Begin(%s, readOnly=%v)", o.iso, o.readOnly)
	case opCommit:
		return s + "Commit()"
	case opRollback:
		return s + "Rollback()"
	case opInsert:
		return s + fmt.Sprintf("Insert(%s, %q, %s)", o.table, o.key, shortVal(o.val))
	case opUpdate:
		if o.waitAPI {
			return s + fmt.Sprintf("UpdateWait(%s, %q, %s, %s)", o.table, o.key, shortVal(o.val), waitName(o.wait))
		}
		return s + fmt.Sprintf("Update(%s, %q, %s)", o.table, o.key, shortVal(o.val))
	case opDelete:
		if o.waitAPI {
			return s + fmt.Sprintf("DeleteWait(%s, %q, %s)", o.table, o.key, waitName(o.wait))
		}
		return s + fmt.Sprintf("Delete(%s, %q)", o.table, o.key)
	case opUpsert:
		return s + fmt.Sprintf("Upsert(%s, %q, %s, %s)", o.table, o.key, shortVal(o.val), [...]string{"DO NOTHING", "DO UPDATE", "DO UPDATE WHERE even"}[o.upsert])
	case opUpdateKey:
		return s + fmt.Sprintf("UpdateKey(%s, %q -> %q, %s)", o.table, o.key, o.key2, shortVal(o.val))
	case opGet:
		return s + fmt.Sprintf("Get(%s, %q)", o.table, o.key)
	case opLock:
		return s + fmt.Sprintf("Lock(%s, %q, %s, %s)", o.table, o.key, strengthName(o.strength), waitName(o.wait))
	case opScan:
		sc := o.scan
		api := "Scan"
		if sc.viaRows {
			api = "Rows"
		}
		return s + fmt.Sprintf("%s(%s, {Start:%s End:%s Prefix:%s Limit:%d Reverse:%v Where:%s Lock:%s Wait:%s} %s)",
			api, o.table, q(sc.start), q(sc.end), q(sc.prefix), sc.limit, sc.reverse,
			[...]string{"nil", "evenLen", "key12"}[sc.where], strengthName(sc.lock), waitName(sc.wait),
			[...]string{"collect", fmt.Sprintf("stopAfter=%d", sc.stopAfter), "updateEach"}[sc.callback])
	case opSavepoint:
		return s + fmt.Sprintf("Savepoint(%q)", o.name)
	case opRollbackTo:
		return s + fmt.Sprintf("RollbackTo(%q)", o.name)
	case opRelease:
		return s + fmt.Sprintf("Release(%q)", o.name)
	case opStale:
		return s + fmt.Sprintf("(ended).Get(%s, %q)", o.table, o.key)
	case opCreateTable:
		return fmt.Sprintf("db.CreateTable(%s, IfNotExists=%v)", o.table, o.flag)
	case opDropTable:
		return fmt.Sprintf("db.DropTable(%s, IfExists=%v)", o.table, o.flag)
	case opListTables:
		return "db.ListTables()"
	case opVacuum:
		return "db.Vacuum()"
	case opCheckpoint:
		return "db.Checkpoint()"
	case opReopen:
		return fmt.Sprintf("reopen(rollback all; disk: Close, Open with CacheRows=%d SyncCommit=%v)", o.cacheRows, o.syncCommit)
	case opRowLocks:
		return fmt.Sprintf("db.RowLocks(%s)", o.table)
	case opLocks:
		return "db.Locks()"
	}
	return fmt.Sprintf("op(%d)", o.kind)
}

func strengthName(s tupled.LockStrength) string {
	switch s {
	case tupled.NoLock:
		return "NoLock"
	case tupled.ForKeyShare:
		return "ForKeyShare"
	case tupled.ForShare:
		return "ForShare"
	case tupled.ForNoKeyUpdate:
		return "ForNoKeyUpdate"
	case tupled.ForUpdate:
		return "ForUpdate"
	}
	return fmt.Sprintf("LockStrength(%d)", int(s))
}

func waitName(w tupled.WaitPolicy) string {
	switch w {
	case tupled.Wait:
		return "Wait"
	case tupled.NoWait:
		return "NoWait"
	case tupled.SkipLocked:
		return "SkipLocked"
	}
	return fmt.Sprintf("WaitPolicy(%d)", int(w))
}

// generator produces the operation sequence of one seed. It keeps a rough
// model (which slots hold an open transaction, which savepoint names a slot
// used, which tables were probably created, which transactions an error
// aborted) only to choose useful operations. Commit, Rollback and reopen end
// a transaction whatever they return, so the slot model is exact. The one
// input besides the seed is observe: the result of each operation, which
// the three databases have just been checked to agree on, so the sequence
// is still a function of the seed alone (and -ops N replays a prefix).
type generator struct {
	rng     *rand.Rand
	open    [nSlots]bool
	ended   [nSlots]bool // the slot has an ended transaction to misuse (opStale)
	aborted [nSlots]bool // the slot's transaction failed (observe)
	sps     [nSlots][]string
	created map[string]bool
}

func newGenerator(seed uint64) *generator {
	return &generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), created: map[string]bool{}}
}

func (g *generator) pick(xs []string) string { return xs[g.rng.IntN(len(xs))] }

func (g *generator) chance(p float64) bool { return g.rng.Float64() < p }

// table is mostly a created table, sometimes any name of the pool, rarely
// one that never exists.
func (g *generator) table() string {
	if g.chance(0.01) {
		return "missing"
	}
	var live []string
	for _, t := range tablePool {
		if g.created[t] {
			live = append(live, t)
		}
	}
	if len(live) == 0 || g.chance(0.05) {
		return g.pick(tablePool)
	}
	// Skewed toward the first live table, so that transactions meet.
	if g.chance(0.5) {
		return live[0]
	}
	return g.pick(live)
}

func (g *generator) key() string {
	if g.chance(0.005) {
		return "" // the empty key
	}
	return g.pick(keyPool)
}

func (g *generator) value(step int) string {
	base := fmt.Sprintf("v%d", step)
	switch r := g.rng.IntN(100); {
	case r < 4:
		return ""
	case r < 12:
		return strings.Repeat("x", 200+g.rng.IntN(4000)) + base
	default:
		return base
	}
}

func (g *generator) strength() tupled.LockStrength {
	if g.chance(0.003) {
		return tupled.LockStrength(7) // invalid: ErrInvalid
	}
	return tupled.LockStrength(1 + g.rng.IntN(4))
}

func (g *generator) waitPolicy() tupled.WaitPolicy {
	// Wait blocks until the 1 ms lock timeout on a conflict: the same
	// ErrLockTimeout on every backend, but slow, so it is the rarest.
	switch r := g.rng.IntN(10); {
	case r < 2:
		return tupled.Wait
	case r < 6:
		return tupled.NoWait
	default:
		return tupled.SkipLocked
	}
}

func (g *generator) bound() *string {
	if g.chance(0.5) {
		return nil
	}
	k := g.pick(keyPool)
	if g.chance(0.3) {
		k = k[:1] // a bound between keys
	}
	return strPtr(k)
}

func (g *generator) scanSpec() scanSpec {
	sc := scanSpec{start: g.bound(), end: g.bound(), reverse: g.chance(0.3)}
	if g.chance(0.25) {
		sc.prefix = strPtr(g.pick([]string{"a", "b", "a1", "c", "z"}))
	}
	if g.chance(0.4) {
		sc.limit = 1 + g.rng.IntN(3)
	} else if g.chance(0.01) {
		sc.limit = -1 // ErrInvalid
	}
	sc.where = whereKind(g.rng.IntN(3))
	if g.chance(0.5) {
		sc.where = whereNone
	}
	if g.chance(0.5) {
		sc.lock = g.strength()
		sc.wait = g.waitPolicy()
	}
	sc.viaRows = g.chance(0.5)
	switch r := g.rng.IntN(10); {
	case r < 7:
		sc.callback = cbCollect
	case r < 9:
		sc.callback = cbStop
		sc.stopAfter = 1 + g.rng.IntN(2)
	default:
		sc.callback = cbUpdateEach
	}
	return sc
}

func (g *generator) openSlots() []int {
	var s []int
	for i, o := range g.open {
		if o {
			s = append(s, i)
		}
	}
	return s
}

type weighted struct {
	kind opKind
	w    int
}

var txOpWeights = []weighted{
	{opInsert, 8}, {opUpdate, 10}, {opDelete, 5}, {opUpsert, 8}, {opUpdateKey, 4},
	{opGet, 8}, {opLock, 18}, {opScan, 10},
	{opSavepoint, 4}, {opRollbackTo, 3}, {opRelease, 2},
	{opCommit, 8}, {opRollback, 3},
}

var dbOpWeights = []weighted{
	{opCreateTable, 4}, {opDropTable, 1}, {opListTables, 2},
	{opVacuum, 6}, {opCheckpoint, 4}, {opReopen, 2},
	{opRowLocks, 8}, {opLocks, 6}, {opStale, 2},
}

func (g *generator) choose(ws []weighted) opKind {
	total := 0
	for _, w := range ws {
		total += w.w
	}
	r := g.rng.IntN(total)
	for _, w := range ws {
		if r < w.w {
			return w.kind
		}
		r -= w.w
	}
	panic("unreachable")
}

// next returns the operation of step.
func (g *generator) next(step int) op {
	// Until a table exists, create one.
	if len(g.created) == 0 {
		t := g.pick(tablePool)
		g.created[t] = true
		return op{kind: opCreateTable, table: t}
	}
	open := g.openSlots()
	// About one operation in eight is a database-level one; otherwise a
	// transaction's, beginning one in a free slot when there are few open.
	if g.chance(0.12) {
		return g.dbOp(step)
	}
	if len(open) == 0 || (len(open) < nSlots && g.chance(0.25-0.05*float64(len(open)))) {
		for {
			s := g.rng.IntN(nSlots)
			if !g.open[s] {
				return g.begin(s)
			}
		}
	}
	s := open[g.rng.IntN(len(open))]
	o := op{slot: s, kind: g.choose(txOpWeights), table: g.table(), key: g.key(), val: g.value(step)}
	// An aborted transaction mostly rolls back, to a savepoint or wholly;
	// sometimes it is used anyway (ErrTxAborted).
	if g.aborted[s] {
		switch r := g.rng.IntN(10); {
		case r < 3 && len(g.sps[s]) > 0:
			o.kind = opRollbackTo
		case r < 6:
			o.kind = opRollback
		}
	}
	switch o.kind {
	case opCommit, opRollback:
		g.open[s], g.ended[s], g.sps[s] = false, true, nil
	case opUpdate, opDelete:
		o.waitAPI = g.chance(0.6)
		if o.waitAPI {
			o.wait = g.waitPolicy()
		}
	case opUpsert:
		o.upsert = upsertMode(g.rng.IntN(3))
	case opUpdateKey:
		o.key2 = g.key()
	case opLock:
		o.strength = g.strength()
		o.wait = g.waitPolicy()
	case opScan:
		o.scan = g.scanSpec()
	case opSavepoint:
		o.name = g.pick(spPool)
	case opRollbackTo, opRelease:
		if len(g.sps[s]) == 0 && g.chance(0.7) {
			o.kind = opSavepoint // mostly: there is nothing to roll back to
			o.name = g.pick(spPool)
		} else if len(g.sps[s]) > 0 && g.chance(0.9) {
			o.name = g.sps[s][g.rng.IntN(len(g.sps[s]))]
		} else {
			o.name = g.pick(spPool)
		}
	}
	return o
}

// observe tells the generator the result of o. A result that carries a
// SQLSTATE is an error that aborted the transaction (down to its innermost
// savepoint); ErrNotFound, ErrSkipped and a callback's stop carry none.
func (g *generator) observe(o op, canon string) {
	if o.kind > opRelease {
		return
	}
	sps := g.sps[o.slot]
	switch {
	case o.kind == opCommit || o.kind == opRollback:
		g.aborted[o.slot] = false
	case o.kind == opSavepoint && canon == "ok":
		g.sps[o.slot] = append(sps, o.name)
	case o.kind == opRollbackTo && canon == "ok":
		// The savepoint stays; the ones established after it are gone.
		g.aborted[o.slot] = false
		if i := lastIndex(sps, o.name); i >= 0 {
			g.sps[o.slot] = sps[:i+1]
		}
	case o.kind == opRelease && canon == "ok":
		if i := lastIndex(sps, o.name); i >= 0 {
			g.sps[o.slot] = sps[:i]
		}
	}
	if abortingErr.MatchString(canon) {
		g.aborted[o.slot] = true
	}
}

func lastIndex(xs []string, x string) int {
	for i := len(xs) - 1; i >= 0; i-- {
		if xs[i] == x {
			return i
		}
	}
	return -1
}

var abortingErr = regexp.MustCompile(`error\[[0-9A-Z]{5} `)

func (g *generator) begin(s int) op {
	g.open[s], g.sps[s], g.aborted[s] = true, nil, false
	o := op{kind: opBegin, slot: s, readOnly: g.chance(0.05)}
	if g.chance(0.4) {
		o.iso = tupled.RepeatableRead
	}
	return o
}

func (g *generator) dbOp(step int) op {
	o := op{kind: g.choose(dbOpWeights), table: g.table()}
	switch o.kind {
	case opCreateTable:
		o.table = g.pick(tablePool)
		o.flag = g.chance(0.3)
		g.created[o.table] = true
	case opDropTable:
		o.flag = g.chance(0.3)
		delete(g.created, o.table) // it may fail (55006): then the model is wrong until it is created again; only choices suffer
	case opReopen:
		g.open, g.ended, g.aborted, g.sps = [nSlots]bool{}, [nSlots]bool{}, [nSlots]bool{}, [nSlots][]string{}
		o.cacheRows = []int{0, 0, 2, 5}[g.rng.IntN(4)]
		o.syncCommit = g.chance(0.7)
	case opStale:
		var ended []int
		for i, e := range g.ended {
			if e && !g.open[i] {
				ended = append(ended, i)
			}
		}
		if len(ended) == 0 {
			o.kind = opLocks
			break
		}
		o.slot, o.key = ended[g.rng.IntN(len(ended))], g.key()
	}
	return o
}
