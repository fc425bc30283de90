//go:build unix

package sqlfe

import "syscall"

// stackDepthLimit derives maxExprDepth from RLIMIT_STACK, the size glibc
// gives the threads Go's cgo runtime creates (and the main thread's).
func stackDepthLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_STACK, &rl); err != nil {
		return depthLimitForStack(0)
	}
	return depthLimitForStack(uint64(rl.Cur)) // RLIM_INFINITY is above any bound

}
