//go:build !linux

package sockopt

import "syscall"

// FreeBind is refused off Linux: IPV6_FREEBIND is a Linux socket option.
func FreeBind(fd int) error { return syscall.ENOPROTOOPT }
