package synctest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tripsEnv (KASSA_BENCH_TRIPS=1) has BenchmarkIngest count its PostgreSQL
// hubs' round trips by who made them (the driver's hidden knob
// KASSA_PG_TRIPS, engine/pg/trips.go) over the pushes and print them a
// push (docs/performance.md, "Round trips a push at the ingest (session
// 20, helper rtcount)").
const tripsEnv = "KASSA_BENCH_TRIPS"

// tripCounter takes the hubs' counts before and after the pushes.
type tripCounter struct {
	file   string
	pids   []int
	before map[string][2]int64
}

// countTrips has the hubs started next count their round trips into a
// file of their own (nil when KASSA_BENCH_TRIPS is not set).
func countTrips(b *testing.B, store string) *tripCounter {
	if os.Getenv(tripsEnv) == "" || store != "postgres" {
		return nil
	}
	t := &tripCounter{file: filepath.Join(b.TempDir(), "trips")}
	b.Setenv("KASSA_PG_TRIPS", t.file) // engine/pg's TripsEnv
	return t
}

// snapshot has every hub append its counts and sums them, by kind.
func (t *tripCounter) snapshot(b *testing.B) map[string][2]int64 {
	ends := strings.Count(t.read(), "\nend\n")
	for _, pid := range t.pids {
		syscall.Kill(pid, syscall.SIGUSR1)
	}
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(t.read(), "\nend\n") < ends+len(t.pids) {
		if time.Now().After(deadline) {
			b.Fatalf("the hubs did not write their round trips to %s", t.file)
		}
		time.Sleep(10 * time.Millisecond) // polling a file another process writes
	}
	sums := map[string][2]int64{}
	parts := strings.Split(t.read(), "---\n")
	for _, part := range parts[len(parts)-len(t.pids):] {
		for line := range strings.SplitSeq(strings.TrimSuffix(part, "end\n"), "\n") {
			f := strings.SplitN(line, "\t", 3)
			if len(f) < 3 {
				continue
			}
			trips, _ := strconv.ParseInt(f[0], 10, 64)
			stmts, _ := strconv.ParseInt(f[1], 10, 64)
			s := sums[f[2]]
			sums[f[2]] = [2]int64{s[0] + trips, s[1] + stmts}
		}
	}
	return sums
}

func (t *tripCounter) read() string {
	b, _ := os.ReadFile(t.file)
	return string(b)
}

// print prints the round trips and statements a push between before and
// now, by who (totals) and by kind.
func (t *tripCounter) print(b *testing.B, pushes int) {
	after := t.snapshot(b)
	type row struct {
		key          string
		trips, stmts float64
	}
	var kinds []row
	byWho := map[string]*row{}
	var total row
	for k, v := range after {
		d := row{key: k, trips: float64(v[0]-t.before[k][0]) / float64(pushes), stmts: float64(v[1]-t.before[k][1]) / float64(pushes)}
		if d.trips == 0 {
			continue
		}
		kinds = append(kinds, d)
		who := strings.SplitN(k, "\t", 2)[0]
		if byWho[who] == nil {
			byWho[who] = &row{key: who}
		}
		byWho[who].trips, byWho[who].stmts = byWho[who].trips+d.trips, byWho[who].stmts+d.stmts
		total.trips, total.stmts = total.trips+d.trips, total.stmts+d.stmts
	}
	desc := func(a, b row) int { return int((b.trips - a.trips) * 1e6) }
	slices.SortFunc(kinds, desc)
	var whos []row
	for _, r := range byWho {
		whos = append(whos, *r)
	}
	slices.SortFunc(whos, desc)
	fmt.Printf("\nRound trips to PostgreSQL a push (%d pushes), by who: %.2f round trips, %.2f statements\n| who | trips/push | statements/push |\n|---|---|---|\n", pushes, total.trips, total.stmts)
	for _, r := range whos {
		fmt.Printf("| %s | %.3f | %.3f |\n", r.key, r.trips, r.stmts)
	}
	fmt.Printf("\n| trips/push | statements/push | who | how | last statement |\n|---|---|---|---|---|\n")
	for _, r := range kinds {
		fmt.Printf("| %.3f | %.3f | %s |\n", r.trips, r.stmts, strings.ReplaceAll(strings.ReplaceAll(r.key, "|", "/"), "\t", " | "))
	}
}
