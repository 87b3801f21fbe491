package tlsprof

import (
	"crypto/tls"
	"net"
	"net/netip"
	"slices"
	"sync"
)

// maxOCSPMembers bounds the member addresses one answer lists [M: a
// certificate many members share lists the first 16 seen; the show says
// how many more there were].
const maxOCSPMembers = 16

// memberAddrs is the addresses of the members that presented an
// entry's certificate in a server-ssl handshake, first seen first.
type memberAddrs struct {
	mu    sync.Mutex
	addrs []netip.AddrPort
	more  int // members past maxOCSPMembers
}

// note adds a (once).
func (m *memberAddrs) note(a netip.AddrPort) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case slices.Contains(m.addrs, a):
	case len(m.addrs) < maxOCSPMembers:
		m.addrs = append(m.addrs, a)
	default:
		m.more++
	}
}

// list is a copy of the addresses and the count of those past the bound.
func (m *memberAddrs) list() ([]netip.AddrPort, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.addrs), m.more
}

// NoteMember records, for show ltm serverssl ocsp-responses, the member
// address (c's remote address) whose certificate the server-ssl
// profile's ocsp checked in the handshake on c, which ended (well or
// not; the certificate is read either way). It does nothing for a
// profile without ocsp (one nil test), a c that is not a *tls.Conn or
// one without the member's certificate. With ocsp: the certificate's
// hash and the answers' map lookup under its lock, as the check itself
// did.
func (b *Built) NoteMember(c net.Conn) {
	if b == nil || b.ocsp == nil {
		return
	}
	tc, ok := c.(*tls.Conn)
	if !ok {
		return
	}
	peer := tc.ConnectionState().PeerCertificates
	ta, ok := tc.RemoteAddr().(*net.TCPAddr)
	if len(peer) == 0 || !ok {
		return
	}
	k := ocspKey(b.ocsp.o.key(), peer[0])
	ocspCache.mu.Lock()
	e := ocspCache.m[k]
	ocspCache.mu.Unlock()
	if e != nil {
		a := ta.AddrPort()
		e.members.note(netip.AddrPortFrom(a.Addr().Unmap(), a.Port()))
	}
}
