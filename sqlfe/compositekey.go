package sqlfe

import (
	"bytes"
	"math"
	"strings"

	"github.com/tupled/tupled/sql/types"

	"github.com/tupled/tupled/sql/pgerror"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tupled/tupled/keys"
)

// Composite primary keys.
//
// A table's primary key is the columns Table.KeyCols, in key order, when it
// has more than one; Table.Key is then the first of them, so that code
// asking only "is there a key" or "which type leads the key" keeps working.
// A one-column key has no KeyCols (its catalog entry is what it was before
// composite keys existed), and every helper here treats it as the list
// {Key}.
//
// The engine key of a row is the package keys tuple of its key columns'
// values, in order (rowKey): the engine's byte order is PostgreSQL's btree
// order on (a, b, …), the engine's primary-key uniqueness (waiting for an
// in-progress inserter of the same key, ErrDuplicateKey after its commit)
// is PostgreSQL's on the whole tuple, and the tuple of the first m columns
// is a byte prefix of exactly the keys that begin with those m values, so
// WHERE a = 1 reads one prefix range (analyzeKeyAccess). Composite keys
// exist only in keyFormatTuple; the raw format of older tables has none.
//
// The row value (encodeRow) leaves out every key column; when a key column
// is a bpchar without a length, the trailing spaces its key encoding drops
// follow the columns, one count per such key column in key order (for a
// one-column key, the single count it always had).

// keyCols returns the columns of t's primary key in key order (nil for a
// table without columns).
func (t *Table) keyCols() []int {
	if len(t.KeyCols) > 0 {
		return t.KeyCols
	}
	if t.Key < 0 {
		return nil
	}
	return []int{t.Key}
}

// isKeyCol reports whether column i is one of t's primary-key columns.
func (t *Table) isKeyCol(i int) bool {
	if len(t.KeyCols) == 0 {
		return i == t.Key
	}
	for _, k := range t.KeyCols {
		if k == i {
			return true
		}
	}
	return false
}

// nKeyCols is the number of t's primary-key columns.
func (t *Table) nKeyCols() int {
	if len(t.KeyCols) > 0 {
		return len(t.KeyCols)
	}
	if t.Key < 0 {
		return 0
	}
	return 1
}

// composite reports whether t's primary key has more than one column.
func (t *Table) composite() bool { return len(t.KeyCols) > 1 }

// pkeyName is the name of t's primary-key constraint: the one given by
// CONSTRAINT name PRIMARY KEY, else PostgreSQL's default, t_pkey.
func (t *Table) pkeyName() string {
	if t.PKeyName != "" {
		return t.PKeyName
	}
	return t.Name + "_pkey"
}

// rowKey appends the engine key of row (whose key columns are not NULL).
func rowKey(dst []byte, t *Table, row []types.Value) []byte {
	if len(t.KeyCols) == 0 {
		return appendKey(dst, t, row[t.Key])
	}
	for _, c := range t.KeyCols {
		dst = appendKey(dst, t, row[c])
	}
	return dst
}

// decodeRowKey is rowKey's inverse: it stores the key columns' values
// decoded from engine key b into dst.
func decodeRowKey(t *Table, b []byte, dst []types.Value) error {
	if len(t.KeyCols) == 0 {
		v, err := decodeKey(t, b)
		if err != nil {
			return err
		}
		dst[t.Key] = v
		return nil
	}
	r := keys.NewReader(b)
	for _, c := range t.KeyCols {
		v, err := readKeyElem(r, t.Cols[c])
		if err != nil {
			return err
		}
		dst[c] = v
	}
	if !r.Done() {
		return errCorrupt
	}
	return nil
}

