package sqlfe

// Sequences: CREATE / ALTER / DROP SEQUENCE, nextval, currval, setval,
// lastval and SELECT * FROM a sequence.
//
// The design, in PostgreSQL's terms:
//
//   - A sequence is a definition (Sequence: its type, INCREMENT, MINVALUE,
//     MAXVALUE, START, CACHE, CYCLE, OWNED BY) and a state (last_value,
//     is_called, log_cnt). The definition is catalog data and so
//     transactional: a standalone sequence's lives in CatalogTable under
//     the key seqCatalogKey(name) (no table name holds a NUL), changed
//     through the DDL transaction and installed in memory when it commits
//     (Session.pendingSeqs, catalog.seqs), like a table's. The definition of
//     a serial or identity column's sequence is the column's (Column.Seq,
//     or the defaults of its type: catalog.ColSequence), named t_c_seq as
//     PostgreSQL names it, so every sequence — standalone or owned by a
//     column — is one *Sequence to nextval and to the catalogs.
//   - The state is a row of the engine table SequenceTable keyed by
//     Sequence.Key: a standalone sequence's key is its name with a random
//     suffix fixed at CREATE (so a dropped and re-created sequence, or one
//     whose CREATE rolled back after a nextval, never meets an old row); a
//     column's is engineTable.column (defaults.go). No row means a
//     sequence never called: last_value = START, is_called false. The row
//     is last_value (8 bytes big-endian), is_called and log_cnt (a byte
//     each); rows written before is_called existed are 8 bytes (called).
//   - nextval advances the state in a transaction of its own (so it is not
//     transactional: a value handed out is never handed out again, whether
//     the caller commits or not), locking the row, and follows PostgreSQL's
//     nextval_internal step by step: CACHE values fetched at once into the
//     session (the rest served without touching the row), 32 values
//     "logged" ahead (log_cnt, as SELECT * FROM s shows it), the limits
//     (2200H) or CYCLE. A sequence whose row the session's own transaction
//     holds (ALTER SEQUENCE, TRUNCATE ... RESTART IDENTITY: Session.seqInTx)
//     is advanced in that transaction instead, as waiting for it would
//     wait for ourselves.
//   - setval is non-transactional too; ALTER SEQUENCE's RESTART writes the
//     state in the ALTER's transaction (PostgreSQL gives the sequence a new
//     relfilenode, so a rolled-back RESTART is undone there too).
//   - currval and lastval are the session's (Session.seqSess): 55000 until
//     nextval ran in this session.
//   - DROP TABLE drops the standalone sequences OWNED BY its columns; DROP
//     SEQUENCE of a sequence a column's DEFAULT calls (nextval('s')) is
//     2BP01 unless CASCADE, which drops the default; a column's own
//     sequence cannot be dropped (2BP01: drop the column or the table).

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"regexp"
	"sort"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/syscat"
	"github.com/tupled/tupled/sql/types"
)

// SequenceTable is the engine table holding every sequence's state (see
// above), created with the first sequence.
const SequenceTable = "_tupled_sequences"

func seqCatalogKey(name string) []byte { return []byte("\x00seq\x00" + name) }

// lookupSeq resolves a standalone sequence's name for the session: its
// own uncommitted DDL first, then the committed catalog.
func (s *Session) lookupSeq(name string) *catalog.Sequence {
	if sq, ok := s.pendingSeqs[name]; ok {
		return sq
	}
	return s.eng.cat.Sequence(name)
}

// findSequence resolves name (as regclass input: maybe qualified and
// quoted) to any sequence the session sees, standalone or a column's.
func (s *Session) findSequence(name string) (*catalog.Sequence, error) {
	sn := s.catalogSnap()
	o, ok := sn.RelOID(name)
	if !ok || sn.ByOID[o] == nil {
		return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", name)
	}
	return s.seqOfRel(sn.ByOID[o])
}

func (s *Session) seqOfRel(r *syscat.Rel) (*catalog.Sequence, error) {
	if r.Kind != "S" || r.Seq == nil {
		return nil, pgerror.Errorf(pgerror.CodeWrongObjectType, "%q is not a sequence", r.Name)
	}
	return r.Seq, nil
}

func (s *Session) setPendingSeq(name string, sq *catalog.Sequence) {
	if s.pendingSeqs == nil {
		s.pendingSeqs = map[string]*catalog.Sequence{}
	}
	s.pendingSeqs[name] = sq
}

// ---- the state ----

type seqState struct {
	last   int64
	called bool
	logCnt int64
}

