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
	// Alts are the other virtuals on this listener's destination, told
	// apart from VS by their source (two wildcards on every port, a
	// standard and an ip-forward one, for clients of different
	// networks), the longest source first; nil on a listener of one
	// virtual (a nil test per accepted connection). Pick chooses.
	Alts atomic.Pointer[[]*state.Virtual]
	listenSys
	// lopts is what ListenOpts last set on the socket.
	lopts sockopt.Listener
}

// Pick is the virtual among alts (Listener.Alts: the longest source
// first) whose source holds client, else vs, the listener's own, whose
// source is the shortest (it resets a client none holds): BIG-IP's
// precedence, the most specific source first among virtuals of one
// destination. No allocation.
func Pick(vs *state.Virtual, alts *[]*state.Virtual, client netip.Addr) *state.Virtual {
	if alts == nil {
		return vs
	}
	client = client.Unmap()
	for _, v := range *alts {
		if snap := v.Snap.Load(); snap != nil && snap.Cfg.Source.Contains(client) {
			return v
		}
	}
	return vs
}
