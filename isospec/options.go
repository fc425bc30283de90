package isospec

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/tupled/tupled"
)

// knownOptions maps an option of the options block to the function applying
// it. Every permutation opens a fresh in-memory database with these options.
var knownOptions = map[string]func(o *tupled.Options, rc *runOptions, v string) error{
	"deadlock_timeout": func(o *tupled.Options, _ *runOptions, v string) error {
		d, err := optDuration(v)
		o.DeadlockTimeout = d
		return err
	},
	"lock_timeout": func(o *tupled.Options, _ *runOptions, v string) error {
		d, err := optDuration(v)
		o.LockTimeout = d
		return err
	},
	"deadlock_strategy": func(o *tupled.Options, _ *runOptions, v string) error {
		o.DeadlockStrategy = v
		return nil
	},
	"share_fast_path_off": func(o *tupled.Options, _ *runOptions, v string) error {
		b, err := strconv.ParseBool(v)
		o.ShareFastPathOff = b
		return err
	},
	"vacuum_interval": func(o *tupled.Options, _ *runOptions, v string) error {
		d, err := optDuration(v)
		o.VacuumInterval = d
		return err
	},
	// step_timeout is the runner's own guard: a step still unfinished after it
	// is canceled (as isolationtester does after PGISOLATIONTIMEOUT), and the run
	// fails after twice that.
	"step_timeout": func(_ *tupled.Options, rc *runOptions, v string) error {
		d, err := optDuration(v)
		if err == nil && d <= 0 {
			err = fmt.Errorf("must be positive")
		}
		rc.stepTimeout = d
		return err
	},
}

// runOptions are the runner settings an options block can change.
type runOptions struct {
	stepTimeout time.Duration
}

func optionNames() []string {
	var n []string
	for k := range knownOptions {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func optDuration(v string) (time.Duration, error) {
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(n) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("bad duration %q", v)
	}
	return d, nil
}

// DBOptions returns the tupled.Options the spec's options block asks for.
func (s *Spec) DBOptions() (*tupled.Options, error) {
	o, _, err := s.options()
	return o, err
}

func (s *Spec) options() (*tupled.Options, runOptions, error) {
	o := &tupled.Options{}
	var rc runOptions
	for _, opt := range s.Options {
		if err := knownOptions[opt.Name](o, &rc, opt.Value); err != nil {
			return nil, rc, &Error{File: s.Name, Line: opt.Line, Msg: fmt.Sprintf("option %s: %v", opt.Name, err)}
		}
	}
	return o, rc, nil
}

// Option returns the value of the named option and whether it was given.
func (s *Spec) Option(name string) (string, bool) {
	v, ok := "", false
	for _, o := range s.Options {
		if o.Name == name {
			v, ok = o.Value, true
		}
	}
	return v, ok
}
