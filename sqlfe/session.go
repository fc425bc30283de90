package sqlfe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// ServerVersion is the PostgreSQL version the front end reports.
const ServerVersion = "15.18"

// Executor is the SQL front end of one database: the catalog and the registry
// of sessions (for pg_backend_pid, pg_locks and
// pg_isolation_test_session_is_blocked). It is safe for concurrent use.
type Executor struct {
	db              *tupled.DB
	cat             catalog.Catalog
	deadlockTimeout time.Duration
	log             *slog.Logger

	mu       sync.Mutex
	sessions map[int32]*Session
	notify   notifyHub // LISTEN/NOTIFY (notify.go)

	rowids rowidCounters // tables without a PRIMARY KEY
}

// ExecutorOptions configure NewEngine.
type ExecutorOptions struct {
	// DeadlockTimeout is the DB's Options.DeadlockTimeout: a session's
	// deadlock_timeout until it SETs its own. 0 means 1s.
	DeadlockTimeout time.Duration
	Logger          *slog.Logger
}

// NewExecutor loads the SQL catalog of db (creating its engine table if needed).
func NewExecutor(ctx context.Context, db *tupled.DB, opts *ExecutorOptions) (*Executor, error) {
	e := &Executor{db: db, sessions: map[int32]*Session{}, deadlockTimeout: time.Second, log: slog.New(slog.DiscardHandler)}
	if opts != nil {
		if opts.DeadlockTimeout > 0 {
			e.deadlockTimeout = opts.DeadlockTimeout
		}
		if opts.Logger != nil {
			e.log = opts.Logger
		}
	}
	if err := e.cat.Load(ctx, db); err != nil {
		return nil, fmt.Errorf("sqlfe: loading the catalog: %w", err)
	}
	if err := e.declareConstraints(ctx); err != nil {
		return nil, fmt.Errorf("sqlfe: loading the catalog: %w", err)
	}
	if err := dropLeftoverTemps(ctx, db); err != nil { // temp.go: a crash's
		return nil, fmt.Errorf("sqlfe: dropping temporary tables: %w", err)
	}
	return e, nil
}

// declareConstraints declares the loaded catalog's indexes and foreign
// keys with the engine, which keeps no SQL definitions of its own: their
// key functions and referential actions evaluate SQL expressions
// (index.go, fk.go), so this is sqlfe's part of loading the catalog.
func (e *Executor) declareConstraints(ctx context.Context) error {
	tables, _, _ := e.cat.Snapshot()
	for _, t := range tables {
		if err := createIndexes(ctx, e.db, t); err != nil { // index.go
			return err
		}
	}
	for _, t := range tables {
		if err := declareFKs(ctx, e.db, t, func(name string) *catalog.Table { return tables[name] }); err != nil { // fk.go
			return err
		}
	}
	return nil
}

// DB returns the engine's database.
func (e *Executor) DB() *tupled.DB { return e.db }

type blockState uint8

const (
	blkNone     blockState = iota // no transaction
	blkImplicit                   // statements of one Query message / one Sync group, not in BEGIN
	blkExplicit                   // inside BEGIN ... COMMIT
	blkFailed                     // inside BEGIN, after an error: only ROLLBACK/COMMIT accepted
)

