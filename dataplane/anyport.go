package dataplane

import (
	"fmt"
	"net/netip"
	"sync"

	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/dataplane/internal/l4"
	"github.com/openltm/openltm/dataplane/internal/sklookup"
)

// A virtual on every port of its address (`destination ADDR:any`, no
// traffic-matching-criteria port ranges), or of every address of its
// network (`mask`: Virtual.Network), listens on one socket (a UDP
// virtual: one socket group) at a free port of the address (a network
// virtual on a port or a port list: at the network's address and each
// of its ports, the steering handing it that port of every address of
// the network); a BPF
// sk_lookup program attached to the plane's network namespace
// (dataplane/internal/sklookup) hands it the SYNs (or datagrams) for
// every other port, save the ports where the plane has a port-specific
// virtual of the same protocol on the same address, and the addresses
// an address on every port or a longer network takes (most specific
// wins, as on BIG-IP).
// The accepted connection's local address is the one the client asked
// for (a UDP datagram's, from IP_ORIGDSTADDR: dataplane/internal/udp's
// anyport_linux.go), so translate-port disabled, a member at port any and an
// ip-forward virtual all go on to the client's port with no NAT. The
// program runs only while such a virtual exists: without one, no SYN of
// the namespace pays for it.

var anyPortProbe struct {
	once sync.Once
	err  error
}

// AnyPortSupport reports whether this process can steer every port of an
// address (a BPF sk_lookup program, Linux 5.9 and later, with the
// privilege to load and attach it), and why not. It tries once: loads
// the program, attaches it for an instant to the network namespace and
// detaches it.
func AnyPortSupport() error {
	anyPortProbe.once.Do(func() {
		s, err := sklookup.Open()
		if err == nil {
			err = s.Close()
		}
		anyPortProbe.err = err
	})
	return anyPortProbe.err
}

// AnyPortUnsupported is why openltm does not serve v on every port,
// "" when it does (or v is not on every port): what the daemon keeps with
// a warning and Check refuses. A network virtual on a port or a port list
// is served (the steering's trie holds the port), ip-forward too (it
// listens on the network's address only, whose own connections it
// resets); sip, iiop and the explicit forward proxy are served on every
// port. An ip-forward virtual is served on every
// port only [M]: openltm's listeners hear only this host's addresses, so
// one on a given port would forward each connection back to itself.
func AnyPortUnsupported(v *Virtual) string {
	switch {
	case v.Network.IsValid() && len(v.PortRanges) > 0 && portCount(v) > sklookup.MaxWildcards:
		return fmt.Sprintf("a network virtual on %d ports: the steering takes at most %d (a listener each)", portCount(v), sklookup.MaxWildcards)
	case v.HTTP3 != nil && v.Network.IsValid():
		return "an http3 network virtual (mask) is not served yet (its QUIC socket is bound to the network's own address and answers from it; the network's other addresses would need answering sockets per flow in the QUIC stack)"
	case !v.AnyPort() && v.IPForward && !v.Network.IsValid():
		return "an ip-forward host virtual on one port or a port list would forward to its own listener: openltm forwards on every port, or on a network virtual's ports (mask)"
	case !v.AnyPort():
		return ""
	case v.HTTP3 != nil:
		return "an http3 virtual on every port is not served yet (a udp virtual with a quic profile answers from its listener's port)"
	case v.MBLB != nil && v.TLS != nil && v.TLS.Forward != nil:
		return "an ssl forward proxy on every port is not served yet (it would connect back to its own address)"
	case v.ClientTCP.WantsMPTCP():
		return "a Multipath TCP listener (tcp profile mptcp) cannot take the connections of every port"
	}
	return ""
}

// portCount is how many ports v's criteria port ranges hold.
func portCount(v *Virtual) int {
	n := 0
	for _, r := range v.PortRanges {
		if r.High >= r.Low {
			n += int(r.High) - int(r.Low) + 1
		}
	}
	return n
}

// openSteer attaches the steering program when cfg has a virtual on
// every port (tcp or udp) and none runs yet. The caller holds p.mu.
func (p *Plane) openSteer(cfg *Config) error {
	if p.steer != nil {
		return nil
	}
	for _, v := range cfg.Virtuals {
		if v.AnyPort() || v.Network.IsValid() {
			s, err := sklookup.Open()
			if err != nil {
				return err
			}
			p.steer = s
			p.steerNow.Store(s)
			return nil
		}
	}
	return nil
}

