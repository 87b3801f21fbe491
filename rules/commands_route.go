package rules

import (
	"net/netip"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// The ROUTE:: commands read BIG-IP's congestion metrics cache: what TCP
// learned about a destination (round-trip time and its variance,
// congestion window) kept after the connections end, so that a rule can
// steer or tune a new client by what is known of its path. openltm's TCP
// is the kernel's, and Linux keeps the same cache: its tcp_metrics table
// (`ip tcp_metrics`), one entry per source and destination address,
// written when a connection closes, read here over generic netlink.
//
// What maps, and where the meaning differs [M]:
//   - ROUTE::rtt and ROUTE::rttvar are the cached figures in F5's unit,
//     100 ns (Linux keeps microseconds); 0 when there is no entry.
//   - ROUTE::cwnd is F5's "cached congestion window in bytes": Linux
//     caches the window in segments, so it is that times the segment size
//     of the path (ROUTE::mtu less 40 bytes of IPv4 and TCP headers, 60
//     for IPv6).
//   - ROUTE::bandwidth is, as on BIG-IP 12.0 and later, the cached window
//     over the cached round-trip time, in kbit/s; 0 without an entry.
//   - ROUTE::age is the seconds since the entry was written; 0 without
//     one. ROUTE::expiration is the seconds until Linux stops trusting it
//     (an entry older than an hour is reset when next used), 0 without
//     one or once expired.
//   - ROUTE::mtu is the path MTU the kernel's route to the destination
//     has (learned path MTU or the interface's), which BIG-IP also keeps
//     per route.
//   - Linux keys entries by source, not by gateway: the optional gateway
//     argument is accepted and not used, and the entry read is the first
//     for the destination from any local address.
//   - ROUTE::clear DEST removes the destination's entries (from every
//     source); it needs CAP_NET_ADMIN, and is a Tcl error without it.
//   - ROUTE::domain is the route domain, always 0 (openltm has one).
//   - On other systems every figure is 0 and ROUTE::clear does nothing.

// routeMetrics is one tcp_metrics entry.
type routeMetrics struct {
	found  bool
	rtt    time.Duration
	rttvar time.Duration
	cwnd   int // segments
	age    time.Duration
}

// routeTimeout is how long Linux trusts an entry (TCP_METRICS_TIMEOUT).
const routeTimeout = time.Hour

func registerRoute(t *tcl.Commands) {
	t.Register("ROUTE::rtt", routeCmd("ROUTE::rtt", func(m routeMetrics, _ int) int64 { return int64(m.rtt / 100) }))
	t.Register("ROUTE::rttvar", routeCmd("ROUTE::rttvar", func(m routeMetrics, _ int) int64 { return int64(m.rttvar / 100) }))
	t.Register("ROUTE::cwnd", routeCmd("ROUTE::cwnd", func(m routeMetrics, mss int) int64 { return int64(m.cwnd) * int64(mss) }))
	t.Register("ROUTE::bandwidth", routeCmd("ROUTE::bandwidth", func(m routeMetrics, mss int) int64 {
		us := m.rtt.Microseconds()
		if us <= 0 {
			return 0
		}
		return int64(m.cwnd) * int64(mss) * 8 * 1000 / us
	}))
	t.Register("ROUTE::age", routeCmd("ROUTE::age", func(m routeMetrics, _ int) int64 {
		if !m.found {
			return 0
		}
		return int64(m.age / time.Second)
	}))
	t.Register("ROUTE::expiration", routeCmd("ROUTE::expiration", func(m routeMetrics, _ int) int64 {
		if !m.found || m.age >= routeTimeout {
			return 0
		}
		return int64((routeTimeout - m.age) / time.Second)
	}))
	t.Register("ROUTE::mtu", cmdRouteMTU)
	t.Register("ROUTE::clear", cmdRouteClear)
	t.Register("ROUTE::domain", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) > 3 {
			return tcl.Empty, tcl.WrongArgs("ROUTE::domain ?destination? ?gateway?")
		}
		return tcl.Int(0), nil
	})
}

// routeArgs reads `DESTINATION ?GATEWAY?`.
func routeArgs(cmd string, args []tcl.Value) (netip.Addr, error) {
	if len(args) != 2 && len(args) != 3 {
		return netip.Addr{}, tcl.WrongArgs(cmd + " destination_ip ?gateway_ip?")
	}
	for _, a := range args[1:] {
		if _, err := parseRouteAddr(a.String()); err != nil {
			return netip.Addr{}, tcl.Errorf("%s: invalid IP address %q", cmd, a.String())
		}
	}
	return parseRouteAddr(args[1].String())
}

// parseRouteAddr reads an address as IP::remote_addr prints it, with or
// without a route domain (%0) and zone.
func parseRouteAddr(s string) (netip.Addr, error) {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			s = s[:i]
			break
		}
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return a, err
	}
	return a.Unmap(), nil
}

// routeMSS is the TCP segment size of the path to dst.
func routeMSS(dst netip.Addr) int {
	mtu, err := routeMTU(netip.AddrPortFrom(dst, 9))
	if err != nil || mtu <= 0 {
		return 0
	}
	if dst.Is4() {
		return mtu - 40
	}
	return mtu - 60
}

func routeCmd(cmd string, f func(m routeMetrics, mss int) int64) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		dst, err := routeArgs(cmd, args)
		if err != nil {
			return tcl.Empty, err
		}
		m, err := routeLookup(dst)
		if err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", cmd, err)
		}
		if !m.found {
			return tcl.Int(0), nil
		}
		mss := 0
		if m.cwnd > 0 {
			mss = routeMSS(dst)
		}
		return tcl.Int(f(m, mss)), nil
	}
}

func cmdRouteMTU(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	dst, err := routeArgs("ROUTE::mtu", args)
	if err != nil {
		return tcl.Empty, err
	}
	mtu, err := routeMTU(netip.AddrPortFrom(dst, 9))
	if err != nil {
		return tcl.Int(0), nil // no route: nothing cached [M]
	}
	return tcl.Int(int64(mtu)), nil
}

func cmdRouteClear(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	dst, err := routeArgs("ROUTE::clear", args)
	if err != nil {
		return tcl.Empty, err
	}
	if err := routeDelete(dst); err != nil {
		return tcl.Empty, tcl.Errorf("ROUTE::clear: %v", err)
	}
	return tcl.Empty, nil
}
