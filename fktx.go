package tupled

import "context"

// AddForeignKey is DB.AddForeignKey inside tx, as PostgreSQL's ALTER TABLE
// … ADD FOREIGN KEY runs in the transaction that issues it: the
// ShareRowExclusiveLocks on both tables are tx's (so a transaction that
// has already written to them does not wait for itself) and are held
// until tx ends, and the existing rows are checked with tx's snapshot.
// The declaration itself is not transactional: it is in force at once,
// for every transaction, and stays if tx rolls back (DropForeignKey, or
// dropping the referencing table, removes it). Errors as
// DB.AddForeignKey's; ErrTxBusy while another call on tx runs.
func (tx *Tx) AddForeignKey(ctx context.Context, fk ForeignKey) error {
	if err := tx.enter(); err != nil {
		return err
	}
	defer tx.exit()
	return tx.t.AddForeignKey(ctx, fk)
}
