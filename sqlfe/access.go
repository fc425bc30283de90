package sqlfe

import (
	"bytes"
	"math"
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/types"
)

// access is how a WHERE clause restricts the primary key: a list of points
// (key = x, key IN (...)) or a range (key >/>=/</<= x, BETWEEN). The whole
// WHERE is still evaluated on every row; access only narrows what is read.
type access struct {
	points         []expr // non-nil: point lookups
	lo, hi         expr
	loIncl, hiIncl bool
	exact          bool // WHERE is exactly the points condition: a row found by key qualifies
	// composite: a composite key's access (compositekey.go): eq are the
	// values of its leading columns, lo/hi bound the next one.
	composite bool
	eq        []expr
}

func conjuncts(x expr) []expr {
	if b, ok := x.(*boolExpr); ok && b.op == pg.BoolExprType_AND_EXPR {
		var out []expr
		for _, a := range b.args {
			out = append(out, conjuncts(a)...)
		}
		return out
	}
	return []expr{x}
}

func isKey(x expr, key int) bool {
	c, ok := x.(*colExpr)
	return ok && c.idx == key
}

// keyComparable reports whether a value of type ot, compared with a key
// column of type kt, can be encoded as a key of kt to find the rows it
// equals: an integer of either width for an integer key (a numeric or a
// float never is: 1.5 equals no key, and 1.0's encoding is not 1's), the
// key's own type for the types whose key is not their text (a date against
// a timestamp key compares as midnight, which the filter does); other
// pairs are the compiler's, which coerced the value to the key's type.
func keyComparable(kt, ot types.Type) bool {
	switch {
	case types.IsInt(kt):
		return types.IsInt(ot)
	case types.IsDateTime(kt) || types.IsFloat(kt) || kt == types.TNumeric || kt == types.TInterval:
		return ot == kt
	}
	return ot != types.TNumeric && !types.IsFloat(ot)
}

func allKeyComparable(kt types.Type, xs []expr) bool {
	for _, x := range xs {
		if !keyComparable(kt, x.typ()) {
			return false
		}
	}
	return true
}

var flipOp = map[string]string{"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

func analyzeAccess(where expr, key int, kt types.Type) access {
	var a access
	if where == nil {
		return a
	}
	cs := conjuncts(where)
	used := 0
	for _, c := range cs {
		switch x := c.(type) {
		case *inExpr:
			if !x.not && a.points == nil && isKey(x.l, key) && !usesRow(&boolExpr{args: x.list}) && allKeyComparable(kt, x.list) {
				a.points = x.list
				used++
			}
		case *cmpExpr:
			op, other := x.op, x.r
			if !isKey(x.l, key) {
				if !isKey(x.r, key) {
					continue
				}
				op, other = flipOp[x.op], x.l
			}
			if op == "" || usesRow(other) || !keyComparable(kt, other.typ()) {
				continue
			}
			switch op {
			case "=":
				if a.points == nil {
					a.points = []expr{other}
					used++
				}
			case ">", ">=":
				if a.lo == nil {
					a.lo, a.loIncl = other, op == ">="
				}
			case "<", "<=":
				if a.hi == nil {
					a.hi, a.hiIncl = other, op == "<="
				}
			}
		}
	}
	if a.points != nil {
		a.lo, a.hi = nil, nil
		a.exact = used == 1 && len(cs) == 1
	}
	return a
}

// keyBytes encodes v as a key of t, of type kt; ok is false when v cannot
// equal any key of that type (NULL, or out of an int4 key's range).
func keyBytes(v types.Value, t *catalog.Table, kt types.Type) ([]byte, bool) {
	if v.Null {
		return nil, false
	}
	if kt == types.TInt4 && (v.I < math.MinInt32 || v.I > math.MaxInt32) {
		return nil, false
	}
	v.T = kt
	return catalog.AppendKey(nil, t, v), true
}

// bounds evaluates the access for one execution: the sorted, distinct point
// keys, or the scan range [start, end); empty when nothing can qualify.
func (a *access) bounds(e *env, t *catalog.Table) (points [][]byte, start, end []byte, empty bool, err error) {
	if a.composite {
		return a.compositeBounds(e, t)
	}
	kt := t.Cols[t.Key].Type
	if a.points != nil {
		for _, x := range a.points {
			v, err := x.eval(e)
			if err != nil {
				return nil, nil, nil, false, err
			}
			if k, ok := keyBytes(v, t, kt); ok {
				points = append(points, k)
			}
		}
		sort.Slice(points, func(i, j int) bool { return bytes.Compare(points[i], points[j]) < 0 })
		out := points[:0]
		for i, p := range points {
			if i == 0 || !bytes.Equal(p, points[i-1]) {
				out = append(out, p)
			}
		}
		return out, nil, nil, len(out) == 0, nil
	}
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
			start = catalog.AppendKey(nil, t, v)
			if !a.loIncl {
				start = append(start, 0)
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
			end = catalog.AppendKey(nil, t, v)
			if a.hiIncl {
				end = append(end, 0)
			}
		}
	}
	if start != nil && end != nil && bytes.Compare(start, end) >= 0 {
		return nil, nil, nil, true, nil
	}
	return nil, start, end, false, nil
}