// syncSteer points the steering at the running listeners on every port,
// TCP and UDP, of an address or of a network virtual's network (cfg's,
// through b's owners), passing over the port-specific ones of the same
// protocol on those addresses; with none, the program is detached. The
// caller holds p.mu, after the swap of both kinds of listeners.
func (p *Plane) syncSteer(cfg *Config, b *generation) {
	if p.steer == nil {
		return
	}
	tcp := make(map[netip.AddrPort]string, len(p.listeners))
	for ap := range p.listeners {
		tcp[ap] = b.want[ap]
	}
	udp := make(map[netip.AddrPort]string, len(p.udpListeners)+len(b.wantH3))
	for ap := range p.udpListeners {
		udp[ap] = b.wantUDP[ap]
	}
	// The HTTP/3 virtuals' QUIC sockets (http3vs.go) are port-specific
	// UDP listeners: passed over where a UDP wildcard or network would
	// take their port, never steered to (steerPlan). Those bound only
	// at swapH3 (lateH3) are passed over already: the entry makes the
	// kernel's own lookup run, which finds the socket once bound.
	for ap, name := range b.wantH3 {
		udp[ap] = name
	}
	wild, specific := steerPlan(cfg, tcp, udp, func(ap netip.AddrPort, isUDP bool) int {
		if isUDP {
			return p.udpListeners[ap].FD()
		}
		return l4.ListenerFD(p.listeners[ap])
	})
	if len(wild) == 0 {
		p.closeSteer()
		return
	}
	if err := p.steer.Sync(wild, specific); err != nil {
		p.log.Error("cannot steer every port", "error", err)
	}
}

// steerPlan is what the steering is told for cfg whose listeners are tcp
// and udp (address and port to the owning virtual): the listeners on
// every port of an address or of a network (wild, each with fd's socket),
// and what it passes over (specific): the port-specific listeners of the
// same protocol on those addresses or in those networks, and the plane's
// own destinations there (ownDests), both protocols. syncSteer gives it
// to the program; Check counts it against the program's limits. An
// HTTP/3 virtual's QUIC socket (udp, owned by a virtual with HTTP3) is
// never a wildcard (AnyPortUnsupported keeps it off every port and off
// networks): it is counted and passed over as a port-specific UDP
// listener, which it is.
func steerPlan(cfg *Config, tcp, udp map[netip.AddrPort]string, fd func(netip.AddrPort, bool) int) (wild []sklookup.Wildcard, specific []sklookup.Specific) {
	type addrProto struct {
		a   netip.Addr
		udp bool
	}
	addrs := map[addrProto]bool{}
	var nets []sklookup.Wildcard
	// A network virtual's listener on its port takes that port of the
	// network's addresses; it is not a port-specific one.
	onPort := func(ap netip.AddrPort, owner string) bool {
		v := cfg.Virtuals[owner]
		return ap.Port() != 0 && v != nil && v.Network.IsValid()
	}
	add := func(ap netip.AddrPort, owner string, isUDP bool) {
		w := sklookup.Wildcard{Addr: ap.Addr(), FD: fd(ap, isUDP), UDP: isUDP}
		if v := cfg.Virtuals[owner]; v != nil && v.Network.IsValid() {
			w.Net, w.Port = v.Network, ap.Port()
			nets = append(nets, w)
		} else {
			addrs[addrProto{ap.Addr(), isUDP}] = true
		}
		wild = append(wild, w)
	}
	for ap, owner := range tcp {
		if ap.Port() == 0 || onPort(ap, owner) {
			add(ap, owner, false)
		}
	}
	for ap, owner := range udp {
		if v := cfg.Virtuals[owner]; v != nil && v.HTTP3 != nil {
			continue // a QUIC socket: port-specific only (above)
		}
		if ap.Port() == 0 || onPort(ap, owner) {
			add(ap, owner, true)
		}
	}
	if len(wild) == 0 {
		return nil, nil
	}
	// A port-specific listener on an address steered, or in a network
	// steered, keeps its port.
	passed := func(a netip.Addr, isUDP bool) bool {
		if addrs[addrProto{a, isUDP}] {
			return true
		}
		for _, n := range nets {
			if n.UDP == isUDP && n.Net.Contains(a) {
				return true
			}
		}
		return false
	}
	for ap, owner := range tcp {
		if ap.Port() != 0 && !onPort(ap, owner) && passed(ap.Addr(), false) {
			specific = append(specific, sklookup.Specific{Addr: ap})
		}
	}
	for ap, owner := range udp {
		if ap.Port() != 0 && !onPort(ap, owner) && passed(ap.Addr(), true) {
			specific = append(specific, sklookup.Specific{Addr: ap, UDP: true})
		}
	}
	// The plane's own destinations in what is steered, both protocols.
	for d := range ownDests(cfg) {
		for _, isUDP := range []bool{false, true} {
			if passed(d.Addr(), isUDP) {
				specific = append(specific, sklookup.Specific{Addr: d, UDP: isUDP})
			}
		}
	}
	return wild, specific
}

