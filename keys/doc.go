// Package keys is an order-preserving encoding of tuples for row keys: the
// bytes of two packed tuples compare (bytes.Compare) as the tuples compare
// element by element, so a table keyed by keys.Pack(customer, orderID) is
// stored in (customer, orderID) order and a scan with
// ScanOptions.Prefix = keys.Pack(customer) reads that customer's orders.
// FoundationDB's tuple layer is the model; the format is tupled's own.
//
//	k := keys.MustPack("orders", int64(42), uint64(7))  // build a key
//	t, err := keys.Unpack(k)                            // keys.Tuple{"orders", int64(42), int64(7)}
//	r := keys.NewReader(k)                              // or decode with types:
//	table, _ := r.String(); cust, _ := r.Int(); ord, _ := r.Uint()
//
// # Order
//
// Elements compare by type first, in the order of the table below (nil <
// []byte < string < integers < float64 < false < true), then by value. A
// tuple sorts before every longer tuple that begins with it, so a packed
// tuple is a prefix, in bytes, of exactly the packed tuples that extend it.
// All integer types share one order (-1 < 0 < 1 < 2^63 < 2^64-1): int64(7)
// and uint8(7) pack to the same bytes. Integers and floats do not compare
// with each other (every integer sorts before every float).
//
// # Format
//
// Each element is a type code followed by its bytes:
//
//	code        type       bytes
//	0x00        nil        none
//	0x01        []byte     the bytes, each 0x00 written 0x00 0xFF, then 0x00
//	0x02        string     as []byte (the string's bytes, UTF-8 or not)
//	0x0C..0x13  integer<0  8..1 bytes: the one's complement of |v|, big-endian,
//	                       in 0x14-code bytes (the fewest that hold |v|)
//	0x14        integer 0  none
//	0x15..0x1C  integer>0  1..8 bytes: v big-endian, in code-0x14 bytes (the fewest)
//	0x21        float64    8 bytes: IEEE 754 big-endian, all bits flipped when
//	                       negative, only the sign bit flipped otherwise
//	0x26, 0x27  bool       false, true
//
// Floats order as numbers with -0 just before +0 and NaNs outside the
// numbers: NaNs with the sign bit set sort before -Inf, the others after
// +Inf (math.NaN() is of the second kind); every float64 bit pattern round
// trips. The encoding is canonical: Unpack refuses integers in more bytes
// than they need, an unterminated or badly escaped string, an unknown code,
// and a negative integer below math.MinInt64, each with an error saying
// where; Pack of what Unpack returns gives back the same bytes.
//
// # Stability
//
// This is an on-disk format: keys written with it are stored in
// databases, and SQL tables created by tupled serve use it for their
// primary keys. The bytes above will not change; new types get new codes.
//
// # Who calls it
//
// Programs using the embedded API, for their keys; package sqlfe, for the
// primary keys of SQL tables. It depends on nothing in the module.
package keys