func decodeSeqState(sq *catalog.Sequence, b []byte, found bool) (seqState, error) {
	switch {
	case !found:
		return seqState{last: sq.Start}, nil
	case len(b) == 8:
		return seqState{last: int64(binary.BigEndian.Uint64(b)), called: true}, nil
	case len(b) == 10:
		return seqState{last: int64(binary.BigEndian.Uint64(b)), called: b[8] == 1, logCnt: int64(b[9])}, nil
	}
	return seqState{}, catalog.ErrCorrupt
}

func (st seqState) encode() []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(st.last))
	return append(b, b2byte(st.called), byte(st.logCnt))
}

func b2byte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// lockSeqState locks sq's state row in tx and reads it.
func lockSeqState(ctx context.Context, tx *tupled.Tx, sq *catalog.Sequence) (seqState, bool, error) {
	cur, err := tx.Lock(ctx, SequenceTable, []byte(sq.Key), tupled.ForUpdate, tupled.Wait)
	switch {
	case errors.Is(err, tupled.ErrNotFound), errors.Is(err, tupled.ErrNoTable):
		st, err := decodeSeqState(sq, nil, false)
		return st, false, err
	case err != nil:
		return seqState{}, false, err
	}
	st, err := decodeSeqState(sq, cur, true)
	return st, true, err
}

func writeSeqState(ctx context.Context, tx *tupled.Tx, sq *catalog.Sequence, st seqState, exists bool) error {
	if exists {
		return tx.Update(ctx, SequenceTable, []byte(sq.Key), st.encode())
	}
	return tx.Insert(ctx, SequenceTable, []byte(sq.Key), st.encode())
}

// seqLogVals is PostgreSQL's SEQ_LOG_VALS: values "logged" ahead.
const seqLogVals = 32

// fetchSeq is PostgreSQL's nextval_internal on the row: it takes up to
// CACHE values, returning the first and the last taken.
func fetchSeq(ctx context.Context, tx *tupled.Tx, sq *catalog.Sequence) (result, last int64, err error) {
	st, exists, err := lockSeqState(ctx, tx, sq)
	if err != nil {
		return 0, 0, err
	}
	next := st.last
	result, last = next, next
	fetch, log, rescnt := sq.Cache, st.logCnt, int64(0)
	if !st.called {
		rescnt++
		fetch--
	}
	if log < fetch || !st.called {
		fetch = fetch + seqLogVals
		log = fetch
	}
	for fetch > 0 {
		if sq.Inc > 0 {
			if (sq.Max >= 0 && next > sq.Max-sq.Inc) || (sq.Max < 0 && next+sq.Inc > sq.Max) {
				if rescnt > 0 {
					break
				}
				if !sq.Cycle {
					return 0, 0, pgerror.Errorf("2200H", "nextval: reached maximum value of sequence %q (%d)", sq.Name, sq.Max)
				}
				next = sq.Min
			} else {
				next += sq.Inc
			}
		} else {
			if (sq.Min < 0 && next < sq.Min-sq.Inc) || (sq.Min >= 0 && next+sq.Inc < sq.Min) {
				if rescnt > 0 {
					break
				}
				if !sq.Cycle {
					return 0, 0, pgerror.Errorf("2200H", "nextval: reached minimum value of sequence %q (%d)", sq.Name, sq.Min)
				}
				next = sq.Max
			} else {
				next += sq.Inc
			}
		}
		fetch--
		if rescnt < sq.Cache {
			log--
			rescnt++
			last = next
			if rescnt == 1 {
				result = next
			}
		}
	}
	log -= fetch
	st = seqState{last: last, called: true, logCnt: log}
	return result, last, writeSeqState(ctx, tx, sq, st, exists)
}

// seqSess is a session's memory of one sequence (PostgreSQL's SeqTableData).
type seqSess struct {
	last, cached int64 // the last value returned, the last one fetched
	valid        bool
	inc          int64
}

func (s *Session) seqMem(key string) *seqSess {
	if s.seqSess == nil {
		s.seqSess = map[string]*seqSess{}
	}
	el := s.seqSess[key]
	if el == nil {
		el = &seqSess{}
		s.seqSess[key] = el
	}
	return el
}

// seqRun runs fn on sq's state: in the session's transaction if it holds
// the row, else in a transaction of its own.
func (s *Session) seqRun(ctx context.Context, sq *catalog.Sequence, fn func(tx *tupled.Tx) error) error {
	if s.tx != nil && s.seqInTx[sq.Key] {
		return fn(s.tx)
	}
	for created := false; ; {
		err := s.eng.db.RunTx(ctx, nil, fn)
		switch {
		case errors.Is(err, tupled.ErrDuplicateKey):
			continue // a concurrent first nextval created the row: take the next
		case errors.Is(err, tupled.ErrNoTable) && !created:
			// the first sequence of a database made before SequenceTable
			if err := s.eng.db.CreateTableIfNotExists(ctx, SequenceTable); err != nil {
				return err
			}
			created = true
			continue
		}
		return err
	}
}

