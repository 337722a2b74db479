package pgtest

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ProcCPU is the CPU time the processes pids and the children of parent
// (PostgreSQL's postmaster and its backends; none for 0) used so far,
// from /proc/<pid>/stat (Linux; the benches' CPU a record).
func ProcCPU(pids []int, parent int) time.Duration {
	ents, _ := os.ReadDir("/proc")
	var ticks int64
	for _, d := range ents {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// The fields after the command's closing parenthesis: state,
		// ppid (4th of the stat), …, utime (14th), stime (15th).
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 13 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); !slices.Contains(pids, p) && (parent == 0 || (p != parent && ppid != parent)) {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + s
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}
