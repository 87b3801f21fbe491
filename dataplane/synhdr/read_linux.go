//go:build linux

package synhdr

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// savedMax is room for the largest IPv6 and TCP headers without
// extension headers (40 + 60 bytes) and an IPv4 header with options.
const savedMax = 128

// Read takes the SYN Linux kept for fd, an accepted socket whose
// listener has TCP_SAVE_SYN set; Linux hands it over once and frees it,
// so a second Read, or a socket whose SYN was not kept, gives nil. The
// headers are read into the stack; the one allocation is the SYN itself.
func Read(fd int) *SYN {
	var buf [savedMax]byte
	n := uint32(len(buf))
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.IPPROTO_TCP, unix.TCP_SAVED_SYN,
		uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)), 0)
	if e != 0 || n == 0 || int(n) > len(buf) {
		return nil
	}
	s, ok := Parse(buf[:n])
	if !ok {
		return nil
	}
	return &s
}

// SetSave asks a listening socket to keep (on) each client's SYN for
// Read, or to stop.
func SetSave(fd int, on bool) error {
	v := 0
	if on {
		v = 1
	}
	return unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_SAVE_SYN, v)
}

// SetMaxSeg sets fd's TCP_MAXSEG: before a connect, the MSS its SYN
// advertises and the largest segment it sends.
func SetMaxSeg(fd, mss int) error {
	return unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_MAXSEG, mss)
}
