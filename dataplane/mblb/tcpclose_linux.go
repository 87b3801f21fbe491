//go:build linux

package mblb

import (
	"net"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
)

// zeroWindowFD reports whether fd holds bytes its peer advertises no
// room for: a zero send window with data not yet sent (TCP_INFO).
func zeroWindowFD(fd int) bool {
	_, zw := tcpInfoFD(fd)
	return zw
}

// tcpCloseWait is Linux's TCP_CLOSE_WAIT (tcpi_state).
const tcpCloseWait = 8

// tcpInfoFD reads fd's TCP_INFO once: whether its peer's FIN came
// (CLOSE-WAIT) and whether it holds bytes for a zero window.
func tcpInfoFD(fd int) (closeWait, zw bool) {
	ti, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return false, false
	}
	return ti.State == tcpCloseWait, ti.Snd_wnd == 0 && ti.Notsent_bytes > 0
}

// connInfo is tcpInfoFD of c's socket; open is false once c is closed.
func connInfo(c net.Conn) (closeWait, zw, open bool) {
	err := rawsock.Control(c, func(fd int) error { closeWait, zw = tcpInfoFD(fd); return nil })
	return closeWait, zw, err == nil
}

// connZeroWindow is zeroWindowFD of a goroutine connection's socket.
func connZeroWindow(c net.Conn) (zw bool) {
	rawsock.Control(c, func(fd int) error { zw = zeroWindowFD(fd); return nil })
	return zw
}

// connFD is the socket under c, -1 when there is none.
func connFD(c net.Conn) (fd int) {
	fd = -1
	rawsock.Control(c, func(f int) error { fd = f; return nil })
	return fd
}

// connUnsent is how many bytes written to c its peer has not yet
// acknowledged (SIOCOUTQ); 0 once c is closed.
func connUnsent(c net.Conn) (n int) {
	rawsock.Control(c, func(fd int) error {
		n, _ = unix.IoctlGetInt(fd, unix.SIOCOUTQ)
		return nil
	})
	return n
}