// nextval is nextval(sq) in session s.
func (s *Session) nextval(ctx context.Context, sq *catalog.Sequence) (int64, error) {
	if s.txReadOnly {
		return 0, pgerror.Errorf("25006", "cannot execute nextval() in a read-only transaction")
	}
	el := s.seqMem(sq.Key)
	s.lastSeq = sq.Key
	if el.valid && el.last != el.cached {
		el.last += el.inc
		return el.last, nil
	}
	var result, last int64
	err := s.seqRun(ctx, sq, func(tx *tupled.Tx) error {
		var err error
		result, last, err = fetchSeq(ctx, tx, sq)
		return err
	})
	if err != nil {
		return 0, err
	}
	el.last, el.cached, el.valid, el.inc = result, last, true, sq.Inc
	return result, nil
}

// setval is setval(sq, v, called).
func (s *Session) setval(ctx context.Context, sq *catalog.Sequence, v int64, called bool) error {
	if s.txReadOnly {
		return pgerror.Errorf("25006", "cannot execute setval() in a read-only transaction")
	}
	if v < sq.Min || v > sq.Max {
		return pgerror.Errorf(pgerror.CodeNumericRange, "setval: value %d is out of bounds for sequence %q (%d..%d)", v, sq.Name, sq.Min, sq.Max)
	}
	err := s.seqRun(ctx, sq, func(tx *tupled.Tx) error {
		_, exists, err := lockSeqState(ctx, tx, sq)
		if err != nil {
			return err
		}
		return writeSeqState(ctx, tx, sq, seqState{last: v, called: called}, exists)
	})
	if err != nil {
		return err
	}
	el := s.seqMem(sq.Key)
	el.cached = el.last // the session's cached values are discarded
	if called {
		el.last, el.cached, el.valid = v, v, true
	}
	return nil
}

// readSeqState reads sq's state as SELECT * FROM s does (the newest
// committed, or the session's own transaction's).
func (s *Session) readSeqState(ctx context.Context, sq *catalog.Sequence) (seqState, error) {
	var st seqState
	read := func(tx *tupled.Tx) error {
		v, err := tx.Get(ctx, SequenceTable, []byte(sq.Key))
		found := true
		if errors.Is(err, tupled.ErrNotFound) || errors.Is(err, tupled.ErrNoTable) {
			found, err = false, nil
		}
		if err != nil {
			return err
		}
		st, err = decodeSeqState(sq, v, found)
		return err
	}
	if s.tx != nil && s.seqInTx[sq.Key] {
		return st, read(s.tx)
	}
	tx, err := s.eng.db.Begin(ctx, &tupled.TxOptions{ReadOnly: true})
	if err != nil {
		return st, err
	}
	defer tx.Rollback()
	return st, read(tx)
}

// ---- the functions ----

// seqFuncs are nextval, currval, setval and lastval (catfuncs.go's table).
func seqFuncs(add func(name string, fns ...catFn)) {
	I8, B, A := types.TInt8, types.TBool, tAny
	resolve := func(e *env, v types.Value) (*catalog.Sequence, error) {
		sn := e.s.catalogSnap()
		if v.T == types.TText || v.T == types.TBpchar || v.T == types.TUnknown {
			return e.s.findSequence(v.S)
		}
		r := sn.ByOID[v.I]
		if r == nil {
			return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "could not open relation with OID %d", v.I)
		}
		return e.s.seqOfRel(r)
	}
	add("nextval", catFn{[]types.Type{A}, I8, true, func(e *env, a []types.Value) (types.Value, error) {
		sq, err := resolve(e, a[0])
		if err != nil {
			return types.Value{}, err
		}
		v, err := e.s.nextval(e.ctx, sq)
		return types.Int8(v), err
	}})
	add("currval", catFn{[]types.Type{A}, I8, true, func(e *env, a []types.Value) (types.Value, error) {
		sq, err := resolve(e, a[0])
		if err != nil {
			return types.Value{}, err
		}
		el := e.s.seqSess[sq.Key]
		if el == nil || !el.valid {
			return types.Value{}, pgerror.Errorf(pgerror.CodeObjectNotInState, "currval of sequence %q is not yet defined in this session", sq.Name)
		}
		return types.Int8(el.last), nil
	}})
	add("lastval", catFn{nil, I8, false, func(e *env, _ []types.Value) (types.Value, error) {
		el := e.s.seqSess[e.s.lastSeq]
		if e.s.lastSeq == "" || el == nil || !el.valid || !e.s.seqKeyExists(e.s.lastSeq) {
			return types.Value{}, pgerror.Errorf(pgerror.CodeObjectNotInState, "lastval is not yet defined in this session")
		}
		return types.Int8(el.last), nil
	}})
	setval := func(e *env, a []types.Value) (types.Value, error) {
		sq, err := resolve(e, a[0])
		if err != nil {
			return types.Value{}, err
		}
		called := len(a) < 3 || a[2].I != 0
		return a[1], e.s.setval(e.ctx, sq, a[1].I, called)
	}
	add("setval", catFn{[]types.Type{A, I8}, I8, true, setval}, catFn{[]types.Type{A, I8, B}, I8, true, setval})
}

