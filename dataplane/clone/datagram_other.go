//go:build !unix

package clone

import "syscall"

// sendNow sends p on a connected datagram socket; where the system has no
// non-blocking send flag the write is the socket's own (it does not block
// for a datagram socket in practice).
func sendNow(rc syscall.RawConn, p []byte) (n int, ok bool) {
	var err error
	werr := rc.Write(func(fd uintptr) bool {
		_, err = syscall.Write(syscall.Handle(fd), p)
		return true
	})
	if werr != nil || err != nil {
		return 0, false
	}
	return len(p), true
}
