//go:build pprof

package main

import (
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof on http.DefaultServeMux
	"os"
)

// A hub built with `-tags pprof` serves net/http/pprof on
// KASSA_PPROF_ADDR (a loopback address such as 127.0.0.1:6060), for heap
// profiles under load (docs/trust.md, "Memory"). Release builds have no
// such listener.
func init() {
	if addr := os.Getenv("KASSA_PPROF_ADDR"); addr != "" {
		go http.ListenAndServe(addr, nil)
	}
}