// keyString renders engine key b of t for pg_locks and pgrowlocks: the
// value of a one-column key, (v1,v2,…) for a composite one, as PostgreSQL
// writes a row.
func keyString(t *Table, b []byte) (string, error) {
	if len(t.KeyCols) == 0 {
		v, err := decodeKey(t, b)
		return v.String(), err
	}
	row := make([]types.Value, len(t.Cols))
	if err := decodeRowKey(t, b, row); err != nil {
		return "", err
	}
	var sb strings.Builder
	sb.WriteByte('(')
	for i, c := range t.KeyCols {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(row[c].String())
	}
	sb.WriteByte(')')
	return sb.String(), nil
}

// keyColNames and keyColValues are the key columns' names and row's values
// of them, for DETAIL: Key (a, b)=(1, 2) already exists.
func keyColNames(t *Table) string {
	var names []string
	for _, c := range t.keyCols() {
		names = append(names, t.Cols[c].Name)
	}
	return strings.Join(names, ", ")
}

func keyColValues(t *Table, row []types.Value) string {
	var vals []string
	for _, c := range t.keyCols() {
		vals = append(vals, row[c].String())
	}
	return strings.Join(vals, ", ")
}

// unpaddedKeyCols are t's key columns of type bpchar without a length, in
// key order: their trailing spaces are not implied by the key and live in
// the row value.
func unpaddedKeyCols(t *Table) []int {
	if len(t.KeyCols) == 0 {
		if c := t.Cols[t.Key]; c.Type == types.TBpchar && c.MaxLen == 0 {
			return []int{t.Key}
		}
		return nil // (no allocation for a row of the common table)
	}
	var out []int
	for _, c := range t.KeyCols {
		if col := t.Cols[c]; col.Type == types.TBpchar && col.MaxLen == 0 {
			out = append(out, c)
		}
	}
	return out
}

// pkeyByCols reports whether an ON CONFLICT inference specification names
// exactly the columns of t's primary key (in any order, as PostgreSQL's
// infer_arbiter_indexes compares attribute sets).
func pkeyByCols(t *Table, elems []*pg.Node) bool {
	if t.hiddenKey() || len(elems) == 0 {
		return false
	}
	want := map[int]bool{}
	for _, n := range elems {
		e := n.GetIndexElem()
		if e == nil || e.Name == "" {
			return false
		}
		c := t.col(e.Name)
		if c < 0 || !t.isKeyCol(c) {
			return false
		}
		want[c] = true
	}
	return len(want) == len(t.keyCols())
}

// keyOrder reports whether sorting by sorts is reading t in key order
// (natural) or in reverse key order (reverse): the sorts are the leading
// key columns, all ascending or all descending (key columns are never
// NULL, so NULLS FIRST/LAST does not matter).
func keyOrder(t *Table, sorts []sortKey) (natural, reverse bool) {
	kc := t.keyCols()
	if len(sorts) == 0 || len(sorts) > len(kc) {
		return false, false
	}
	for i, s := range sorts {
		if !isKey(s.x, kc[i]) || s.desc != sorts[0].desc {
			return false, false
		}
	}
	return !sorts[0].desc, sorts[0].desc
}

// analyzeKeyAccess is analyzeAccess for t's primary key: for a composite
// key, equalities on its leading columns (a = 1 AND b = 2 …), then at most
// one range on the next column. All key columns equal: one point; fewer: a
// range within the prefix of the equal ones.
func analyzeKeyAccess(where expr, t *Table) access {
	if !t.composite() {
		return analyzeAccess(where, t.Key)
	}
	a := access{composite: true}
	if where == nil {
		return a
	}
	cs := conjuncts(where)
	for _, k := range t.KeyCols {
		sub := analyzeAccess(where, k)
		if len(sub.points) == 1 {
			a.eq = append(a.eq, sub.points[0])
			continue
		}
		// the next key column: a range on it, if any, narrows the prefix
		a.lo, a.loIncl, a.hi, a.hiIncl = sub.lo, sub.loIncl, sub.hi, sub.hiIncl
		break
	}
	if len(a.eq) == len(t.KeyCols) {
		a.points = []expr{nil} // one point, built from eq (compositeBounds)
		a.lo, a.hi = nil, nil
		a.exact = len(cs) == len(t.KeyCols)
	}
	return a
}

