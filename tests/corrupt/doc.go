// Package corrupt is the corruption matrix of tupled's embedded API: for
// each kind of file a database keeps (WAL segment, pebble's MANIFEST,
// OPTIONS, .sst and .log, data.bbolt, the control file) and each kind of
// damage (flip, truncate, zero, swap with an older copy), seeded trials
// that damage a copy of a database and reopen it. Each must end in the
// right data or a clear error, ErrCorrupted (XX001) or ErrIO (58030), at
// Open or at the read that meets the damage: never a panic, a wrong value,
// a missing row or a row that should not be there.
//
// corrupt_test.go also holds the tests built on the matrix's database:
// TestDamagedRowIsXX001 and TestDamagedRowScanIsXX001 (a damaged bbolt row
// at Get and Scan), TestControlFile (a missing control file, a rolled-back
// backend), TestMigrateUnchecksummed (a database from before checksums) and
// TestVerifyAndSalvage (tupled.Verify and tupled.Salvage).
//
// Run it with
//
//	go test -run TestCorruptionMatrix -v ./tests/corrupt   # the tally of each cell
//	go test ./tests/corrupt -crash.seed N                  # replay a seed
//
// (KEEP=DIR keeps the matrix's databases in DIR.) TestCorruptionMatrix runs
// 20 trials per cell, 3 with -short. Measured on the project's shared
// two-core machine (2026-12), the test binary's own time: 18 s in
// full, 5 s with -short, 16 s with -race -short.
package corrupt
