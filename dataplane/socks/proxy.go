package socks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/openltm/openltm/dataplane/fwdproxy"
)

// Config is an ltm profile socks as a virtual applies it.
type Config struct {
	// Profile is the profile's full path, for messages.
	Profile string
	// Versions is protocol-versions.
	Versions Versions
	// ConnectAllow is default-connect-handling allow: any destination;
	// deny (BIG-IP's default) takes only destinations where a virtual
	// server of this system listens.
	ConnectAllow bool
	// IPv6 is ipv6 yes: names may resolve to IPv6 addresses.
	IPv6 bool
	// Resolver is the dns-resolver's settings (host names of SOCKS 4A
	// and SOCKS 5 requests); nil (dns-resolver none): a request naming a
	// host is answered "host unreachable".
	Resolver *fwdproxy.ResolverConfig
}

// Proxy is one virtual's SOCKS settings with its resolver, whose cache
// the virtual's clients share for as long as the commit runs.
type Proxy struct {
	Config
	res *fwdproxy.Resolver
}

// New makes a proxy for c with an empty cache.
func New(c Config) *Proxy {
	p := &Proxy{Config: c}
	if c.Resolver != nil {
		p.res = fwdproxy.NewResolver(*c.Resolver)
	}
	return p
}

// Resolve is the address a request's name stands for (the first of the
// answer); with IPv6 off an IPv6 literal is refused as a name that does
// not resolve. The error is the reply code the client gets with it.
func (p *Proxy) Resolve(ctx context.Context, req *Request) (netip.Addr, byte, error) {
	if req.Host == "" {
		if req.Addr.Is6() && !req.Addr.Is4In6() && !p.IPv6 {
			return netip.Addr{}, AddrTypeNotSupport, errors.New("an IPv6 destination with ipv6 no")
		}
		return req.Addr.Unmap(), Succeeded, nil
	}
	if p.res == nil {
		return netip.Addr{}, HostUnreachable, fmt.Errorf("%s: the profile has no dns-resolver", req.Host)
	}
	addrs, err := p.res.Lookup(ctx, req.Host, p.IPv6)
	if err != nil {
		return netip.Addr{}, HostUnreachable, fmt.Errorf("%s: %v", req.Host, err)
	}
	if len(addrs) == 0 {
		return netip.Addr{}, HostUnreachable, fmt.Errorf("%s: %v", req.Host, fwdproxy.ErrNoName)
	}
	return addrs[0], Succeeded, nil
}

// DialCode is the reply code of a failed connection to the destination.
func DialCode(err error) byte {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return Refused
	case errors.Is(err, syscall.ENETUNREACH):
		return NetUnreachable
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return HostUnreachable
	case errors.As(err, &ne) && ne.Timeout():
		return HostUnreachable
	}
	return GeneralFailure
}

// ParseDestination reads what SOCKS::destination sets: ADDR:PORT,
// [V6ADDR]:PORT or NAME:PORT (a name is resolved as a client's would
// be).
func ParseDestination(s string) (host string, addr netip.Addr, port uint16, err error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return "", addr, 0, fmt.Errorf("%q: want ADDR:PORT or NAME:PORT", s)
	}
	h, ps := s[:i], s[i+1:]
	n, perr := strconv.Atoi(ps)
	if perr != nil || n < 1 || n > 65535 {
		return "", addr, 0, fmt.Errorf("%q: bad port %q", s, ps)
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if a, aerr := netip.ParseAddr(h); aerr == nil {
		return "", a.Unmap(), uint16(n), nil
	}
	if h == "" || strings.ContainsAny(h, " /:[]") || len(h) > 255 {
		return "", addr, 0, fmt.Errorf("%q: bad host %q", s, h)
	}
	return strings.ToLower(h), addr, uint16(n), nil
}
