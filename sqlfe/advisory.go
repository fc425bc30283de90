package sqlfe

import (
	"strconv"
	"strings"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/types"
)

// Advisory lock functions (PostgreSQL's lockfuncs.c): pg_advisory_lock,
// pg_advisory_lock_shared, pg_advisory_xact_lock[_shared],
// pg_try_advisory_[xact_]lock[_shared], pg_advisory_unlock[_shared],
// pg_advisory_unlock_all, each (except unlock_all) in a bigint and an
// (integer, integer) form. They are strict (a NULL argument gives NULL and
// takes no lock), return void or boolean as in PostgreSQL, and run in the
// statement's transaction: session-level locks belong to the session's
// tupled.Session and outlive the transaction, transaction-level ones end
// with it. An int8 argument where an integer is expected finds no function
// (42883), as PostgreSQL does not cast bigint to integer implicitly.

// advisoryOverloads maps a function name to its forms by argument count.
var advisoryOverloads = map[string]map[int]builtin{}

func init() {
	type variant struct {
		name          string
		shared, xact  bool
		try, unlock   bool
		returnsResult bool
	}
	for _, v := range []variant{
		{name: "pg_advisory_lock"},
		{name: "pg_advisory_lock_shared", shared: true},
		{name: "pg_advisory_xact_lock", xact: true},
		{name: "pg_advisory_xact_lock_shared", xact: true, shared: true},
		{name: "pg_try_advisory_lock", try: true},
		{name: "pg_try_advisory_lock_shared", try: true, shared: true},
		{name: "pg_try_advisory_xact_lock", try: true, xact: true},
		{name: "pg_try_advisory_xact_lock_shared", try: true, xact: true, shared: true},
		{name: "pg_advisory_unlock", unlock: true},
		{name: "pg_advisory_unlock_shared", unlock: true, shared: true},
	} {
		ret := types.TVoid
		if v.try || v.unlock {
			ret = types.TBool
		}
		fn := func(e *env, a []types.Value) (types.Value, error) {
			for _, x := range a {
				if x.Null {
					return types.Null(ret), nil
				}
			}
			key := tupled.AdvisoryKeyInt64(a[0].I)
			if len(a) == 2 {
				key = tupled.AdvisoryKeyPair(int32(a[0].I), int32(a[1].I))
			}
			return e.s.advisory(e, key, v.shared, v.xact, v.try, v.unlock)
		}
		advisoryOverloads[v.name] = map[int]builtin{
			1: {[]types.Type{types.TInt8}, ret, fn},
			2: {[]types.Type{types.TInt4, types.TInt4}, ret, fn},
		}
	}
	advisoryOverloads["pg_advisory_unlock_all"] = map[int]builtin{
		0: {nil, types.TVoid, func(e *env, _ []types.Value) (types.Value, error) {
			if _, err := e.s.ensureTx(e.ctx); err != nil {
				return types.Value{}, err
			}
			if err := e.s.advSession().AdvisoryUnlockAll(); err != nil {
				return types.Value{}, err
			}
			return types.Value{T: types.TVoid}, nil
		}},
	}
}

// advisory runs one advisory lock function in the statement's transaction.
func (s *Session) advisory(e *env, key tupled.AdvisoryKey, shared, xact, try, unlock bool) (types.Value, error) {
	tx, err := s.ensureTx(e.ctx)
	if err != nil {
		return types.Value{}, err
	}
	sess := s.advSession()
	switch {
	case unlock:
		ok, err := sess.AdvisoryUnlock(key, shared)
		if err != nil {
			return types.Value{}, err
		}
		if !ok {
			mode := "ExclusiveLock"
			if shared {
				mode = "ShareLock"
			}
			s.notice("WARNING", "01000", "you don't own a lock of type "+mode)
		}
		return types.Bool(ok), nil
	case xact && try:
		ok, err := tx.TryAdvisoryLock(e.ctx, key, shared)
		return types.Bool(ok), err
	case xact:
		return types.Value{T: types.TVoid}, tx.AdvisoryLock(e.ctx, key, shared)
	case try:
		ok, err := sess.TryAdvisoryLock(e.ctx, key, shared)
		return types.Bool(ok), err
	}
	return types.Value{T: types.TVoid}, sess.AdvisoryLock(e.ctx, key, shared)
}

// advSession is the session's tupled.Session: the connection as the owner
// of session-level advisory locks. Every transaction of the session is
// begun through it (ensureTx), so that the session and its transaction are
// one participant for the deadlock detector; Close releases its locks.
func (s *Session) advSession() *tupled.Session { return s.adv }

// advisoryColumns parses the key of an advisory lock's tag ("<bigint>" or
// "<int>,<int>", tupled.AdvisoryKey.String) into pg_locks' classid, objid
// and objsubid: a bigint's high and low 32 bits and 1, or the pair's two
// integers (as unsigned oids) and 2.
func advisoryColumns(k string) (classid, objid int64, objsubid int32, ok bool) {
	if a, b, pair := strings.Cut(k, ","); pair {
		k1, err1 := strconv.ParseInt(a, 10, 32)
		k2, err2 := strconv.ParseInt(b, 10, 32)
		if err1 != nil || err2 != nil {
			return 0, 0, 0, false
		}
		return int64(uint32(k1)), int64(uint32(k2)), 2, true
	}
	v, err := strconv.ParseInt(k, 10, 64)
	if err != nil {
		return 0, 0, 0, false
	}
	return int64(uint64(v) >> 32), int64(uint32(v)), 1, true
}

// pidsBySession maps the id of each session's tupled.Session to its pid.
func (e *Executor) pidsBySession() map[uint64]int32 {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := make(map[uint64]int32, len(e.sessions))
	for pid, s := range e.sessions {
		m[s.adv.ID()] = pid
	}
	return m
}
