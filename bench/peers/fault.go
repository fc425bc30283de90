package main

import "sync/atomic"

// fault names a deliberate bug the child injects (-fault), so that the
// tests can show each correctness check fails when it should:
//
//   - "bank": a transfer credits one less than it debits (the bank total
//     shrinks);
//   - "queue": the first claim of job 7 leaves the job in the queue (it is
//     done twice);
//   - "crash": the child exits with status 3 before it reports.
var fault string

// credit is what a transfer adds to its destination when it debits amount.
func credit(amount int64) int64 {
	if fault == "bank" {
		return amount - 1
	}
	return amount
}

var keptJob atomic.Bool

// keepJob reports whether the claim of job id must leave it in the queue.
func keepJob(id uint64) bool {
	return fault == "queue" && id == 7 && keptJob.CompareAndSwap(false, true)
}
