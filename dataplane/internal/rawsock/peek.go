package rawsock

import (
	"io"
	"net"
	"syscall"
)

// PeekByte is the first byte c's peer sent, left in the socket for the
// next read (recv(2) with MSG_PEEK), waiting for it until c's read
// deadline: it tells a TLS client from a plaintext one without a buffer
// in front of the socket, so that what reads on sees the stream whole.
func PeekByte(c *net.TCPConn) (byte, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var b [1]byte
	var n int
	var perr error
	err = rc.Read(func(fd uintptr) bool {
		n, _, perr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK)
		return perr != syscall.EAGAIN && perr != syscall.EINTR
	})
	switch {
	case err != nil:
		return 0, err
	case perr != nil:
		return 0, perr
	case n == 0:
		return 0, io.EOF
	}
	return b[0], nil
}
