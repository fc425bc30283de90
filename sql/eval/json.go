package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// json and jsonb's operators' and functions' bodies over the node tree
// of sql/types' json.go (which holds the types, their I/O and their
// order); sqlfe's jsonfuncs.go resolves them and builds a whole row's
// value.

// JSONOp is one of json's binary operators of non-NULL a (json or jsonb)
// and b, of result type t: -> and ->> (b an object's key, or an array's
// index, negative from the end), #> and #>> (b a path as a text-array
// literal), and jsonb's @>, <@ and ? (a key, an array's string element).
func JSONOp(op string, a, b types.Value, t types.Type) (types.Value, error) {
	x := types.MustJSON(a)
	var m *types.JSONNode
	switch op {
	case "@>", "<@":
		y := types.MustJSON(b)
		if op == "<@" {
			x, y = y, x
		}
		return types.Bool(types.JSONContains(x, y, true)), nil
	case "?":
		return types.Bool(x.HasKey(b.S)), nil
	case "->", "->>":
		m = x.Field(b.S, b.I, types.IsInt(b.T))
	default: // #> #>>
		steps, err := types.ParsePathLiteral(b.S)
		if err != nil {
			return types.Value{}, err
		}
		m = x.Path(steps)
	}
	if m == nil {
		return types.Null(t), nil
	}
	if t == types.TText {
		return types.JSONText(m, a.T), nil
	}
	return types.JSONOut(m, a.T), nil
}

// ToJSON is to_json and to_jsonb (t) of a non-NULL value.
func ToJSON(a []types.Value, t types.Type) (types.Value, error) {
	if types.IsArray(a[0].T) { // a JSON array of the elements
		return types.Cast(types.Value{T: types.TJSON, S: JSONDatumText(a[0])}, t)
	}
	n := types.ToJSONNode(a[0])
	if t == types.TJSON && types.IsJSON(a[0].T) {
		return types.Value{T: types.TJSON, S: a[0].S}, nil
	}
	return types.JSONOut(n, t), nil
}

// BuildObject is json[b]_build_object(k, v, ...) (t): 22023 for a NULL key.
func BuildObject(a []types.Value, t types.Type) (types.Value, error) {
	for i := 0; i < len(a); i += 2 {
		if a[i].Null {
			return types.Value{}, &pgerror.Error{Code: pgerror.CodeInvalidParamValue, Message: fmt.Sprintf("argument %d: key must not be null", i+1)}
		}
	}
	return JSONObjectOf(t, a, false)
}

// JSONTypeof is json[b]_typeof of a non-NULL json or jsonb.
func JSONTypeof(a []types.Value) (types.Value, error) {
	names := map[byte]string{'o': "object", 'a': "array", 's': "string", 'n': "number", 't': "boolean", 'f': "boolean", 'z': "null"}
	return types.Text(names[types.MustJSON(a[0]).Kind]), nil
}

// JSONBSet is jsonb_set(target, path text[], new_value, create_if_missing),
// as PostgreSQL's setPath with JB_PATH_CREATE or JB_PATH_REPLACE: the path's
// last step replaces (or, creating, adds) an object's key or an array's
// element (a negative index counts from the end; past either end,
// creating prepends or appends); a step that finds nothing leaves target
// as it is.
func JSONBSet(a []types.Value) (types.Value, error) {
	target := types.MustJSON(a[0])
	if target.Kind != 'o' && target.Kind != 'a' {
		return types.Value{}, pgerror.Errorf(pgerror.CodeInvalidParamValue, "cannot set path in scalar")
	}
	path, err := types.ParsePathLiteral(a[1].S)
	if err != nil {
		return types.Value{}, err
	}
	if len(path) == 0 {
		return a[0], nil
	}
	out, err := jsonbSetPath(target, path, 0, types.MustJSON(a[2]), a[3].I != 0)
	if err != nil {
		return types.Value{}, err
	}
	return types.Value{T: types.TJSONB, S: out.JSONBText()}, nil
}

// JSONObjectOf is the json (or jsonb) object of kv's key, value pairs
// (keys not NULL), as json_build_object and json_object_agg make it:
// json keeps every pair as given ("k" : v, PostgreSQL's spacing; the
// aggregate's braces padded with a space), jsonb normalises (the last of
// a duplicate key wins, keys in jsonb's order).
func JSONObjectOf(t types.Type, kv []types.Value, pad bool) (types.Value, error) {
	n := &types.JSONNode{Kind: 'o'}
	var b strings.Builder
	b.WriteByte('{')
	if pad {
		b.WriteByte(' ')
	}
	for i := 0; i < len(kv); i += 2 {
		k := types.TextOut(kv[i])
		v := types.ToJSONNode(kv[i+1])
		n.Keys, n.Elems = append(n.Keys, k), append(n.Elems, v)
		if i > 0 {
			b.WriteString(", ")
		}
		types.WriteJSONString(&b, k)
		b.WriteString(" : ")
		if types.IsJSON(kv[i+1].T) && !kv[i+1].Null {
			b.WriteString(kv[i+1].S)
		} else {
			b.WriteString(v.Raw)
		}
	}
	if pad {
		b.WriteByte(' ')
	}
	b.WriteByte('}')
	if t == types.TJSON {
		return types.Value{T: types.TJSON, S: b.String()}, nil
	}
	n.Normalise()
	return types.Value{T: types.TJSONB, S: n.JSONBText()}, nil
}

