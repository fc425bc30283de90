//go:build unix

package heap

import "syscall"

// mapPage returns n bytes of anonymous memory outside the Go heap
// (valueSlab): the collector neither scans nor counts it.
func mapPage(n int) []byte {
	p, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		// Out of address space or memory: as a Go allocation would.
		panic("heap: mmap of a value slab page: " + err.Error())
	}
	return p
}

func unmapPage(p []byte) { _ = syscall.Munmap(p) }
