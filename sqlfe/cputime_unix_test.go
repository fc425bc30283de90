//go:build unix

package sqlfe

import (
	"syscall"
	"time"
)

// processCPU is the process's CPU time so far (user and system, every
// thread: the collector's work counts too). On a machine shared with other
// work, CPU time per operation varies less than wall time does.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
