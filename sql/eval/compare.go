package eval

import "github.com/tupled/tupled/sql/types"

// Comparisons: of two values by an operator's name, and of rows (row
// constructors compared pair by pair, as PostgreSQL's RowCompareExpr).

// CmpOp is whether d (types.Compare's -1, 0 or 1) satisfies op: =, <>, <,
// <=, > or >=.
func CmpOp(op string, d int) bool {
	switch op {
	case "=":
		return d == 0
	case "<>":
		return d != 0
	case "<":
		return d < 0
	case "<=":
		return d <= 0
	case ">":
		return d > 0
	case ">=":
		return d >= 0
	}
	return false
}

// RowCmp is a row comparison's progress, pair by pair: = and <> decided
// by the first unequal pair (NULL if none and a pair had a NULL), the
// others by the first unequal or NULL pair.
type RowCmp struct {
	decided, ok, null bool
	sawNull           bool
}

// CompareRows compares two rows of values of the same arity by op, as
// RowCmp: ok, or NULL (null).
func CompareRows(op string, a, b []types.Value) (ok, null bool) {
	var st RowCmp
	for i := range a {
		if st.Pair(op, a[i], b[i]) {
			break
		}
	}
	return st.Result(op)
}

// Pair takes the next pair of values; it reports whether the comparison
// is decided (the pairs after it do not matter).
func (st *RowCmp) Pair(op string, a, b types.Value) bool {
	if a.Null || b.Null {
		if op != "=" && op != "<>" {
			st.decided, st.null = true, true
			return true
		}
		st.sawNull = true
		return false
	}
	d := types.Compare(a, b)
	switch {
	case d == 0:
		return false
	case op == "=":
		st.ok = false
	case op == "<>":
		st.ok = true
	default:
		st.ok = CmpOp(op, d)
	}
	st.decided = true
	return true
}

// Result is the comparison's value: ok, or NULL (null).
func (st *RowCmp) Result(op string) (ok, null bool) {
	switch {
	case st.decided:
		return st.ok, st.null
	case st.sawNull:
		return false, true
	}
	return CmpOp(op, 0), false
}
