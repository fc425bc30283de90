package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSealRoundTrip(t *testing.T) {
	for _, v := range [][]byte{nil, {}, []byte("x"), bytes.Repeat([]byte{0xab}, 1000)} {
		s := Seal([]byte("key"), v)
		require.Len(t, s, len(v)+SealOverhead)
		got, err := Unseal([]byte("key"), s)
		require.NoError(t, err)
		require.Equal(t, len(v), len(got))
		require.True(t, bytes.Equal(v, got) || len(v) == 0)
	}
}

func TestUnsealCatchesDamage(t *testing.T) {
	key, val := []byte("rkey"), []byte("a value of some length")
	s := Seal(key, val)
	for i := range s {
		for _, bit := range []byte{1, 0x80} {
			d := bytes.Clone(s)
			d[i] ^= bit
			_, err := Unseal(key, d)
			require.ErrorIs(t, err, ErrCorrupted, "flip at %d", i)
			require.Contains(t, err.Error(), `key "rkey"`)
		}
	}
	for n := range SealOverhead + len(val) {
		_, err := Unseal(key, s[:n])
		require.ErrorIs(t, err, ErrCorrupted, "truncated to %d", n)
	}
	// The same value under another key (a value moved) fails too.
	_, err := Unseal([]byte("rkez"), s)
	require.ErrorIs(t, err, ErrCorrupted)
	// A key/value boundary shifted: ("ab","c") vs ("a","bc").
	_, err = Unseal([]byte("a"), Seal([]byte("ab"), []byte("c")))
	require.ErrorIs(t, err, ErrCorrupted)
}

// FuzzUnseal: whatever the stored bytes, Unseal returns the value only if
// it is what Seal made for that key, and never panics.
func FuzzUnseal(f *testing.F) {
	f.Add([]byte("k"), Seal([]byte("k"), []byte("v")))
	f.Add([]byte("k"), Seal([]byte("j"), []byte("v")))
	f.Add([]byte("r\x03tblkey"), Seal([]byte("r\x03tblkey"), bytes.Repeat([]byte("z"), 300)))
	f.Add([]byte("m"), []byte{})
	f.Add([]byte("m"), []byte{1, 0, 0, 0})
	f.Add([]byte("m"), []byte{2, 0, 0, 0, 0, 1})
	f.Add([]byte(""), Seal(nil, nil))
	f.Fuzz(func(t *testing.T, key, stored []byte) {
		v, err := Unseal(key, stored)
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupted)
			require.Nil(t, v)
			return
		}
		require.Equal(t, stored, Seal(key, v), "accepted bytes Seal would not make")
	})
}

func TestWithChecksumsRoundTrip(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase, e *env) {
		b := WithChecksums(e.open())
		commit(t, b, true, func(x Batch) {
			x.Set([]byte("a"), []byte("1"))
			x.Set([]byte("b"), nil)
			x.Set([]byte("c"), []byte("3"))
			x.Delete([]byte("c"))
		})
		v, ok, err := b.Get([]byte("a"))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "1", string(v))
		v, ok, err = b.Get([]byte("b"))
		require.NoError(t, err)
		require.True(t, ok)
		require.Empty(t, v)
		_, ok, err = b.Get([]byte("c"))
		require.NoError(t, err)
		require.False(t, ok)
		keys, values := scanAll(t, b, nil, nil)
		require.Equal(t, []string{"a", "b"}, keys)
		require.Equal(t, []string{"1", ""}, values)
		raw, ok, err := Raw(b).Get([]byte("a"))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, Seal([]byte("a"), []byte("1")), raw)
		require.ErrorIs(t, b.Commit(Raw(b).NewBatch(), true), ErrForeignBatch)
		require.NoError(t, b.Close())
	})
}

// TestBboltDamagedValueIsDetected is finding 2 on bbolt: bbolt keeps no
// checksum of its pages, so a flipped byte in a value used to be served.
func TestBboltDamagedValueIsDetected(t *testing.T) {
	dir := t.TempDir()
	b, err := Open(KindBbolt, dir, Options{Logger: quietLogger()})
	require.NoError(t, err)
	b = WithChecksums(b)
	val := strings.Repeat("V", 200) + "-marker-" + strings.Repeat("W", 200)
	commit(t, b, true, func(x Batch) {
		for i := range 20 {
			x.Set(fmt.Appendf(nil, "k%02d", i), []byte(val))
		}
	})
	require.NoError(t, b.Close())
	path := filepath.Join(dir, BboltFile)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	i := bytes.Index(data, []byte("-marker-"))
	require.Positive(t, i)
	data[i+2] ^= 0x20 // "-marker-" -> "-mArker-"
	require.NoError(t, os.WriteFile(path, data, 0o600))

	b, err = Open(KindBbolt, dir, Options{Logger: quietLogger()})
	require.NoError(t, err)
	b = WithChecksums(b)
	defer b.Close()
	bad := 0
	for i := range 20 {
		v, ok, err := b.Get(fmt.Appendf(nil, "k%02d", i))
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupted)
			require.Contains(t, err.Error(), fmt.Sprintf("k%02d", i))
			bad++
			continue
		}
		require.True(t, ok)
		require.Equal(t, val, string(v), "damaged value served")
	}
	require.Equal(t, 1, bad)
	err = b.Scan(nil, nil, func(k, v []byte) error {
		if string(v) != val {
			return errors.New("damaged value served by Scan")
		}
		return nil
	})
	require.ErrorIs(t, err, ErrCorrupted)
}

