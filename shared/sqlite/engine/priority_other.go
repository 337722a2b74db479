//go:build !linux

package engine

import "errors"

// raiseThread raises nothing: one thread's priority is only raised on
// Linux.
func raiseThread(levels int) (tid int, err error) {
	return 0, errors.New("per-thread priority is only raised on Linux")
}

// CanRaiseThread reports false: threads are only raised on Linux.
func CanRaiseThread(levels int) bool { return false }
