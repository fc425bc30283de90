package eval

import (
	"strings"

	"github.com/tupled/tupled/sql/types"
)

// The functions and operators of one-dimensional arrays (types/array.go
// holds the values); sqlfe's arrayfuncs.go resolves their arguments.

// ArrayDim is array_length(a, dim), array_upper or array_lower of a
// one-dimensional array: of(its length) for dim 1, NULL for another
// dimension or an empty array.
func ArrayDim(v []types.Value, of func(int) int) (types.Value, error) {
	els, err := types.ArrayElems(v[0])
	if err != nil || v[1].I != 1 || len(els) == 0 {
		return types.Null(types.TInt4), err
	}
	return types.Int4(int32(of(len(els)))), nil
}

// Cardinality is cardinality(a): the number of elements.
func Cardinality(v []types.Value) (types.Value, error) {
	els, err := types.ArrayElems(v[0])
	return types.Int4(int32(len(els))), err
}

// ArrayToString is array_to_string(a, sep [, null]): the non-NULL
// elements' text joined by sep, NULLs as null when given. A text a is read
// as a text[]'s literal (the catalog's arrays psql reads). Not strict.
func ArrayToString(v []types.Value) (types.Value, error) {
	if v[0].Null || v[1].Null {
		return types.Null(types.TText), nil
	}
	var els []types.Value
	var err error
	if types.IsArray(v[0].T) {
		els, err = types.ArrayElems(v[0])
	} else {
		els, err = types.ArrayElems(types.Value{T: types.TTextArray, S: v[0].S})
	}
	if err != nil {
		return types.Value{}, err
	}
	var out []string
	for _, e := range els {
		switch {
		case !e.Null:
			out = append(out, e.String())
		case len(v) > 2 && !v[2].Null:
			out = append(out, v[2].S)
		}
	}
	return types.Text(strings.Join(out, v[1].S)), nil
}

// StringToArray is string_to_array(s, sep [, null]): s split at each sep
// (a NULL sep: into characters, an empty one: s whole), the pieces equal to
// null made NULL; an empty s gives an empty array. Not strict.
func StringToArray(v []types.Value) (types.Value, error) {
	if v[0].Null {
		return types.Null(types.TTextArray), nil
	}
	var parts []string
	switch {
	case v[0].S == "":
	case v[1].Null:
		for _, r := range v[0].S {
			parts = append(parts, string(r))
		}
	case v[1].S == "":
		parts = []string{v[0].S}
	default:
		parts = strings.Split(v[0].S, v[1].S)
	}
	els := make([]types.Value, len(parts))
	for i, p := range parts {
		els[i] = types.Text(p)
		if len(v) > 2 && !v[2].Null && p == v[2].S {
			els[i] = types.Null(types.TText)
		}
	}
	return types.MakeArray(types.TTextArray, els)
}

// ArrayCompare is a @> b (contains), a <@ b (is contained by) and a && b
// (overlaps) of arrays, comparing the elements as sets, a NULL element
// equal to nothing.
func ArrayCompare(op string, v []types.Value) (types.Value, error) {
	if v[0].Null || v[1].Null {
		return types.Null(types.TBool), nil
	}
	x, err := types.ArrayElems(v[0])
	if err != nil {
		return types.Value{}, err
	}
	y, err := types.ArrayElems(v[1])
	if err != nil {
		return types.Value{}, err
	}
	switch op {
	case "@>":
		return types.Bool(containsAll(x, y)), nil
	case "<@":
		return types.Bool(containsAll(y, x)), nil
	}
	for _, e := range x {
		if !e.Null && containsAll(y, []types.Value{e}) {
			return types.Bool(true), nil
		}
	}
	return types.Bool(false), nil
}

// ArrayConcat is l || r (array_cat, array_append, array_prepend) of
// result type t, isArr saying which of v are arrays (the others
// elements): NULL arrays add nothing, both NULL is NULL.
func ArrayConcat(v []types.Value, t types.Type, isArr []bool) (types.Value, error) {
	if isArr[0] && isArr[1] && v[0].Null && v[1].Null {
		return types.Null(t), nil
	}
	var els []types.Value
	for i, x := range v {
		switch {
		case isArr[i] && x.Null:
		case isArr[i]:
			xs, err := types.ArrayElems(x)
			if err != nil {
				return types.Value{}, err
			}
			els = append(els, xs...)
		default:
			if !x.Null && x.T != types.ElemType(t) {
				var err error
				if x, err = types.Cast(x, types.ElemType(t)); err != nil {
					return types.Value{}, err
				}
			}
			els = append(els, x)
		}
	}
	return types.MakeArray(t, els)
}

// ArrayPosition is array_position(a, e): the subscript of e's first
// occurrence (IS NOT DISTINCT FROM: NULL finds a NULL), NULL if none.
func ArrayPosition(v []types.Value) (types.Value, error) {
	if v[0].Null {
		return types.Null(types.TInt4), nil
	}
	els, err := types.ArrayElems(v[0])
	if err != nil {
		return types.Value{}, err
	}
	for i, x := range els {
		if x.Null && v[1].Null || !x.Null && !v[1].Null && types.Compare(x, v[1]) == 0 {
			return types.Int4(int32(i + 1)), nil
		}
	}
	return types.Null(types.TInt4), nil
}

// ArrayRemove is array_remove(a, e) of type t: a without the elements
// equal to e (IS NOT DISTINCT FROM).
func ArrayRemove(v []types.Value, t types.Type) (types.Value, error) {
	if v[0].Null {
		return types.Null(t), nil
	}
	els, err := types.ArrayElems(v[0])
	if err != nil {
		return types.Value{}, err
	}
	keep := els[:0]
	for _, x := range els {
		if !(x.Null && v[1].Null || !x.Null && !v[1].Null && types.Compare(x, v[1]) == 0) {
			keep = append(keep, x)
		}
	}
	return types.MakeArray(t, keep)
}

// containsAll reports whether every element of y equals one of x (a NULL
// element equals nothing).
func containsAll(x, y []types.Value) bool {
	for _, b := range y {
		found := false
		for _, a := range x {
			if !a.Null && !b.Null && types.Compare(a, b) == 0 {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
