package node

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"sync"
	"time"
)

// Job is background work a node runs from start to shutdown: the kitchen
// ticket loop, offline card forwarding, the sync link, the hub's edge
// watch. Run works until ctx is done and then returns nil. The store
// exposes the single step (record the tickets due, forward up to N
// payments); the job owns the loop, its timer and its wake-up.
type Job struct {
	Name string
	Run  func(ctx context.Context) error
}

// Jobs runs a node's jobs in one start and stop order. Start runs a job in
// its own goroutine; OnStop adds a resource to release (a NATS connection,
// the embedded NATS server) at that place in the order. Stop stops them
// all in reverse order, waiting for each: a job stops before whatever was
// started before it, which it may use.
//
// A job whose Run returns an error (or panics) while the node is running is
// logged and restarted after a pause that doubles with every failure in a
// row, from Backoff up to MaxBackoff; a node serving a shop keeps its other
// work going rather than exit for one failing loop. A Run that returns nil
// early has finished and is not restarted.
type Jobs struct {
	Backoff    time.Duration // first pause before a restart; 0: 1 s
	MaxBackoff time.Duration // 0: 1 min

	log     *slog.Logger
	mu      sync.Mutex
	entries []*jobEntry
	stopped bool
}

type jobEntry struct {
	name    string
	release func()             // an OnStop entry
	cancel  context.CancelFunc // a running job
	done    chan struct{}
}

// NewJobs returns an empty runner that logs to log.
func NewJobs(log *slog.Logger) *Jobs {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Jobs{log: log}
}

// Start runs j until Stop. After Stop it runs nothing.
func (r *Jobs) Start(j Job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	// Labelled by its name for CPU profiles (go tool pprof -tagfocus
	// kassa=job:<name>) and the driver's count of round trips (pg.TripsEnv).
	ctx, cancel := context.WithCancel(pprof.WithLabels(context.Background(), pprof.Labels("kassa", "job:"+j.Name)))
	e := &jobEntry{name: j.Name, cancel: cancel, done: make(chan struct{})}
	r.entries = append(r.entries, e)
	go r.supervise(ctx, j, e.done)
}

// OnStop adds release to the stop order: Stop calls it after stopping the
// jobs started later. After Stop it calls release at once.
func (r *Jobs) OnStop(name string, release func()) {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		release()
		return
	}
	defer r.mu.Unlock()
	r.entries = append(r.entries, &jobEntry{name: name, release: release})
}

// Stop stops every job and releases every resource, newest first, waiting
// for each. It is safe to call more than once.
func (r *Jobs) Stop() {
	r.mu.Lock()
	r.stopped = true
	entries := r.entries
	r.entries = nil
	r.mu.Unlock()
	for _, e := range slices.Backward(entries) {
		if e.release != nil {
			e.release()
			continue
		}
		e.cancel()
		<-e.done
		r.log.Debug("job stopped", slog.String("job", e.name))
	}
}

// supervise runs j until ctx is done, restarting it after a failure.
func (r *Jobs) supervise(ctx context.Context, j Job, done chan struct{}) {
	defer close(done)
	pprof.SetGoroutineLabels(ctx)
	first, most := r.Backoff, r.MaxBackoff
	if first <= 0 {
		first = time.Second
	}
	if most < first {
		most = max(time.Minute, first)
	}
	pause := first
	for {
		began := time.Now()
		err := runJob(ctx, j)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			r.log.Info("job finished", slog.String("job", j.Name))
			return
		}
		if time.Since(began) > most {
			pause = first // it had been running fine
		}
		r.log.Error("job failed; restarting", slog.String("job", j.Name), slog.Any("err", err), slog.Duration("in", pause))
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(2*pause, most)
	}
}

// runJob runs j once, turning a panic into an error with its stack.
func runJob(ctx context.Context, j Job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return j.Run(ctx)
}
