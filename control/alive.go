//go:build unix

package control

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// Alive reports whether the daemon is still at the other end, without
// sending anything: an interactive shell asks before each command, so it
// notices a daemon that went away while the user was typing, and can
// reconnect before the command is sent rather than lose it.
func (c *Client) Alive() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return false
	}
	sc, ok := c.conn.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	alive := true
	raw.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		switch {
		case err == nil && n == 0:
			alive = false // orderly shutdown: the daemon closed the session
		case err != nil && !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR):
			alive = false
		}
		return true // never wait for data
	})
	if !alive {
		c.fail(errors.New("the daemon closed the connection"))
	}
	return alive
}
