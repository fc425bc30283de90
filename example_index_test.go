package tupled_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/tupled/tupled"
)

// A users table keyed by id whose value is "email|name", with a unique
// index on the email: a second user with the same email is refused with
// 23505, and a lookup by email finds the user's row.
func ExampleDB_CreateIndex() {
	ctx := context.Background()
	db, _ := tupled.Open("", nil)
	defer db.Close()
	_ = db.CreateTable(ctx, "users")
	email := func(_, value []byte) ([]byte, bool) {
		e, _, _ := bytes.Cut(value, []byte("|"))
		return e, len(e) > 0 // no email: not indexed (NULL)
	}
	_ = db.CreateIndex(ctx, "users", "users_email_key", tupled.IndexOptions{Unique: true, Key: email})

	_ = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.Insert(ctx, "users", []byte("1"), []byte("ann@example.com|Ann"))
	})
	err := db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.Insert(ctx, "users", []byte("2"), []byte("ann@example.com|Another Ann"))
	})
	fmt.Println(tupled.SQLState(err), err)

	_ = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		key, value, err := tx.IndexGet(ctx, "users_email_key", []byte("ann@example.com"), tupled.ForKeyShare)
		fmt.Printf("%s %s %v\n", key, value, err)
		return err
	})
	// Output:
	// 23505 duplicate key value violates unique constraint "users_email_key"
	// 1 ann@example.com|Ann <nil>
}
