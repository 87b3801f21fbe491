//go:build !linux

package rules

import "errors"

var errNoSockopt = errors.New("not supported on this system")

func tcpInfo(fd int) (TCPInfo, error)  { return TCPInfo{}, errNoSockopt }
func setNoDelay(fd int, on bool) error { return errNoSockopt }
func setTOS(fd, v int) error           { return errNoSockopt }