// Session is one connection's SQL state: its transaction, its settings. A
// Session is used by one goroutine (the connection's); only its txID is read
// by others.
type Session struct {
	eng  *Executor
	pid  int32
	user string
	// dbname is the database the client named at startup; txTime the
	// time the transaction began (now(), CURRENT_TIMESTAMP)
	dbname string
	txTime time.Time
	// while a subquery is planned: the compiler of the query around it
	// and the count of references to it (conditional.go subLink)
	planOuter *compiler
	lockPins  *[]*pinScan // while a locking SELECT's FROM is planned (lockjoin.go)
	outerRefs int
	lateral   *lateralCtx        // while a FROM item is planned: what it may read to its left (lateral.go)
	fromLocks []*pg.Node         // while a locking SELECT's FROM is planned: its locking clauses (lateral.go pushLocks)
	viewDepth int                // views being planned, one inside another (views.go)
	cursors   map[string]*cursor // cursor.go

	tx      *tupled.Tx
	txID    atomic.Uint64   // tx's id while tx != nil, else 0
	adv     *tupled.Session // owner of the session's advisory locks (advisory.go)
	block   blockState
	pending map[string]*catalog.Table // DDL of the open transaction (nil value: dropped)
	// savepoints are the block's open savepoints, innermost last (savepoint.go).
	savepoints []sqlSavepoint
	created    []string         // engine tables the open transaction created (reclaim.go)
	temps      tempTables       // temporary tables (temp.go)
	sqlPrep    map[string]*Stmt // statements of SQL PREPARE (prepare.go)

	// the next/current transaction's characteristics
	txIso      tupled.IsolationLevel
	txReadOnly bool
	txStarted  bool // a statement has run in the explicit block (SET TRANSACTION is too late)

	defaultIso  tupled.IsolationLevel
	lockTimeout time.Duration
	// deadlockTimeout: the session's deadlock_timeout (SET); 0 = the
	// engine's. PostgreSQL's is per backend: each of the session's lock
	// waits is checked this long after it began.
	deadlockTimeout time.Duration
	stmtTimeout     time.Duration
	settings        map[string]string // other settings, reported as given
	localUndo       map[string]string // SET LOCAL: values to restore at transaction end
	abortUndo       map[string]string // SET in a transaction: values to restore if it aborts

	// copyIO is the connection's COPY sub-protocol (copy.go; nil: COPY
	// FROM STDIN / TO STDOUT are refused).
	copyIO CopyIO
	// seqInTx: sequences the transaction restarted (TRUNCATE ... RESTART
	// IDENTITY, truncate.go), whose nextval runs in it
	seqInTx map[string]bool
	// pendingSeqs: the open transaction's sequence DDL (nil value:
	// dropped); seqSess and lastSeq: currval's and lastval's memory
	// (sequence.go)
	pendingSeqs map[string]*catalog.Sequence
	// pendingEnums: the open transaction's enum type DDL (nil value:
	// dropped; enum.go)
	pendingEnums map[string]*types.Enum
	// ctes: the WITH queries visible to the query being planned
	// (recursive.go)
	ctes    []*cteDef
	seqSess map[string]*seqSess
	lastSeq string
	// notify: LISTEN/NOTIFY (notify.go)
	notify notifyState

	// Notice receives warnings and notices (may be nil).
	Notice func(*pgerror.Error)
	// ParamStatus receives changes of reported parameters (may be nil).
	ParamStatus func(name, value string)
}

// NewSession registers a session with backend process id pid.
func (e *Executor) NewSession(pid int32, user string, startup map[string]string) *Session {
	s := &Session{eng: e, pid: pid, user: user, dbname: startup["database"], adv: e.db.NewSession(), settings: map[string]string{
		"application_name":            "",
		"client_encoding":             "UTF8",
		"datestyle":                   "ISO, MDY",
		"timezone":                    "UTC",
		"intervalstyle":               "postgres",
		"extra_float_digits":          "1",
		"search_path":                 `"$user", public`,
		"client_min_messages":         "notice",
		"standard_conforming_strings": "on",
		"server_version":              ServerVersion,
		"server_encoding":             "UTF8",
		"integer_datetimes":           "on",
		"is_superuser":                "on",
		"session_authorization":       user,
		"max_identifier_length":       "63",
		"server_version_num":          serverVersionNum(),
	}}
	for k, v := range startup {
		switch k {
		case "user", "database", "replication", "options":
			continue
		}
		_ = s.setSetting(k, v, false)
	}
	e.mu.Lock()
	e.sessions[pid] = s
	e.mu.Unlock()
	return s
}

