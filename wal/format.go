package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// On-disk format (see README.md for the prose version).
//
// A segment file is named after its base LSN, 16 lower-case hex digits and
// ".wal". It starts with a 32-byte segment header:
//
//	0  magic   [8]byte "TUPLDWAL"
//	8  version uint32  1
//	12 flags   uint32  0
//	16 base    uint64  the segment's base LSN (must equal the file name)
//	24 zero    uint32  0
//	28 crc     uint32  CRC32C of bytes 0..27
//
// followed by records, back to back, each a 28-byte header and its payload:
//
//	0  crc     uint32  CRC32C of header bytes 4..27 and the payload
//	4  length  uint32  payload bytes
//	8  type    uint8   RecordType, never 0
//	9  flags   uint8   0
//	10 zero    uint16  0
//	12 lsn     uint64  LSN of this header: segment base + file offset
//	20 synced  uint64  FlushedLSN when the record was appended
//
// All integers are little-endian. The LSN of a byte is its segment's base
// plus its offset in the file; a segment's base is the previous segment's
// base plus the previous segment's length, so the LSN space is contiguous
// and includes segment headers.
const (
	segHeaderSize = 32
	recHeaderSize = 28

	formatVersion = 1
	segSuffix     = ".wal"
	tmpSuffix     = ".tmp"
	lockName      = "LOCK"

	minSegmentSize     = 256
	maxSegmentSize     = 1 << 32
	defaultSegmentSize = 64 << 20
)

var segMagic = [8]byte{'T', 'U', 'P', 'L', 'D', 'W', 'A', 'L'}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// segmentName is the file name of the segment whose base LSN is base.
func segmentName(base LSN) string {
	return fmt.Sprintf("%016x%s", uint64(base), segSuffix)
}

// parseSegmentName returns the base LSN of a segment file name; ok is false
// for any other name.
func parseSegmentName(name string) (LSN, bool) {
	hex, found := strings.CutSuffix(name, segSuffix)
	if !found || len(hex) != 16 || strings.ToLower(hex) != hex {
		return 0, false
	}
	v, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		return 0, false
	}
	return LSN(v), true
}

func encodeSegmentHeader(base LSN) []byte {
	h := make([]byte, segHeaderSize)
	copy(h[0:8], segMagic[:])
	binary.LittleEndian.PutUint32(h[8:12], formatVersion)
	binary.LittleEndian.PutUint32(h[12:16], 0)
	binary.LittleEndian.PutUint64(h[16:24], uint64(base))
	binary.LittleEndian.PutUint32(h[24:28], 0)
	binary.LittleEndian.PutUint32(h[28:32], crc32.Checksum(h[0:28], castagnoli))
	return h
}

// checkSegmentHeader validates a segment header read from the file of the
// segment whose name says base.
func checkSegmentHeader(h []byte, base LSN) error {
	if len(h) < segHeaderSize {
		return fmt.Errorf("segment header cut short (%d of %d bytes)", len(h), segHeaderSize)
	}
	h = h[:segHeaderSize]
	if allZero(h) {
		return errors.New("segment header is zero-filled")
	}
	if crc32.Checksum(h[0:28], castagnoli) != binary.LittleEndian.Uint32(h[28:32]) {
		return errors.New("segment header CRC mismatch")
	}
	if [8]byte(h[0:8]) != segMagic {
		return errors.New("not a tupled WAL segment (bad magic)")
	}
	if v := binary.LittleEndian.Uint32(h[8:12]); v != formatVersion {
		return fmt.Errorf("unsupported segment format version %d", v)
	}
	if binary.LittleEndian.Uint32(h[12:16]) != 0 || binary.LittleEndian.Uint32(h[24:28]) != 0 {
		return errors.New("segment header has unknown flags")
	}
	if b := LSN(binary.LittleEndian.Uint64(h[16:24])); b != base {
		return fmt.Errorf("segment header names base %d, file name says %d", b, base)
	}
	return nil
}

// appendRecord encodes a record whose header starts at LSN lsn onto buf.
// synced is the FlushedLSN at the time of the append.
func appendRecord(buf []byte, lsn, synced LSN, r Record) []byte {
	start := len(buf)
	buf = append(buf, make([]byte, recHeaderSize)...)
	h := buf[start : start+recHeaderSize]
	binary.LittleEndian.PutUint32(h[4:8], uint32(len(r.Data)))
	h[8] = byte(r.Type)
	h[9] = 0
	h[10], h[11] = 0, 0
	binary.LittleEndian.PutUint64(h[12:20], uint64(lsn))
	binary.LittleEndian.PutUint64(h[20:28], uint64(synced))
	buf = append(buf, r.Data...)
	crc := crc32.Update(0, castagnoli, buf[start+4:start+recHeaderSize])
	crc = crc32.Update(crc, castagnoli, r.Data)
	binary.LittleEndian.PutUint32(buf[start:start+4], crc)
	return buf
}

