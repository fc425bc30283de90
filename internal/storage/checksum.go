package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	bolt "go.etcd.io/bbolt"
)

// Checksummed values.
//
// Neither backend can be trusted to notice damage to what it stores: bbolt
// keeps no checksum of its data pages at all, and pebble checksums blocks
// but not the history of its LSM (a rolled-back MANIFEST or a lost table
// serves older or missing keys without complaint). WithChecksums wraps a
// backend so that every value it stores is sealed with a checksum over the
// key and the value, and every value it returns is verified first:
//
//	stored value = version (1 byte, SealVersion) | CRC32C (4 bytes, little
//	               endian) | value
//	CRC32C       = Castagnoli CRC of uvarint(len(key)) | key | value
//
// The key is inside the checksum, so a value that turns up under another
// key (a page of bbolt's B+tree written over another, a stale sibling) is
// caught as well as flipped bits. A value that fails its check is never
// returned: Get and Scan report ErrCorrupted naming the key. What checksums
// cannot see — a key that is missing, or an older value of a key that is
// intact — is the control file's business (see internal/durable/control.go).

// SealVersion is the first byte of every sealed value.
const SealVersion byte = 1

// SealOverhead is the number of bytes Seal adds to a value.
const SealOverhead = 5

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupted is wrapped by every error that reports damaged data: a value
// whose checksum does not match, a backend that panicked or reported
// corruption while reading its files. The message names what is damaged.
var ErrCorrupted = errors.New("storage: data corrupted")

// CorruptionError says what is damaged. errors.Is(err, ErrCorrupted) holds.
type CorruptionError struct {
	// What names the damaged thing: a key, a file, a backend.
	What string
	// Detail says what is wrong with it.
	Detail string
	// Cause is the underlying error, if any.
	Cause error
}