func (s *Session) seqKeyExists(key string) bool {
	for _, r := range s.catalogSnap().Rels {
		if r.Kind == "S" && r.Seq != nil && r.Seq.Key == key {
			return true
		}
	}
	return false
}

// seqRelation is SELECT * FROM a sequence's relation (catalogRelation).
// Its rows read the state through s, this session (the one that scans it).
func (s *Session) seqRelation(name string) (*syscat.Relation, bool) {
	r := s.catalogSnap().ByName[name]
	if r == nil || r.Kind != "S" || r.Seq == nil || s.lookupTable(name) != nil {
		return nil, false
	}
	sq := r.Seq
	return &syscat.Relation{Cols: syscat.Columns(`last_value:i8 log_cnt:i8 is_called:b`), Rows: func(syscat.Session, *syscat.Snap) [][]types.Value {
		st, err := s.readSeqState(context.Background(), sq)
		if err != nil {
			return nil
		}
		return [][]types.Value{{types.Int8(st.last), types.Int8(st.logCnt), types.Bool(st.called)}}
	}}, true
}

// ---- options ----

// seqOptions are the options of CREATE / ALTER SEQUENCE (and of an
// identity column), as given.
type seqOptions struct {
	typ                          *string
	inc, min, max, start, cache  *int64
	noMin, noMax                 bool
	cycle                        *bool
	restart                      bool
	restartVal                   *int64
	ownedBy                      []string
	ownedNone, ownedSet, nameSet bool
	name                         string
}

func defInt64(d *pg.DefElem) (int64, error) {
	switch {
	case d.Arg.GetInteger() != nil:
		return int64(d.Arg.GetInteger().Ival), nil
	case d.Arg.GetFloat() != nil:
		v, err := strconv.ParseInt(d.Arg.GetFloat().Fval, 10, 64)
		if err != nil {
			return 0, pgerror.Errorf(pgerror.CodeNumericRange, "value \"%s\" is out of range for type bigint", d.Arg.GetFloat().Fval)
		}
		return v, nil
	}
	return 0, pgerror.Errorf(pgerror.CodeSyntax, "%s requires a numeric value", d.Defname)
}

func parseSeqOptions(opts []*pg.Node, identity bool) (*seqOptions, error) {
	o := &seqOptions{}
	seen := map[string]bool{}
	for _, n := range opts {
		d := n.GetDefElem()
		if d == nil {
			return nil, pgerror.NotSupported("sequence option %s is not supported", nodeName(n))
		}
		if seen[d.Defname] {
			return nil, pgerror.Errorf(pgerror.CodeSyntax, "conflicting or redundant options").At(d.Location)
		}
		seen[d.Defname] = true
		num := func() (*int64, error) {
			v, err := defInt64(d)
			return &v, err
		}
		var err error
		switch d.Defname {
		case "as":
			tn := d.Arg.GetTypeName()
			typ, m, terr := typeOfMod(tn)
			name := ""
			switch {
			case terr != nil:
				return nil, terr
			case typ == types.TInt4 && m.Int2:
				name = "smallint"
			case typ == types.TInt4:
				name = "integer"
			case typ == types.TInt8:
				name = "bigint"
			default:
				return nil, pgerror.Errorf(pgerror.CodeInvalidParamValue, "sequence type must be smallint, integer, or bigint")
			}
			o.typ = &name
		case "increment":
			o.inc, err = num()
		case "minvalue":
			if d.Arg == nil {
				o.noMin = true
			} else {
				o.min, err = num()
			}
		case "maxvalue":
			if d.Arg == nil {
				o.noMax = true
			} else {
				o.max, err = num()
			}
		case "start":
			o.start, err = num()
		case "restart":
			o.restart = true
			if d.Arg != nil {
				o.restartVal, err = num()
			}
		case "cache":
			o.cache, err = num()
		case "cycle":
			c := d.Arg.GetBoolean().GetBoolval()
			o.cycle = &c
		case "owned_by":
			if identity {
				return nil, pgerror.NotSupported("OWNED BY in an identity column's sequence options is not supported")
			}
			o.ownedSet = true
			names := strs(d.Arg.GetList().GetItems())
			if len(names) == 1 && strings.EqualFold(names[0], "none") {
				o.ownedNone = true
			} else {
				o.ownedBy = names
			}
		case "sequence_name":
			if !identity {
				return nil, pgerror.Errorf(pgerror.CodeSyntax, "invalid sequence option SEQUENCE NAME")
			}
			names := strs(d.Arg.GetList().GetItems())
			o.nameSet, o.name = true, names[len(names)-1]
		default:
			return nil, pgerror.NotSupported("sequence option %s is not supported", d.Defname)
		}
		if err != nil {
			return nil, err
		}
	}
	return o, nil
}

