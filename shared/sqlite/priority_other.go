//go:build !linux

package sqlite

import (
	"errors"
	"runtime"
)

// raiseThread locks the calling goroutine to its OS thread; raising one
// thread's priority is only done on Linux.
func raiseThread(levels int) (tid int, err error) {
	runtime.LockOSThread()
	return 0, errors.New("per-thread priority is only raised on Linux")
}

// CanRaiseThread reports false: threads are only raised on Linux.
func CanRaiseThread(levels int) bool { return false }
