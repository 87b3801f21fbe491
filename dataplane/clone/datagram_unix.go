//go:build unix

package clone

import "syscall"

// sendNow sends p on a connected datagram socket without waiting: a full
// socket buffer or a refusal loses the copy (ok false).
func sendNow(rc syscall.RawConn, p []byte) (n int, ok bool) {
	var err error
	werr := rc.Write(func(fd uintptr) bool {
		err = syscall.Sendto(int(fd), p, syscall.MSG_DONTWAIT, nil)
		return true
	})
	if werr != nil || err != nil {
		return 0, false
	}
	return len(p), true
}
