//go:build linux

package l4

import "golang.org/x/sys/unix"

// clientGone reports whether a waiting client gave up: it reset the
// connection, or closed it without sending anything. A client that sent
// its request and then half-closed (a FIN after bytes still unread) is
// waiting for its answer and stays queued, as a proxy that does not
// abort on close keeps it.
func clientGone(fd int) bool {
	ti, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return true
	}
	switch ti.State {
	case unix.BPF_TCP_ESTABLISHED:
		return false
	case unix.BPF_TCP_CLOSE_WAIT:
		n, err := unix.IoctlGetInt(fd, unix.SIOCINQ)
		return err != nil || n == 0
	}
	return true
}