// Reported returns the parameters sent in ParameterStatus at startup.
func (s *Session) Reported() [][2]string {
	var out [][2]string
	for _, k := range []string{"application_name", "client_encoding", "DateStyle", "default_transaction_read_only", "in_hot_standby", "integer_datetimes", "IntervalStyle", "is_superuser", "server_encoding", "server_version", "session_authorization", "standard_conforming_strings", "TimeZone"} {
		v, _ := s.getSetting(k)
		out = append(out, [2]string{k, v})
	}
	return out
}

var reportedParams = map[string]string{
	"application_name": "application_name", "client_encoding": "client_encoding", "datestyle": "DateStyle",
	"intervalstyle": "IntervalStyle", "timezone": "TimeZone", "standard_conforming_strings": "standard_conforming_strings",
	"session_authorization": "session_authorization", "is_superuser": "is_superuser",
}

// PID is the session's backend process id.
func (s *Session) PID() int32 { return s.pid }

// Close rolls back the open transaction and unregisters the session.
func (s *Session) Close() {
	s.rollback()
	s.unlistenAll()
	s.dropAllTemps() // temp.go
	_ = s.adv.Close()
	s.block = blkNone
	s.eng.mu.Lock()
	delete(s.eng.sessions, s.pid)
	s.eng.mu.Unlock()
}

// TxStatus is the ReadyForQuery status: 'I' idle, 'T' in a transaction
// block, 'E' in a failed transaction block.
func (s *Session) TxStatus() byte {
	switch s.block {
	case blkExplicit:
		return 'T'
	case blkFailed:
		return 'E'
	}
	return 'I'
}

// StatementTimeout is the session's statement_timeout (0: none).
func (s *Session) StatementTimeout() time.Duration { return s.stmtTimeout }

func (s *Session) ensureTx(ctx context.Context) (*tupled.Tx, error) {
	if s.tx != nil {
		return s.tx, nil
	}
	tx, err := s.adv.Begin(ctx, &tupled.TxOptions{Isolation: s.txIso, ReadOnly: s.txReadOnly, LockTimeout: s.lockTimeout, DeadlockTimeout: s.deadlockTimeout})
	if err != nil {
		return nil, err
	}
	s.tx = tx
	s.txTime = time.Now().UTC().Truncate(time.Microsecond)
	s.txID.Store(tx.ID())
	return tx, nil
}

func (s *Session) endTx() {
	s.closeTxCursors() // cursor.go
	s.tx = nil
	s.savepoints = nil
	s.txID.Store(0)
	s.pending = nil
	s.pendingSeqs = nil
	s.pendingEnums = nil
	s.created = nil
	s.seqInTx = nil
	s.txIso = s.defaultIso
	s.txReadOnly = false
	s.txStarted = false
	for k, v := range s.localUndo {
		_ = s.setSetting(k, v, false)
	}
	s.localUndo = nil
}

func (s *Session) rollback() {
	s.abortNotify() // notify.go
	if s.tx != nil {
		_ = s.tx.Rollback()
	}
	undo := s.abortUndo
	s.abortUndo = nil
	for k, v := range undo {
		_ = s.setSetting(k, v, false)
	}
	s.abortUndo = nil
	created, ddl := s.created, s.pending != nil || s.pendingSeqs != nil
	if s.pendingEnums != nil {
		restoreEnums(&s.eng.cat, s.pendingEnums) // enum.go
	}
	s.endTx()
	s.eng.cat.Settle(s.eng.db, created, ddl)
	s.tempEnd(context.Background(), false) // temp.go
}