// applySeqOptions is PostgreSQL's init_params: it applies o to sq (a new
// sequence when create) and reports whether the state restarts, at what.
func applySeqOptions(sq *catalog.Sequence, o *seqOptions, create bool) (restart bool, at int64, err error) {
	resetMax, resetMin := false, false
	if o.typ != nil {
		if !create && *o.typ != sq.Type {
			_, omin, omax := catalog.SeqTypeRange(sq.Type)
			resetMax = sq.Max == omax
			resetMin = sq.Min == omin
		}
		sq.Type = *o.typ
	} else if create {
		sq.Type = "bigint"
	}
	if o.inc != nil {
		if *o.inc == 0 {
			return false, 0, pgerror.Errorf(pgerror.CodeInvalidParamValue, "INCREMENT must not be zero")
		}
		sq.Inc = *o.inc
	} else if create {
		sq.Inc = 1
	}
	if o.cycle != nil {
		sq.Cycle = *o.cycle
	}
	_, tmin, tmax := catalog.SeqTypeRange(sq.Type)
	switch {
	case o.max != nil:
		sq.Max = *o.max
	case create || o.noMax || resetMax:
		sq.Max = tmax
		if sq.Inc < 0 {
			sq.Max = -1
		}
	}
	if sq.Max < tmin || sq.Max > tmax {
		return false, 0, pgerror.Errorf(pgerror.CodeInvalidParamValue, "MAXVALUE (%d) is out of range for sequence data type %s", sq.Max, sq.Type)
	}
	switch {
	case o.min != nil:
		sq.Min = *o.min
	case create || o.noMin || resetMin:
		sq.Min = 1
		if sq.Inc < 0 {
			sq.Min = tmin
		}
	}
	if sq.Min < tmin || sq.Min > tmax {
		return false, 0, pgerror.Errorf(pgerror.CodeInvalidParamValue, "MINVALUE (%d) is out of range for sequence data type %s", sq.Min, sq.Type)
	}
	if sq.Min >= sq.Max {
		return false, 0, pgerror.Errorf(pgerror.CodeInvalidParamValue, "MINVALUE (%d) must be less than MAXVALUE (%d)", sq.Min, sq.Max)
	}
	switch {
	case o.start != nil:
		sq.Start = *o.start
	case create:
		sq.Start = sq.Min
		if sq.Inc < 0 {
			sq.Start = sq.Max
		}
	}
	if sq.Start < sq.Min {
		return false, 0, pgerror.Errorf(pgerror.CodeInvalidParamValue, "START value (%d) cannot be less than MINVALUE (%d)", sq.Start, sq.Min)
	}
	if sq.Start > sq.Max {
		return false, 0, pgerror.Errorf(pgerror.CodeInvalidParamValue, "START value (%d) cannot be greater than MAXVALUE (%d)", sq.Start, sq.Max)
	}
	if o.restart {
		restart, at = true, sq.Start
		if o.restartVal != nil {
			at = *o.restartVal
		}
		if at < sq.Min {
			return false, 0, pgerror.Errorf(pgerror.CodeInvalidParamValue, "RESTART value (%d) cannot be less than MINVALUE (%d)", at, sq.Min)
		}
		if at > sq.Max {
			return false, 0, pgerror.Errorf(pgerror.CodeInvalidParamValue, "RESTART value (%d) cannot be greater than MAXVALUE (%d)", at, sq.Max)
		}
	}
	if o.cache != nil {
		if *o.cache <= 0 {
			return false, 0, pgerror.Errorf(pgerror.CodeInvalidParamValue, "CACHE (%d) must be greater than zero", *o.cache)
		}
		sq.Cache = *o.cache
	} else if create {
		sq.Cache = 1
	}
	return restart, at, nil
}

