// Package multixact implements MultiXactIds: immutable sets of (xid, status)
// members recorded in a tuple's xmax when more than one transaction must be
// remembered there (several lockers, or lockers beside an updater).
//
// # Invariants
//
//   - A MultiXact never changes after Create returns: a waiter sleeping on the
//     members of a multixact sees a stable set. "Adding" a member (Expand)
//     makes a new multixact; the tuple's xmax is then switched to it under the
//     row latch.
//   - At most one member is an updater (NoKeyUpdate or Update).
//   - Members are sorted by (xid, status); the same xid may appear with two
//     statuses (a lock and a later update or stronger lock of one transaction
//     while another member exists).
//   - Ids are 64-bit and never wrap; InvalidID is 0.
//
// # The hot path
//
// Expand copies only members that can still matter (running, or a committed
// updater), as PostgreSQL's MultiXactIdExpand does, so a hot row's multixact
// stays as small as its live lockers; it copies once, in order, with one
// allocation. Identical member sets are interned in a fixed-size,
// direct-mapped cache (sharded, no key allocation), so a transaction locking
// many rows beside the same partner reuses one multixact (PostgreSQL's
// per-backend MXact cache, shared here).
//
// # Reclamation
//
// Tuples hold their multixact by pointer; there is no id → multixact
// registry. Once vacuum has replaced every xmax that named a multixact no
// transaction can still need (no running member and no committed updater,
// or a committed updater frozen to a plain xid), no waiter holds it and the
// intern cache slot has been reused, the Go garbage collector reclaims it.
// PostgreSQL keeps members in SLRU pages and must truncate them; here memory
// follows references. Stats.Live is what vacuum last counted (SetLive).
//
// Callers: package tuplelock (create/expand when writing xmax), heap
// (visibility: the update xid of a multi) and vacuum. Safe for concurrent use.
package multixact
