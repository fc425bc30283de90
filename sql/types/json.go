package types

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tupled/tupled/sql/pgerror"
)

// json and jsonb.
//
// A json value is held in S verbatim, as PostgreSQL keeps it (checked by
// encoding/json's Valid on the way in). A jsonb value is held in S in the
// form PostgreSQL prints it: object keys ordered by length, then bytes,
// a duplicate key's last value kept, numbers as numeric prints them, and
// the spacing {"a": 1, "b": [1, 2]}. Operators parse S into a JSONNode tree
// each time (values are small; nothing is cached). Neither can be a key:
// json has no btree order, and jsonb's order (PostgreSQL's compareJsonb:
// a container's size before its contents) is not its text's. On the wire
// in binary: json is its text, jsonb a version byte (1) and its text.
//
// The operators and functions over the JSONNode tree are sqlfe's
// (jsonfuncs.go).

const (
	OIDJSON  = 114
	OIDJSONB = 3802
)

// IsJSON reports whether t is json or jsonb.
func IsJSON(t Type) bool { return t == TJSON || t == TJSONB }

func init() {
	ExtTypes[TJSON] = &extType{Name: "json", Typname: "json", OID: OIDJSON, Size: -1,
		parse: func(s string) (Value, error) {
			if _, err := parseJSON(s, "json"); err != nil {
				return Value{}, err
			}
			return Value{T: TJSON, S: s}, nil
		},
		appendBin: func(dst []byte, v Value) []byte { return append(dst, v.S...) },
		parseBin: func(b []byte) (Value, error) {
			if err := CheckEncoding(string(b)); err != nil {
				return Value{}, err
			}
			return ParseText(TJSON, string(b))
		},
	}
	ExtTypes[TJSONB] = &extType{Name: "jsonb", Typname: "jsonb", OID: OIDJSONB, Size: -1,
		parse:     parseJSONB,
		appendBin: func(dst []byte, v Value) []byte { return append(append(dst, 1), v.S...) },
		parseBin: func(b []byte) (Value, error) {
			if len(b) == 0 || b[0] != 1 {
				return Value{}, pgerror.Errorf(pgerror.CodeInvalidBinary, "unsupported jsonb version number")
			}
			if err := CheckEncoding(string(b[1:])); err != nil {
				return Value{}, err
			}
			return parseJSONB(string(b[1:]))
		},
	}
}

// JSONNode is a parsed JSON value.
type JSONNode struct {
	Kind  byte   // 'o' object, 'a' array, 's' string, 'n' number, 't' true, 'f' false, 'z' null
	Raw   string // the input's text of it (json's -> returns it verbatim)
	str   string // a string's value; a number's text (numeric's, in jsonb)
	Keys  []string
	Elems []*JSONNode // an object's values (beside keys), an array's elements
}

func parseJSONB(s string) (Value, error) {
	n, err := parseJSON(s, "jsonb")
	if err != nil {
		return Value{}, err
	}
	return Value{T: TJSONB, S: n.JSONBText()}, nil
}

// parseJSON parses s (for typeName's input: its error names it); for
// jsonb, objects are normalised and numbers are numeric's text.
func parseJSON(s, typeName string) (*JSONNode, error) {
	if !json.Valid([]byte(s)) {
		return nil, pgerror.Errorf(pgerror.CodeInvalidText, "invalid input syntax for type %s", typeName)
	}
	p := &jparser{s: s, JSONBText: typeName == "jsonb"}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	return n, nil
}

// jparser reads JSON that encoding/json has already found valid.
type jparser struct {
	s         string
	i         int
	JSONBText bool
}