// checkSteer is Check's refusal of a configuration the steering could
// not be told whole: more than sklookup.MaxWildcards listeners on every
// port of an address or network, or more than sklookup.MaxSpecific
// entries passed over, counted as syncSteer counts them (bound: the
// virtuals' listeners, by protocol, to their owners). FQDN members'
// addresses are not known here (Check sees the names): those a name
// comes to resolve to at run time can only make the steering update
// fail, which the plane logs.
func checkSteer(cfg *Config, tcp, udp map[netip.AddrPort]string, add func(string, ...any)) {
	wild, specific := steerPlan(cfg, tcp, udp, func(netip.AddrPort, bool) int { return -1 })
	if len(wild) > sklookup.MaxWildcards {
		add("virtuals on every port or on a network: %d listeners to steer (an address or network on every port, or a network's port, counted once per protocol); the steering takes at most %d", len(wild), sklookup.MaxWildcards)
	}
	if len(specific) > sklookup.MaxSpecific {
		add("virtuals on every port or on a network: %d destinations to pass over (port-specific listeners on the steered addresses and networks, and the plane's own destinations there: members, monitors' aliases, nameservers, log and auth servers; once for each protocol steered there); the steering passes over at most %d", len(specific), sklookup.MaxSpecific)
	}
}

// bindAt is where v's listener for ap binds: ap, save for a wildcard
// virtual on a port (`0.0.0.0:80 mask any`, the network 0.0.0.0/0 or
// ::/0), which binds a free port of the unspecified address, as a
// virtual on every port does: the steering hands it its port of every
// address whatever port it is bound to, and the port itself of the
// unspecified address could not be bound beside a host virtual's (or
// another program's) listener on that port of one address [M: the free
// port's connections, where no wildcard on every port takes them, reach
// it through the kernel's own lookup too].
func bindAt(ap netip.AddrPort, v *Virtual) netip.AddrPort {
	if ap.Port() != 0 && v != nil && v.Network.IsValid() && v.Network.Bits() == 0 {
		return netip.AddrPortFrom(ap.Addr(), 0)
	}
	return ap
}