func (s *Session) commit() error {
	if s.tx != nil {
		if err := s.tempPreCommit(context.Background(), s.tx); err != nil { // ON COMMIT DELETE ROWS: temp.go
			s.rollback()
			return err
		}
	}
	s.abortUndo = nil
	tx, pending, created, pendingSeqs, pendingEnums := s.tx, s.pending, s.created, s.pendingSeqs, s.pendingEnums
	s.endTx()
	if tx == nil {
		s.commitNotify() // notify.go
		return nil
	}
	if pendingEnums != nil {
		// before the engine's commit, which frees the catalog rows: a
		// concurrent ALTER TYPE waiting for them then reads the settled
		// definitions (enum.go lockEnum)
		settleEnums(pendingEnums) // enum.go
	}
	if err := tx.Commit(); err != nil {
		if pendingEnums != nil {
			restoreEnums(&s.eng.cat, pendingEnums) // enum.go
		}
		s.abortNotify()
		s.eng.cat.Settle(s.eng.db, created, pending != nil)
		s.tempEnd(context.Background(), false)
		return err
	}
	s.commitNotify()
	if pending != nil {
		s.eng.cat.Apply(pending)
	}
	if pendingSeqs != nil {
		s.eng.cat.ApplySeqs(pendingSeqs) // sequence.go
	}
	if pendingEnums != nil {
		s.eng.cat.ApplyEnums(pendingEnums) // enum.go
	}
	s.eng.cat.Settle(s.eng.db, created, pending != nil)
	s.tempEnd(context.Background(), true)
	return nil
}

// EndGroup ends a group of statements (a simple Query message, or the
// extended-protocol messages up to Sync): outside BEGIN its work commits.
func (s *Session) EndGroup() error {
	if s.block != blkImplicit {
		return nil
	}
	s.block = blkNone
	if err := s.commit(); err != nil {
		return ToError(err)
	}
	return nil
}

// fail handles a statement's error: the transaction is rolled back; inside
// BEGIN the block becomes failed.
func (s *Session) fail() {
	if s.failUnderSavepoint() {
		return
	}
	s.rollback()
	if s.block == blkExplicit || s.block == blkFailed {
		s.block = blkFailed
	} else {
		s.block = blkNone
	}
}

func (s *Session) notice(sev, code, msg string) {
	if s.Notice != nil {
		s.Notice(&pgerror.Error{Severity: sev, Code: code, Message: msg})
	}
}

// ---- settings ----

func formatDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	ms := d.Milliseconds()
	switch {
	case ms%(24*3600*1000) == 0:
		return strconv.FormatInt(ms/(24*3600*1000), 10) + "d"
	case ms%(3600*1000) == 0:
		return strconv.FormatInt(ms/(3600*1000), 10) + "h"
	case ms%(60*1000) == 0:
		return strconv.FormatInt(ms/(60*1000), 10) + "min"
	case ms%1000 == 0:
		return strconv.FormatInt(ms/1000, 10) + "s"
	}
	return strconv.FormatInt(ms, 10) + "ms"
}

// parseDuration parses the value of a timeout parameter as PostgreSQL's
// parse_int does for a GUC in milliseconds: a number (fractions round to the
// nearest millisecond), an optional unit, then the range check of the
// parameter: min .. INT_MAX milliseconds (22023 beyond it).
func parseDuration(name, v string, min int64) (time.Duration, error) {
	s := strings.TrimSpace(v)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || (i == 0 && (s[i] == '-' || s[i] == '+'))) {
		i++
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') && i+1 < len(s) && (s[i+1] >= '0' && s[i+1] <= '9' || s[i+1] == '-' || s[i+1] == '+') {
		for i += 2; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		}
	}
	num, unit := s[:i], strings.TrimSpace(s[i:])
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) {
		return 0, pgerror.Errorf(pgerror.CodeInvalidParamValue, "invalid value for parameter %q: %q", name, v)
	}
	mult := map[string]float64{"": 1, "ms": 1, "us": 0.001, "s": 1000, "min": 60000, "h": 3600000, "d": 86400000}
	m, ok := mult[unit]
	if !ok {
		return 0, &pgerror.Error{Code: pgerror.CodeInvalidParamValue, Message: fmt.Sprintf("invalid value for parameter %q: %q", name, v), Hint: `Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".`}
	}
	ms := math.RoundToEven(f * m)
	if ms > math.MaxInt32 || ms < math.MinInt32 {
		return 0, &pgerror.Error{Code: pgerror.CodeInvalidParamValue, Message: fmt.Sprintf("invalid value for parameter %q: %q", name, v), Hint: "Value exceeds integer range."}
	}
	if int64(ms) < min {
		return 0, pgerror.Errorf(pgerror.CodeInvalidParamValue, "%d ms is outside the valid range for parameter %q (%d .. %d)", int64(ms), name, min, math.MaxInt32)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

func parseIso(v string) (tupled.IsolationLevel, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "read committed":
		return tupled.ReadCommitted, nil
	case "repeatable read":
		return tupled.RepeatableRead, nil
	case "serializable", "read uncommitted":
		return 0, pgerror.NotSupported("isolation level %s is not supported (only READ COMMITTED and REPEATABLE READ)", strings.ToUpper(v))
	}
	return 0, pgerror.Errorf(pgerror.CodeInvalidParamValue, "invalid value for parameter \"transaction_isolation\": %q", v)
}

