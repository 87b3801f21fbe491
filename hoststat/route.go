package hoststat

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"net/netip"
	"strconv"
	"strings"
)

// Route is one route of the kernel's routing table: show net route's
// rows. openltm does not manage routes; the host's are the ones its
// traffic follows.
type Route struct {
	Destination netip.Prefix
	Gateway     netip.Addr // invalid for a route on the link
	Interface   string
	Metric      uint32
	Reject      bool // an unreachable or blackhole route
}

// The route flags of <linux/route.h> and <linux/ipv6_route.h> the readers
// use.
const (
	rtfUp      = 0x0001
	rtfGateway = 0x0002
	rtfReject  = 0x0200
	rtfCache   = 0x01000000
	rtfLocal   = 0x80000000
)

// ParseRoute reads /proc/net/route, the IPv4 main table: a header line,
// then "Iface Destination Gateway Flags RefCnt Use Metric Mask MTU Window
// IRTT", addresses as hexadecimal words in the host's byte order (little
// endian on every platform openltm runs on).
func ParseRoute(b []byte) ([]Route, error) {
	var out []Route
	var err error
	lines(b, func(line string) {
		f := strings.Fields(line)
		if err != nil || len(f) < 8 || f[0] == "Iface" {
			return
		}
		var dst, gw, mask netip.Addr
		var flags, metric uint64
		if dst, err = hexV4(f[1]); err != nil {
			return
		}
		if gw, err = hexV4(f[2]); err != nil {
			return
		}
		if flags, err = strconv.ParseUint(f[3], 16, 32); err != nil {
			err = fmt.Errorf("route: flags %q: %w", f[3], err)
			return
		}
		if metric, err = strconv.ParseUint(f[6], 10, 32); err != nil {
			err = fmt.Errorf("route: metric %q: %w", f[6], err)
			return
		}
		if mask, err = hexV4(f[7]); err != nil {
			return
		}
		if flags&rtfUp == 0 {
			return
		}
		m := mask.As4()
		ones := bits.OnesCount32(binary.BigEndian.Uint32(m[:]))
		r := Route{Destination: netip.PrefixFrom(dst, ones).Masked(), Interface: f[0], Metric: uint32(metric), Reject: flags&rtfReject != 0}
		if flags&rtfGateway != 0 {
			r.Gateway = gw
		}
		out = append(out, r)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// hexV4 reads an IPv4 address /proc/net/route prints as a little-endian
// hexadecimal word.
func hexV4(s string) (netip.Addr, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 4 {
		return netip.Addr{}, fmt.Errorf("route: %q is no address", s)
	}
	return netip.AddrFrom4([4]byte{b[3], b[2], b[1], b[0]}), nil
}

// ParseIPv6Route reads /proc/net/ipv6_route: "dest destlen src srclen
// nexthop metric refcnt use flags iface", addresses as 32 hexadecimal
// digits in network order. The local table's routes (the host's own
// addresses) and cached routes are left out: they are no routing
// decisions.
func ParseIPv6Route(b []byte) ([]Route, error) {
	var out []Route
	var err error
	lines(b, func(line string) {
		f := strings.Fields(line)
		if err != nil || len(f) < 10 {
			return
		}
		var dst, gw netip.Addr
		var plen, metric, flags uint64
		if dst, err = hexV6(f[0]); err != nil {
			return
		}
		if plen, err = strconv.ParseUint(f[1], 16, 8); err != nil || plen > 128 {
			err = errors.Join(err, fmt.Errorf("ipv6_route: prefix length %q", f[1]))
			return
		}
		if gw, err = hexV6(f[4]); err != nil {
			return
		}
		if metric, err = strconv.ParseUint(f[5], 16, 32); err != nil {
			err = fmt.Errorf("ipv6_route: metric %q: %w", f[5], err)
			return
		}
		if flags, err = strconv.ParseUint(f[8], 16, 32); err != nil {
			err = fmt.Errorf("ipv6_route: flags %q: %w", f[8], err)
			return
		}
		if flags&rtfUp == 0 || flags&(rtfCache|rtfLocal) != 0 {
			return
		}
		r := Route{Destination: netip.PrefixFrom(dst, int(plen)).Masked(), Interface: f[9], Metric: uint32(metric), Reject: flags&rtfReject != 0}
		if flags&rtfGateway != 0 {
			r.Gateway = gw
		}
		out = append(out, r)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func hexV6(s string) (netip.Addr, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 16 {
		return netip.Addr{}, fmt.Errorf("ipv6_route: %q is no address", s)
	}
	return netip.AddrFrom16([16]byte(b)), nil
}

// ReadRoutes reads the host's IPv4 then IPv6 routes now. A host without
// IPv6 has no ipv6_route: it has no IPv6 routes.
func ReadRoutes() ([]Route, error) {
	b, err := readProc("net/route")
	if err != nil {
		return nil, err
	}
	out, err := ParseRoute(b)
	if err != nil {
		return nil, err
	}
	b6, err := readProc("net/ipv6_route")
	if err != nil {
		return out, nil
	}
	r6, err := ParseIPv6Route(b6)
	if err != nil {
		return nil, err
	}
	return append(out, r6...), nil
}