func (e *CorruptionError) Error() string {
	s := "storage: data corrupted: " + e.What
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

func (e *CorruptionError) Unwrap() []error {
	if e.Cause != nil {
		return []error{ErrCorrupted, e.Cause}
	}
	return []error{ErrCorrupted}
}

// lenCRC[n] is the CRC of uvarint(n), a key length under 128 (one byte).
var lenCRC = func() (t [128]uint32) {
	for n := range t {
		t[n] = crc32.Update(0, castagnoli, []byte{byte(n)})
	}
	return t
}()

func valueCRC(key, value []byte) uint32 {
	var c uint32
	if len(key) < len(lenCRC) {
		// No buffer for the length: one that escapes (crc32.Update does
		// not let it stay on the stack) cost an allocation per value, a
		// tenth of a full scan.
		c = lenCRC[len(key)]
	} else {
		c = crc32.Update(0, castagnoli, binary.AppendUvarint(nil, uint64(len(key))))
	}
	c = crc32.Update(c, castagnoli, key)
	return crc32.Update(c, castagnoli, value)
}

// Seal returns the stored form of value under key.
func Seal(key, value []byte) []byte {
	b := make([]byte, SealOverhead+len(value))
	sealInto(b, key, value)
	return b
}

// sealInto writes the stored form of value under key into b, which is
// exactly SealOverhead+len(value) bytes.
func sealInto(b, key, value []byte) {
	b[0] = SealVersion
	binary.LittleEndian.PutUint32(b[1:5], valueCRC(key, value))
	copy(b[SealOverhead:], value)
}

// Unseal checks the stored form of key's value and returns the value (a
// subslice of stored). A damaged value is a *CorruptionError naming the key.
func Unseal(key, stored []byte) ([]byte, error) {
	if len(stored) < SealOverhead {
		return nil, &CorruptionError{What: fmt.Sprintf("key %q", key), Detail: fmt.Sprintf("stored value of %d bytes is shorter than its %d-byte checksum header", len(stored), SealOverhead)}
	}
	if stored[0] != SealVersion {
		return nil, &CorruptionError{What: fmt.Sprintf("key %q", key), Detail: fmt.Sprintf("unknown value format version %d (want %d)", stored[0], SealVersion)}
	}
	v := stored[SealOverhead:]
	want := binary.LittleEndian.Uint32(stored[1:5])
	if got := valueCRC(key, v); got != want {
		return nil, &CorruptionError{What: fmt.Sprintf("key %q", key), Detail: fmt.Sprintf("checksum mismatch (stored %08x, computed %08x)", want, got)}
	}
	return v, nil
}

// WithChecksums returns be with every value sealed on Set and checked on
// Get and Scan (see Seal). Keys, deletes and ranges are unchanged, so the
// key order is the backend's.
func WithChecksums(be Backend) Backend { return &checkedBackend{inner: be} }

// Raw returns the backend under a WithChecksums wrapper (be itself if it is
// not one): its values are stored forms.
func Raw(be Backend) Backend {
	if c, ok := be.(*checkedBackend); ok {
		return c.inner
	}
	return be
}

type checkedBackend struct{ inner Backend }

func (c *checkedBackend) Get(key []byte) ([]byte, bool, error) {
	v, ok, err := c.inner.Get(key)
	if err != nil || !ok {
		return nil, ok, err
	}
	v, err = Unseal(key, v)
	if err != nil {
		return nil, false, fmt.Errorf("%w (%s backend)", err, c.inner.Name())
	}
	return v, true, nil
}

func (c *checkedBackend) Scan(start, end []byte, fn func(key, value []byte) error) error {
	if fn == nil {
		return errors.New("storage: Scan with nil fn")
	}
	return c.inner.Scan(start, end, func(k, v []byte) error {
		val, err := Unseal(k, v)
		if err != nil {
			return fmt.Errorf("%w (%s backend)", err, c.inner.Name())
		}
		return fn(k, val)
	})
}

func (c *checkedBackend) ReverseScan(start, end []byte, fn func(key, value []byte) error) error {
	if fn == nil {
		return errors.New("storage: ReverseScan with nil fn")
	}
	return c.inner.ReverseScan(start, end, func(k, v []byte) error {
		val, err := Unseal(k, v)
		if err != nil {
			return fmt.Errorf("%w (%s backend)", err, c.inner.Name())
		}
		return fn(k, val)
	})
}

func (c *checkedBackend) NewBatch() Batch { return &checkedBatch{owner: c, inner: c.inner.NewBatch()} }

func (c *checkedBackend) Commit(b Batch, sync bool) error {
	if b == nil {
		return ErrNilBatch
	}
	x, ok := b.(*checkedBatch)
	if !ok || x == nil || x.owner != c {
		return ErrForeignBatch
	}
	if x.err != nil {
		return x.err
	}
	return c.inner.Commit(x.inner, sync)
}

func (c *checkedBackend) Sync() error  { return c.inner.Sync() }
func (c *checkedBackend) Close() error { return c.inner.Close() }
func (c *checkedBackend) Name() string { return c.inner.Name() }
func (c *checkedBackend) Stats() Stats { return c.inner.Stats() }

type checkedBatch struct {
	owner *checkedBackend
	inner Batch
	err   error // a value too large to seal
}

func (x *checkedBatch) Set(key, value []byte) {
	if len(value) > MaxValueSize-SealOverhead {
		if x.err == nil {
			x.err = ErrValueTooLarge
		}
		return
	}
	x.inner.Set(key, Seal(key, value))
}

func (x *checkedBatch) Delete(key []byte)             { x.inner.Delete(key) }
func (x *checkedBatch) DeleteRange(start, end []byte) { x.inner.DeleteRange(start, end) }
func (x *checkedBatch) Len() int                      { return x.inner.Len() }
func (x *checkedBatch) Size() int                     { return x.inner.Size() }
func (x *checkedBatch) Reset()                        { x.inner.Reset(); x.err = nil }

// CheckConsistency runs the backend's own structural check: bbolt's
// Tx.Check (every page reachable once, freelist consistent), pebble's
// CheckLevels (every table readable, its blocks' checksums, key order
// within and across levels). Each problem is one error; nil if none.
func CheckConsistency(be Backend) (problems []error) {
	defer func() {
		if r := recover(); r != nil {
			problems = append(problems, &CorruptionError{What: be.Name() + " store", Detail: "panicked during its consistency check", Cause: panicError(r)})
		}
	}()
	switch b := Raw(be).(type) {
	case *bboltBackend:
		if err := b.g.enter(); err != nil {
			return []error{err}
		}
		defer b.g.exit()
		err := b.db.View(func(tx *bolt.Tx) error {
			for e := range tx.Check() {
				problems = append(problems, &CorruptionError{What: "file " + b.path, Cause: e})
			}
			return nil
		})
		if err != nil {
			problems = append(problems, err)
		}
	case *pebbleBackend:
		if err := b.g.enter(); err != nil {
			return []error{err}
		}
		defer b.g.exit()
		if err := b.db.CheckLevels(nil); err != nil {
			problems = append(problems, &CorruptionError{What: "pebble store " + b.dir, Detail: "CheckLevels", Cause: err})
		}
		if err := b.fail.get(); err != nil {
			problems = append(problems, err)
		}
	}
	return problems
}