// voidType marks a record voided after a write of it failed for lack of
// space (see Options.RetryNoSpace): it keeps its bytes and LSN, so the log
// stays contiguous, but Replay never shows it. Engines must not use it.
const voidType RecordType = 0xff

// voidRecords turns every record of buf — whole records back to back, as a
// pending chunk holds them — into a void record, in place.
func voidRecords(buf []byte) {
	for len(buf) >= recHeaderSize {
		n := recHeaderSize + int(binary.LittleEndian.Uint32(buf[4:8]))
		buf[8] = byte(voidType)
		binary.LittleEndian.PutUint32(buf[0:4], crc32.Checksum(buf[4:n], castagnoli))
		buf = buf[n:]
	}
}

// recHeader is a decoded record header.
type recHeader struct {
	crc    uint32
	length uint32
	typ    RecordType
	lsn    LSN
	synced LSN
}

// decodeRecordHeader checks the parts of a record header that can be checked
// without its payload. want is the LSN the header must carry (its segment's
// base plus its offset); a header carrying another LSN is stale (left over
// from another use of the file) or misplaced.
func decodeRecordHeader(h []byte, want LSN) (recHeader, error) {
	if len(h) < recHeaderSize {
		return recHeader{}, fmt.Errorf("record header cut short (%d of %d bytes)", len(h), recHeaderSize)
	}
	h = h[:recHeaderSize]
	if allZero(h) {
		return recHeader{}, errors.New("zero-filled record header")
	}
	rh := recHeader{
		crc:    binary.LittleEndian.Uint32(h[0:4]),
		length: binary.LittleEndian.Uint32(h[4:8]),
		typ:    RecordType(h[8]),
		lsn:    LSN(binary.LittleEndian.Uint64(h[12:20])),
		synced: LSN(binary.LittleEndian.Uint64(h[20:28])),
	}
	if rh.lsn != want {
		return recHeader{}, fmt.Errorf("record header carries LSN %d at LSN %d (stale or misplaced)", rh.lsn, want)
	}
	if rh.typ == 0 || h[9] != 0 || h[10] != 0 || h[11] != 0 {
		return recHeader{}, errors.New("record header has type 0 or unknown flags")
	}
	if rh.synced > rh.lsn {
		return recHeader{}, errors.New("record header claims durability beyond itself")
	}
	return rh, nil
}

// checkRecordCRC verifies the CRC of a record given its header bytes and payload.
func checkRecordCRC(h []byte, rh recHeader, payload []byte) error {
	crc := crc32.Update(0, castagnoli, h[4:recHeaderSize])
	crc = crc32.Update(crc, castagnoli, payload)
	if crc != rh.crc {
		return errors.New("record CRC mismatch")
	}
	return nil
}

// decodeRecordAt decodes the record whose header is at data[off:] in a
// segment with base LSN base. It returns the header and the payload (a
// sub-slice of data).
func decodeRecordAt(data []byte, off int64, base LSN) (recHeader, []byte, error) {
	if int64(len(data))-off < recHeaderSize {
		if allZero(data[off:]) {
			return recHeader{}, nil, errors.New("zero-filled record header")
		}
		return recHeader{}, nil, fmt.Errorf("record header cut short (%d of %d bytes)", int64(len(data))-off, recHeaderSize)
	}
	h := data[off : off+recHeaderSize]
	rh, err := decodeRecordHeader(h, base+LSN(off))
	if err != nil {
		return recHeader{}, nil, err
	}
	end := off + recHeaderSize + int64(rh.length)
	if end > int64(len(data)) {
		return recHeader{}, nil, fmt.Errorf("record payload cut short (length %d, %d bytes left)", rh.length, int64(len(data))-off-recHeaderSize)
	}
	payload := data[off+recHeaderSize : end]
	if err := checkRecordCRC(h, rh, payload); err != nil {
		return recHeader{}, nil, err
	}
	return rh, payload, nil
}

// allZero reports whether b holds only zero bytes (a page at a time: Open
// checks a preallocated segment's free room with it).
func allZero(b []byte) bool {
	var zeros [4096]byte
	for len(b) > 0 {
		n := min(len(b), len(zeros))
		if string(b[:n]) != string(zeros[:n]) {
			return false
		}
		b = b[n:]
	}
	return true
}
