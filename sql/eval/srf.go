package eval

import (
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// The set-returning functions' rows: sqlfe's srf.go and series.go
// resolve the calls and run them, in FROM and in the select list.

// MaxSeriesRows bounds what one call of a set-returning function may
// return: its rows are made in memory (PostgreSQL streams them).
const MaxSeriesRows = 1 << 20

// ErrSeriesRows is the bound's error.
func ErrSeriesRows(name string) error {
	return pgerror.NotSupported("%s of more than %d rows is not supported", name, MaxSeriesRows)
}

// IntSeries is generate_series(start, stop [, step]) of integers of type
// t: 22023 for a zero step.
func IntSeries(vs []types.Value, t types.Type) ([]types.Value, error) {
	start, stop, step := vs[0].I, vs[1].I, int64(1)
	if len(vs) == 3 {
		step = vs[2].I
	}
	if step == 0 {
		return nil, pgerror.Errorf(pgerror.CodeInvalidParamValue, "step size cannot equal zero")
	}
	var out []types.Value
	for i := start; (step > 0 && i <= stop) || (step < 0 && i >= stop); i += step {
		if len(out) == MaxSeriesRows {
			return nil, ErrSeriesRows("generate_series")
		}
		out = append(out, types.Value{T: t, I: i})
		if (step > 0 && i > stop-step) || (step < 0 && i < stop-step) {
			break // the next step would pass stop (or overflow)
		}
	}
	return out, nil
}

// TimestampSeries is generate_series(start, stop, step interval) of
// timestamps of type t (timestamp or timestamptz): each value is the one
// before plus step, so a month step from January 31 gives February 29,
// then March 29.
func TimestampSeries(vs []types.Value, t types.Type) ([]types.Value, error) {
	from, to, iv := types.Instant(vs[0]), types.Instant(vs[1]), types.IntervalOf(vs[2])
	sign := types.CompareIntervals(iv, types.Interval{})
	if sign == 0 {
		return nil, pgerror.Errorf(pgerror.CodeInvalidParamValue, "step size cannot equal zero")
	}
	var out []types.Value
	for cur := from; (sign > 0 && !cur.After(to)) || (sign < 0 && !cur.Before(to)); cur = types.AddIntervalToTime(cur, iv) {
		if len(out) == MaxSeriesRows {
			return nil, ErrSeriesRows("generate_series")
		}
		v, err := TimestampResult(cur, t)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// RegexpMatches is regexp_matches(string, pattern [, flags]): a text[]
// per match (RegexpMatchArray), the first one only without flag g.
func RegexpMatches(vs []types.Value) ([]types.Value, error) {
	re, global, err := regexpOf(vs, 3)
	if err != nil {
		return nil, err
	}
	n := 1
	if global {
		n = -1
	}
	var out []types.Value
	for _, m := range re.FindAllStringSubmatchIndex(vs[0].S, n) {
		v, err := RegexpMatchArray(re, vs[0].S, m)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// JSONArrayElements is json[b]_array_elements (asText: ..._text) of n, a
// t's tree: an array's elements, in order.
func JSONArrayElements(n *types.JSONNode, t types.Type, asText bool) ([]types.Value, error) {
	switch n.Kind {
	case 'a':
	case 'o':
		return nil, pgerror.Errorf(pgerror.CodeInvalidParamValue, "cannot extract elements from an object")
	default:
		return nil, pgerror.Errorf(pgerror.CodeInvalidParamValue, "cannot extract elements from a scalar")
	}
	out := make([]types.Value, len(n.Elems))
	for i, el := range n.Elems {
		if asText {
			out[i] = types.JSONText(el, t)
		} else {
			out[i] = types.JSONOut(el, t)
		}
	}
	return out, nil
}

// JSONObjectKeys is json[b]_object_keys (name) of n: an object's keys
// (jsonb's in its order, json's as written, duplicates too).
func JSONObjectKeys(n *types.JSONNode, name string) ([]types.Value, error) {
	switch n.Kind {
	case 'o':
	case 'a':
		return nil, pgerror.Errorf(pgerror.CodeInvalidParamValue, "cannot call %s on an array", name)
	default:
		return nil, pgerror.Errorf(pgerror.CodeInvalidParamValue, "cannot call %s on a scalar", name)
	}
	out := make([]types.Value, len(n.Keys))
	for i, k := range n.Keys {
		out[i] = types.Text(k)
	}
	return out, nil
}
