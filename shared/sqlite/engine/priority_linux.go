package engine

import (
	"runtime"
	"syscall"
)

// raiseThread locks the calling goroutine to its OS thread (whose id it
// returns) and raises that thread's scheduling priority by levels nice
// steps above the process's (Linux applies setpriority to a single thread
// when given its id). It needs CAP_SYS_NICE or an RLIMIT_NICE that allows
// it (systemd's LimitNICE=); without either it unlocks the goroutine again
// and returns the EPERM. When the goroutine ends, still locked, Go ends the
// thread, so the raised priority never passes to other goroutines.
func raiseThread(levels int) (tid int, err error) {
	runtime.LockOSThread()
	tid = syscall.Gettid()
	// The raw getpriority returns 20 - nice.
	prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	if err == nil {
		err = syscall.Setpriority(syscall.PRIO_PROCESS, tid, max(20-prio-levels, -20))
	}
	if err != nil {
		runtime.UnlockOSThread()
	}
	return tid, err
}

// CanRaiseThread reports whether this process may raise a thread by levels
// nice levels (CAP_SYS_NICE or RLIMIT_NICE), trying it on a goroutine of
// its own: raised, that goroutine ends locked to its thread, so the thread
// ends too.
func CanRaiseThread(levels int) bool {
	ok := make(chan bool)
	go func() {
		_, err := raiseThread(levels)
		ok <- err == nil
	}()
	return <-ok
}
