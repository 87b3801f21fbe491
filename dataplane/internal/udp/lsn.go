package udp

import (
	"errors"
	"net"
	"net/netip"
	"syscall"

	"github.com/openltm/openltm/dataplane/lsn"
)

// errLSN: the virtual's lsn pool gave the flow no translation.
var errLSN = errors.New("lsn translation failed")

// ruleSNAT reports whether a rule chose a snat or snatpool for the
// flow, which replaces the virtual's lsn pool.
func (f *flow) ruleSNAT() bool {
	rs := f.rs
	if rs == nil {
		return false
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.SNAT.Set
}

// dialLSN opens a server side to dst from a translation of lp (see
// dataplane/lsn), kept until the flow ends; the pool counts a failure.
func (f *flow) dialLSN(lp *lsn.Pool, dst netip.AddrPort) (*net.UDPConn, error) {
	t, err := lp.Translate(f.Client, dst, true, nil)
	if err != nil {
		return nil, errLSN
	}
	for i := 0; ; i++ {
		c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(t.Addr), net.UDPAddrFromAddrPort(dst))
		if err == nil {
			f.mu.Lock()
			f.lsn = append(f.lsn, t)
			f.mu.Unlock()
			return c, nil
		}
		if i < 4 && (errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EADDRNOTAVAIL)) && t.Retry() {
			continue
		}
		t.Release()
		return nil, err
	}
}

// releaseLSN ends the flow's translations.
func (f *flow) releaseLSN() {
	f.mu.Lock()
	ts := f.lsn
	f.lsn = nil
	f.mu.Unlock()
	for _, t := range ts {
		t.Release()
	}
}
