package sqlfe

import (
	"math"
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// The ordered-set aggregates (agg.go's WITHIN GROUP calls), as
// PostgreSQL's orderedsetaggs.c: percentile_cont(fraction) and
// percentile_disc(fraction) WITHIN GROUP (ORDER BY x), and mode() WITHIN
// GROUP (ORDER BY x). The accumulator keeps the group's rows (as an
// aggregate with an ORDER BY inside does); result sorts them, leaves out
// the NULL values of x and picks. The fraction is a direct argument,
// evaluated once per group: one that reads the row is 0A000 (PostgreSQL
// allows the group's own columns there).

// orderedSetSpec checks and types an ordered-set aggregate call.
func orderedSetSpec(sp *aggSpec, f *pg.FuncCall, noSuch func() error) error {
	if len(sp.order) != 1 {
		return noSuch()
	}
	wantArgs := 1
	if sp.name == "mode" {
		wantArgs = 0
	}
	if len(sp.args) != wantArgs {
		return noSuch()
	}
	ot := sp.order[0].x.typ()
	if types.IsArray(ot) || ot == types.TVoid {
		return noSuch()
	}
	if wantArgs == 1 {
		at := sp.args[0].typ()
		if !types.IsNumber(at) && !types.IsFloat(at) {
			return noSuch()
		}
		if usesRow(sp.args[0]) {
			return pgerror.NotSupported("a direct argument of %s that reads the row is not supported", sp.name).At(f.Location)
		}
		if at != types.TFloat8 {
			sp.args[0] = &castExpr{arg: sp.args[0], t: types.TFloat8}
		}
	}
	sp.t = ot
	if sp.name == "percentile_cont" {
		if ot == types.TInterval {
			return pgerror.NotSupported("percentile_cont over interval is not supported").At(f.Location)
		}
		if !types.IsNumber(ot) && !types.IsFloat(ot) {
			return noSuch()
		}
		if ot != types.TFloat8 {
			sp.order[0].x = &castExpr{arg: sp.order[0].x, t: types.TFloat8}
		}
		sp.t = types.TFloat8
	}
	return nil
}

// evalDirect evaluates an ordered-set aggregate's direct arguments for
// its group (they read no row).
func (ac *accumulator) evalDirect(e *env) error {
	if !ac.sp.within || ac.direct != nil {
		return nil
	}
	ac.direct = make([]types.Value, len(ac.sp.args))
	for i, x := range ac.sp.args {
		v, err := x.eval(e)
		if err != nil {
			return err
		}
		ac.direct[i] = v
	}
	return nil
}

// orderedSetResult is an ordered-set aggregate's value for the group.
func (ac *accumulator) orderedSetResult() (types.Value, error) {
	sp := ac.sp
	var p float64
	if sp.name != "mode" {
		if ac.direct[0].Null {
			return types.Null(sp.t), nil
		}
		p = types.FloatOf(ac.direct[0])
		if p < 0 || p > 1 || math.IsNaN(p) {
			return types.Value{}, pgerror.Errorf(pgerror.CodeNumericRange, "percentile value %s is not between 0 and 1", types.FloatValue(p, types.TFloat8).S)
		}
	}
	n := len(sp.args)
	var vals []types.Value
	for _, r := range ac.rows {
		if !r[n].Null {
			vals = append(vals, r[n])
		}
	}
	if len(vals) == 0 {
		return types.Null(sp.t), nil
	}
	o := sp.order[0]
	sort.SliceStable(vals, func(i, j int) bool {
		d := types.Compare(vals[i], vals[j])
		if o.desc {
			return d > 0
		}
		return d < 0
	})
	switch sp.name {
	case "percentile_disc":
		row := int(math.Ceil(p * float64(len(vals))))
		return vals[max(row, 1)-1], nil
	case "percentile_cont":
		pos := p * float64(len(vals)-1)
		lo, hi := int(math.Floor(pos)), int(math.Ceil(pos))
		a := types.FloatOf(vals[lo])
		if lo == hi {
			return types.FloatValue(a, types.TFloat8), nil
		}
		b := types.FloatOf(vals[hi])
		return types.FloatValue(a+(b-a)*(pos-float64(lo)), types.TFloat8), nil
	}
	// mode: the value of the longest run, the first in order on a tie
	best, bestN, run := 0, 0, 0
	for i := range vals {
		if i > 0 && types.Compare(vals[i], vals[i-1]) == 0 {
			run++
		} else {
			run = 1
		}
		if run > bestN {
			best, bestN = i, run
		}
	}
	return vals[best], nil
}
