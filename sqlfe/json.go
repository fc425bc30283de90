package sqlfe

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tupled/tupled/sql/pgerror"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// json and jsonb.
//
// A json value is held in S verbatim, as PostgreSQL keeps it (checked by
// encoding/json's Valid on the way in). A jsonb value is held in S in the
// form PostgreSQL prints it: object keys ordered by length, then bytes,
// a duplicate key's last value kept, numbers as numeric prints them, and
// the spacing {"a": 1, "b": [1, 2]}. Operators parse S into a jnode tree
// each time (values are small; nothing is cached). Neither can be a key:
// json has no btree order, and jsonb's order (PostgreSQL's compareJsonb:
// a container's size before its contents) is not its text's. On the wire
// in binary: json is its text, jsonb a version byte (1) and its text.
//
// Operators: -> and ->> (an object's key, an array's index, negative from
// the end), #> and #>> (a path given as a text-array literal), and for
// jsonb @>, <@ and ? (a key, an array's string element). Functions:
// json[b]_build_object, to_json[b], json[b]_typeof.

const (
	OIDJSON  = 114
	OIDJSONB = 3802
)

func isJSON(t Type) bool { return t == TJSON || t == TJSONB }

func init() {
	extTypes[TJSON] = &extType{name: "json", typname: "json", oid: OIDJSON, size: -1,
		parse: func(s string) (Value, error) {
			if _, err := parseJSON(s, "json"); err != nil {
				return Value{}, err
			}
			return Value{T: TJSON, S: s}, nil
		},
		appendBin: func(dst []byte, v Value) []byte { return append(dst, v.S...) },
		parseBin: func(b []byte) (Value, error) {
			if err := checkEncoding(string(b)); err != nil {
				return Value{}, err
			}
			return ParseText(TJSON, string(b))
		},
	}
	extTypes[TJSONB] = &extType{name: "jsonb", typname: "jsonb", oid: OIDJSONB, size: -1,
		parse:     parseJSONB,
		appendBin: func(dst []byte, v Value) []byte { return append(append(dst, 1), v.S...) },
		parseBin: func(b []byte) (Value, error) {
			if len(b) == 0 || b[0] != 1 {
				return Value{}, pgerror.Errorf(pgerror.CodeInvalidBinary, "unsupported jsonb version number")
			}
			if err := checkEncoding(string(b[1:])); err != nil {
				return Value{}, err
			}
			return parseJSONB(string(b[1:]))
		},
	}
}

func init() {
	polyFuncs["jsonb_build_object"] = buildObjectFunc(TJSONB)
	polyFuncs["json_build_object"] = buildObjectFunc(TJSON)
	polyFuncs["to_jsonb"] = toJSONFunc(TJSONB)
	polyFuncs["to_json"] = toJSONFunc(TJSON)
	polyFuncs["jsonb_typeof"] = typeofFunc(TJSONB)
	polyFuncs["json_typeof"] = typeofFunc(TJSON)
}

// jnode is a parsed JSON value.
type jnode struct {
	kind  byte   // 'o' object, 'a' array, 's' string, 'n' number, 't' true, 'f' false, 'z' null
	raw   string // the input's text of it (json's -> returns it verbatim)
	str   string // a string's value; a number's text (numeric's, in jsonb)
	keys  []string
	elems []*jnode // an object's values (beside keys), an array's elements
}

func parseJSONB(s string) (Value, error) {
	n, err := parseJSON(s, "jsonb")
	if err != nil {
		return Value{}, err
	}
	return Value{T: TJSONB, S: n.jsonb()}, nil
}

// parseJSON parses s (for typeName's input: its error names it); for
// jsonb, objects are normalised and numbers are numeric's text.
func parseJSON(s, typeName string) (*jnode, error) {
	if !json.Valid([]byte(s)) {
		return nil, pgerror.Errorf(pgerror.CodeInvalidText, "invalid input syntax for type %s", typeName)
	}
	p := &jparser{s: s, jsonb: typeName == "jsonb"}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	return n, nil
}

