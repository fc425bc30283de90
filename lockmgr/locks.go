package lockmgr

// Locks returns a snapshot of the lock table in the manner of pg_locks: one
// granted entry per (holder, mode) of every tuple lock, one ungranted entry per
// tuple-lock waiter (its requested mode), and for every transaction blocked in
// WaitXacts one ungranted ShareLock entry per awaited transaction still
// running (Tag{Kind: TagTransaction, Xid: awaited}, Xid: the waiter).
//
// It never stops the engine: partitions are read one at a time under their
// read locks, so the result is not one instant's picture (PostgreSQL's
// pg_locks isn't either, unless it takes every partition lock). A waiter shows
// from the moment it blocks until its wait has been cleaned up, which happens
// before the blocked call returns. The order of entries is unspecified.
func (m *Manager) Locks() []LockInfo {
	out := make([]LockInfo, 0, m.locksHint.Load()+8)
	for i := range m.parts {
		pt := &m.parts[i]
		pt.mu.RLock()
		for _, head := range pt.locks {
			for l := head; l != nil; l = l.next {
				for _, h := range l.holders {
					xid, sess := h.proc.ids()
					for mode := AccessShareLock; mode <= AccessExclusiveLock; mode++ {
						if h.mask&bit(mode) != 0 {
							out = append(out, LockInfo{Tag: l.tag, Mode: mode, Xid: xid, Session: sess, Granted: true})
						}
					}
				}
				for _, w := range l.queue {
					_, sess := w.proc.ids()
					out = append(out, LockInfo{Tag: l.tag, Mode: w.mode, Xid: w.registered().xid, Session: sess, WaitStart: w.dw.Start})
				}
			}
		}
		pt.mu.RUnlock()
	}
	for i := range m.reg {
		s := &m.reg[i]
		s.mu.RLock()
		for _, head := range s.procs {
			for p := head; p != nil; p = p.regNext {
				w := p.cur.Load()
				if w == nil || w.lock != nil {
					continue
				}
				for _, x := range w.xacts {
					if !ended(x) {
						out = append(out, LockInfo{
							Tag:       Tag{Kind: TagTransaction, Xid: x.Xid},
							Mode:      ShareLock,
							Xid:       p.xid,
							WaitStart: w.dw.Start,
						})
					}
				}
			}
		}
		s.mu.RUnlock()
	}
	out = m.fastPathLocks(out)
	m.locksHint.Store(int64(len(out)) + int64(len(out))/8)
	return out
}

// ids returns the transaction and session Locks reports for p: a
// transaction's xid and 0, or a session's current transaction (0 if none)
// and its id.
func (p *Proc) ids() (xid, session uint64) {
	if p.sess == nil {
		return p.xid, 0
	}
	if t := p.sess.xact.Load(); t != nil {
		xid = t.xid
	}
	return xid, p.sess.id
}
