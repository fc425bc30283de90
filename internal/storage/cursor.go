package storage

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// errCursorStop ends the Scan under a scanCursor's Read.
var errCursorStop = errors.New("storage: cursor piece done")

// scanCursor is a Cursor made of Scans: each Read scans from where the
// last one stopped (bbolt's cursor; see Cursor for why).
type scanCursor struct {
	scan       func(start, end []byte, fn func(key, value []byte) error) error
	start, end []byte
	reverse    bool
	done       bool
}

func newScanCursor(be Backend, start, end []byte, reverse bool) *scanCursor {
	c := &scanCursor{scan: be.Scan, start: bytes.Clone(start), end: bytes.Clone(end), reverse: reverse}
	if reverse {
		c.scan = be.ReverseScan
	}
	return c
}

func (c *scanCursor) Read(fn func(key, value []byte) bool) (bool, error) {
	if c.done {
		return true, nil
	}
	stopped := false
	err := c.scan(c.start, c.end, func(k, v []byte) error {
		if !fn(k, v) {
			// k is not consumed: the next Read starts at it.
			if c.reverse {
				c.end = append(append(c.end[:0], k...), 0)
			} else {
				c.start = append(c.start[:0], k...)
			}
			stopped = true
			return errCursorStop
		}
		if c.reverse {
			c.end = append(c.end[:0], k...)
		} else {
			c.start = append(append(c.start[:0], k...), 0)
		}
		return nil
	})
	if err != nil && !stopped {
		c.done = true
		return true, err
	}
	c.done = !stopped
	return c.done, nil
}

func (c *scanCursor) Close() error { c.done = true; return nil }

func (bb *bboltBackend) NewCursor(start, end []byte, reverse bool) (Cursor, error) {
	if err := bb.g.enter(); err != nil {
		return nil, err
	}
	bb.g.exit()
	return newScanCursor(bb, start, end, reverse), nil
}

// pebbleCursor is one pebble iterator, kept between Reads.
type pebbleCursor struct {
	p       *pebbleBackend
	it      *pebble.Iterator
	reverse bool
	started bool // the iterator was positioned (First or Last)
	valid   bool // it is at an unconsumed pair
	closed  bool
	err     error
}

func (p *pebbleBackend) NewCursor(start, end []byte, reverse bool) (_ Cursor, err error) {
	if err := p.g.enter(); err != nil {
		return nil, err
	}
	if err := p.fail.get(); err != nil {
		p.g.exit()
		return nil, err
	}
	if len(start) == 0 {
		start = nil
	}
	if len(end) == 0 {
		end = nil
	}
	c := &pebbleCursor{p: p, reverse: reverse}
	if start != nil && end != nil && string(start) >= string(end) {
		c.started, c.closed = true, true
		p.g.exit()
		return c, nil
	}
	defer func() {
		if r := recover(); r != nil {
			p.readPanic("cursor", r, &err)
			p.g.exit()
		}
	}()
	// The iterator's bounds must stay valid while it lives: copies.
	c.it, err = p.db.NewIter(&pebble.IterOptions{LowerBound: bytes.Clone(start), UpperBound: bytes.Clone(end)})
	if err != nil {
		p.g.exit()
		return nil, p.readError("cursor", err)
	}
	return c, nil
}

func (c *pebbleCursor) Read(fn func(key, value []byte) bool) (done bool, err error) {
	if c.err != nil {
		return true, c.err
	}
	if c.it == nil {
		return true, nil // an empty range, or closed
	}
	p := c.p
	// A panic out of pebble becomes the failed state; one out of fn is
	// fn's and is passed on.
	inFn := false
	defer func() {
		if inFn {
			return
		}
		if r := recover(); r != nil {
			p.readPanic("cursor", r, &err)
			c.err, done = err, true
		}
	}()
	if !c.started {
		c.started = true
		if c.reverse {
			c.valid = c.it.Last()
		} else {
			c.valid = c.it.First()
		}
	}
	for c.valid {
		v, verr := c.it.ValueAndErr()
		if verr != nil {
			c.err = p.readError("cursor", verr)
			return true, c.err
		}
		inFn = true
		more := fn(c.it.Key(), v)
		inFn = false
		if !more {
			return false, nil
		}
		if c.reverse {
			c.valid = c.it.Prev()
		} else {
			c.valid = c.it.Next()
		}
	}
	if err := c.it.Error(); err != nil {
		c.err = p.readError("cursor", err)
		return true, c.err
	}
	if ferr := p.fail.get(); ferr != nil {
		c.err = ferr
		return true, ferr
	}
	return true, nil
}

func (c *pebbleCursor) Close() (err error) {
	if c.closed {
		return nil
	}
	c.closed = true
	it := c.it
	c.it = nil
	defer c.p.g.exit()
	defer func() {
		if r := recover(); r != nil {
			c.p.readPanic("cursor close", r, &err)
		}
	}()
	if cerr := it.Close(); cerr != nil {
		return c.p.readError("cursor", cerr)
	}
	return nil
}

// checkedCursor unseals what its inner cursor reads (see WithChecksums).
type checkedCursor struct {
	inner Cursor
	name  string
	err   error
}

func (c *checkedBackend) NewCursor(start, end []byte, reverse bool) (Cursor, error) {
	in, err := c.inner.NewCursor(start, end, reverse)
	if err != nil {
		return nil, err
	}
	return &checkedCursor{inner: in, name: c.inner.Name()}, nil
}

func (c *checkedCursor) Read(fn func(key, value []byte) bool) (bool, error) {
	if c.err != nil {
		return true, c.err
	}
	done, err := c.inner.Read(func(k, v []byte) bool {
		val, uerr := Unseal(k, v)
		if uerr != nil {
			c.err = fmt.Errorf("%w (%s backend)", uerr, c.name)
			return false
		}
		return fn(k, val)
	})
	if c.err != nil {
		return true, c.err
	}
	return done, err
}

func (c *checkedCursor) Close() error { return c.inner.Close() }
