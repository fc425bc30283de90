//go:build !linux

package wal

import "errors"

// fallocate is Linux-only here; elsewhere segments grow by appends.
func fallocate(uintptr, int64) error {
	return errors.New("preallocation is implemented on Linux only")
}