// ownDests are the destinations the plane itself connects to, as far as
// cfg names them: every pool member's address and port (port 0, a member
// at port any: every port of its address), a monitor's alias address
// and port, and a monitor's alias port on every member's and node's
// address. The steering passes them over where a network or an address
// on every port would take them (syncSteer), so that the plane's
// connection to a member on an address of its own namespace reaches the
// member, not a virtual again [M: both protocols; a client's connection
// to such a destination is not the virtual's either].
func ownDests(cfg *Config) map[netip.AddrPort]bool {
	own := map[netip.AddrPort]bool{}
	var aliasPorts []uint16
	for _, m := range cfg.Monitors {
		switch d := m.Destination; {
		case d.Addr().IsValid() && !d.Addr().IsUnspecified():
			own[d] = true
		case d.Port() != 0:
			aliasPorts = append(aliasPorts, d.Port())
		}
	}
	alias := func(a netip.Addr) {
		for _, p := range aliasPorts {
			own[netip.AddrPortFrom(a, p)] = true
		}
	}
	for _, pl := range cfg.Pools {
		for _, m := range pl.Members {
			if m.Addr.Addr().IsValid() {
				own[m.Addr] = true
				alias(m.Addr.Addr())
			}
		}
	}
	for _, n := range cfg.Nodes {
		if n.Addr.IsValid() {
			alias(n.Addr)
		}
	}
	// The nameservers the plane asks: sys dns name-servers (FQDN nodes
	// and criteria names), a dns cache's forward-zones and root-hints,
	// an explicit proxy's and a socks profile's net dns-resolver.
	for _, ns := range cfg.NameServers {
		if d, ok := nameServerDest(ns); ok {
			own[d] = true
		}
	}
	resolver := func(r *fwdproxy.ResolverConfig) {
		if r == nil {
			return
		}
		for _, z := range r.Zones {
			for _, d := range z.Nameservers {
				own[d] = true
			}
		}
		for _, d := range r.RootHints {
			own[d] = true
		}
	}
	for _, v := range cfg.Virtuals {
		if v == nil {
			continue
		}
		if v.DNS != nil && v.DNS.Cache != nil {
			for _, ds := range v.DNS.Cache.Forward {
				for _, d := range ds {
					own[d] = true
				}
			}
			if r := v.DNS.Cache.Resolver; r != nil {
				for _, d := range r.RootHints {
					own[d] = true
				}
			}
		}
		if v.MBLB != nil && v.MBLB.ExplicitProxy != nil {
			resolver(&v.MBLB.ExplicitProxy.Resolver)
		}
		if v.Socks != nil {
			resolver(v.Socks.Resolver)
		}
	}
	// What the daemon's own parts connect to (log destinations, auth
	// servers, rules' resolvers and literal destinations).
	for _, d := range cfg.OwnDests {
		if d.Addr().IsValid() {
			own[d] = true
		}
	}
	return own
}

// nameServerDest reads a sys dns name-servers entry (an address, port
// 53, or ADDR:PORT); false for a host name, which names no address here.
func nameServerDest(s string) (netip.AddrPort, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.AddrPortFrom(a, 53), true
	}
	if d, err := netip.ParseAddrPort(s); err == nil {
		return d, true
	}
	return netip.AddrPort{}, false
}

// closeSteer detaches the steering program. The caller holds p.mu.
func (p *Plane) closeSteer() {
	if p.steer != nil {
		p.steerNow.Store(nil)
		p.steer.Close()
		p.steer = nil
	}
}

// PassOver makes the steering of wildcard, network and every-port
// virtuals pass over dst (udp: a UDP destination) until release: the
// daemon's rules connect (sideband) to destinations they compute at run
// time, which the commit could not pass over (ownDests). Without
// steering release does nothing; at most sklookup.MaxPassed
// destinations are passed over at once, with the data ports (past it
// the destination is the virtual's, logged).
func (p *Plane) PassOver(dst netip.AddrPort, udp bool) (release func()) {
	return p.passPort(dst, udp)
}

// passNode is passPort for the message virtuals' node connects, nil when
// nothing is steered: the event loop's non-blocking connect would
// otherwise hold a timer per node connect to release nothing
// (mblbvs.passedUntil).
func (p *Plane) passNode(ap netip.AddrPort, udp bool) (release func()) {
	if p.steerNow.Load() == nil {
		return nil
	}
	return p.passPort(ap, udp)
}

// passPort makes the steering pass over ap (udp: a UDP socket's) until
// release: a data listener or channel an FTP or RTSP flow of a virtual
// on every port opened on the address the virtual takes (l4.Env.Pass).
// Without steering, or where the entry cannot be made (logged; the
// data connection is then taken by the virtual), release does nothing.
func (p *Plane) passPort(ap netip.AddrPort, udp bool) (release func()) {
	s := p.steerNow.Load()
	if s == nil {
		return func() {}
	}
	sp := sklookup.Specific{Addr: ap, UDP: udp}
	if err := s.Pass(sp); err != nil {
		p.log.Warn("cannot pass a data port over on a virtual on every port", "error", err)
		return func() {}
	}
	return func() { s.Unpass(sp) }
}
