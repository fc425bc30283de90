package isospec

import (
	"fmt"
	"strings"
)

// Block is the text between { and } with its position.
type Block struct {
	Text string // trimmed of surrounding whitespace, as isolationtester does
	Line int    // line of the opening brace
	Cmds []*Command
}

// Step is a named step of a session.
type Step struct {
	Name    string
	Session int // index into Spec.Sessions
	Block
}

// Session is a named sequence of steps with optional per-permutation setup and
// teardown blocks.
type Session struct {
	Name     string
	Line     int
	Setup    *Block
	Teardown *Block
	Steps    []*Step
}

// BlockerKind is the kind of a permutation-step annotation.
type BlockerKind int

const (
	BlockOnce      BlockerKind = iota // (*): report as waiting on the first try
	BlockOtherStep                    // (name): waiting while that step is active
)

// Blocker is one annotation of a permutation step.
type Blocker struct {
	Kind BlockerKind
	Step *Step // for BlockOtherStep
}

// PermStep is one step of a permutation.
type PermStep struct {
	Step     *Step
	Blockers []Blocker
}

// Permutation is an explicit order of steps.
type Permutation struct {
	Line  int
	Steps []*PermStep
}

// Option is one name/value pair of the options block.
type Option struct {
	Name, Value string
	Line        int
}

// Spec is a parsed spec file.
type Spec struct {
	Name         string // file name, for messages
	Options      []Option
	Setup        []*Block
	Teardown     *Block
	Sessions     []*Session
	Permutations []*Permutation
	Header       string // the leading comment lines (without '#'), used by spec2pg
	steps        map[string]*Step
}

// StepByName returns the step with that name, or nil.
func (s *Spec) StepByName(name string) *Step { return s.steps[name] }

// Error is a parse error with its position.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.File == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Parse parses a spec in our command language: the structure, then every block
// into commands. name is used in error messages.
func Parse(name, src string) (*Spec, error) {
	s, err := ParseRaw(name, src)
	if err != nil {
		return nil, err
	}
	parse := func(b *Block) error {
		if b == nil {
			return nil
		}
		cmds, err := ParseCommands(b.Text, b.Line)
		if err != nil {
			if pe, ok := err.(*Error); ok {
				pe.File = name
			}
			return err
		}
		b.Cmds = cmds
		return nil
	}
	if _, _, err := s.options(); err != nil {
		return nil, err
	}
	for _, b := range s.Setup {
		if err := parse(b); err != nil {
			return nil, err
		}
	}
	if err := parse(s.Teardown); err != nil {
		return nil, err
	}
	for _, sess := range s.Sessions {
		if err := parse(sess.Setup); err != nil {
			return nil, err
		}
		if err := parse(sess.Teardown); err != nil {
			return nil, err
		}
		for _, st := range sess.Steps {
			if err := parse(&st.Block); err != nil {
				return nil, err
			}
			if len(st.Cmds) == 0 {
				return nil, &Error{name, st.Line, fmt.Sprintf("step %s has no command", st.Name)}
			}
		}
	}
	return s, nil
}

// ParseRaw parses the block structure only (blocks keep their raw text). It
// reads PostgreSQL isolation specs as well as ours.
func ParseRaw(name, src string) (*Spec, error) {
	p := &rawParser{file: name, src: src, line: 1}
	return p.parse()
}

type rawParser struct {
	file string
	src  string
	pos  int
	line int
}

type rawTok struct {
	kind byte // 'w' word, 'q' quoted identifier, '{' block, '(' ')' ',' '*', 0 EOF
	text string
	line int
}

