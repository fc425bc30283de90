// Package metamorphic is a metamorphic test of tupled's embedded API, in the
// spirit of pebble's internal/metamorphic: one random sequence of operations
// is applied to several configurations of the same engine, and since
// nothing in the contract depends on the configuration, every result must be
// the same on all of them. There is no model to get wrong: the databases are
// each other's oracle.
//
// # What it does
//
// TestMetamorphic opens three databases: in memory (tupled.Open("", …)),
// pebble on disk and bbolt on disk (each in a t.TempDir). A generator seeded
// from -seed (math/rand/v2's PCG) produces -ops operations, and each one is
// applied to the three in turn, from one goroutine:
//
//   - transactions in four slots, open at the same time and interleaved:
//     Begin (READ COMMITTED or REPEATABLE READ, sometimes read-only), Commit,
//     Rollback, Savepoint, RollbackTo, Release, and a call on an ended
//     transaction (ErrTxDone);
//   - writes: Insert, Update and UpdateWait, Delete and DeleteWait, Upsert
//     (DO NOTHING, DO UPDATE, DO UPDATE that may decline), UpdateKey;
//   - reads: Get, Lock in all four strengths with Wait, NoWait and
//     SkipLocked, and Scan or Rows with Start/End bounds, Prefix, Limit,
//     Reverse, a Where qualification, an optional lock and wait policy, and a
//     consumer that stops early or updates each row from inside the callback;
//   - the database: CreateTable (with and without IfNotExists), DropTable,
//     ListTables, Vacuum, Checkpoint, RowLocks, Locks, and reopen.
//
// The key space is tiny (three tables, six keys, three savepoint names), so
// duplicate keys, lock conflicts, multixacts, serialization failures and
// re-inserts of deleted keys are common; a few operations are invalid on
// purpose (a table that does not exist, an unknown strength, a negative
// Limit, a write in a read-only transaction, the empty key).
//
// After every operation the three results are compared: values returned,
// rows scanned, Upsert outcomes and what onConflict saw, and errors by
// SQLSTATE (tupled.SQLState), by every sentinel they match (errors.Is) and by
// their text. After every operation that can change locks, DB.Locks and
// DB.RowLocks of every table are compared too, with transaction ids replaced
// by names that do not depend on the backend ("T17": the transaction begun
// at step 17; "T17.sub1": its first savepoint's subtransaction id), since an
// on-disk database skips ids at every reopen and a checkpoint uses ids of
// its own. Every -check-every operations, after every reopen and at the end,
// the list of tables and the committed contents of every table, read by a
// fresh transaction, are compared. At the end the on-disk databases are
// closed and must pass tupled.Verify.
//
// # Choices
//
// One goroutine runs every transaction, so a lock wait could never be
// granted. Every database is opened with LockTimeout 1 ms: an operation
// that has to wait (Insert behind another transaction's insert of the key,
// Update, Delete, UpdateKey, Upsert, and any request with the Wait policy)
// fails with ErrLockTimeout (55P03) on every backend alike, and the other
// requests use NoWait (ErrLockNotAvailable) and SkipLocked (ErrSkipped). No
// deadlock can form (DeadlockTimeout is an hour), and nothing runs behind
// the operations' backs that could decide whether one waits: background
// vacuum is off, and checkpoints run only as operations and at Close.
//
// A reopen first rolls back every open transaction on all three databases,
// then closes the two on-disk ones and opens their directories again. The
// in-memory database cannot survive a Close, so for it the reopen is the
// rollbacks only: its contents are what the on-disk ones must recover. Each
// reopen chooses the on-disk databases' row-cache size (Options.CacheRows;
// a small one makes the background loop evict rows, which are then read
// back from pebble or bbolt) and Options.SyncCommit anew, as the seed first
// chose them; neither may change a result. ShareFastPathOff, which does
// change DB.RowLocks' Multi, is chosen once per seed for all three.
//
// DB.Vacuum's counts are not compared: they count the engine's work, and a
// heap loaded from disk after a reopen holds one frozen version per row
// where the in-memory heap still holds history; even the two on-disk
// databases' counts vary from run to run of one seed, with the timing of the
// engine's background loop. What vacuum must not change (results, locks,
// contents) is compared after it. Stats are not compared either.
//
// The sequence is a function of the seed: the generator keeps a small
// model of which slots hold a transaction and which savepoints they have,
// and learns after each step whether the result (which the three
// databases have just agreed on) aborted the transaction, so that an
// aborted transaction mostly rolls back instead of collecting ErrTxAborted.
// Nothing else is read back, and a prefix of a seed's sequence does not
// depend on -ops.
//
// # A failure
//
// The first result that differs fails the test with a report that names
// the seed, the step, the options the seed chose, the operation, each
// database's result, the last 50 operations with their results, and the
// command that replays the run up to the failing step:
//
//	go test ./tests/metamorphic -run TestMetamorphic -seed N -ops M
//
// The seed is also logged at the start (go test -v shows it). A divergence
// between the databases is a bug of the engine, never a reason to compare
// less. TestHarnessDetectsMismatch shows that the harness can fail: a
// perturbed read on one backend, or a perturbed table on another, is
// reported as a mismatch with the seed.
//
// # Knobs
//
//	-seed N         the seed (default: derived from the time)
//	-ops N          operations to run (default 20000; 5000 with -short)
//	-check-every N  compare every table's contents every N operations (100)
//	-stats          log how often each operation had each outcome, to see that
//	                the generator still reaches conflicts and errors
//
// Measured on the project's shared two-core machine (2026-12), the test
// binary's own time: the default takes about 6 s with go test and 25 s with
// -race; -short about 2 s and 8 s.
package metamorphic
