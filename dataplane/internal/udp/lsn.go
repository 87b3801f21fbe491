package udp

import (
	"errors"
	"net"
	"net/netip"
	"syscall"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/lsn"
)

// errLSN: the virtual's lsn pool gave the flow no translation;
// errPickEnded: the flow's rule ended it in SA_PICKED.
var (
	errLSN       = errors.New("lsn translation failed")
	errPickEnded = errors.New("the flow ended in SA_PICKED")
)

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
	if f.rs != nil && f.handles(config.EventSAPicked) { // XLAT::src_addr and src_port read it there (xlat.go)
		f.picked.Store(t)
		_, fwd, _, ok := f.run(config.EventSAPicked, nil, nil)
		f.picked.Store(nil)
		if !ok || !fwd { // reject, drop or a Tcl error: the flow ends, the translation goes back
			t.Release()
			if ok {
				f.end()
			}
			return nil, errPickEnded
		}
	}
	for i := 0; ; i++ {
		c, err := dialReuse(t.Addr, dst)
		if err == nil {
			f.mu.Lock()
			f.lsn = append(f.lsn, t)
			f.mu.Unlock()
			t.Attach(c) // zombie-timeout closes it
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

// dialReuse is a UDP socket from src to dst shared with the
// translation's inbound socket (lsn.ReusePort): the host gives it the
// datagrams of dst, the inbound socket the others'.
func dialReuse(src, dst netip.AddrPort) (*net.UDPConn, error) {
	d := net.Dialer{LocalAddr: net.UDPAddrFromAddrPort(src), Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) { err = lsn.ReusePort(int(fd)) }); cerr != nil {
			return cerr
		}
		return err
	}}
	c, err := d.Dial("udp", dst.String())
	if err != nil {
		return nil, err
	}
	return c.(*net.UDPConn), nil
}