func (p *jparser) ws() {
	for p.i < len(p.s) && strings.IndexByte(" \t\n\r", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *jparser) value() (*JSONNode, error) {
	p.ws()
	start := p.i
	n := &JSONNode{}
	switch c := p.s[p.i]; {
	case c == '{' || c == '[':
		n.Kind = 'o'
		if c == '[' {
			n.Kind = 'a'
		}
		p.i++
		for {
			p.ws()
			if p.s[p.i] == '}' || p.s[p.i] == ']' {
				p.i++
				break
			}
			if p.s[p.i] == ',' {
				p.i++
				continue
			}
			if n.Kind == 'o' {
				k, err := p.value()
				if err != nil {
					return nil, err
				}
				p.ws()
				p.i++ // ':'
				n.Keys = append(n.Keys, k.str)
			}
			e, err := p.value()
			if err != nil {
				return nil, err
			}
			n.Elems = append(n.Elems, e)
		}
		if n.Kind == 'o' && p.JSONBText {
			n.Normalise()
		}
	case c == '"':
		p.i++
		for p.s[p.i] != '"' {
			if p.s[p.i] == '\\' {
				p.i++
			}
			p.i++
		}
		p.i++
		n.Kind = 's'
		if err := json.Unmarshal([]byte(p.s[start:p.i]), &n.str); err != nil {
			return nil, pgerror.Errorf(pgerror.CodeInvalidText, "invalid input syntax for type json")
		}
		if p.JSONBText && strings.Contains(p.s[start:p.i], `\u0000`) {
			return nil, &pgerror.Error{Code: "22P05", Message: "unsupported Unicode escape sequence",
				Detail: `\u0000 cannot be converted to text.`}
		}
	case c == 't' || c == 'f' || c == 'n':
		n.Kind = map[byte]byte{'t': 't', 'f': 'f', 'n': 'z'}[c]
		p.i += map[byte]int{'t': 4, 'f': 5, 'n': 4}[c]
	default:
		for p.i < len(p.s) && strings.IndexByte("+-0123456789.eE", p.s[p.i]) >= 0 {
			p.i++
		}
		n.Kind, n.str = 'n', p.s[start:p.i]
		if p.JSONBText {
			d, err := ParseNumeric(n.str)
			if err != nil {
				return nil, err
			}
			n.str = d.Value().S
		}
	}
	n.Raw = p.s[start:p.i]
	return n, nil
}

// Normalise orders an object's keys as jsonb keeps them (shorter first,
// then by bytes), the last of duplicate keys winning.
func (n *JSONNode) Normalise() {
	last := map[string]int{}
	for i, k := range n.Keys {
		last[k] = i
	}
	var idx []int
	for i, k := range n.Keys {
		if last[k] == i {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool {
		ka, kb := n.Keys[idx[a]], n.Keys[idx[b]]
		if len(ka) != len(kb) {
			return len(ka) < len(kb)
		}
		return ka < kb
	})
	keys, elems := make([]string, len(idx)), make([]*JSONNode, len(idx))
	for j, i := range idx {
		keys[j], elems[j] = n.Keys[i], n.Elems[i]
	}
	n.Keys, n.Elems = keys, elems
}

// JSONBText renders n as jsonb prints it.
func (n *JSONNode) JSONBText() string {
	var b strings.Builder
	n.write(&b)
	return b.String()
}

func (n *JSONNode) write(b *strings.Builder) {
	switch n.Kind {
	case 'o':
		b.WriteByte('{')
		for i, k := range n.Keys {
			if i > 0 {
				b.WriteString(", ")
			}
			WriteJSONString(b, k)
			b.WriteString(": ")
			n.Elems[i].write(b)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, e := range n.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			e.write(b)
		}
		b.WriteByte(']')
	case 's':
		WriteJSONString(b, n.str)
	case 'n':
		b.WriteString(n.str)
	case 't':
		b.WriteString("true")
	case 'f':
		b.WriteString("false")
	default:
		b.WriteString("null")
	}
}

// WriteJSONString quotes s as PostgreSQL's escape_json does.
func WriteJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// MustJSON parses a stored json or jsonb value (valid on the way in).
func MustJSON(v Value) *JSONNode {
	n, err := parseJSON(v.S, v.T.String())
	if err != nil {
		return &JSONNode{Kind: 'z', Raw: "null"}
	}
	return n
}

// JSONOut is n as a value of t: jsonb's text, or json's verbatim span.
func JSONOut(n *JSONNode, t Type) Value {
	if t == TJSONB {
		return Value{T: TJSONB, S: n.JSONBText()}
	}
	return Value{T: TJSON, S: n.Raw}
}

// JSONText is ->>'s text of n: a string's value, NULL for null, else its
// JSON text.
func JSONText(n *JSONNode, t Type) Value {
	switch n.Kind {
	case 's':
		return Text(n.str)
	case 'z':
		return Null(TText)
	}
	return Text(JSONOut(n, t).S)
}

func castJSON(v Value, t Type) (Value, error) {
	if t == TJSON {
		return Value{T: TJSON, S: v.S}, nil
	}
	return parseJSONB(v.S)
}

// JSONBCompare is PostgreSQL's jsonb order: between kinds null < string <
// number < boolean < array < object (a top-level scalar below any array);
// containers by their size first, then element by element (an object's
// keys in their stored order, each before its value).
func JSONBCompare(a, b Value) int {
	x, y := MustJSON(a), MustJSON(b)
	sx, sy := x.Kind != 'a' && x.Kind != 'o', y.Kind != 'a' && y.Kind != 'o'
	switch {
	case sx && y.Kind == 'a':
		return -1
	case sy && x.Kind == 'a':
		return 1
	}
	return jnodeCmp(x, y)
}

func jrank(n *JSONNode) int {
	k := n.Kind
	if k == 'f' {
		k = 't'
	}
	return strings.IndexByte("zsntao", k)
}

func jnodeCmp(x, y *JSONNode) int {
	if rx, ry := jrank(x), jrank(y); rx != ry {
		return rx - ry
	}
	switch x.Kind {
	case 's':
		return strings.Compare(x.str, y.str)
	case 'n':
		return numericCmp(Value{T: TNumeric, S: x.str}, Value{T: TNumeric, S: y.str})
	case 't', 'f':
		return int(b2i(x.Kind == 't') - b2i(y.Kind == 't'))
	case 'a', 'o':
		if len(x.Elems) != len(y.Elems) {
			return len(x.Elems) - len(y.Elems)
		}
		for i := range x.Elems {
			if x.Kind == 'o' {
				if c := strings.Compare(x.Keys[i], y.Keys[i]); c != 0 {
					return c
				}
			}
			if c := jnodeCmp(x.Elems[i], y.Elems[i]); c != 0 {
				return c
			}
		}
	}
	return 0
}

// Field is n's member at key (object) or index (array: negative counts
// from the end), nil when it has none.
func (n *JSONNode) Field(key string, idx int64, byIndex bool) *JSONNode {
	switch {
	case byIndex && n.Kind == 'a':
		if idx < 0 {
			idx += int64(len(n.Elems))
		}
		if idx >= 0 && idx < int64(len(n.Elems)) {
			return n.Elems[idx]
		}
	case !byIndex && n.Kind == 'o':
		for i := len(n.Keys) - 1; i >= 0; i-- { // json: the last of duplicates, as PostgreSQL's
			if n.Keys[i] == key {
				return n.Elems[i]
			}
		}
	}
	return nil
}

// Path follows #>'s path from n. A json object's duplicate keys are all
// followed, the last that leads to a value winning, as PostgreSQL's
// get_path does.
func (n *JSONNode) Path(steps []string) *JSONNode {
	if len(steps) == 0 || n == nil {
		return n
	}
	s := steps[0]
	switch n.Kind {
	case 'a':
		i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil
		}
		return n.Field("", i, true).Path(steps[1:])
	case 'o':
		var found *JSONNode
		for i, k := range n.Keys {
			if k == s {
				if m := n.Elems[i].Path(steps[1:]); m != nil {
					found = m
				}
			}
		}
		return found
	}
	return nil
}

// JSONContains is jsonb's @>: every member of y is in x (an array's elements
// anywhere in x's array; a top-level array contains a scalar it has).
func JSONContains(x, y *JSONNode, top bool) bool {
	if x.Kind == 'a' && y.Kind != 'a' && y.Kind != 'o' && top {
		for _, e := range x.Elems {
			if jnodeCmp(e, y) == 0 {
				return true
			}
		}
		return false
	}
	if jrank(x) != jrank(y) {
		return false
	}
	switch x.Kind {
	case 'o':
		for i, k := range y.Keys {
			m := x.Field(k, 0, false)
			if m == nil || !JSONContains(m, y.Elems[i], false) {
				return false
			}
		}
		return true
	case 'a':
		for _, want := range y.Elems {
			found := false
			for _, e := range x.Elems {
				if (want.Kind == 'a' || want.Kind == 'o') && JSONContains(e, want, false) || jnodeCmp(e, want) == 0 {
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
	return jnodeCmp(x, y) == 0
}

// HasKey is jsonb's ?: an object's key, an array's string element, or a
// string scalar equal to k.
func (n *JSONNode) HasKey(k string) bool {
	switch n.Kind {
	case 'o':
		return n.Field(k, 0, false) != nil
	case 'a':
		for _, e := range n.Elems {
			if e.Kind == 's' && e.str == k {
				return true
			}
		}
	case 's':
		return n.str == k
	}
	return false
}

// ParsePathLiteral reads a text-array literal ({a,b,"c d"}) as #>'s path.
func ParsePathLiteral(s string) ([]string, error) {
	t := strings.TrimSpace(s)
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return nil, &pgerror.Error{Code: pgerror.CodeInvalidText, Message: fmt.Sprintf("malformed array literal: %q", s)}
	}
	inner := strings.TrimSpace(t[1 : len(t)-1])
	if inner == "" {
		return nil, nil
	}
	var out []string
	for _, part := range strings.Split(inner, ",") {
		part = strings.TrimSpace(part)
		if len(part) >= 2 && part[0] == '"' && part[len(part)-1] == '"' {
			part = part[1 : len(part)-1]
		}
		out = append(out, part)
	}
	return out, nil
}

// ToJSONNode is to_jsonb's conversion of a SQL value.
func ToJSONNode(v Value) *JSONNode {
	switch {
	case v.Null:
		return &JSONNode{Kind: 'z', Raw: "null"}
	case IsJSON(v.T):
		return MustJSON(v)
	case IsNumber(v.T) || IsFloat(v.T):
		s := v.String()
		if _, err := ParseNumeric(s); err != nil { // NaN, Infinity: strings
			return &JSONNode{Kind: 's', str: s, Raw: strconv.Quote(s)}
		}
		return &JSONNode{Kind: 'n', str: s, Raw: s}
	case v.T == TBool:
		if v.I != 0 {
			return &JSONNode{Kind: 't', Raw: "true"}
		}
		return &JSONNode{Kind: 'f', Raw: "false"}
	}
	s := TextOut(v)
	switch v.T { // ISO 8601, as PostgreSQL's JSON writes date/times
	case TTimestamp:
		s = strings.Replace(s, " ", "T", 1)
	case TTimestamptz:
		s = strings.Replace(s, " ", "T", 1)
		if i := len(s) - 3; i > 0 && (s[i] == '+' || s[i] == '-') {
			s += ":00"
		}
	}
	var b strings.Builder
	WriteJSONString(&b, s)
	return &JSONNode{Kind: 's', str: s, Raw: b.String()}
}
