package main

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/keys"
)

func newShop(t *testing.T) (*tupled.DB, *Shop) {
	t.Helper()
	db, err := tupled.Open("", &tupled.Options{DeadlockTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	shop, err := NewShop(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return db, shop
}

// TestNoOversell: 8 clients order concurrently; every unit sold is in an
// order, stock never goes below zero, and a refusal means the stock
// really was short.
func TestNoOversell(t *testing.T) {
	ctx := context.Background()
	_, shop := newShop(t)
	for c := range int64(4) {
		if err := shop.AddCustomer(ctx, c, "c"); err != nil {
			t.Fatal(err)
		}
	}
	const initial = 50
	if err := shop.AddProduct(ctx, "apple", initial); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused := 0
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				_, err := shop.PlaceOrder(ctx, int64(w%4), "apple", int64(1+i%3))
				switch {
				case errors.Is(err, ErrOutOfStock):
					mu.Lock()
					refused++
					mu.Unlock()
				case err != nil:
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	sold := int64(0)
	for c := range int64(4) {
		os, err := shop.Orders(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range os {
			sold += o.Qty
		}
	}
	var left int64
	err := shop.db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		v, err := tx.Get(ctx, "products", productKey("apple"))
		left = stockOf(v)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if left < 0 || left+sold != initial || refused == 0 || left > 2 {
		t.Fatalf("sold %d, left %d, refused %d: stock does not add up to %d (or was not exhausted)", sold, left, refused, initial)
	}
}

// TestDeleteWaitsForOrders: an order being placed holds the customer FOR
// KEY SHARE. A rename goes ahead beside it (no key change); the delete
// waits — seen in Locks() — and then sees the committed order and
// refuses. Without orders the delete succeeds, and an order for a deleted
// customer is refused.
func TestDeleteWaitsForOrders(t *testing.T) {
	ctx := context.Background()
	db, shop := newShop(t)
	if err := shop.AddCustomer(ctx, 1, "ann"); err != nil {
		t.Fatal(err)
	}
	if err := shop.AddProduct(ctx, "pear", 10); err != nil {
		t.Fatal(err)
	}
	// An order in flight, step by step: the foreign-key lock is taken.
	order, err := db.Begin(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := order.Lock(ctx, "customers", customerKey(1), tupled.ForKeyShare, tupled.Wait); err != nil {
		t.Fatal(err)
	}
	err = db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.UpdateWait(ctx, "customers", customerKey(1), []byte("ann b."), tupled.NoWait)
	})
	if err != nil {
		t.Fatalf("a rename beside the foreign-key lock: %v", err)
	}
	deleted := make(chan error, 1)
	go func() { deleted <- shop.DeleteCustomer(ctx, 1) }()
	waitFor(t, func() bool {
		for _, l := range db.Locks() {
			if !l.Granted {
				return true
			}
		}
		return false
	})
	if err := order.Insert(ctx, "orders", keys.MustPack(int64(1), int64(99)), keys.MustPack("pear", int64(1))); err != nil {
		t.Fatal(err)
	}
	if err := order.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-deleted; !errors.Is(err, ErrHasOrders) {
		t.Fatalf("delete after the order committed: %v", err)
	}

	if err := shop.AddCustomer(ctx, 2, "bo"); err != nil {
		t.Fatal(err)
	}
	if err := shop.DeleteCustomer(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := shop.PlaceOrder(ctx, 2, "pear", 1); !errors.Is(err, ErrNoCustomer) {
		t.Fatalf("an order for a deleted customer: %v", err)
	}
	if os, err := shop.Orders(ctx, 1); err != nil || len(os) != 1 || os[0].ID != 99 || os[0].SKU != "pear" {
		t.Fatalf("customer 1's orders: %v, %v", os, err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("the delete never waited")
		}
		time.Sleep(time.Millisecond)
	}
}