func (s *Session) getSetting(name string) (string, error) {
	switch strings.ToLower(name) {
	case "deadlock_timeout":
		if s.deadlockTimeout > 0 {
			return formatDuration(s.deadlockTimeout), nil
		}
		return formatDuration(s.eng.deadlockTimeout), nil
	case "lock_timeout":
		return formatDuration(s.lockTimeout), nil
	case "statement_timeout":
		return formatDuration(s.stmtTimeout), nil
	case "transaction_isolation":
		return s.txIso.String(), nil
	case "default_transaction_isolation":
		return s.defaultIso.String(), nil
	case "transaction_read_only":
		if s.txReadOnly {
			return "on", nil
		}
		return "off", nil
	case "default_transaction_read_only", "in_hot_standby":
		return "off", nil
	}
	key := strings.ToLower(name)
	if v, ok := s.settings[key]; ok {
		return v, nil
	}
	return unimplementedShow(name, key)
}

// setSetting implements SET name = value (local: SET LOCAL, undone at the
// end of the transaction).
func (s *Session) setSetting(name, value string, local bool) error {
	key := strings.ToLower(name)
	// SET LOCAL is undone at the transaction's end; a plain SET inside a
	// transaction is undone if the transaction aborts (PostgreSQL's
	// settings are transactional).
	undo := &s.abortUndo
	if local {
		undo = &s.localUndo
	}
	if (local && s.block == blkExplicit) || (!local && (s.block == blkExplicit || s.block == blkImplicit)) {
		old, err := s.getSetting(key)
		if err != nil && isCustomSetting(key) {
			old, err = "", nil // a new placeholder is '' after the transaction
		}
		if err == nil {
			if *undo == nil {
				*undo = map[string]string{}
			}
			if _, ok := (*undo)[key]; !ok {
				(*undo)[key] = old
			}
			s.noteSetting(key, old)
		}
	}
	switch key {
	case "deadlock_timeout":
		d, err := parseDuration(key, value, 1)
		if err != nil {
			return err
		}
		s.deadlockTimeout = d
		if s.tx != nil {
			s.tx.SetDeadlockTimeout(d)
		}
		return nil
	case "lock_timeout":
		d, err := parseDuration(key, value, 0)
		if err != nil {
			return err
		}
		s.lockTimeout = d
		return nil
	case "statement_timeout":
		d, err := parseDuration(key, value, 0)
		if err != nil {
			return err
		}
		s.stmtTimeout = d
		return nil
	case "transaction_isolation":
		iso, err := parseIso(value)
		if err != nil {
			return err
		}
		if s.block == blkExplicit && s.txStarted && iso != s.txIso {
			return pgerror.Errorf(pgerror.CodeActiveTx, "SET TRANSACTION ISOLATION LEVEL must be called before any query")
		}
		s.txIso = iso
		return nil
	case "default_transaction_isolation":
		iso, err := parseIso(value)
		if err != nil {
			return err
		}
		s.defaultIso = iso
		if s.block == blkNone {
			s.txIso = iso
		}
		return nil
	case "transaction_read_only":
		b, ok := types.ParseBool(value)
		if !ok {
			return pgerror.Errorf(pgerror.CodeInvalidParamValue, "parameter %q requires a Boolean value", name)
		}
		if s.block == blkExplicit && s.txStarted {
			return pgerror.Errorf(pgerror.CodeActiveTx, "transaction read-write mode must be set before any query")
		}
		s.txReadOnly = b
		return nil
	case "client_encoding":
		if v := strings.ToUpper(strings.ReplaceAll(value, "-", "")); v != "UTF8" && v != "UNICODE" {
			return pgerror.NotSupported("client_encoding %q is not supported (only UTF8)", value)
		}
		value = "UTF8"
	case "standard_conforming_strings":
		if b, ok := types.ParseBool(value); !ok || !b {
			return pgerror.NotSupported("standard_conforming_strings can only be on")
		}
		value = "on"
	case "idle_in_transaction_session_timeout":
		d, err := parseDuration(key, value, 0)
		if err != nil {
			return err
		}
		value = formatDuration(d)
	case "server_version", "server_version_num", "server_encoding", "integer_datetimes", "is_superuser", "max_identifier_length":
		return pgerror.Errorf(pgerror.CodeCantChangeRuntime, "parameter %q cannot be changed", key)
	case "application_name", "datestyle", "timezone", "intervalstyle", "extra_float_digits", "search_path",
		"client_min_messages", "session_authorization", "synchronous_commit",
		"row_security", "bytea_output", "geqo", "jit", "enable_seqscan", "enable_indexscan", "enable_bitmapscan",
		"work_mem", "log_statement", "lc_messages", "lc_monetary", "lc_numeric", "lc_time":
	default:
		if !isCustomSetting(key) {
			return unimplementedSetting(name)
		}
		if err := checkCustomName(name); err != nil {
			return err
		}
	}
	s.settings[key] = value
	if rep, ok := reportedParams[key]; ok && s.ParamStatus != nil {
		s.ParamStatus(rep, value)
	}
	return nil
}

