// Package freeport picks loopback TCP ports for tests that must name a
// port before the process that listens on it starts (a cluster's routes,
// a PostgreSQL server, a printer). A port taken with ":0" comes from the
// kernel's ephemeral range, which every outgoing connection on the machine
// also draws from: between the pick and the bind another process's
// connection could take it (seen in sessions 12 and 18, a hub or a NATS
// server that never served). These ports come from just below that range,
// which the kernel never hands out by itself, and each is given once per
// process.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// span is how many ports below the ephemeral range Pick draws from.
const span = 12000

var (
	mu    sync.Mutex
	given = map[int]bool{}
)

// Pick gives a loopback TCP port that is free now, below the kernel's
// ephemeral range, not given before in this process.
func Pick() (int, error) {
	low := ephemeralLow()
	mu.Lock()
	defer mu.Unlock()
	for range 200 {
		p := low - 1 - rand.IntN(min(span, low-1024))
		if given[p] {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue // in use
		}
		l.Close()
		given[p] = true
		return p, nil
	}
	return 0, fmt.Errorf("freeport: no free port below %d", low)
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// default where it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n <= 2048 {
		return 32768
	}
	return n
}