// jparser reads JSON that encoding/json has already found valid.
type jparser struct {
	s     string
	i     int
	jsonb bool
}

func (p *jparser) ws() {
	for p.i < len(p.s) && strings.IndexByte(" \t\n\r", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *jparser) value() (*jnode, error) {
	p.ws()
	start := p.i
	n := &jnode{}
	switch c := p.s[p.i]; {
	case c == '{' || c == '[':
		n.kind = 'o'
		if c == '[' {
			n.kind = 'a'
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
			if n.kind == 'o' {
				k, err := p.value()
				if err != nil {
					return nil, err
				}
				p.ws()
				p.i++ // ':'
				n.keys = append(n.keys, k.str)
			}
			e, err := p.value()
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, e)
		}
		if n.kind == 'o' && p.jsonb {
			n.normalise()
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
		n.kind = 's'
		if err := json.Unmarshal([]byte(p.s[start:p.i]), &n.str); err != nil {
			return nil, pgerror.Errorf(pgerror.CodeInvalidText, "invalid input syntax for type json")
		}
		if p.jsonb && strings.Contains(p.s[start:p.i], `\u0000`) {
			return nil, &pgerror.Error{Code: "22P05", Message: "unsupported Unicode escape sequence",
				Detail: `\u0000 cannot be converted to text.`}
		}
	case c == 't' || c == 'f' || c == 'n':
		n.kind = map[byte]byte{'t': 't', 'f': 'f', 'n': 'z'}[c]
		p.i += map[byte]int{'t': 4, 'f': 5, 'n': 4}[c]
	default:
		for p.i < len(p.s) && strings.IndexByte("+-0123456789.eE", p.s[p.i]) >= 0 {
			p.i++
		}
		n.kind, n.str = 'n', p.s[start:p.i]
		if p.jsonb {
			d, err := parseNumeric(n.str)
			if err != nil {
				return nil, err
			}
			n.str = d.value().S
		}
	}
	n.raw = p.s[start:p.i]
	return n, nil
}

// normalise orders an object's keys as jsonb keeps them (shorter first,
// then by bytes), the last of duplicate keys winning.
func (n *jnode) normalise() {
	last := map[string]int{}
	for i, k := range n.keys {
		last[k] = i
	}
	var idx []int
	for i, k := range n.keys {
		if last[k] == i {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool {
		ka, kb := n.keys[idx[a]], n.keys[idx[b]]
		if len(ka) != len(kb) {
			return len(ka) < len(kb)
		}
		return ka < kb
	})
	keys, elems := make([]string, len(idx)), make([]*jnode, len(idx))
	for j, i := range idx {
		keys[j], elems[j] = n.keys[i], n.elems[i]
	}
	n.keys, n.elems = keys, elems
}

// jsonb renders n as jsonb prints it.
func (n *jnode) jsonb() string {
	var b strings.Builder
	n.write(&b)
	return b.String()
}

func (n *jnode) write(b *strings.Builder) {
	switch n.kind {
	case 'o':
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSONString(b, k)
			b.WriteString(": ")
			n.elems[i].write(b)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				b.WriteString(", ")
			}
			e.write(b)
		}
		b.WriteByte(']')
	case 's':
		writeJSONString(b, n.str)
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

// writeJSONString quotes s as PostgreSQL's escape_json does.
func writeJSONString(b *strings.Builder, s string) {
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

// mustJSON parses a stored json or jsonb value (valid on the way in).
func mustJSON(v Value) *jnode {
	n, err := parseJSON(v.S, v.T.String())
	if err != nil {
		return &jnode{kind: 'z', raw: "null"}
	}
	return n
}

// jsonOut is n as a value of t: jsonb's text, or json's verbatim span.
func jsonOut(n *jnode, t Type) Value {
	if t == TJSONB {
		return Value{T: TJSONB, S: n.jsonb()}
	}
	return Value{T: TJSON, S: n.raw}
}

// jsonText is ->>'s text of n: a string's value, NULL for null, else its
// JSON text.
func jsonText(n *jnode, t Type) Value {
	switch n.kind {
	case 's':
		return Text(n.str)
	case 'z':
		return Null(TText)
	}
	return Text(jsonOut(n, t).S)
}

func castJSON(v Value, t Type) (Value, error) {
	if t == TJSON {
		return Value{T: TJSON, S: v.S}, nil
	}
	return parseJSONB(v.S)
}

// jsonbCmp is PostgreSQL's jsonb order: between kinds null < string <
// number < boolean < array < object (a top-level scalar below any array);
// containers by their size first, then element by element (an object's
// keys in their stored order, each before its value).
func jsonbCmp(a, b Value) int {
	x, y := mustJSON(a), mustJSON(b)
	sx, sy := x.kind != 'a' && x.kind != 'o', y.kind != 'a' && y.kind != 'o'
	switch {
	case sx && y.kind == 'a':
		return -1
	case sy && x.kind == 'a':
		return 1
	}
	return jnodeCmp(x, y)
}

func jrank(n *jnode) int {
	k := n.kind
	if k == 'f' {
		k = 't'
	}
	return strings.IndexByte("zsntao", k)
}

func jnodeCmp(x, y *jnode) int {
	if rx, ry := jrank(x), jrank(y); rx != ry {
		return rx - ry
	}
	switch x.kind {
	case 's':
		return strings.Compare(x.str, y.str)
	case 'n':
		return numericCmp(Value{T: TNumeric, S: x.str}, Value{T: TNumeric, S: y.str})
	case 't', 'f':
		return int(b2i(x.kind == 't') - b2i(y.kind == 't'))
	case 'a', 'o':
		if len(x.elems) != len(y.elems) {
			return len(x.elems) - len(y.elems)
		}
		for i := range x.elems {
			if x.kind == 'o' {
				if c := strings.Compare(x.keys[i], y.keys[i]); c != 0 {
					return c
				}
			}
			if c := jnodeCmp(x.elems[i], y.elems[i]); c != 0 {
				return c
			}
		}
	}
	return 0
}

// field is n's member at key (object) or index (array: negative counts
// from the end), nil when it has none.
func (n *jnode) field(key string, idx int64, byIndex bool) *jnode {
	switch {
	case byIndex && n.kind == 'a':
		if idx < 0 {
			idx += int64(len(n.elems))
		}
		if idx >= 0 && idx < int64(len(n.elems)) {
			return n.elems[idx]
		}
	case !byIndex && n.kind == 'o':
		for i := len(n.keys) - 1; i >= 0; i-- { // json: the last of duplicates, as PostgreSQL's
			if n.keys[i] == key {
				return n.elems[i]
			}
		}
	}
	return nil
}

// path follows #>'s path from n. A json object's duplicate keys are all
// followed, the last that leads to a value winning, as PostgreSQL's
// get_path does.
func (n *jnode) path(steps []string) *jnode {
	if len(steps) == 0 || n == nil {
		return n
	}
	s := steps[0]
	switch n.kind {
	case 'a':
		i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil
		}
		return n.field("", i, true).path(steps[1:])
	case 'o':
		var found *jnode
		for i, k := range n.keys {
			if k == s {
				if m := n.elems[i].path(steps[1:]); m != nil {
					found = m
				}
			}
		}
		return found
	}
	return nil
}

// contains is jsonb's @>: every member of y is in x (an array's elements
// anywhere in x's array; a top-level array contains a scalar it has).
func contains(x, y *jnode, top bool) bool {
	if x.kind == 'a' && y.kind != 'a' && y.kind != 'o' && top {
		for _, e := range x.elems {
			if jnodeCmp(e, y) == 0 {
				return true
			}
		}
		return false
	}
	if jrank(x) != jrank(y) {
		return false
	}
	switch x.kind {
	case 'o':
		for i, k := range y.keys {
			m := x.field(k, 0, false)
			if m == nil || !contains(m, y.elems[i], false) {
				return false
			}
		}
		return true
	case 'a':
		for _, want := range y.elems {
			found := false
			for _, e := range x.elems {
				if (want.kind == 'a' || want.kind == 'o') && contains(e, want, false) || jnodeCmp(e, want) == 0 {
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

// hasKey is jsonb's ?: an object's key, an array's string element, or a
// string scalar equal to k.
func (n *jnode) hasKey(k string) bool {
	switch n.kind {
	case 'o':
		return n.field(k, 0, false) != nil
	case 'a':
		for _, e := range n.elems {
			if e.kind == 's' && e.str == k {
				return true
			}
		}
	case 's':
		return n.str == k
	}
	return false
}

// parsePathLiteral reads a text-array literal ({a,b,"c d"}) as #>'s path.
func parsePathLiteral(s string) ([]string, error) {
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

// jsonOpExpr is one of json's binary operators.
type jsonOpExpr struct {
	op   string
	l, r expr
	t    Type
}

func (j *jsonOpExpr) typ() Type    { return j.t }
func (j *jsonOpExpr) kids() []expr { return []expr{j.l, j.r} }
func (j *jsonOpExpr) eval(e *env) (Value, error) {
	a, err := j.l.eval(e)
	if err != nil {
		return a, err
	}
	b, err := j.r.eval(e)
	if err != nil {
		return b, err
	}
	if a.Null || b.Null {
		return Null(j.t), nil
	}
	x := mustJSON(a)
	var m *jnode
	switch j.op {
	case "@>", "<@":
		y := mustJSON(b)
		if j.op == "<@" {
			x, y = y, x
		}
		return Bool(contains(x, y, true)), nil
	case "?":
		return Bool(x.hasKey(b.S)), nil
	case "->", "->>":
		m = x.field(b.S, b.I, isInt(b.T))
	default: // #> #>>
		steps, err := parsePathLiteral(b.S)
		if err != nil {
			return Value{}, err
		}
		m = x.path(steps)
	}
	if m == nil {
		return Null(j.t), nil
	}
	if j.t == TText {
		return jsonText(m, a.T), nil
	}
	return jsonOut(m, a.T), nil
}

// jsonOp compiles json's operators; ok is false when op is not one or the
// left side is not json.
func (c *compiler) jsonOp(a *pg.A_Expr, op string) (expr, bool, error) {
	switch op {
	case "->", "->>", "#>", "#>>", "@>", "<@", "?":
	default:
		return nil, false, nil
	}
	l, err := c.compile1(a.Lexpr, TUnknown)
	if err != nil {
		return nil, true, err
	}
	lt := l.typ()
	if !isJSON(lt) && !(lt == TUnknown && (op == "@>" || op == "<@")) {
		return nil, false, nil
	}
	r, err := c.compile1(a.Rexpr, TUnknown)
	if err != nil {
		return nil, true, err
	}
	rt := r.typ()
	if lt == TUnknown { // 'literal' <@ jsonb
		if rt != TJSONB {
			return nil, false, nil
		}
		if l, err = c.coerce(l, TJSONB); err != nil {
			return nil, true, err
		}
		lt = TJSONB
	}
	noOp := func() (expr, bool, error) {
		return nil, true, &pgerror.Error{Code: pgerror.CodeUndefinedFunction, Message: fmt.Sprintf("operator does not exist: %s %s %s", lt, op, rt),
			Hint: "No operator matches the given name and argument types. You might need to add explicit type casts.", Position: a.Location + 1}
	}
	want, res := TText, lt
	switch op {
	case "->", "->>":
		if isInt(rt) {
			want = rt
		}
	case "@>", "<@":
		if lt != TJSONB {
			return noOp()
		}
		want, res = TJSONB, TBool
	case "?":
		if lt != TJSONB {
			return noOp()
		}
		res = TBool
	}
	if op == "->>" || op == "#>>" {
		res = TText
	}
	if r, err = c.coerce(r, want); err != nil {
		return nil, true, err
	}
	if r.typ() == TBpchar {
		r = &castExpr{arg: r, t: TText}
	}
	if r.typ() != want {
		return noOp()
	}
	return &jsonOpExpr{op: op, l: l, r: r, t: res}, true, nil
}

// toJSONNode is to_jsonb's conversion of a SQL value.
func toJSONNode(v Value) *jnode {
	switch {
	case v.Null:
		return &jnode{kind: 'z', raw: "null"}
	case isJSON(v.T):
		return mustJSON(v)
	case isNumber(v.T) || isFloat(v.T):
		s := v.String()
		if _, err := parseNumeric(s); err != nil { // NaN, Infinity: strings
			return &jnode{kind: 's', str: s, raw: strconv.Quote(s)}
		}
		return &jnode{kind: 'n', str: s, raw: s}
	case v.T == TBool:
		if v.I != 0 {
			return &jnode{kind: 't', raw: "true"}
		}
		return &jnode{kind: 'f', raw: "false"}
	}
	s := textOut(v)
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
	writeJSONString(&b, s)
	return &jnode{kind: 's', str: s, raw: b.String()}
}

// jsonArgs compiles the arguments of a function taking "any": an untyped
// literal is text.
func jsonArgs(c *compiler, args []expr) ([]expr, error) {
	out := make([]expr, len(args))
	for i, a := range args {
		x, err := c.coerce(a, TText)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func toJSONFunc(t Type) polyFunc {
	return func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		if len(args) != 1 {
			return nil, noSuchFunc(f, args)
		}
		xs, err := jsonArgs(c, args)
		if err != nil {
			return nil, err
		}
		return strict(t.String(), t, xs, func(a []Value) (Value, error) {
			n := toJSONNode(a[0])
			if t == TJSON && isJSON(a[0].T) {
				return Value{T: TJSON, S: a[0].S}, nil
			}
			return jsonOut(n, t), nil
		}), nil
	}
}

func buildObjectFunc(t Type) polyFunc {
	return func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		if len(args)%2 != 0 {
			return nil, &pgerror.Error{Code: pgerror.CodeInvalidParamValue, Message: "argument list must have even number of elements",
				Hint: fmt.Sprintf("The arguments of %s() must consist of alternating keys and values.", t.String()+"_build_object")}
		}
		xs, err := jsonArgs(c, args)
		if err != nil {
			return nil, err
		}
		return &funcExpr{name: t.String() + "_build_object", t: t, args: xs, fn: func(_ *env, a []Value) (Value, error) {
			n := &jnode{kind: 'o'}
			var b strings.Builder // json's text: PostgreSQL writes "k" : v
			b.WriteByte('{')
			for i := 0; i < len(a); i += 2 {
				if a[i].Null {
					return Value{}, &pgerror.Error{Code: pgerror.CodeInvalidParamValue, Message: fmt.Sprintf("argument %d: key must not be null", i+1)}
				}
				k := textOut(a[i])
				v := toJSONNode(a[i+1])
				n.keys, n.elems = append(n.keys, k), append(n.elems, v)
				if i > 0 {
					b.WriteString(", ")
				}
				writeJSONString(&b, k)
				b.WriteString(" : ")
				if isJSON(a[i+1].T) && !a[i+1].Null {
					b.WriteString(a[i+1].S)
				} else {
					b.WriteString(v.raw)
				}
			}
			b.WriteByte('}')
			if t == TJSON {
				return Value{T: TJSON, S: b.String()}, nil
			}
			n.normalise()
			return Value{T: TJSONB, S: n.jsonb()}, nil
		}}, nil
	}
}

func typeofFunc(t Type) polyFunc {
	return func(c *compiler, f *pg.FuncCall, args []expr) (expr, error) {
		xs, err := wantTypes(c, f, args, t)
		if err != nil {
			return nil, err
		}
		return strict(t.String()+"_typeof", TText, xs, func(a []Value) (Value, error) {
			names := map[byte]string{'o': "object", 'a': "array", 's': "string", 'n': "number", 't': "boolean", 'f': "boolean", 'z': "null"}
			return Text(names[mustJSON(a[0]).kind]), nil
		}), nil
	}
}
