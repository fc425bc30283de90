package tupled

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/tupled/tupled/internal/engine"
)

// Verify and Salvage: the way forward from ErrCorrupted (tupled verify,
// tupled salvage). The reading of damaged files is the engine's
// (internal/durable).

// VerifyResult is what Verify found.
type VerifyResult struct {
	// Problems lists the damage found, one line each; empty if none.
	Problems []string
	// Rows is the number of rows per table with an intact value.
	Rows map[string]int
	// WALRecords is the number of WAL records after the redo point.
	WALRecords int
}

// Verify checks the database in dir (closed: not open in any process)
// without changing it — the backend is opened read-only and the WAL read
// from an in-memory copy — and writes a report to w: the control file,
// pebble's MANIFEST, the backend's own structure (bbolt's Tx.Check,
// pebble's CheckLevels), every stored value against its checksum, the
// format marker and checkpoint number against the control file, and every
// WAL record from the redo point on. It returns an error only if it could
// not run.
func Verify(dir string, w io.Writer) (*VerifyResult, error) {
	r, err := engine.Verify(dir, w)
	if r == nil {
		return nil, err
	}
	return (*VerifyResult)(r), err
}

// SalvageResult is what Salvage copied and what it could not.
type SalvageResult struct {
	Tables, Rows, WALRecords int
	// Lost lists what could not be copied (damaged values, unreadable
	// ranges, an unreadable WAL).
	Lost []string
}

// Salvage copies every intact row of the database in dir, then replays its
// intact WAL records after the backend's redo point, into a new database
// at out (which must not exist; it gets the source's backend), and writes
// a report to w. The source is not changed. Rows whose stored value is
// damaged, and whatever the backend or WAL cannot read, are listed in
// Lost, not copied.
func Salvage(dir, out string, w io.Writer) (*SalvageResult, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	if _, err := os.Stat(out); err == nil {
		return nil, fmt.Errorf("tupled: salvage: %s already exists", out)
	}
	be := Pebble
	if engine.UsesBbolt(dir) {
		be = Bbolt
	}
	dst, err := Open(out, &Options{Backend: be, VacuumInterval: -1})
	if err != nil {
		return nil, err
	}
	r, err := engine.Salvage(dir, salvageTarget{dst}, w)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if r == nil {
		return nil, err
	}
	if err == nil {
		fmt.Fprintf(w, "salvaged %d tables, %d rows from the backend, %d WAL records into %s\n", r.Tables, r.Rows, r.WALRecords, out)
		if len(r.Lost) > 0 {
			fmt.Fprintf(w, "%d things could not be copied (listed above)\n", len(r.Lost))
		}
	}
	return (*SalvageResult)(r), err
}

// salvageTarget writes Salvage's copy through the API.
type salvageTarget struct{ db *DB }

var ctxSalvage = context.Background()

func (s salvageTarget) EnsureTable(name string) error {
	return s.db.CreateTableIfNotExists(ctxSalvage, name)
}

func (s salvageTarget) DropTable(name string) error {
	return s.db.DropTable(ctxSalvage, name, &DropTableOptions{IfExists: true})
}

func (s salvageTarget) Apply(ws []engine.SalvageWrite) error {
	ctx := ctxSalvage
	return s.db.RunTx(ctx, nil, func(tx *Tx) error {
		for _, o := range ws {
			if o.Delete {
				if err := tx.Delete(ctx, o.Table, o.Key); err != nil && !errors.Is(err, ErrNotFound) {
					return err
				}
				continue
			}
			err := tx.Update(ctx, o.Table, o.Key, o.Value)
			if errors.Is(err, ErrNotFound) {
				err = tx.Insert(ctx, o.Table, o.Key, o.Value)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}
