package heap

import "github.com/tupled/tupled/multixact"

// TupleHeader lets the tests build a version with any header, as a page
// image would hold it (outside tests a header changes only through Apply).
type TupleHeader struct {
	Xmin, Xmax          uint64
	Multi               *multixact.MultiXact
	Infomask, Infomask2 uint16
	Value               []byte
}

// MakeTuple is a version with header h, not yet applied.
func MakeTuple(h TupleHeader) *Tuple {
	return &Tuple{xmin: h.Xmin, xmax: h.Xmax, multi: h.Multi, infomask: h.Infomask, infomask2: h.Infomask2, value: h.Value}
}

// SetNext sets t_ctid of t (a test's hand-made update chain).
func SetNext(t, next *Tuple) { t.next = next }

// SetXmax overwrites t's xmax and infomask bits as a page image might hold
// them (tests of vacuum and visibility over hand-made headers).
func SetXmax(t *Tuple, xmax uint64, infomask, infomask2 uint16) {
	t.xmax, t.infomask, t.infomask2 = xmax, infomask, infomask2
}

// SetInfomask2 overwrites t_infomask2.
func SetInfomask2(t *Tuple, im2 uint16) { t.infomask2 = im2 }

// SetAfterBackendGet installs a hook that runs in a persistent table's
// load right after its backend read.
func SetAfterBackendGet(h *Heap, f func(key []byte)) { h.testAfterBackendGet = f }
