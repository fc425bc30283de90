package tupled_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/tupled/tupled"
)

// Orders reference customers: an order's value is "customer|item". An
// order of a missing customer is refused with 23503; deleting a customer
// deletes their orders (ON DELETE CASCADE). Each order insert locks its
// customer FOR KEY SHARE, so it neither waits for nor blocks an update of
// the customer's other data.
func ExampleDB_AddForeignKey() {
	ctx := context.Background()
	db, _ := tupled.Open("", nil)
	defer db.Close()
	_ = db.CreateTable(ctx, "customers")
	_ = db.CreateTable(ctx, "orders")
	customer := func(_, value []byte) ([]byte, bool) {
		c, _, _ := bytes.Cut(value, []byte("|"))
		return c, len(c) > 0 // no customer: references nothing (NULL)
	}
	err := db.AddForeignKey(ctx, tupled.ForeignKey{
		Name: "orders_customer_fkey", Table: "orders", RefTable: "customers",
		Ref: customer, OnDelete: tupled.Cascade,
	})
	fmt.Println(err)

	_ = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		_ = tx.Insert(ctx, "customers", []byte("ann"), []byte("Ann, Oslo"))
		return tx.Insert(ctx, "orders", []byte("o1"), []byte("ann|teapot"))
	})
	err = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.Insert(ctx, "orders", []byte("o2"), []byte("bob|kettle"))
	})
	var fe *tupled.ForeignKeyError
	fmt.Println(tupled.SQLState(err), errors.As(err, &fe), string(fe.Ref), err)

	_ = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.Delete(ctx, "customers", []byte("ann"))
	})
	_ = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		_, err := tx.Get(ctx, "orders", []byte("o1"))
		fmt.Println("order o1:", err)
		return nil
	})
	// Output:
	// <nil>
	// 23503 true bob insert or update on table "orders" violates foreign key constraint "orders_customer_fkey"
	// order o1: tupled: row not found
}