// ---- introspection shared by the sessions ----

// pidOf returns the pid of the session whose transaction is txID (0 if none).
func (e *Executor) pidsByTx() map[uint64]int32 {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := make(map[uint64]int32, len(e.sessions))
	for pid, s := range e.sessions {
		if id := s.txID.Load(); id != 0 {
			m[id] = pid
		}
	}
	return m
}

// isBlocked is pg_isolation_test_session_is_blocked: whether the session
// pid waits (an ungranted entry of its transaction in db.Locks()) for a lock
// held, or queued ahead of it, by the transaction of one of the sessions in
// interesting — what PostgreSQL computes with pg_blocking_pids.
func (e *Executor) isBlocked(pid int32, interesting []int64) bool {
	e.mu.Lock()
	s := e.sessions[pid]
	want := map[uint64]bool{}
	wantSess := map[uint64]bool{} // advisory locks are the sessions'
	for _, p := range interesting {
		if o := e.sessions[int32(p)]; o != nil && o != s {
			if id := o.txID.Load(); id != 0 {
				want[id] = true
			}
			wantSess[o.adv.ID()] = true
		}
	}
	e.mu.Unlock()
	if s == nil {
		return false
	}
	me, mySess := s.txID.Load(), s.adv.ID()
	if me == 0 || len(wantSess) == 0 {
		return false
	}
	locks := e.db.Locks()
	for _, l := range locks {
		if l.Granted || l.TxID != me {
			continue
		}
		if rest, ok := strings.CutPrefix(l.Tag, "transaction "); ok {
			if id, err := strconv.ParseUint(rest, 10, 64); err == nil && want[id] {
				return true
			}
			// A subtransaction's xid: held by its transaction.
			for _, m := range locks {
				if m.Granted && m.Tag == l.Tag && want[m.TxID] {
					return true
				}
			}
			continue
		}
		for _, m := range locks {
			if m.Tag != l.Tag {
				continue
			}
			if m.Session != 0 {
				if m.Session == mySess || !wantSess[m.Session] {
					continue
				}
			} else if m.TxID == me || !want[m.TxID] {
				continue
			}
			if m.Granted || m.WaitStart.Before(l.WaitStart) {
				return true
			}
		}
	}
	return false
}

var errStop = errors.New("stop")
