package wal

import "golang.org/x/sys/unix"

// fallocate gives the file at fd size bytes, allocated (mode 0: the file's
// size becomes size if it was smaller; the new bytes read as zeros).
func fallocate(fd uintptr, size int64) error {
	return unix.Fallocate(int(fd), 0, 0, size)
}
