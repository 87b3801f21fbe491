package gslb

import (
	"net"

	"golang.org/x/sys/unix"
)

// recvTTL asks the kernel to hand each datagram's IP TTL (IPv6 hop
// limit) to ReadMsgUDP, for the hop count of an RTT probe's reply.
func recvTTL(c *net.UDPConn, v6 bool) bool {
	rc, err := c.SyscallConn()
	if err != nil {
		return false
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		if v6 {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVHOPLIMIT, 1)
		} else {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTTL, 1)
		}
	})
	return err == nil && serr == nil
}

// ttlOf reads the TTL or hop limit out of a datagram's control
// messages; -1 when it has none.
func ttlOf(oob []byte) int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return -1
	}
	for _, m := range msgs {
		if (m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_TTL) ||
			(m.Header.Level == unix.IPPROTO_IPV6 && m.Header.Type == unix.IPV6_HOPLIMIT) {
			if len(m.Data) >= 4 {
				return int(int32(uint32(m.Data[0]) | uint32(m.Data[1])<<8 | uint32(m.Data[2])<<16 | uint32(m.Data[3])<<24))
			}
			if len(m.Data) >= 1 {
				return int(m.Data[0])
			}
		}
	}
	return -1
}
