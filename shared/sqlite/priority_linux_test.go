package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWritesRunOnARaisedThread: the writer runs every unit of work on an
// OS thread of its own, DefaultWriterPriority nice levels above the
// process, and that thread ends with the store, so the priority never
// passes to other work.
func TestWritesRunOnARaisedThread(t *testing.T) {
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "k.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := orgCtx(mustOrg(t, db))
	mustProduct(t, ctx, db, "PRIO-1")
	if !db.WriterStats().Raised {
		t.Skip("the writer thread could not be raised here (no CAP_SYS_NICE, RLIMIT_NICE too low): nothing to check")
	}
	tid := int(db.WriterTID.Load())
	var ranOn int
	if err := db.Write(ctx, func(tx *Tx) error { ranOn = gettid(); return nil }); err != nil {
		t.Fatal(err)
	}
	if ranOn != tid {
		t.Fatalf("a unit ran on thread %d, the raised writer thread is %d", ranOn, tid)
	}
	// This goroutine's thread runs ordinary goroutines, at the process's
	// priority (a raised thread only ever runs its writer).
	runtime.LockOSThread()
	base, writer := threadNice(t, gettid()), threadNice(t, tid)
	runtime.UnlockOSThread()
	if want := max(base-DefaultWriterPriority, -20); writer != want {
		t.Fatalf("writer thread nice %d, the test's thread %d: want %d", writer, base, want)
	}
	db.Close()
	if tid == os.Getpid() {
		// Go never ends the main thread: it stays parked, running nothing.
		t.Log("the writer ran on the main thread, which Go parks instead of ending; not checking that it ended")
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the raised writer thread %d still runs 5 s after Close", tid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// threadNice reads a thread's nice value from /proc (field 19 of stat).
func threadNice(t *testing.T, tid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", tid))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	n, err := strconv.Atoi(f[16]) // field 19 overall: state is field 3
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func gettid() int { return syscall.Gettid() }
