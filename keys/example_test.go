package keys_test

import (
	"bytes"
	"fmt"

	"github.com/tupled/tupled/keys"
)

// Composite keys sort element by element; integers of every sign and width
// share one order.
func ExamplePack() {
	a := keys.MustPack("alice", int64(-5))
	b := keys.MustPack("alice", uint64(3))
	c := keys.MustPack("bob", int64(1))
	fmt.Println(bytes.Compare(a, b), bytes.Compare(b, c))
	t, _ := keys.Unpack(c)
	fmt.Printf("%#v\n", t)
	// Output:
	// -1 -1
	// keys.Tuple{"bob", 1}
}

// The keys of one customer's orders are the keys with that customer's
// packed prefix: use it as ScanOptions.Prefix, or its Range as Start and End.
func ExampleRange() {
	orders := [][]byte{
		keys.MustPack("alice", 1), keys.MustPack("alice", 2),
		keys.MustPack("alicea", 1), keys.MustPack("bob", 1),
	}
	start, end, _ := keys.Range("alice")
	for _, k := range orders {
		if bytes.Compare(k, start) >= 0 && bytes.Compare(k, end) < 0 {
			r := keys.NewReader(k)
			cust, _ := r.String()
			id, _ := r.Int()
			fmt.Println(cust, id, bytes.HasPrefix(k, keys.MustPack("alice")))
		}
	}
	// Output:
	// alice 1 true
	// alice 2 true
}
