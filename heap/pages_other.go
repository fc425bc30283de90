//go:build !unix

package heap

// mapPage returns n bytes for a value slab page: where there is no mmap,
// a Go allocation (pointer-free, so never scanned, but counted by the
// collector).
func mapPage(n int) []byte { return make([]byte, n) }

func unmapPage([]byte) {}
