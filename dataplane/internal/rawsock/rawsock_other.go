//go:build !linux

package rawsock

import (
	"net"
	"syscall"
	"unsafe"
)

// Read is read(2) on a non-blocking socket without the scheduler's
// syscall bookkeeping (rawsock_linux.go says why).
func Read(fd int, b []byte) (int, error) {
	r, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// Write is write(2); see Read.
func Write(fd int, b []byte) (int, error) {
	r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// SteerByCPU is Linux's (rawsock_linux.go); elsewhere the kernel's own
// choice of socket stands.
func SteerByCPU([]*net.UDPConn, int) error { return nil }

// ArrivalIf is 0: only Linux tells an accepted connection's arrival
// interface.
func ArrivalIf(int) int { return 0 }