// JSONDatumText is datum_to_json's text of v: json verbatim, numbers and
// booleans bare, an array a JSON array of its elements, the rest JSON
// strings.
func JSONDatumText(v types.Value) string {
	if types.IsArray(v.T) && !v.Null {
		els, err := types.ArrayElems(v)
		if err != nil {
			return "null" // a held array's text always parses
		}
		var b strings.Builder
		b.WriteByte('[')
		for i, e := range els {
			if i > 0 {
				b.WriteByte(',')
			}
			if e.Null {
				b.WriteString("null")
				continue
			}
			b.WriteString(JSONDatumText(e))
		}
		b.WriteByte(']')
		return b.String()
	}
	if v.T == types.TJSON && !v.Null {
		return v.S
	}
	return types.ToJSONNode(v).Raw
}

// JSONBDatumText is to_jsonb's text of v.
func JSONBDatumText(v types.Value) (string, error) {
	switch {
	case v.Null:
		return "null", nil
	case v.T == types.TJSONB:
		return v.S, nil
	case v.T == types.TJSON || types.IsArray(v.T):
		j, err := types.Cast(types.Value{T: types.TJSON, S: JSONDatumText(v)}, types.TJSONB)
		return j.S, err
	}
	return types.ToJSONNode(v).JSONBText(), nil
}

// JSONAggStep adds v to json[b]_agg's array text in b: composite
// (a whole row) values after the first get PostgreSQL's "\n " too.
func JSONAggStep(b *strings.Builder, t types.Type, v types.Value, composite bool) error {
	if b.Len() == 0 {
		b.WriteByte('[')
	} else if t == types.TJSON {
		b.WriteString(", ")
		if composite && !v.Null {
			b.WriteString("\n ")
		}
	} else {
		b.WriteString(", ")
	}
	if t == types.TJSON {
		if v.Null {
			b.WriteString("null")
		} else {
			b.WriteString(JSONDatumText(v))
		}
		return nil
	}
	s, err := JSONBDatumText(v)
	b.WriteString(s)
	return err
}

// jsonbSetPath is setPath over a copy of n at path[level:].
func jsonbSetPath(n *types.JSONNode, path []string, level int, nv *types.JSONNode, create bool) (*types.JSONNode, error) {
	last := level == len(path)-1
	step := path[level]
	switch n.Kind {
	case 'o':
		cp := &types.JSONNode{Kind: 'o', Keys: append([]string(nil), n.Keys...), Elems: append([]*types.JSONNode(nil), n.Elems...)}
		for i, k := range cp.Keys {
			if k != step {
				continue
			}
			if last {
				cp.Elems[i] = nv
				return cp, nil
			}
			sub, err := jsonbSetPath(cp.Elems[i], path, level+1, nv, create)
			if err != nil {
				return nil, err
			}
			cp.Elems[i] = sub
			return cp, nil
		}
		if last && create {
			cp.Keys, cp.Elems = append(cp.Keys, step), append(cp.Elems, nv)
			cp.Normalise()
		}
		return cp, nil
	case 'a':
		idx, err := strconv.ParseInt(step, 10, 32)
		if err != nil {
			return nil, pgerror.Errorf(pgerror.CodeInvalidText, "path element at position %d is not an integer: %q", level+1, step)
		}
		cnt := int64(len(n.Elems))
		prepend := false
		if idx < 0 {
			if -idx > cnt {
				prepend = true
			} else {
				idx += cnt
			}
		}
		if idx > cnt {
			idx = cnt
		}
		elems := append([]*types.JSONNode(nil), n.Elems...)
		switch {
		case (prepend || cnt == 0) && last && create:
			elems = append([]*types.JSONNode{nv}, elems...)
		case !prepend && idx < cnt:
			if last {
				elems[idx] = nv
			} else {
				sub, err := jsonbSetPath(elems[idx], path, level+1, nv, create)
				if err != nil {
					return nil, err
				}
				elems[idx] = sub
			}
		case last && create && !prepend:
			elems = append(elems, nv)
		}
		return &types.JSONNode{Kind: 'a', Elems: elems}, nil
	}
	return n, nil
}
