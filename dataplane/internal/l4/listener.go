package l4

import (
	"net/netip"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/internal/state"
)

// Listener is one bound address:port; the virtual that owns it can change
// between commits without closing the socket.
type Listener struct {
	Addr netip.AddrPort
	// MPTCP: the listener was asked for Multipath TCP (the socket is
	// plain TCP where the kernel refused); a commit that changes it
	// opens the address anew.
	MPTCP bool
	VS    atomic.Pointer[state.Virtual]
	listenSys
	// lopts is what ListenOpts last set on the socket.
	lopts sockopt.Listener
}