// TestPebbleDamagedTableIsAnError is finding 3: flipped bytes in an .sst
// made pebble's logger panic inside a read. Now the read fails with
// ErrCorrupted naming the file, and the backend is failed.
func TestPebbleDamagedTableIsAnError(t *testing.T) {
	dir := t.TempDir()
	be, err := OpenPebble(dir, Options{Logger: quietLogger()})
	require.NoError(t, err)
	commit(t, be, true, func(x Batch) {
		for i := range 500 {
			x.Set(fmt.Appendf(nil, "k%04d", i), bytes.Repeat([]byte{byte(i)}, 100))
		}
	})
	require.NoError(t, be.(*pebbleBackend).db.Flush())
	require.NoError(t, be.Close())
	ssts, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	require.NoError(t, err)
	require.NotEmpty(t, ssts)
	data, err := os.ReadFile(ssts[0])
	require.NoError(t, err)
	for _, off := range []int{40, 41, 1000} { // inside the first data block
		data[off] ^= 0xff
	}
	require.NoError(t, os.WriteFile(ssts[0], data, 0o600))

	be, err = OpenPebble(dir, Options{Logger: quietLogger()})
	if err != nil {
		require.ErrorIs(t, err, ErrCorrupted)
		return
	}
	defer be.Close()
	err = be.Scan(nil, nil, func(k, v []byte) error { return nil })
	require.ErrorIs(t, err, ErrCorrupted)
	require.Contains(t, err.Error(), ".sst")
	_, _, err = be.Get([]byte("k0001"))
	require.ErrorIs(t, err, ErrCorrupted)
	require.True(t, be.Stats().Failed)
}

// TestPebbleCompactionOverDamageFailsBackend is the other half of finding
// 3: a compaction reading a damaged table ended the process from pebble's
// background goroutine (on every reopen, since the compaction is picked
// again). Now the backend enters the failed state with ErrCorrupted.
func TestPebbleCompactionOverDamageFailsBackend(t *testing.T) {
	dir := t.TempDir()
	be, err := OpenPebble(dir, Options{Logger: quietLogger()})
	require.NoError(t, err)
	for round := range 3 {
		commit(t, be, true, func(x Batch) {
			for i := range 300 {
				x.Set(fmt.Appendf(nil, "k%04d", i), bytes.Repeat([]byte{byte(i + round)}, 100))
			}
		})
		require.NoError(t, be.(*pebbleBackend).db.Flush())
	}
	require.NoError(t, be.Close())
	ssts, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(ssts), 2)
	data, err := os.ReadFile(ssts[0])
	require.NoError(t, err)
	data[100] ^= 0xff
	require.NoError(t, os.WriteFile(ssts[0], data, 0o600))

	be, err = OpenPebble(dir, Options{Logger: quietLogger()})
	if err != nil {
		require.ErrorIs(t, err, ErrCorrupted)
		return
	}
	defer be.Close()
	p := be.(*pebbleBackend)
	cerr := p.db.Compact(context.Background(), []byte("k"), []byte("l"), true)
	require.Error(t, cerr)
	require.True(t, be.Stats().Failed)
	_, _, err = be.Get([]byte("k0001"))
	require.ErrorIs(t, err, ErrCorrupted)
	require.Contains(t, err.Error(), ".sst")
}

// TestValueCRCFormat pins the checksum's definition (values sealed by
// earlier versions must still verify) at key lengths around the one-byte
// length boundary, and that unsealing allocates nothing.
func TestValueCRCFormat(t *testing.T) {
	value := []byte("some value")
	for _, n := range []int{0, 1, 8, 127, 128, 129, 300, 70000} {
		key := bytes.Repeat([]byte{'k'}, n)
		whole := append(binary.AppendUvarint(nil, uint64(n)), key...)
		whole = append(whole, value...)
		require.Equal(t, crc32.Checksum(whole, crc32.MakeTable(crc32.Castagnoli)), valueCRC(key, value), "key length %d", n)
	}
	key := []byte("key-0001")
	stored := Seal(key, value)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := Unseal(key, stored); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
}