func (p *rawParser) errf(line int, format string, args ...any) error {
	return &Error{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// next returns the next token; comments (# to end of line) are skipped.
func (p *rawParser) next() (rawTok, error) {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '\n':
			p.line++
			p.pos++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			p.pos++
		case c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case c == '{':
			start := p.line
			p.pos++
			end := strings.IndexByte(p.src[p.pos:], '}')
			if end < 0 {
				return rawTok{}, p.errf(start, "unterminated block: missing '}'")
			}
			text := p.src[p.pos : p.pos+end]
			// Line of the block's first non-blank character, for command positions.
			lead := len(text) - len(strings.TrimLeft(text, " \t\r\n\f"))
			p.line += strings.Count(text, "\n")
			p.pos += end + 1
			return rawTok{kind: '{', text: strings.TrimSpace(text), line: start + strings.Count(text[:lead], "\n")}, nil
		case c == '}':
			return rawTok{}, p.errf(p.line, "unexpected '}'")
		case c == '(' || c == ')' || c == ',' || c == '*':
			p.pos++
			return rawTok{kind: c, text: string(c), line: p.line}, nil
		case c == '"':
			start := p.line
			p.pos++
			end := strings.IndexByte(p.src[p.pos:], '"')
			if end < 0 || strings.Contains(p.src[p.pos:p.pos+end], "\n") {
				return rawTok{}, p.errf(start, "unterminated quoted identifier")
			}
			text := p.src[p.pos : p.pos+end]
			p.pos += end + 1
			return rawTok{kind: 'q', text: text, line: start}, nil
		case isIdentChar(c):
			start := p.pos
			for p.pos < len(p.src) && isIdentChar(p.src[p.pos]) {
				p.pos++
			}
			return rawTok{kind: 'w', text: p.src[start:p.pos], line: p.line}, nil
		default:
			return rawTok{}, p.errf(p.line, "unexpected character %q", c)
		}
	}
	return rawTok{kind: 0, line: p.line}, nil
}

func isIdentChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func (p *rawParser) peek() (rawTok, error) {
	pos, line := p.pos, p.line
	t, err := p.next()
	p.pos, p.line = pos, line
	return t, err
}

func (p *rawParser) block(what string, kwLine int) (*Block, error) {
	t, err := p.next()
	if err != nil {
		return nil, err
	}
	if t.kind != '{' {
		return nil, p.errf(kwLine, "expected '{' after %s", what)
	}
	return &Block{Text: t.text, Line: t.line}, nil
}

func (p *rawParser) name(what string, kwLine int) (string, error) {
	t, err := p.next()
	if err != nil {
		return "", err
	}
	if t.kind != 'w' && t.kind != 'q' {
		return "", p.errf(kwLine, "expected a %s name", what)
	}
	return t.text, nil
}

func leadingComment(src string) string {
	var b strings.Builder
	for _, l := range strings.Split(src, "\n") {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "#") {
			break
		}
		t = strings.TrimPrefix(t, "#")
		t = strings.TrimPrefix(t, " ")
		b.WriteString(t)
		b.WriteByte('\n')
	}
	return b.String()
}

func (p *rawParser) parse() (*Spec, error) {
	s := &Spec{Name: p.file, steps: map[string]*Step{}, Header: leadingComment(p.src)}
	var cur *Session
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		if t.kind == 0 {
			break
		}
		if t.kind != 'w' {
			return nil, p.errf(t.line, "expected setup, teardown, session, step or permutation, found %q", t.text)
		}
		switch t.text {
		case "options":
			if cur != nil || len(s.Permutations) > 0 {
				return nil, p.errf(t.line, "options must come before the first session")
			}
			b, err := p.block("options", t.line)
			if err != nil {
				return nil, err
			}
			opts, err := parseOptions(p.file, b)
			if err != nil {
				return nil, err
			}
			s.Options = append(s.Options, opts...)
		case "setup":
			b, err := p.block("setup", t.line)
			if err != nil {
				return nil, err
			}
			if cur == nil {
				if len(s.Permutations) > 0 {
					return nil, p.errf(t.line, "setup after permutation")
				}
				s.Setup = append(s.Setup, b)
			} else {
				if cur.Setup != nil {
					return nil, p.errf(t.line, "session %s has two setup blocks", cur.Name)
				}
				if len(cur.Steps) > 0 {
					return nil, p.errf(t.line, "session %s: setup must come before its steps", cur.Name)
				}
				cur.Setup = b
			}
		case "teardown":
			b, err := p.block("teardown", t.line)
			if err != nil {
				return nil, err
			}
			if cur == nil {
				if s.Teardown != nil {
					return nil, p.errf(t.line, "two teardown blocks")
				}
				s.Teardown = b
			} else {
				if cur.Teardown != nil {
					return nil, p.errf(t.line, "session %s has two teardown blocks", cur.Name)
				}
				cur.Teardown = b
			}
		case "session":
			if len(s.Permutations) > 0 {
				return nil, p.errf(t.line, "session after permutation")
			}
			n, err := p.name("session", t.line)
			if err != nil {
				return nil, err
			}
			for _, o := range s.Sessions {
				if o.Name == n {
					return nil, p.errf(t.line, "duplicate session name %q", n)
				}
			}
			cur = &Session{Name: n, Line: t.line}
			s.Sessions = append(s.Sessions, cur)
		case "step":
			if cur == nil {
				return nil, p.errf(t.line, "step outside a session")
			}
			n, err := p.name("step", t.line)
			if err != nil {
				return nil, err
			}
			if s.steps[n] != nil {
				return nil, p.errf(t.line, "duplicate step name %q", n)
			}
			b, err := p.block("step "+n, t.line)
			if err != nil {
				return nil, err
			}
			st := &Step{Name: n, Session: len(s.Sessions) - 1, Block: *b}
			s.steps[n] = st
			cur.Steps = append(cur.Steps, st)
		case "permutation":
			perm, err := p.permutation(s, t.line)
			if err != nil {
				return nil, err
			}
			s.Permutations = append(s.Permutations, perm)
			cur = nil
		default:
			return nil, p.errf(t.line, "expected setup, teardown, session, step or permutation, found %q", t.text)
		}
	}
	if len(s.Sessions) == 0 {
		return nil, p.errf(p.line, "no session")
	}
	for _, sess := range s.Sessions {
		if len(sess.Steps) == 0 {
			return nil, p.errf(sess.Line, "session %s has no step", sess.Name)
		}
	}
	return s, nil
}

