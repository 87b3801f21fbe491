//go:build linux

package main

import (
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/synhdr"
)

// synControl sets what a client's SYN says before it leaves: its MSS
// (TCP_MAXSEG), TTL (IP_TTL) and ToS (IP_TOS), each when not 0; nil
// when all are 0.
func synControl(mss, ttl, tos int) func(string, string, syscall.RawConn) error {
	if mss == 0 && ttl == 0 && tos == 0 {
		return nil
	}
	return func(_, _ string, rc syscall.RawConn) error {
		var err error
		rc.Control(func(fd uintptr) {
			for _, o := range [][3]int{{unix.IPPROTO_TCP, unix.TCP_MAXSEG, mss}, {unix.IPPROTO_IP, unix.IP_TTL, ttl}, {unix.IPPROTO_IP, unix.IP_TOS, tos}} {
				if o[2] != 0 && err == nil {
					err = unix.SetsockoptInt(int(fd), o[0], o[1], o[2])
				}
			}
		})
		return err
	}
}

// saveSYNControl makes a listener keep its clients' SYNs (TCP_SAVE_SYN),
// for synLine.
func saveSYNControl(_, _ string, rc syscall.RawConn) error {
	var err error
	rc.Control(func(fd uintptr) { err = synhdr.SetSave(int(fd), true) })
	return err
}

// synLine says what the SYN of c, accepted by a listener that keeps
// SYNs, carried: "mss 1460 ttl 64 tos 0" ("no SYN" when not kept).
func synLine(c net.Conn) string {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return "no SYN"
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return "no SYN"
	}
	var s *synhdr.SYN
	rc.Control(func(fd uintptr) { s = synhdr.Read(int(fd)) })
	if s == nil {
		return "no SYN"
	}
	return fmt.Sprintf("mss %d ttl %d tos %d", s.MSS, s.TTL, s.TOS)
}
