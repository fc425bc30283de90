package xact

import (
	"sync"
	"sync/atomic"

	"github.com/tupled/tupled/internal/invariants"
)

// clog is the commit-status log: one uint64 per xid (0 in progress, 1
// aborted, >= FrozenCSN the commit CSN), in pages of clogPageSize entries.
// Readers index the page table without locks (an atomic pointer to an
// immutable slice of page pointers); writers of distinct xids write distinct
// words; growing and truncating replace the page table under mu.
type clog struct {
	mu    sync.Mutex
	pages atomic.Pointer[clogTable]
}

const (
	clogPageShift = 14
	clogPageSize  = 1 << clogPageShift
)

type clogPage [clogPageSize]atomic.Uint64

// clogStripes consecutive xids go to different cache lines of a page:
// transactions that run side by side on different cores have neighbouring
// xids, and with their entries on one line each commit would take the line
// from the other core and each status lookup of a neighbour would miss.
const clogStripes = 8

// clogSlot is the index of xid's entry in its page: entries of xids i and
// i+1 are clogPageSize/clogStripes entries apart.
func clogSlot(xid XID) uint64 {
	i := xid & (clogPageSize - 1)
	return (i&(clogStripes-1))*(clogPageSize/clogStripes) + i/clogStripes
}

type clogTable struct {
	base  uint64 // first page number present; xids below base<<shift are frozen
	pages []*clogPage
}

func (c *clog) init() { c.pages.Store(&clogTable{}) }

func (c *clog) page(xid XID) *clogPage {
	t := c.pages.Load()
	p := xid >> clogPageShift
	if p < t.base || p-t.base >= uint64(len(t.pages)) {
		return nil
	}
	return t.pages[p-t.base]
}

func (c *clog) ensure(xid XID) {
	if c.page(xid) != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.pages.Load()
	p := xid >> clogPageShift
	if p < t.base {
		return
	}
	if p-t.base < uint64(len(t.pages)) {
		return
	}
	nt := &clogTable{base: t.base, pages: make([]*clogPage, p-t.base+1)}
	copy(nt.pages, t.pages)
	for i := len(t.pages); i < len(nt.pages); i++ {
		nt.pages[i] = new(clogPage)
	}
	c.pages.Store(nt)
}

func (c *clog) get(xid XID) uint64 {
	t := c.pages.Load()
	p := xid >> clogPageShift
	if p < t.base {
		return FrozenCSN
	}
	if p-t.base >= uint64(len(t.pages)) {
		return clogInProgress
	}
	return t.pages[p-t.base][clogSlot(xid)].Load()
}

// set records xid's final status v (clogAborted or a commit CSN).
func (c *clog) set(xid XID, v uint64) {
	pg := c.page(xid)
	if pg == nil {
		c.ensure(xid)
		pg = c.page(xid)
	}
	if invariants.Enabled {
		// Only xid's own transaction ends it, so no other writer races
		// with this load.
		if old := pg[clogSlot(xid)].Load(); old != clogInProgress || v == clogInProgress {
			invariants.Fail(invClogFinal, "xid %d: clog %s -> %s", xid, clogName(old), clogName(v))
		}
	}
	pg[clogSlot(xid)].Store(v)
}

// invClogFinal is doc.go's invariant "a clog entry moves only from in
// progress to committed or aborted, once".
const invClogFinal = "xact.clog-final-once"

func clogName(v uint64) string {
	switch {
	case v == clogInProgress:
		return "in progress"
	case v == clogAborted:
		return "aborted"
	}
	return "committed"
}

func (c *clog) truncatedBelow() XID { return c.pages.Load().base << clogPageShift }

// truncate drops whole pages below cutoff. Afterwards every xid below
// cutoff's page reads as frozen, even when cutoff lies past the last page
// present (AdvanceXid on a fresh log): the base moves to cutoff's page and
// no page is made for the ids in between.
func (c *clog) truncate(cutoff XID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.pages.Load()
	p := cutoff >> clogPageShift
	if p <= t.base {
		return
	}
	drop := min(p-t.base, uint64(len(t.pages)))
	nt := &clogTable{base: p, pages: append([]*clogPage(nil), t.pages[drop:]...)}
	c.pages.Store(nt)
}

func (c *clog) entries() uint64 { return uint64(len(c.pages.Load().pages)) * clogPageSize }
