//go:build linux

package sockopt

import "golang.org/x/sys/unix"

// FreeBind sets IPV6_FREEBIND on an IPv6 socket: IPv6 binds only an
// address assigned to an interface, where IPv4 binds any address of a
// route of type local, so without it an IPv6 network's unassigned
// addresses (served through a local route) could not be listened on or
// left from.
func FreeBind(fd int) error {
	return unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_FREEBIND, 1)
}