// ownedBy resolves OWNED BY t.c for sequence sq.
func (s *Session) ownedBy(sq *catalog.Sequence, o *seqOptions) error {
	switch {
	case !o.ownedSet:
		return nil
	case o.ownedNone:
		sq.OwnedTable, sq.OwnedCol = "", ""
		return nil
	}
	names := o.ownedBy
	if len(names) == 3 && names[0] == "public" {
		names = names[1:]
	}
	if len(names) < 2 {
		return pgerror.Errorf(pgerror.CodeSyntax, "invalid OWNED BY option").WithHint("Specify OWNED BY table.column or OWNED BY NONE.")
	}
	if len(names) > 2 {
		return pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", strings.Join(names[:len(names)-1], "."))
	}
	t := s.lookupTable(names[0])
	if t == nil {
		return pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", names[0])
	}
	if t.Col(names[1]) < 0 {
		return pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %q of relation %q does not exist", names[1], names[0])
	}
	sq.OwnedTable, sq.OwnedCol = names[0], names[1]
	return nil
}

func newSeqKey(name string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "seq/" + name + "/" + hex.EncodeToString(b[:])
}

// ---- the statements ----

func (s *Session) planCreateSequence(st *pg.CreateSeqStmt) (*plan, error) {
	rv := st.Sequence
	switch rv.Relpersistence {
	case "t":
		return nil, pgerror.NotSupported("TEMPORARY sequences are not supported")
	case "u":
		return nil, pgerror.NotSupported("UNLOGGED sequences are not supported")
	}
	name, err := relName(rv)
	if err != nil {
		return nil, err
	}
	o, err := parseSeqOptions(st.Options, false)
	if err != nil {
		return nil, err
	}
	sq := &catalog.Sequence{Name: name}
	if _, _, err := applySeqOptions(sq, o, true); err != nil {
		return nil, err
	}
	if o.restart {
		return nil, pgerror.Errorf(pgerror.CodeSyntax, "RESTART must not be used with CREATE SEQUENCE")
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		res := &Result{Tag: "CREATE SEQUENCE"}
		if s.lookupTable(name) != nil || s.lookupSeq(name) != nil || s.catalogSnap().ByName[name] != nil {
			if st.IfNotExists {
				s.notice("NOTICE", pgerror.CodeDuplicateTable, "relation \""+name+"\" already exists, skipping")
				return res, nil
			}
			return nil, pgerror.Errorf(pgerror.CodeDuplicateTable, "relation %q already exists", name)
		}
		nsq := *sq
		if err := s.ownedBy(&nsq, o); err != nil {
			return nil, err
		}
		nsq.Key = newSeqKey(name)
		if err := s.eng.db.CreateTableIfNotExists(ctx, SequenceTable); err != nil {
			return nil, err
		}
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		data, err := json.Marshal(&nsq)
		if err != nil {
			return nil, err
		}
		if err := tx.Insert(ctx, catalog.CatalogTable, seqCatalogKey(name), data); err != nil {
			if errors.Is(err, tupled.ErrDuplicateKey) {
				return nil, pgerror.Errorf(pgerror.CodeDuplicateTable, "relation %q already exists", name)
			}
			return nil, err
		}
		s.setPendingSeq(name, &nsq)
		return res, nil
	}
	return &plan{usesT: true, run: run}, nil
}

