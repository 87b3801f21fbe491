//go:build !linux

package sockopt

import (
	"net/netip"
	"syscall"
)

// Apply does nothing off Linux: the settings are Linux socket options.
func (s *Side) Apply(fd int) {}

// ApplyConn does nothing off Linux.
func (s *Side) ApplyConn(c syscall.Conn) {}

// Apply does nothing off Linux.
func (t TOS) Apply(fd int) {}

// ApplyConn does nothing off Linux.
func (t TOS) ApplyConn(c syscall.Conn) {}

// Available is nil off Linux: no algorithm is left out.
func Available() map[string]bool { return nil }

// ApplyListener does nothing off Linux.
func (l Listener) ApplyListener(fd int) {}

// ApplyDatagram does nothing off Linux.
func ApplyDatagram(fd int, s *Side) {}

// ApplyPeer does nothing off Linux.
func (s *Side) ApplyPeer(fd int, peer netip.Addr) {}

// LowWait does nothing off Linux.
func (s *Side) LowWait(fd int) {}

// LowResume does nothing off Linux.
func (s *Side) LowResume(fd int) {}
