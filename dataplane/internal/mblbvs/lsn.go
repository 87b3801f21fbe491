package mblbvs

import (
	"net"
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/mblb"
)

// dialLSN opens a member connection from a translation of the
// virtual's lsn pool (source-address-translation type lsn), as the L4
// proxy does: the subscriber's client address gets a translation
// address and port, held until the connection closes (legClosed). A
// connection shared by OneConnect keeps the translation of the client
// that opened it. A client the pool has no translation for gets no
// member connection.
func (mv *VS) dialLSN(snap *state.VirtualSnap, client netip.AddrPort, m mblb.Member) (*net.TCPConn, error) {
	t, err := snap.LSN.Translate(client, m.Addr, false, nil)
	if err != nil {
		return nil, err
	}
	c, err := mv.dialSide(snap, t.Addr, m.Addr) // tcpopts.go
	if err != nil {
		t.Release()
		return nil, err
	}
	mv.lsnLegs.Store(c.LocalAddr().(*net.TCPAddr).AddrPort(), t)
	t.Attach(c) // zombie-timeout closes it
	return c, nil
}
