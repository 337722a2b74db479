//go:build !linux

package httpapi

import (
	"net"
	"time"
)

// setUserTimeout is Linux only; elsewhere the write deadline and the
// heartbeat find dead clients.
func setUserTimeout(net.Conn, time.Duration) {}
