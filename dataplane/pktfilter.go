package dataplane

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/icmpreject"
	"github.com/openltm/openltm/dataplane/pktfilter"
)

// SetPacketFilter puts packet filters in force (net packet-filter with
// sys db packetfilter enabled), or turns filtering off with nil: every
// new client connection or UDP flow of a virtual server is then matched
// against s's filters before anything else (state.Virtual.Admit). While
// it is off a new connection costs one atomic load. Counters are kept by
// filter name across calls. When filters or the trusted list come to
// name a VLAN (or cease to), the listeners start (or stop) keeping each
// connection's and datagram's arrival interface, which costs the others
// nothing.
func (p *Plane) SetPacketFilter(s *pktfilter.Set) {
	was := p.pf.Arrival()
	p.pf.Store(s)
	if p.pf.Arrival() == was {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	arrival := p.pf.Arrival() || p.snatArrival
	for _, l := range p.listeners {
		if vs := l.VS.Load(); vs != nil {
			if v := vs.Snap.Load().Cfg; v != nil {
				l.ListenOpts(v.ClientTCP, readsSYN(v), v.VLANs, readsLink(v) || arrival)
			}
		}
	}
	for _, l := range p.udpListeners {
		if vs := l.VS.Load(); vs != nil {
			if v := vs.Snap.Load().Cfg; v != nil {
				l.SetVLANs(p.udpArrival(v.VLANs))
			}
		}
	}
}

// RecheckPacketFilter, while the Set in force is Established (sys db
// packetfilter.established enable), matches every open connection and
// UDP flow of every virtual server (whatever the connection table
// holds: TCP, http, TLS, message and UDP virtuals) against the filters
// in force, as the daemon asks when the filters change: those a filter
// (or the default) now rejects are reset, those it discards closed with
// a FIN and nothing more read or written, as a discarded new connection
// is [M: BIG-IP drops their next packets, and the client times out];
// each counts (and logs) on its filter, as a new connection would. A
// UDP flow ended so starts again with its client's next datagram, a new
// flow, filtered (a reject answered with an ICMP port unreachable). It
// returns how many were closed.
func (p *Plane) RecheckPacketFilter() int {
	if s := p.pf.Load(); s == nil || !s.Established {
		return 0
	}
	var hit []*flows.Flow
	var acts []pktfilter.Action
	p.table.Each(func(f *flows.Flow) bool {
		if a := p.pf.Decide(flowPacket(f)); a != pktfilter.Accept {
			hit, acts = append(hit, f), append(acts, a)
		}
		return true
	})
	for i, f := range hit {
		if acts[i] == pktfilter.Reject {
			f.Abort()
		} else {
			f.Drop()
		}
	}
	return len(hit)
}

// flowPacket is what the filters see of an open flow: the client's first
// packet as it was, with the arrival interface the flow kept.
func flowPacket(f *flows.Flow) *pktfilter.Packet {
	proto := uint8(pktfilter.ProtoTCP)
	if f.Protocol == "udp" {
		proto = pktfilter.ProtoUDP
	}
	um := func(a netip.AddrPort) netip.AddrPort { return netip.AddrPortFrom(a.Addr().Unmap(), a.Port()) }
	return &pktfilter.Packet{Proto: proto, Src: um(f.Client), Dst: um(f.Local), If: int(f.Arrival)}
}

// everyVLAN is a VLAN list that admits every interface: a UDP listener
// given it reads each datagram's arrival interface for the packet
// filters and lets all through.
var everyVLAN = &config.VLANFilter{Disabled: true}

// udpArrival is the VLAN list a UDP listener checks: its virtual's, or,
// while packet filters name VLANs or a SNAT or NAT has a VLAN list
// (p.snatArrival, under p.mu), one that admits everything (the arrival
// read all the same) for a virtual without one.
func (p *Plane) udpArrival(vl *config.VLANFilter) *config.VLANFilter {
	if vl == nil && (p.pf.Arrival() || p.snatArrival) {
		return everyVLAN
	}
	return vl
}

// newUnreach readies the sender of the ICMP port unreachables rejected
// UDP datagrams get: within tm.maxrejectrate, as every refusal, and the
// lack of a raw socket logged once.
func (p *Plane) newUnreach() *icmpreject.Sender {
	p.unreach.Allow = p.rst.Refuse
	p.unreach.Warn = func(line string) { p.log.Warn(line) }
	return &p.unreach
}
