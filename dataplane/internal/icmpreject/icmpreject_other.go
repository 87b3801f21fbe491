//go:build !linux

package icmpreject

import (
	"errors"
	"net/netip"
)

// open has no raw sockets: only Linux's are used.
func (s *Sender) open() { s.fd4, s.fd6 = -1, -1 }

func send(int, []byte, netip.Addr, netip.Addr) error { return errors.New("icmpreject: not supported") }

func closeFD(int) {}