type pendingBlocker struct {
	once bool
	name string
	line int
}

func (p *rawParser) permutation(s *Spec, line int) (*Permutation, error) {
	perm := &Permutation{Line: line}
	type pend struct {
		name     string
		line     int
		blockers []pendingBlocker
	}
	var items []pend
	for {
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		if (t.kind != 'w' && t.kind != 'q') || (t.kind == 'w' && isTopKeyword(t.text)) {
			break
		}
		p.next()
		it := pend{name: t.text, line: t.line}
		if nt, _ := p.peek(); nt.kind == '(' {
			p.next()
			for {
				bt, err := p.next()
				if err != nil {
					return nil, err
				}
				switch bt.kind {
				case '*':
					it.blockers = append(it.blockers, pendingBlocker{once: true, line: bt.line})
				case 'w', 'q':
					it.blockers = append(it.blockers, pendingBlocker{name: bt.text, line: bt.line})
				default:
					return nil, p.errf(bt.line, "bad blocker annotation of step %s", it.name)
				}
				sep, err := p.next()
				if err != nil {
					return nil, err
				}
				if sep.kind == ')' {
					break
				}
				if sep.kind != ',' {
					return nil, p.errf(sep.line, "expected ',' or ')' in blocker annotation of step %s", it.name)
				}
			}
		}
		items = append(items, it)
	}
	if len(items) == 0 {
		return nil, p.errf(line, "empty permutation")
	}
	// Resolve names once the whole file is known? isolationtester requires steps
	// to be defined before use in practice (permutations come last), so resolve now.
	for _, it := range items {
		st := s.steps[it.name]
		if st == nil {
			return nil, p.errf(it.line, "undefined step %q in permutation", it.name)
		}
		ps := &PermStep{Step: st}
		for _, b := range it.blockers {
			if b.once {
				ps.Blockers = append(ps.Blockers, Blocker{Kind: BlockOnce})
				continue
			}
			bs := s.steps[b.name]
			if bs == nil {
				return nil, p.errf(b.line, "undefined step %q in blocker annotation of %s", b.name, it.name)
			}
			if bs.Session == st.Session {
				return nil, p.errf(b.line, "step %s cannot block on a step of its own session (%s)", it.name, b.name)
			}
			ps.Blockers = append(ps.Blockers, Blocker{Kind: BlockOtherStep, Step: bs})
		}
		perm.Steps = append(perm.Steps, ps)
	}
	return perm, nil
}

func isTopKeyword(w string) bool {
	switch w {
	case "setup", "teardown", "session", "step", "permutation", "options":
		return true
	}
	return false
}

// AllPermutations returns every interleaving of the sessions' steps, in the
// order isolationtester's run_all_permutations generates them.
func (s *Spec) AllPermutations() []*Permutation {
	var out []*Permutation
	piles := make([]int, len(s.Sessions))
	var cur []*PermStep
	var rec func()
	rec = func() {
		found := false
		for i, sess := range s.Sessions {
			if piles[i] < len(sess.Steps) {
				cur = append(cur, &PermStep{Step: sess.Steps[piles[i]]})
				piles[i]++
				rec()
				piles[i]--
				cur = cur[:len(cur)-1]
				found = true
			}
		}
		if !found {
			out = append(out, &Permutation{Steps: append([]*PermStep(nil), cur...)})
		}
	}
	rec()
	return out
}

// Perms returns the explicit permutations, or all of them when none is given.
func (s *Spec) Perms() []*Permutation {
	if len(s.Permutations) > 0 {
		return s.Permutations
	}
	return s.AllPermutations()
}
