package main

import (
	"context"
	"errors"
	"io"

	"github.com/tupled/tupled"
)

// errDamaged makes tupled verify exit with status 1 after its report.
var errDamaged = errors.New("damage found")

func init() {
	register(&command{
		name:    "verify",
		summary: "check a database's files for damage",
		usage:   "DIR",
		help: `
Verify checks the database in DIR, which must not be open in any process,
without changing it: the control file, pebble's MANIFEST, the backend's own
structure (bbolt's page check, pebble's CheckLevels), every stored value
against its CRC32C, the backend's checkpoint number against the control
file, and every WAL record after the redo point. It prints one line per
check and per problem, and exits with status 1 if it found damage.

If it did, 'tupled salvage DIR NEWDIR' copies every intact row into a new
database.`,
		run: runVerify,
	})
	register(&command{
		name:    "salvage",
		summary: "copy every intact row of a damaged database into a new one",
		usage:   "DIR NEWDIR",
		help: `
Salvage copies every row of the database in DIR whose stored value passes its
checksum, then replays the intact WAL records after the backend's redo
point, into a new database at NEWDIR (which must not exist), with the same
backend. DIR is not changed and must not be open in any process. What could
not be copied (damaged values, ranges the backend cannot read, WAL records
from damage on) is listed; the status is 1 if anything was lost.

Check the result with 'tupled verify NEWDIR', then move it in place of DIR.`,
		run: runSalvage,
	})
}

func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := commands["verify"]
	fs := newFlagSet(c)
	if err := parseFlags(c, fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("want one directory")
	}
	res, err := tupled.Verify(fs.Arg(0), stdout)
	if err != nil {
		return err
	}
	if len(res.Problems) > 0 {
		return errDamaged
	}
	return nil
}

func runSalvage(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := commands["salvage"]
	fs := newFlagSet(c)
	if err := parseFlags(c, fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef("want a source and a new directory")
	}
	res, err := tupled.Salvage(fs.Arg(0), fs.Arg(1), stdout)
	if err != nil {
		return err
	}
	if len(res.Lost) > 0 {
		return errors.New("some data could not be copied (listed above)")
	}
	return nil
}
