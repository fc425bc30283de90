package isospec

import (
	"context"
	"fmt"

	"github.com/tupled/tupled"
)

// The fk command declares a foreign key between two tables of the step
// language:
//
//	fk CHILD PARENT [noaction|restrict|cascade]
//
// Every row of CHILD references, by its value, the row of PARENT with that
// key (tupled.DB.AddForeignKey with Ref = the value); the word is the ON
// DELETE action (default noaction). Its PostgreSQL twin is
//
//	ALTER TABLE CHILD ADD FOREIGN KEY (v) REFERENCES PARENT [ON DELETE …];
//
// so the constraint is CHILD_v_fkey in both, and a violation reads as
// PostgreSQL's `insert or update on table "CHILD" violates foreign key
// constraint "CHILD_v_fkey"`. Like create it belongs in a setup block; it
// prints nothing.

// FKTarget is the part of *tupled.DB the fk command needs.
type FKTarget interface {
	AddForeignKey(ctx context.Context, fk tupled.ForeignKey) error
}

// fkActions are fk's action words.
var fkActions = map[string]tupled.FKAction{"noaction": tupled.NoAction, "restrict": tupled.Restrict, "cascade": tupled.Cascade}

var fkActionSQL = map[tupled.FKAction]string{tupled.NoAction: "", tupled.Restrict: " ON DELETE RESTRICT", tupled.Cascade: " ON DELETE CASCADE"}

func parseFK(c *Command, args []ctok) error {
	usage := "usage: fk CHILD PARENT [noaction|restrict|cascade]"
	if len(args) < 2 || len(args) > 3 {
		if len(args) > 0 {
			return cmdErr(args[0], "%s", usage)
		}
		return &Error{Msg: usage}
	}
	for _, a := range args[:2] {
		if err := checkName(a, "table"); err != nil {
			return err
		}
	}
	c.Table, c.RefTable = args[0].text, args[1].text
	if len(args) == 3 {
		a, ok := fkActions[args[2].text]
		if !ok || args[2].quoted {
			return cmdErr(args[2], "unknown foreign key action %q (noaction, restrict or cascade)", args[2].text)
		}
		c.OnDelete = a
	}
	return nil
}

// fkName is the constraint fk declares, PostgreSQL's default name.
func fkName(c *Command) string { return c.Table + "_v_fkey" }

// fkSQL is fk's twin.
func fkSQL(c *Command) string {
	return fmt.Sprintf("ALTER TABLE %s ADD FOREIGN KEY (v) REFERENCES %s%s;", c.Table, c.RefTable, fkActionSQL[c.OnDelete])
}

// execFK runs fk, outside any transaction (the engine's AddForeignKey
// takes its table locks in a transaction of its own).
func (s *session) execFK(ctx context.Context, c *Command) ([]event, bool, error) {
	fe, ok := s.r.eng.(FKTarget)
	if !ok {
		return nil, false, fmt.Errorf("fk: this engine has no foreign keys")
	}
	if s.tx != nil {
		return nil, false, fmt.Errorf("fk: declare foreign keys outside a transaction (in a setup block)")
	}
	err := fe.AddForeignKey(ctx, tupled.ForeignKey{
		Name: fkName(c), Table: c.Table, RefTable: c.RefTable, OnDelete: c.OnDelete,
		Ref: func(_, value []byte) ([]byte, bool) { return value, true },
	})
	if err != nil {
		return errorEvent(err, c), true, nil
	}
	return lines(), false, nil
}

// AddForeignKey declares fk (the fk command).
func (d tupledDB) AddForeignKey(ctx context.Context, fk tupled.ForeignKey) error {
	return d.db.AddForeignKey(ctx, fk)
}
