//go:build linux

package transcripts

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// socketClosed reports whether a connection's socket was closed by a
// reset (TCP_CLOSE, 7, in the kernel's TCP_INFO).
func socketClosed(rc syscall.RawConn) bool {
	closed := false
	rc.Control(func(fd uintptr) {
		ti, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		closed = err == nil && ti.State == 7
	})
	return closed
}
