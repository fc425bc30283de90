// Package deadlock is tupled's deadlock detector: it decides, for each
// blocked wait, DeadlockTimeout after the wait began, whether the waiter lies
// on a cycle of the wait-for graph, and if so makes that waiter — and only
// it — the victim. README.md in this directory has the design and the
// argument for it; this comment states the contract.
//
// # Who calls it
//
// Only package lockmgr, which owns the graph: it implements Graph (edges,
// stop-the-world locking), embeds a Wait in each blocked request, and calls
// Detector.Publish (under the partition lock that makes the wait visible),
// Arm (after releasing it), and Disarm (once the wait is over).
// The API repeats the strategy names (tupled.DeadlockStrategies, which
// Options.DeadlockStrategy takes; a test keeps the two lists equal).
//
// # Invariants
//
//   - A Wait leaves the Waiting state once (Resolve is a compare-and-swap);
//     the detector only ever resolves the wait being checked, as Victim.
//   - Each wait is checked at most once per arming, never before its
//     deadlock timeout (Wait.Timeout, else DeadlockTimeout) after it began;
//     the check evaluates the graph as of its deadline (waits begun later
//     are ignored), so the first check in deadline order that finds a cycle
//     through its own waiter picks the victim: PostgreSQL's rule — unless
//     the Graph is a Rearranger that breaks the cycle by reordering wait
//     queues (a soft deadlock).
//   - Edges appear only when a wait is published; Publish advances the
//     publication epoch. Memo stamps and cached snapshots are valid only within
//     one epoch.
//   - A cycle found on observations made at different times is acted on only
//     after every wait on it has been re-read as still Waiting, the last
//     time under every partition lock when the lock manager can rearrange
//     queues (deadlock.victim-on-cycle, checked under -tags invariants where
//     a check resolves its wait as Victim: the cycle starts at that wait,
//     repeats none, and every wait on it had begun by the check's as-of; a
//     member an external event resolved since validation is allowed).
//   - The default strategy never holds more than one partition lock per
//     checker, and that only briefly; the classic family takes them all, by
//     design.
//   - Under the default strategy Arm may run checks: when the next check is
//     more than a granule overdue (the detector goroutine is not being run),
//     the arming waiter runs up to 32 due checks, in deadline order, before
//     it returns. Arm is therefore called holding no lock a Walker takes, and
//     only by a goroutine about to sleep on its wait; checks that overlap
//     this way defer to an earlier pending member of a cycle they find, which
//     keeps the victim rule.
package deadlock
