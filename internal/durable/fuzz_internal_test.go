package durable

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"testing"
)

func totalAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// FuzzDecodeCommit: the commit-record decoder never panics, allocates in
// proportion to its input (a damaged length field is checked against the
// bytes left before anything is allocated for it), decodes the same
// however the record is cut into streamed parts, and what it accepts
// re-encodes to a record that decodes to the same writes.
func FuzzDecodeCommit(f *testing.F) {
	f.Add(EncodeCommit(1, nil), uint16(0), uint16(0))
	f.Add(EncodeCommit(42, []Write{{Table: "t", Key: []byte("k"), Value: []byte("v")}, {Table: "t", Key: []byte("d"), Delete: true}}), uint16(3), uint16(9))
	f.Add(EncodeCommit(1<<40, []Write{{Table: "accounts", Key: bytes.Repeat([]byte{'k'}, 300), Value: bytes.Repeat([]byte{'v'}, 1000)}}), uint16(100), uint16(700))
	f.Add([]byte{}, uint16(0), uint16(0))
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f}, uint16(1), uint16(2))                                                     // a billion writes announced, none there
	f.Add(append([]byte{1, 1, 1, 1, 't'}, binary.AppendUvarint(nil, 1<<62)...), uint16(2), uint16(5))                        // a huge key length
	f.Add([]byte{1, 1, 1, 1, 't', 1, 'k', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, uint16(4), uint16(8)) // a varint overflowing 64 bits
	f.Add([]byte{1, 1, 3, 1, 't', 1, 'k'}, uint16(0), uint16(0))                                                             // unknown op
	f.Fuzz(func(t *testing.T, data []byte, cut1, cut2 uint16) {
		// TotalAlloc is the process's: another goroutine (a store a
		// previous test closed, finishing its background work) may
		// allocate during one decode, but hardly during three; the least
		// of three is the decoder's own.
		got := uint64(1<<64 - 1)
		var xid uint64
		var ws []Write
		var err error
		for range 3 {
			before := totalAlloc()
			xid, ws, err = decodeCommit(data)
			got = min(got, totalAlloc()-before)
		}
		if got > uint64(120*len(data))+4096 {
			t.Fatalf("decoding %d bytes allocated %d", len(data), got)
		}
		// The same bytes cut into three streamed fragments.
		a, b := int(cut1)%(len(data)+1), int(cut2)%(len(data)+1)
		a, b = min(a, b), max(a, b)
		var ws2 []Write
		xid2, err2 := decodeCommitStream([][]byte{data[:a], data[a:b], data[b:]}, func(w Write) error {
			ws2 = append(ws2, w)
			return nil
		})
		if (err == nil) != (err2 == nil) {
			t.Fatalf("whole: %v, in fragments at %d and %d: %v", err, a, b, err2)
		}
		if err != nil {
			return
		}
		if xid != xid2 || len(ws) != len(ws2) {
			t.Fatalf("whole: xid %d, %d writes; fragments: xid %d, %d writes", xid, len(ws), xid2, len(ws2))
		}
		for i := range ws {
			if ws[i].Table != ws2[i].Table || !bytes.Equal(ws[i].Key, ws2[i].Key) || !bytes.Equal(ws[i].Value, ws2[i].Value) || ws[i].Delete != ws2[i].Delete {
				t.Fatalf("write %d differs when the record is cut", i)
			}
		}
		xid3, ws3, err := decodeCommit(EncodeCommit(xid, ws))
		if err != nil || xid3 != xid || len(ws3) != len(ws) {
			t.Fatalf("re-encoding: %v", err)
		}
		for i := range ws {
			if ws[i].Table != ws3[i].Table || !bytes.Equal(ws[i].Key, ws3[i].Key) || !bytes.Equal(ws[i].Value, ws3[i].Value) || ws[i].Delete != ws3[i].Delete {
				t.Fatalf("write %d differs after re-encoding", i)
			}
		}
	})
}
