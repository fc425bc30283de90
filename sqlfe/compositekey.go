package sqlfe

import (
	"bytes"
	"math"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// Composite primary keys.
//
// A table's primary key is the columns Table.KeyCols, in key order, when it
// has more than one; Table.Key is then the first of them, so that code
// asking only "is there a key" or "which type leads the key" keeps working.
// A one-column key has no KeyCols (its catalog entry is what it was before
// composite keys existed), and the Table helpers of sql/catalog
// (KeyColumns, IsKeyCol, NKeyCols) treat it as the list {Key}.
//
// The engine key of a row is the package keys tuple of its key columns'
// values, in order (catalog.RowKey): the engine's byte order is
// PostgreSQL's btree order on (a, b, …), the engine's primary-key
// uniqueness (waiting for an in-progress inserter of the same key,
// ErrDuplicateKey after its commit) is PostgreSQL's on the whole tuple,
// and the tuple of the first m columns is a byte prefix of exactly the
// keys that begin with those m values, so WHERE a = 1 reads one prefix
// range (analyzeKeyAccess). Composite keys exist only in
// catalog.KeyFormatTuple; the raw format of older tables has none.
//
// The row value (catalog.EncodeRow) leaves out every key column; when a
// key column is a bpchar without a length, the trailing spaces its key
// encoding drops follow the columns, one count per such key column in key
// order (for a one-column key, the single count it always had).

// keyString renders engine key b of t for pg_locks and pgrowlocks: the
// value of a one-column key, (v1,v2,…) for a composite one, as PostgreSQL
// writes a row.
func keyString(t *catalog.Table, b []byte) (string, error) {
	if len(t.KeyCols) == 0 {
		v, err := catalog.DecodeKey(t, b)
		return v.String(), err
	}
	row := make([]types.Value, len(t.Cols))
	if err := catalog.DecodeRowKey(t, b, row); err != nil {
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
func keyColNames(t *catalog.Table) string {
	var names []string
	for _, c := range t.KeyColumns() {
		names = append(names, t.Cols[c].Name)
	}
	return strings.Join(names, ", ")
}

func keyColValues(t *catalog.Table, row []types.Value) string {
	var vals []string
	for _, c := range t.KeyColumns() {
		vals = append(vals, row[c].String())
	}
	return strings.Join(vals, ", ")
}

// pkeyByCols reports whether an ON CONFLICT inference specification names
// exactly the columns of t's primary key (in any order, as PostgreSQL's
// infer_arbiter_indexes compares attribute sets).
func pkeyByCols(t *catalog.Table, elems []*pg.Node) bool {
	if t.HiddenKey() || len(elems) == 0 {
		return false
	}
	want := map[int]bool{}
	for _, n := range elems {
		e := n.GetIndexElem()
		if e == nil || e.Name == "" {
			return false
		}
		c := t.Col(e.Name)
		if c < 0 || !t.IsKeyCol(c) {
			return false
		}
		want[c] = true
	}
	return len(want) == len(t.KeyColumns())
}

// keyOrder reports whether sorting by sorts is reading t in key order
// (natural) or in reverse key order (reverse): the sorts are the leading
// key columns, all ascending or all descending (key columns are never
// NULL, so NULLS FIRST/LAST does not matter).
func keyOrder(t *catalog.Table, sorts []sortKey) (natural, reverse bool) {
	kc := t.KeyColumns()
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
func analyzeKeyAccess(where expr, t *catalog.Table) access {
	if !t.Composite() {
		return analyzeAccess(where, t.Key, t.Cols[t.Key].Type)
	}
	a := access{composite: true}
	if where == nil {
		return a
	}
	cs := conjuncts(where)
	for _, k := range t.KeyCols {
		sub := analyzeAccess(where, k, t.Cols[k].Type)
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
func (a *access) compositeBounds(e *env, t *catalog.Table) (points [][]byte, start, end []byte, empty bool, err error) {
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
			start = catalog.AppendKey(bytes.Clone(prefix), t, v)
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
			end = catalog.AppendKey(bytes.Clone(prefix), t, v)
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

// pkeyNamed reports whether a table the session sees has a primary key
// called name: PostgreSQL's primary-key index is a relation, so no other
// relation, index or constraint index may take its name (42P07).
func (s *Session) pkeyNamed(name string) bool {
	found := false
	s.eng.cat.Range(func(n string, t *catalog.Table) bool {
		if p, ok := s.pending[n]; ok {
			t = p
		}
		if t.HasPKey() && t.PrimaryKeyName() == name {
			found = true
			return false
		}
		return true
	})
	if found {
		return true
	}
	for _, t := range s.pending {
		if t.HasPKey() && t.PrimaryKeyName() == name {
			return true
		}
	}
	return false
}

// claimPkeyName checks, for CREATE TABLE of t, that its primary key's name
// is no relation's yet (42P07, as PostgreSQL's index creation says) and
// marks it taken for the table's UNIQUE constraints.
func (s *Session) claimPkeyName(t *catalog.Table, taken map[string]bool) error {
	if !t.HasPKey() {
		return nil
	}
	name := t.PrimaryKeyName()
	if s.relNameTaken(t, name) {
		return pgerror.Errorf(pgerror.CodeDuplicateTable, "relation %q already exists", name)
	}
	taken[name] = true
	return nil
}
