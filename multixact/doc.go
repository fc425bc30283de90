// Package multixact implements MultiXactIds: immutable sets of (xid, status)
// members recorded in a tuple's xmax when more than one transaction must be
// remembered there (several lockers, or lockers beside an updater).
//
// # Who calls it
//
// It is engine machinery: package tuplelock creates and extends
// multixacts as it locks rows, package heap reads their members for
// visibility and vacuum, and package engine owns the Store (statistics,
// the live count after vacuum) and durable advances its ids past a
// previous incarnation's.
//
// # Invariants
//
//   - A MultiXact never changes after Create returns: a waiter sleeping on the
//     members of a multixact sees a stable set. "Adding" a member (Expand)
//     makes a new multixact; the tuple's xmax is then switched to it under the
//     row latch.
//   - At most one member is an updater (NoKeyUpdate or Update)
//     (multixact.one-updater, checked under -tags invariants on every
//     multixact Add makes, appended or copied; Create returns an error).
//   - Members hold no duplicate (xid, status); the same xid may appear with
//     two statuses (a lock and a later update or stronger lock of one
//     transaction while another member exists). Create sorts its members;
//     Expand adds the newcomer last, so a hot row's set is in order of
//     locking and an append needs no copy. Display sorts (see
//     tuplelock.Locker.Members). (multixact.members-unique, checked
//     under -tags invariants: Create's members strictly increase, and
//     Add's newcomer is no member yet.)
//   - Ids are 64-bit and never wrap; InvalidID is 0.
//
// # The hot path
//
// A new locker beside a lock-only set is appended in place: the new
// multixact's Members extend its predecessor's backing array by one element
// that the appender claimed (an atomic counter shared along the array), so
// neither the predecessor nor any other expansion of it can ever see that
// element; the new multixact's header is preallocated in the same arena, so
// an append allocates nothing, and its id was reserved with the arena.
// Finished lockers stay until the array is full; then Expand copies
// only the members that can still matter (running, or a committed updater),
// as PostgreSQL's MultiXactIdExpand does, into an array with room for as
// many appends again plus four; when the appends filled the old array (the
// row is hot), twice the old room, up to maxRoom (128). A hot row's set thus
// holds its live lockers plus at most ~maxRoom finished ones, and the O(n)
// copy and liveness checks are paid once per up to 128 appends instead of
// on every lock. The appender does not look for itself in the set: its
// caller knows (tuplelock skips the scan for a transaction's first lock). Sets made by Create or by a copy are
// interned in a fixed-size, direct-mapped cache (sharded, no key
// allocation), so a transaction locking many rows beside the same partner
// reuses one multixact (PostgreSQL's per-backend MXact cache, shared here).
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
