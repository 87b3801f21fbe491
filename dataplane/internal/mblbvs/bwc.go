package mblbvs

import (
	"net"

	"github.com/openltm/openltm/dataplane/bwc"
)

// paced puts the client's connection under the virtual's bandwidth
// controller: what the client sends waits on the policy's bucket once
// read, what it is sent before it is written, so that requests' and
// responses' bodies pass at the policy's rate (headers count too, as
// BIG-IP counts every byte of a flow). A dynamic policy's instance is
// the client's address and port. Such clients run on goroutines, not the
// event loops, since a wait blocks (l4/loop_linux.go).
func (f *mblbFlow) paced(c net.Conn, p *bwc.Policy) net.Conn {
	f.bwc = p.Attach(f.Client.String())
	return bwc.PacedConn(c, f.bwc)
}