func (s *Session) planAlterSequence(st *pg.AlterSeqStmt) (*plan, error) {
	name, err := relName(st.Sequence)
	if err != nil {
		return nil, err
	}
	o, err := parseSeqOptions(st.Options, false)
	if err != nil {
		return nil, err
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		res := &Result{Tag: "ALTER SEQUENCE"}
		r := s.catalogSnap().ByName[name]
		if r == nil {
			if st.MissingOk {
				s.notice("NOTICE", "00000", "relation \""+name+"\" does not exist, skipping")
				return res, nil
			}
			return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", name)
		}
		old, err := s.seqOfRel(r)
		if err != nil {
			return nil, err
		}
		nsq := *old
		restart, at, err := applySeqOptions(&nsq, o, false)
		if err != nil {
			return nil, err
		}
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		if err := s.eng.db.CreateTableIfNotExists(ctx, SequenceTable); err != nil {
			return nil, err
		}
		// the state row is the ALTER's until its transaction ends
		state, exists, err := lockSeqState(ctx, tx, &nsq)
		if err != nil {
			return nil, err
		}
		if s.seqInTx == nil {
			s.seqInTx = map[string]bool{}
		}
		s.seqInTx[nsq.Key] = true
		if restart {
			state = seqState{last: at}
		} else {
			if state.last < nsq.Min {
				return nil, pgerror.Errorf(pgerror.CodeInvalidParamValue, "RESTART value (%d) cannot be less than MINVALUE (%d)", state.last, nsq.Min)
			}
			if state.last > nsq.Max {
				return nil, pgerror.Errorf(pgerror.CodeInvalidParamValue, "RESTART value (%d) cannot be greater than MAXVALUE (%d)", state.last, nsq.Max)
			}
			state.logCnt = 0
		}
		if err := writeSeqState(ctx, tx, &nsq, state, exists); err != nil {
			return nil, err
		}
		if el := s.seqSess[nsq.Key]; el != nil {
			el.cached = el.last // cached values are discarded
		}
		if r.Seq.OwnedCol != "" && s.lookupSeq(name) == nil {
			// a column's own sequence: its definition is the column's
			if o.ownedSet {
				return nil, pgerror.NotSupported("ALTER SEQUENCE ... OWNED BY of a column's own sequence is not supported")
			}
			t := s.lookupTable(r.Seq.OwnedTable)
			nt := *t
			nt.Cols = append([]catalog.Column(nil), t.Cols...)
			c := &nt.Cols[nt.Col(r.Seq.OwnedCol)]
			c.Seq = colSeqDef(t, *c, nsq)
			if err := s.saveTable(ctx, tx, &nt); err != nil {
				return nil, err
			}
			return res, nil
		}
		if err := s.ownedBy(&nsq, o); err != nil {
			return nil, err
		}
		return res, s.saveSequence(ctx, tx, name, &nsq)
	}
	return &plan{usesT: true, run: run}, nil
}

// saveSequence writes standalone sequence name's new definition sq in tx.
func (s *Session) saveSequence(ctx context.Context, tx *tupled.Tx, name string, sq *catalog.Sequence) error {
	data, err := json.Marshal(sq)
	if err != nil {
		return err
	}
	if err := tx.Update(ctx, catalog.CatalogTable, seqCatalogKey(name), data); err != nil {
		return err
	}
	s.setPendingSeq(name, sq)
	return nil
}

// colSeqDef is sq as column c of t keeps its own sequence's definition
// (Column.Seq): without its state key and owner, which are the column's,
// and without its name when that is the default one.
func colSeqDef(t *catalog.Table, c catalog.Column, sq catalog.Sequence) *catalog.Sequence {
	sq.Key, sq.OwnedTable, sq.OwnedCol = "", "", ""
	if sq.Name == catalog.SeqName(t, c) {
		sq.Name = ""
	}
	return &sq
}

// nextvalRef matches a DEFAULT that calls nextval of a sequence (the
// deparsed text: nextval('name')).
var nextvalRef = regexp.MustCompile(`nextval\('((?:[^']|'')*)'`)

// seqDependents lists the columns whose DEFAULT calls nextval of name.
func (s *Session) seqDependents(name string) [][2]string {
	var out [][2]string
	for _, t := range s.catalogSnap().Tables {
		for _, c := range t.Cols {
			for _, m := range nextvalRef.FindAllStringSubmatch(c.Default, -1) {
				parts := syscat.SplitQualified(strings.ReplaceAll(m[1], "''", "'"))
				if p := parts[len(parts)-1]; p == name && (len(parts) == 1 || parts[0] == "public") {
					out = append(out, [2]string{t.Name, c.Name})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0]+"."+out[i][1] < out[j][0]+"."+out[j][1] })
	return out
}

func (s *Session) planDropSequence(st *pg.DropStmt) (*plan, error) {
	if st.Concurrent {
		return nil, pgerror.NotSupported("DROP ... CONCURRENTLY is not supported")
	}
	var names []string
	for _, o := range st.Objects {
		parts := strs(o.GetList().GetItems())
		switch {
		case len(parts) == 1:
		case len(parts) == 2 && parts[0] == "public":
		default:
			return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "sequence %q does not exist", strings.Join(parts, "."))
		}
		names = append(names, parts[len(parts)-1])
	}
	cascade := st.Behavior == pg.DropBehavior_DROP_CASCADE
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			sq := s.lookupSeq(name)
			if sq == nil {
				if r := s.catalogSnap().ByName[name]; r != nil && r.Kind == "S" {
					return nil, &pgerror.Error{Code: "2BP01", Message: "cannot drop sequence " + name + " because other objects depend on it",
						Detail: "default value for column " + r.Seq.OwnedCol + " of table " + r.Seq.OwnedTable + " depends on sequence " + name,
						Hint:   "Use DROP ... CASCADE to drop the dependent objects too."}
				}
				if r := s.catalogSnap().ByName[name]; r != nil {
					return nil, pgerror.Errorf(pgerror.CodeWrongObjectType, "%q is not a sequence", name).WithHint("Use DROP " + map[string]string{"r": "TABLE", "i": "INDEX"}[r.Kind] + " to remove a " + map[string]string{"r": "table", "i": "index"}[r.Kind] + ".")
				}
				if st.MissingOk {
					s.notice("NOTICE", "00000", "sequence \""+name+"\" does not exist, skipping")
					continue
				}
				return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "sequence %q does not exist", name)
			}
			if err := s.dropSequence(ctx, tx, sq, cascade); err != nil {
				return nil, err
			}
		}
		return &Result{Tag: "DROP SEQUENCE"}, nil
	}
	return &plan{usesT: true, run: run}, nil
}

