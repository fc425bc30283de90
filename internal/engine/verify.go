package engine

import (
	"io"

	"github.com/tupled/tupled/internal/durable"
)

// Verify and Salvage read a closed database's files; the reading of damaged
// files is package durable's. They are here so the API (tupled verify,
// tupled salvage) reaches the machinery through this package only.

// VerifyResult is what Verify found (durable.VerifyResult).
type VerifyResult = durable.VerifyResult

// SalvageResult is what Salvage copied and what it could not.
type SalvageResult = durable.SalvageResult

// SalvageWrite is one row change Salvage hands its target: an upsert, or a
// delete when Delete is set.
type SalvageWrite = durable.Write

// SalvageTarget receives Salvage's copy (the API writes it through a new
// database).
type SalvageTarget = durable.Target

// Verify checks the closed database in dir and writes a report to w.
func Verify(dir string, w io.Writer) (*VerifyResult, error) { return durable.Verify(dir, w) }

// Salvage copies the intact rows and WAL records of the closed database in
// dir into dst and writes a report to w.
func Salvage(dir string, dst SalvageTarget, w io.Writer) (*SalvageResult, error) {
	return durable.Salvage(dir, dst, w)
}

// UsesBbolt reports whether the database in dir is on the bbolt backend.
func UsesBbolt(dir string) bool { return durable.UsesBbolt(dir) }
