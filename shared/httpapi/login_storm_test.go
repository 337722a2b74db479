package httpapi_test

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/shared/password"
	"kassa.dev/sync/wait"
)

// loginStorm sends n concurrent logins with unknown e-mails and returns
// how many got each status.
func (tn *testNode) loginStorm(n int) map[int]int {
	var mu sync.Mutex
	got := map[int]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := tn.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": fmt.Sprintf("storm%d@nowhere.test", i), "password": "guess"})
			mu.Lock()
			got[r.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return got
}

// stormNode is an edge whose throttles let a whole storm through to the
// password check, as a storm from many addresses would get: what bounds
// memory then is the hashing pool.
func stormNode(t testing.TB) *testNode {
	return MustStartNode(t, kassa.NodeEdge, func(c *node.Config) {
		c.LoginPerMinute, c.LoginBurst, c.LoginIPPerMinute, c.LoginIPBurst = 6000, 1000, 6000, 1000
	})
}

func TestLoginStormKeepsMemoryBoundedAndTheAPIAnswering(t *testing.T) {
	tn := stormNode(t)
	o := tn.MustOrg("Storm Cafe")
	if r := tn.Do("GET", "/api/v1/auth/me", o.Owner, nil); r.Status != 200 {
		t.Fatalf("me: %d %s", r.Status, r.Body)
	}
	runtime.GC()
	debug.FreeOSMemory()
	before, _ := node.RSS()
	if before == 0 {
		t.Skip("no /proc/self/status")
	}

	// An authenticated GET answers while the storm runs.
	var during []int
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			during = append(during, tn.Do("GET", "/api/v1/auth/me", o.Owner, nil).Status)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	peakRSS := watchPeakRSS(stop)
	st := time.Now()
	got := tn.loginStorm(64)
	t.Logf("storm took %v, %d GETs", time.Since(st), len(during))
	close(stop)
	<-done
	peak := peakRSS()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap sys %d MiB, heap inuse %d, stack %d, other sys %d, total sys %d", ms.HeapSys>>20, ms.HeapInuse>>20, ms.StackSys>>20, ms.OtherSys>>20, ms.Sys>>20)

	if got[401]+got[429] != 64 || got[401] == 0 {
		t.Fatalf("storm answers %v, want 401s (and 429s when no slot was free)", got)
	}
	grew := peak - before
	t.Logf("storm: %v; RSS %d MiB before, peak %d MiB (+%d MiB); password slots %d",
		got, before>>20, peak>>20, grew>>20, password.Slots())
	if grew > 64<<20 {
		t.Fatalf("RSS grew %d MiB during 64 concurrent logins, want < 64 MiB", grew>>20)
	}
	ok := 0
	for _, s := range during {
		if s == 200 {
			ok++
		} else {
			t.Fatalf("authenticated GET during the storm: %d", s)
		}
	}
	if ok == 0 {
		// The storm ended before the first GET did; one more must answer.
		wait.For(t, 5*time.Second, "GET /auth/me answers", func() bool { return tn.Do("GET", "/api/v1/auth/me", o.Owner, nil).Status == 200 })
	}
}

// watchPeakRSS starts watching the process's peak RSS; the function it
// returns gives the peak since then. It resets the kernel's high-water mark
// (VmHWM) where it may, else it samples VmRSS every few milliseconds until
// stop is closed.
func watchPeakRSS(stop <-chan struct{}) func() int64 {
	if node.ResetPeakRSS() == nil {
		return func() int64 { _, peak := node.RSS(); return peak }
	}
	var peak int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			if cur, _ := node.RSS(); cur > peak {
				peak = cur
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 { <-done; return peak }
}
