package node

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestJobsStopInReverseOrderWaitingForEach: a node's background work stops
// newest first, each job done before the one started before it (which it
// may use) is told to stop, with the resources released in their place.
func TestJobsStopInReverseOrderWaitingForEach(t *testing.T) {
	var mu sync.Mutex
	var order []string
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	r := NewJobs(nil)
	started := make(chan string, 3)
	job := func(name string) Job {
		return Job{Name: name, Run: func(ctx context.Context) error {
			started <- name
			<-ctx.Done()
			note(name)
			return nil
		}}
	}
	r.Start(job("tickets"))
	r.OnStop("nats", func() { note("nats") })
	r.Start(job("link"))
	r.Start(job("forwarder"))
	for range 3 {
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatal("jobs did not start")
		}
	}
	r.Stop()
	want := []string{"forwarder", "link", "nats", "tickets"}
	if !slices.Equal(order, want) {
		t.Fatalf("stop order %v, want %v", order, want)
	}
	r.Stop() // twice is harmless
	released := false
	r.OnStop("late", func() { released = true })
	if !released {
		t.Fatal("a resource added after Stop was not released at once")
	}
}

// TestJobsRestartAFailedJob: a job that fails or panics is logged with its
// name and runs again; one that finishes is not restarted.
func TestJobsRestartAFailedJob(t *testing.T) {
	var buf bytes.Buffer
	var logMu sync.Mutex
	r := NewJobs(slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &logMu}, nil)))
	r.Backoff = time.Nanosecond
	runs := 0
	healthy := make(chan struct{})
	r.Start(Job{Name: "flaky", Run: func(ctx context.Context) error {
		runs++
		switch runs {
		case 1:
			return errors.New("store unavailable")
		case 2:
			panic("nil map")
		}
		close(healthy)
		<-ctx.Done()
		return nil
	}})
	finished := make(chan struct{})
	r.Start(Job{Name: "once", Run: func(ctx context.Context) error { close(finished); return nil }})
	for _, c := range []chan struct{}{healthy, finished} {
		select {
		case <-c:
		case <-time.After(5 * time.Second):
			t.Fatal("the failed job was not restarted")
		}
	}
	r.Stop()
	if runs != 3 {
		t.Fatalf("flaky ran %d times, want 3", runs)
	}
	logMu.Lock()
	defer logMu.Unlock()
	out := buf.String()
	for _, want := range []string{"job=flaky", "store unavailable", "panic: nil map", `msg="job finished" job=once`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
