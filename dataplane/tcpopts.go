package dataplane

import "github.com/openltm/openltm/dataplane/internal/sockopt"

// TCPSide and TOS are a tcp profile's socket settings for one side and a
// pool's IP ToS (dataplane/internal/sockopt), re-exported so the daemon
// can build them.
type (
	TCPSide = sockopt.Side
	TOS     = sockopt.TOS
)

// CongestionLinux maps BIG-IP's congestion-control names to Linux's
// module names; a name missing has no Linux equivalent.
var CongestionLinux = sockopt.Congestion

// CongestionAvailable is the congestion controls the kernel has loaded
// (nil: unknown), read when a commit is translated, since loading modules
// is the system's business, not openltm's.
func CongestionAvailable() map[string]bool { return sockopt.Available() }
