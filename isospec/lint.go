package isospec

import "fmt"

// LintSpec checks rules a spec must follow for its PostgreSQL twin to mean
// the same thing. isolationtester keeps each session's connection from one
// permutation to the next, while the runner starts every permutation on a
// fresh database and rolls back what is left open; so a session must not end a
// permutation inside a transaction. The check follows begin, commit and
// rollback through the session's setup and its steps in permutation order (a
// command skipped after an error is not accounted for).
//
// Session-level advisory locks outlive transactions, so they too would pass
// from one permutation to the next in isolationtester: a session that takes
// one (advlock without xact) must end with advunlockall in its teardown.
func LintSpec(s *Spec) error {
	if err := lintAdvisory(s); err != nil {
		return err
	}
	for pi, perm := range s.Perms() {
		open := make([]bool, len(s.Sessions))
		apply := func(i int, b *Block) {
			for _, c := range b.Cmds {
				switch c.Kind {
				case CmdBegin:
					open[i] = true
				case CmdCommit, CmdRollback:
					open[i] = false
				}
			}
		}
		for i, sess := range s.Sessions {
			if sess.Setup != nil {
				apply(i, sess.Setup)
			}
		}
		for _, ps := range perm.Steps {
			apply(ps.Step.Session, &ps.Step.Block)
		}
		for i, sess := range s.Sessions {
			if sess.Teardown != nil {
				apply(i, sess.Teardown)
			}
			if open[i] {
				line := 0
				if pi < len(s.Permutations) {
					line = s.Permutations[pi].Line
				}
				return &Error{File: s.Name, Line: line, Msg: fmt.Sprintf("permutation%s leaves session %s in a transaction: end it in every permutation (begin in a step if some permutations leave the session out)", permSteps(perm), sess.Name)}
			}
		}
	}
	return nil
}

func lintAdvisory(s *Spec) error {
	for _, sess := range s.Sessions {
		blocks := []*Block{}
		if sess.Setup != nil {
			blocks = append(blocks, sess.Setup)
		}
		for _, st := range sess.Steps {
			blocks = append(blocks, &st.Block)
		}
		var first *Command
		for _, b := range blocks {
			for _, c := range b.Cmds {
				if c.Kind == CmdAdvLock && !c.AdvXact && first == nil {
					first = c
				}
			}
		}
		if first == nil {
			continue
		}
		released := false
		if sess.Teardown != nil {
			for _, c := range sess.Teardown.Cmds {
				released = released || c.Kind == CmdAdvUnlockAll
			}
		}
		if !released {
			return &Error{File: s.Name, Line: first.Line, Msg: fmt.Sprintf("session %s takes session-level advisory locks: end its teardown with advunlockall (isolationtester keeps them from one permutation to the next)", sess.Name)}
		}
	}
	return nil
}
