// Command orders is an orders and inventory service on tupled's embedded
// API, written the way PostgreSQL would run it with foreign keys:
//
//   - placing an order locks the customer FOR KEY SHARE (the foreign-key
//     check: the customer cannot be deleted meanwhile, but can be renamed)
//     and the product FOR NO KEY UPDATE (its stock changes), then inserts
//     the order;
//
//   - deleting a customer locks it FOR UPDATE, waits out the orders being
//     placed, and refuses while the customer has orders (RESTRICT);
//
//   - a customer's orders are one prefix scan: order keys are packed
//     (customer, order id) tuples.
//
//     go run ./examples/orders -clients 8 -orders 400
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/keys"
)

// ErrOutOfStock and ErrHasOrders are the service's own refusals.
var (
	ErrOutOfStock = errors.New("orders: out of stock")
	ErrNoCustomer = errors.New("orders: no such customer")
	ErrHasOrders  = errors.New("orders: the customer has orders")
)

// Shop is the service.
type Shop struct {
	db      *tupled.DB
	orderID atomic.Int64
}

// NewShop creates the three tables if they are not there.
func NewShop(ctx context.Context, db *tupled.DB) (*Shop, error) {
	for _, t := range []string{"customers", "products", "orders"} {
		if err := db.CreateTableIfNotExists(ctx, t); err != nil {
			return nil, err
		}
	}
	return &Shop{db: db}, nil
}

func stock(n int64) []byte         { return binary.BigEndian.AppendUint64(nil, uint64(n)) }
func stockOf(v []byte) int64       { return int64(binary.BigEndian.Uint64(v)) }
func customerKey(c int64) []byte   { return keys.MustPack(c) }
func productKey(sku string) []byte { return keys.MustPack(sku) }

// AddCustomer and AddProduct load the catalogue.
func (s *Shop) AddCustomer(ctx context.Context, id int64, name string) error {
	return s.db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.Insert(ctx, "customers", customerKey(id), []byte(name))
	})
}

func (s *Shop) AddProduct(ctx context.Context, sku string, n int64) error {
	return s.db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		return tx.Insert(ctx, "products", productKey(sku), stock(n))
	})
}

// PlaceOrder sells qty of sku to customer and returns the order's id.
func (s *Shop) PlaceOrder(ctx context.Context, customer int64, sku string, qty int64) (int64, error) {
	id := s.orderID.Add(1)
	err := s.db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		// The foreign-key check: the customer exists and stays.
		if _, err := tx.Lock(ctx, "customers", customerKey(customer), tupled.ForKeyShare, tupled.Wait); errors.Is(err, tupled.ErrNotFound) {
			return ErrNoCustomer
		} else if err != nil {
			return err
		}
		v, err := tx.Lock(ctx, "products", productKey(sku), tupled.ForNoKeyUpdate, tupled.Wait)
		if err != nil {
			return err
		}
		if left := stockOf(v) - qty; left < 0 {
			return ErrOutOfStock
		} else if err := tx.Update(ctx, "products", productKey(sku), stock(left)); err != nil {
			return err
		}
		return tx.Insert(ctx, "orders", keys.MustPack(customer, id), keys.MustPack(sku, qty))
	})
	return id, err
}

// Order is one order of a customer.
type Order struct {
	ID  int64
	SKU string
	Qty int64
}

// Orders lists a customer's orders, oldest first.
func (s *Shop) Orders(ctx context.Context, customer int64) ([]Order, error) {
	var out []Order
	err := s.db.RunTx(ctx, &tupled.TxOptions{ReadOnly: true}, func(tx *tupled.Tx) error {
		out = out[:0]
		for row, err := range tx.Rows(ctx, "orders", tupled.ScanOptions{Prefix: keys.MustPack(customer)}) {
			if err != nil {
				return err
			}
			k, v := keys.NewReader(row.Key), keys.NewReader(row.Value)
			var o Order
			_, err1 := k.Int()
			o.ID, err = k.Int()
			o.SKU, _ = v.String()
			o.Qty, _ = v.Int()
			if err := errors.Join(err1, err); err != nil {
				return err
			}
			out = append(out, o)
		}
		return nil
	})
	return out, err
}

// DeleteCustomer deletes a customer without orders. Its FOR UPDATE lock
// waits for the orders being placed for that customer (their FOR KEY
// SHARE locks), so it sees every order that committed.
func (s *Shop) DeleteCustomer(ctx context.Context, customer int64) error {
	return s.db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		if _, err := tx.Lock(ctx, "customers", customerKey(customer), tupled.ForUpdate, tupled.Wait); errors.Is(err, tupled.ErrNotFound) {
			return ErrNoCustomer
		} else if err != nil {
			return err
		}
		for _, err := range tx.Rows(ctx, "orders", tupled.ScanOptions{Prefix: keys.MustPack(customer), Limit: 1}) {
			if err != nil {
				return err
			}
			return ErrHasOrders
		}
		return tx.Delete(ctx, "customers", customerKey(customer))
	})
}

func main() {
	clients := flag.Int("clients", 8, "concurrent clients")
	orders := flag.Int("orders", 400, "orders to try to place")
	flag.Parse()
	ctx := context.Background()
	db, err := tupled.Open("", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	shop, err := NewShop(ctx, db)
	if err != nil {
		log.Fatal(err)
	}
	for c := range int64(10) {
		if err := shop.AddCustomer(ctx, c, fmt.Sprint("customer ", c)); err != nil {
			log.Fatal(err)
		}
	}
	for _, sku := range []string{"apple", "pear", "plum"} {
		if err := shop.AddProduct(ctx, sku, 100); err != nil {
			log.Fatal(err)
		}
	}
	var placed, refused atomic.Int64
	var wg sync.WaitGroup
	for range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range *orders / *clients {
				sku := []string{"apple", "pear", "plum"}[rand.IntN(3)]
				switch _, err := shop.PlaceOrder(ctx, rand.Int64N(10), sku, 1+rand.Int64N(3)); {
				case errors.Is(err, ErrOutOfStock):
					refused.Add(1)
				case err != nil:
					log.Fatal(err)
				default:
					placed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	mine, err := shop.Orders(ctx, 3)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d orders placed, %d refused out of stock; customer 3 has %d orders; deleting customer 3: %v\n",
		placed.Load(), refused.Load(), len(mine), shop.DeleteCustomer(ctx, 3))
}