// dropSequence drops standalone sequence sq in tx: its catalog entry and
// its state; with cascade the defaults that call it too (else 2BP01).
func (s *Session) dropSequence(ctx context.Context, tx *tupled.Tx, sq *catalog.Sequence, cascade bool) error {
	deps := s.seqDependents(sq.Name)
	if len(deps) > 0 && !cascade {
		return &pgerror.Error{Code: "2BP01", Message: "cannot drop sequence " + sq.Name + " because other objects depend on it",
			Detail: "default value for column " + deps[0][1] + " of table " + deps[0][0] + " depends on sequence " + sq.Name,
			Hint:   "Use DROP ... CASCADE to drop the dependent objects too."}
	}
	for _, d := range deps {
		s.notice("NOTICE", "00000", "drop cascades to default value for column "+d[1]+" of table "+d[0])
		t := s.lookupTable(d[0])
		nt := *t
		nt.Cols = append([]catalog.Column(nil), t.Cols...)
		nt.Cols[nt.Col(d[1])].Default = ""
		if err := s.saveTable(ctx, tx, &nt); err != nil {
			return err
		}
	}
	if err := tx.Delete(ctx, catalog.CatalogTable, seqCatalogKey(sq.Name)); err != nil {
		if errors.Is(err, tupled.ErrNotFound) {
			return pgerror.Errorf(pgerror.CodeUndefinedTable, "sequence %q does not exist", sq.Name)
		}
		return err
	}
	err := tx.Delete(ctx, SequenceTable, []byte(sq.Key))
	if err != nil && !errors.Is(err, tupled.ErrNotFound) && !errors.Is(err, tupled.ErrNoTable) {
		return err
	}
	s.setPendingSeq(sq.Name, nil)
	return nil
}

// dropOwnedSequences drops the standalone sequences OWNED BY a column of
// table name (its DROP TABLE's transaction).
func (s *Session) dropOwnedSequences(ctx context.Context, tx *tupled.Tx, name string) error {
	for _, r := range s.catalogSnap().Rels {
		if r.Kind == "S" && r.Seq != nil && r.Seq.OwnedTable == name && s.lookupSeq(r.Name) != nil {
			if err := s.dropSequence(ctx, tx, s.lookupSeq(r.Name), true); err != nil {
				return err
			}
		}
	}
	return nil
}

// ownedSequences are the sequences owned by t's columns: its serial and
// identity columns' and the standalone ones OWNED BY them.
func (s *Session) ownedSequences(t *catalog.Table) []*catalog.Sequence {
	var out []*catalog.Sequence
	for _, r := range s.catalogSnap().Rels {
		if r.Kind == "S" && r.Seq != nil && r.Seq.OwnedTable == t.Name {
			out = append(out, r.Seq)
		}
	}
	return out
}

// hasSeqCall reports whether st calls nextval or setval (which change
// state, so must run once per row).
func hasSeqCall(st *pg.SelectStmt) bool {
	found := false
	walkNodes(&pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: st}}, func(n *pg.Node) bool { // check.go
		if f := n.GetFuncCall(); f != nil {
			names := strs(f.Funcname)
			found = names[len(names)-1] == "nextval" || names[len(names)-1] == "setval"
		}
		return !found
	})
	return found
}
