//go:build !linux

package mblbvs

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/mblb"
)

// dialFD is nil: without event loops message balancing runs on goroutines.
func (mv *VS) dialFD() func(netip.AddrPort, mblb.Member) (int, bool, netip.AddrPort, error) {
	return nil
}
