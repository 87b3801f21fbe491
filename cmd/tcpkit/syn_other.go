//go:build !linux

package main

import (
	"errors"
	"net"
	"syscall"
)

// synControl fails off Linux when asked for anything: the options are
// Linux's.
func synControl(mss, ttl, tos int) func(string, string, syscall.RawConn) error {
	if mss == 0 && ttl == 0 && tos == 0 {
		return nil
	}
	return func(string, string, syscall.RawConn) error { return errors.New("-mss, -ttl and -tos need Linux") }
}

// saveSYNControl fails off Linux, which alone keeps SYNs.
func saveSYNControl(string, string, syscall.RawConn) error {
	return errors.New("-syn needs Linux")
}

// synLine has nothing to say off Linux.
func synLine(net.Conn) string { return "no SYN" }
