//go:build linux && cgo

package sqlfe

/*
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
// parserMallocSetup pins glibc's mmap threshold at its default, 128 KiB.
// Left dynamic, glibc raises the threshold to the size of every large
// block freed (up to 32 MiB), so after the first big statement the
// parser's copies of later big statements come from the malloc arenas;
// free returns them to an arena, never to the kernel, and with one arena
// per busy thread a burst of large statements leaves hundreds of MiB
// resident for good. Pinned, blocks of 128 KiB and more are mmapped and
// unmapped on free.
static void parserMallocSetup(void) { mallopt(M_MMAP_THRESHOLD, 128 * 1024); }
#else
static void parserMallocSetup(void) {}
#endif
*/
import "C"

// init pins the threshold before any statement is parsed. It is a
// process-wide setting of the C heap: its only effect on other C code in
// the process is that its blocks of 128 KiB or more are mmapped too, which
// is glibc's own default before its first large free.
func init() { C.parserMallocSetup() }
