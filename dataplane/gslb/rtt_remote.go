package gslb

import (
	"context"
	"errors"
	"net/netip"
	"time"
)

// RemoteProber measures an LDNS from a probe path's source address on
// another host: a datacenter's ltmd, asked over iQuery, as BIG-IP's GTM
// asks the big3d of each datacenter. ok is false when no remote device
// owns src; the probe then runs from this host.
type RemoteProber func(ctx context.Context, src, ldns netip.Addr, port uint16, timeout time.Duration, protos []string) (rtt time.Duration, proto string, ok bool, err error)

// ErrNotProbed is what a RemoteProber returns for a path the device
// owning its source may not probe (a gtm server's iq-allow-path no): the
// path gets no metrics, rather than a probe counted as unanswered.
var ErrNotProbed = errors.New("gslb: the path's device does not probe paths (iq-allow-path no)")

var errNotProbed = ErrNotProbed.Error()

// SetRemoteProber makes the RTT probes of paths whose source address a
// remote device owns run there; their results are merged into the LDNS
// table with the local ones. nil runs every probe here.
func (s *Server) SetRemoteProber(p RemoteProber) {
	if p == nil {
		s.remote.Store(nil)
		return
	}
	s.remote.Store(&p)
}

// measureVia runs one path's probe remotely when a remote device owns the
// source address, else here.
// A remote probe reports no hop count (-1).
func (s *Server) measureVia(ctx context.Context, src, dst netip.Addr, port uint16, timeout time.Duration, protos []string) (time.Duration, string, int, error) {
	if rp := s.remote.Load(); rp != nil {
		if rtt, proto, ok, err := (*rp)(ctx, src, dst, port, timeout, protos); ok {
			return rtt, proto, -1, err
		}
	}
	return measureHops(ctx, src, dst, port, timeout, protos)
}

// Measure is one RTT probe from src (an address of this host) to the
// LDNS at dst, the protocols tried in order (dns_dot, tcp): what a
// datacenter's ltmd runs when the GSLB asks it.
func Measure(ctx context.Context, src, dst netip.Addr, port uint16, timeout time.Duration, protos []string) (time.Duration, string, error) {
	if port == 0 {
		port = 53
	}
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	if len(protos) == 0 {
		protos = []string{"dns_dot", "tcp"}
	}
	return measure(ctx, src, dst, port, timeout, protos)
}