// compositeBounds is bounds for a composite key's access.
func (a *access) compositeBounds(e *env, t *Table) (points [][]byte, start, end []byte, empty bool, err error) {
	var prefix []byte
	for i, x := range a.eq {
		v, err := x.eval(e)
		if err != nil {
			return nil, nil, nil, false, err
		}
		kb, ok := keyBytes(v, t, t.Cols[t.KeyCols[i]].Type)
		if !ok {
			return nil, nil, nil, true, nil
		}
		prefix = append(prefix, kb...)
	}
	if a.points != nil {
		return [][]byte{prefix}, nil, nil, false, nil
	}
	// Every key extending prefix is prefix followed by an element, whose
	// first byte (its type code) is below 0xFF: prefix+0xFF is past them
	// all and before every greater key that does not extend prefix.
	after := func(p []byte) []byte { return append(p[:len(p):len(p)], 0xFF) }
	if len(prefix) > 0 {
		start, end = prefix, after(prefix)
	}
	kt := t.Cols[t.KeyCols[len(a.eq)]].Type
	if a.lo != nil {
		v, err := a.lo.eval(e)
		if err != nil {
			return nil, nil, nil, false, err
		}
		switch {
		case v.Null, kt == types.TInt4 && v.I > math.MaxInt32:
			return nil, nil, nil, true, nil
		case kt == types.TInt4 && v.I < math.MinInt32:
		default:
			v.T = kt
			start = appendKey(bytes.Clone(prefix), t, v)
			if !a.loIncl {
				start = after(start)
			}
		}
	}
	if a.hi != nil {
		v, err := a.hi.eval(e)
		if err != nil {
			return nil, nil, nil, false, err
		}
		switch {
		case v.Null, kt == types.TInt4 && v.I < math.MinInt32:
			return nil, nil, nil, true, nil
		case kt == types.TInt4 && v.I > math.MaxInt32:
		default:
			v.T = kt
			end = appendKey(bytes.Clone(prefix), t, v)
			if a.hiIncl {
				end = after(end)
			}
		}
	}
	if start != nil && end != nil && bytes.Compare(start, end) >= 0 {
		return nil, nil, nil, true, nil
	}
	return nil, start, end, false, nil
}

// hasPkey reports whether t has a declared primary key (not the hidden
// rowid), whose constraint name is a relation name in PostgreSQL.
func (t *Table) hasPkey() bool { return t != nil && t.Key >= 0 && !t.hiddenKey() }

// pkeyNamed reports whether a table the session sees has a primary key
// called name: PostgreSQL's primary-key index is a relation, so no other
// relation, index or constraint index may take its name (42P07).
func (s *Session) pkeyNamed(name string) bool {
	s.eng.cat.mu.RLock()
	defer s.eng.cat.mu.RUnlock()
	for n, t := range s.eng.cat.tables {
		if p, ok := s.pending[n]; ok {
			t = p
		}
		if t.hasPkey() && t.pkeyName() == name {
			return true
		}
	}
	for _, t := range s.pending {
		if t.hasPkey() && t.pkeyName() == name {
			return true
		}
	}
	return false
}

// claimPkeyName checks, for CREATE TABLE of t, that its primary key's name
// is no relation's yet (42P07, as PostgreSQL's index creation says) and
// marks it taken for the table's UNIQUE constraints.
func (s *Session) claimPkeyName(t *Table, taken map[string]bool) error {
	if !t.hasPkey() {
		return nil
	}
	name := t.pkeyName()
	if s.indexNameTaken(name) {
		return pgerror.Errorf(pgerror.CodeDuplicateTable, "relation %q already exists", name)
	}
	taken[name] = true
	return nil
}
