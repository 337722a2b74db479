package httpapi

import (
	"net"
	"syscall"
	"time"
)

// tcpUserTimeout is TCP_USER_TIMEOUT (include/uapi/linux/tcp.h), which the
// syscall package names only on some architectures.
const tcpUserTimeout = 0x12

// setUserTimeout makes the kernel drop a TCP connection whose sent data
// stays unacknowledged for d: a KDS screen that vanished without closing
// its connection (Wi-Fi gone) is found out by its next heartbeat.
func setUserTimeout(c net.Conn, d time.Duration) {
	if w, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = w.NetConn() // the server's tracked connection (silentConns)
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return
	}
	raw.Control(func(fd uintptr) {
		syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout, int(d.Milliseconds()))
	})
}
