package heap

import (
	"bytes"
	"sync"
	"sync/atomic"
)

// scanFloor is a table's floor: the key below which no row is visible to
// any snapshot, live or future (nil: nothing known). A queue's consumers
// delete from the head of a key range, and the deleted rows stay in the
// store until vacuum unlinks them (a persistent table's, until a
// checkpoint writes them and eviction drops them): a scan from the head
// would walk every one of them on every claim. A scan that starts at or
// below the floor starts at it instead (begin), moves it up past the rows
// it finds dead to every snapshot (publish), and an insert below it lowers
// it (noteInsert). A claim then costs a seek plus the rows it skips
// because they are locked, not the rows consumed since the last vacuum.
//
// Both stores keep one (backedStore.floor, memStore.floor).
//
// Invariant: no row visible to a live or future snapshot has a key below
// the floor. A scan may only publish a floor up to the first key inserted
// while it ran (floorScan.lowest): the rows it found dead were dead at its
// horizon, but a key inserted behind it is live.
type scanFloor struct {
	mu sync.Mutex
	// floor is written under mu and read without it by noteInsert's fast
	// path; scans are the scans that may raise it (registered under mu;
	// n mirrors their number for the fast path).
	floor atomic.Pointer[[]byte]
	scans map[*floorScan]struct{}
	n     atomic.Int32
}

// floorScan is a scan that started at or below its table's floor and may
// raise it to the end of the run of dead rows it found there. lowest is
// the smallest key inserted while it ran (inserted: any), which caps what
// it may publish.
type floorScan struct {
	lowest   []byte
	inserted bool
}

// clampReverse is where a descending scan whose lower bound is start may
// stop: at the floor, if start is below it.
func (f *scanFloor) clampReverse(start []byte) []byte {
	if fl := f.floor.Load(); fl != nil && (start == nil || bytes.Compare(start, *fl) < 0) {
		return *fl
	}
	return start
}

// begin starts an ascending scan from start: it starts at the floor
// instead if start is at or below it, and then (or from the table's very
// start) is a floor scan, fs, which must end with publish.
func (f *scanFloor) begin(start []byte) (from []byte, fs *floorScan) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl := f.floor.Load()
	switch {
	case fl != nil && (start == nil || bytes.Compare(start, *fl) <= 0):
		start = *fl
		fallthrough
	case start == nil:
		fs = &floorScan{}
		if f.scans == nil {
			f.scans = make(map[*floorScan]struct{})
		}
		f.scans[fs] = struct{}{}
		f.n.Add(1)
	}
	return start, fs
}

// publish ends floor scan fs (once; later calls and a nil fs do nothing):
// the floor rises to candidate (nil: no dead run found), but not above a
// key inserted while fs ran.
func (f *scanFloor) publish(fs *floorScan, candidate []byte) {
	if fs == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.scans[fs]; !ok {
		return
	}
	if candidate != nil {
		if fs.inserted && bytes.Compare(fs.lowest, candidate) < 0 {
			candidate = fs.lowest
		}
		if fl := f.floor.Load(); fl == nil || bytes.Compare(candidate, *fl) > 0 {
			f.floor.Store(&candidate)
		}
	}
	// After the store: an insert that sees no floor scan sees the floor.
	delete(f.scans, fs)
	f.n.Add(-1)
}

// noteInsert lowers the floor below key, about to hold a new version, and
// tells the running floor scans. Row latch held.
func (f *scanFloor) noteInsert(key []byte) {
	if f.n.Load() == 0 {
		if fl := f.floor.Load(); fl == nil || bytes.Compare(key, *fl) >= 0 {
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for fs := range f.scans {
		if !fs.inserted || bytes.Compare(key, fs.lowest) < 0 {
			fs.lowest, fs.inserted = bytes.Clone(key), true
		}
	}
	if fl := f.floor.Load(); fl != nil && bytes.Compare(key, *fl) < 0 {
		k := bytes.Clone(key)
		f.floor.Store(&k)
	}
}
