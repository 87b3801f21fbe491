//go:build !linux

package l4

import (
	"net"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// ListenOpts does nothing off Linux: the listener settings are Linux
// socket options.
func (l *Listener) ListenOpts(s *sockopt.Side, saveSYN bool, vl *config.VLANFilter, arrival bool) {}

// tcpFinWait1 is Linux's TCP_FIN_WAIT1, never seen off Linux.
const tcpFinWait1 = 4

// connState and connZeroWindow know nothing off Linux (no TCP_INFO read
// here): the FIN-WAIT and zero-window timers never fire.
func connState(c *net.TCPConn) uint8     { return 0 }
func connZeroWindow(c *net.TCPConn) bool { return false }
