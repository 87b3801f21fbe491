package mblbvs

import (
	"errors"
	"net"
	"net/netip"
	"syscall"

	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/dataplane/mblb"
)

// lsnTries bounds the ports one member connection tries when the host
// refuses the translation's port (another program holds it).
const lsnTries = 4

// dialLSN opens a member connection from a translation of the
// virtual's lsn pool (source-address-translation type lsn), as the L4
// proxy does: the subscriber's client address gets a translation
// address and port, bound exactly (shared with an inbound listener,
// lsn.ReusePort) and held until the connection closes (legClosed). A
// connection shared by OneConnect keeps the translation of the client
// that opened it. A client the pool has no translation for gets no
// member connection.
func (mv *VS) dialLSN(snap *state.VirtualSnap, client netip.AddrPort, m mblb.Member) (*net.TCPConn, error) {
	t, err := snap.LSN.Translate(client, m.Addr, false, nil)
	if err != nil {
		return nil, err
	}
	for i := 0; ; i++ {
		d := net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(t.Addr), KeepAlive: -1,
			Control: func(_, _ string, rc syscall.RawConn) error {
				var err error
				if cerr := rc.Control(func(fd uintptr) { err = lsn.ReusePort(int(fd)) }); cerr != nil {
					return cerr
				}
				return err
			}}
		d.Timeout = snap.Cfg.ServerTCP.Timeout(mv.env.ConnectTimeout)
		c, err := d.Dial("tcp", m.Addr.String())
		if err == nil {
			tc := c.(*net.TCPConn)
			snap.Cfg.ServerTCP.ApplyConn(tc)
			mv.lsnLegs.Store(t.Addr, t)
			mv.lsnHeld.Add(1)
			t.Attach(tc) // zombie-timeout closes it
			return tc, nil
		}
		if i < lsnTries && (errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EADDRNOTAVAIL)) && t.Retry() {
			continue
		}
		t.Release()
		return nil, err
	}
}

// releaseLSN gives back the translation of the server connection from
// local, if it was made from one.
func (mv *VS) releaseLSN(local netip.AddrPort) {
	if mv.lsnHeld.Load() == 0 {
		return
	}
	if t, ok := mv.lsnLegs.LoadAndDelete(local); ok {
		mv.lsnHeld.Add(-1)
		t.(*lsn.Translation).Release()
	}
}
