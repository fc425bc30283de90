// Package stripe provides counters that many goroutines on different cores
// can increment without sharing a cache line.
//
// A plain atomic counter bumped on every row lock is written by every core
// in turn, so each increment waits for the line to travel from the core
// that wrote it last, and every other field on that line (the pointers a
// hot path reads next) travels with it. A Counter spreads the increments
// over padded stripes chosen by a caller-supplied hint (a transaction id:
// concurrent transactions have different ids), and only a reader (stats,
// seldom) sums the stripes.
//
// Anyone may use it; it has no dependencies.
package stripe

import "sync/atomic"

// Stripes is the number of stripes of a Counter (a power of two).
const Stripes = 16

type slot struct {
	n atomic.Uint64
	_ [56]byte // one cache line per stripe
}

// Counter is a striped uint64 counter. Its zero value is zero.
type Counter struct {
	_       [64]byte // keep the first stripe off the line of the fields before it
	stripes [Stripes]slot
}

// Add adds d to the stripe picked by hint.
func (c *Counter) Add(hint, d uint64) { c.stripes[hint&(Stripes-1)].n.Add(d) }

// Load returns the sum of the stripes. It is not a snapshot: increments
// racing with it may or may not be counted.
func (c *Counter) Load() uint64 {
	var t uint64
	for i := range c.stripes {
		t += c.stripes[i].n.Load()
	}
	return t
}
