package deadlock

import "time"

// searcher finds a cycle through one start wait: a depth-first reachability
// search over Walker.Successors with a visited set and parent pointers.
//
// It answers PostgreSQL's FindLockCycle question — is start reachable from
// itself? — and nothing more: reaching an already-visited node is a dead end
// (a cycle that does not pass through start is left to its own members'
// checks), so each node is expanded at most once per search and the cost of a
// search is O(nodes reached + edges enumerated). The Walker bounds the edge
// enumeration (a queue's predecessors are scanned once per lock and mode per
// check, and settled prefixes are skipped), see lockmgr's walker.
//
// Three filters prune nodes as they are reached:
//   - not Waiting: the wait is over, its edges are gone;
//   - stamped at the current epoch: proved to lie on no cycle (memo);
//   - started after asOf (only in a filtered search): the check evaluates the
//     graph as it stood at its deadline, which keeps PostgreSQL's victim rule
//     even when a check runs late.
type searcher struct {
	w      Walker
	locked bool // the caller holds every partition lock exclusively
	parent map[*Wait]*Wait
	stack  []*Wait

	start    *Wait
	cur      *Wait
	found    *Wait
	filtered bool
	asOf     time.Time
	epoch    uint64 // stamps equal to this prune; 0 = no stamp pruning
	pruned   uint64 // nodes pruned by stamps (for Stats)
	// incomplete: the last find was cut short by a walker that would not
	// wait for a lock; its "no cycle" proves nothing.
	incomplete bool
	visitFn    func(*Wait) bool
}

func newSearcher(w Walker) *searcher {
	s := &searcher{w: w, parent: make(map[*Wait]*Wait)}
	s.visitFn = s.visit
	return s
}

// find returns the cycle through start as a path [start, w1, ..., wk] where
// each element waits for the next and wk waits for start, or nil.
// When filtered, waits that began after asOf are ignored. epoch enables memo
// pruning (0 disables it).
func (s *searcher) find(start *Wait, filtered bool, asOf time.Time, epoch uint64) []*Wait {
	clear(s.parent)
	s.stack = s.stack[:0]
	s.incomplete = false
	s.start, s.found, s.filtered, s.asOf, s.epoch = start, nil, filtered, asOf, epoch
	s.parent[start] = nil
	s.stack = append(s.stack, start)
	for len(s.stack) > 0 && s.found == nil {
		n := len(s.stack) - 1
		s.cur = s.stack[n]
		s.stack = s.stack[:n]
		s.w.Successors(s.cur, s.visitFn)
	}
	s.cur = nil
	if s.found == nil {
		s.incomplete = s.w.Incomplete()
		return nil
	}
	var path []*Wait
	for n := s.found; n != nil; n = s.parent[n] {
		path = append(path, n)
	}
	// path is [wk, ..., w1, start]; reverse to [start, w1, ..., wk].
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}

func (s *searcher) visit(y *Wait) bool {
	if y == s.start {
		s.found = s.cur
		return false
	}
	if _, seen := s.parent[y]; seen {
		return true
	}
	if y.State() != Waiting {
		return true
	}
	if s.filtered && y.Start.After(s.asOf) {
		return true
	}
	if s.epoch != 0 && y.stamp.Load() == s.epoch {
		s.pruned++
		return true
	}
	s.parent[y] = s.cur
	s.stack = append(s.stack, y)
	return true
}

// visited calls fn for every node reached by the last find (including start).
func (s *searcher) visited(fn func(*Wait)) {
	for n := range s.parent {
		fn(n)
	}
}

// stillWaiting reports whether every wait of path is still Waiting.
//
// Why this validates a cycle found on observations made at different times:
// a wait that is Waiting now and was Waiting when it was observed has been
// waiting without interruption in between (a Wait is never reused), and a
// waiting transaction can neither end, nor release a lock, nor be granted
// while what it waits for is itself blocked. So if every wait on the path was
// observed Waiting during the search and is Waiting now, at the moment of the
// first of these final loads all of them were waiting simultaneously with all
// the observed edges present: the cycle was real then, and a cycle of blocked
// transactions cannot dissolve by itself.
func stillWaiting(path []*Wait) bool {
	for _, w := range path {
		if w.State() != Waiting {
			return false
		}
	}
	return true
}
