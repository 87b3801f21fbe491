package fwdproxy

import (
	"net"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/sslfwd"
)

// Intercept is an explicit proxy's SSL forward proxy: what its CONNECT
// tunnels need of the virtual's client-ssl and server-ssl profiles.
type Intercept struct {
	// Proxy forges the certificates and holds the bypass lists.
	Proxy *sslfwd.Proxy
	// Server is the server-ssl configuration for a server name.
	Server sslfwd.ServerConfig
	// Handshake bounds the client's hello and each handshake.
	Handshake time.Duration
}

// intercept runs the SSL forward proxy on a tunnel just established to
// oc, the origin named host (at one of dsts): the client's hello is read,
// and either passed on untouched (bypassed) or the tunnel's TLS is
// terminated with a certificate forged for the origin's and originated
// again. It returns what the tunnel copies to and from on the origin's
// side (the client's side becomes s.c), or nil when the tunnel is over.
func (s *Session) intercept(oc net.Conn, host string, dsts []netip.AddrPort) net.Conn {
	in := s.o.Intercept
	var first []byte
	if n := s.br.Buffered(); n > 0 {
		b, _ := s.br.Peek(n)
		first = append(first, b...)
		s.br.Discard(n)
	}
	deadline := time.Now().Add(in.Handshake)
	raw, hello, err := sslfwd.ReadHello(s.c, first, deadline)
	if err != nil {
		if hello == nil && len(raw) > 0 && err == sslfwd.ErrNotTLS {
			s.received(len(raw))
			if _, err := oc.Write(raw); err == nil { // not TLS: the tunnel is a tunnel [M]
				return oc
			}
		}
		s.abortTunnel()
		return nil
	}
	s.received(len(raw))
	dst := addrOf(oc.RemoteAddr())
	sni := hello.ServerName
	if in.Proxy.Bypasses().Decide(addrOf(s.c.RemoteAddr()), dst, sni) {
		if _, err := oc.Write(raw); err != nil {
			s.abortTunnel()
			return nil
		}
		return oc
	}
	if sni == "" {
		sni = host // the CONNECT's name when the hello has none [M]
	}
	c, o, bypass, err := in.Proxy.Intercept(s.c, raw, sni, oc, in.Server, deadline)
	if err != nil {
		if bypass {
			oc.Close()
			if nc, _, derr := s.dial(dsts); derr == nil {
				if _, werr := nc.Write(raw); werr == nil && s.swap(s.c, nc) {
					return nc
				}
				nc.Close()
			}
		}
		s.abortTunnel()
		return nil
	}
	if !s.swap(c, o) {
		return nil
	}
	return o
}

// swap makes c the client's side and t the tunnel, unless the session
// was closed meanwhile (then both are closed).
func (s *Session) swap(c, t net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.Close()
		t.Close()
		return false
	}
	s.c, s.tunnel = c, t
	return true
}

func addrOf(a net.Addr) netip.Addr {
	if t, ok := a.(*net.TCPAddr); ok {
		ip, _ := netip.AddrFromSlice(t.IP)
		return ip.Unmap()
	}
	if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}
