package udp

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/dhcp"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"
)

// DHCP relay (the dhcpv4 and dhcpv6 profiles on a UDP virtual). Each
// client datagram is one DHCP message; anything else is dropped and
// counted [M]. CLIENT_DATA sees the message as the client sent it, and
// SERVER_DATA a member's answer as the member sent it; the DHCPv4:: and
// DHCPv6:: commands read and edit them there.
//
// Mode relay does what an RFC 1542/3046 (DHCPv4) or RFC 8415 (DHCPv6)
// relay agent does, and sends the request to every available member of
// the pool, as BIG-IP does; every member's answer reaches the client:
//
//   - DHCPv4: a request (BOOTREQUEST) that already passed through
//     max-hops relays is dropped; hops is counted; giaddr, when the
//     client left it 0.0.0.0, becomes the virtual's address (the address
//     the server side leaves from when the virtual's is a wildcard or
//     broadcast address); relay-agent-id add puts option 82 (its
//     suboptions) into a request that has none. relay-agent-id remove
//     takes option 82 out of the answers.
//   - DHCPv6: the message is wrapped in a Relay-Forward whose
//     link-address is the virtual's address and peer-address the
//     client's (IPv4 ones as IPv4-mapped, [M]), with remote-id-option and
//     subscriber-id-option's options when their add is true; another
//     relay's Relay-Forward at HOP_COUNT_LIMIT is dropped. A member's
//     Relay-Reply is unwrapped and its Relay Message reaches the client.
//
// The answers go to the client's address and port the request came from
// [M: BIG-IP, on a VLAN, sends to the client's hardware address or the
// broadcast address on port 68 (546); openltm's flows answer the
// request's source, which is also what a downstream relay at giaddr
// expects]. Members must answer the socket the request came from (as
// Kea, dnsmasq and most servers do toward a relay on its server port,
// which openltm keeps when the kernel allows).
//
// Mode forwarding leaves the messages as they are and sends each to one
// member, balanced as datagram-load-balancing does [M].
//
// A flow without the profile pays one nil check per datagram.

// dhcpState is a flow's relay state.
type dhcpState struct {
	cfg *config.DHCPProfile
	// link is the virtual's own address, invalid when it is a wildcard or
	// broadcast address (giaddr then comes from the server side).
	link netip.Addr
}

// newDHCPState is the relay state of flow f on a virtual with profile dc
// (nil: none).
func newDHCPState(dc *config.DHCPProfile, f *flow) *dhcpState {
	if dc == nil {
		return nil
	}
	if dc.Idle > 0 {
		f.SetIdleTimeout(dc.Idle)
	}
	s := &dhcpState{cfg: dc}
	if a := f.Local.Addr().Unmap(); a.IsValid() && !a.IsUnspecified() && a != netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		s.link = a
	}
	return s
}

// dhcpCheck drops what is not a DHCP message of the profile's version.
func (f *flow) dhcpCheck(b []byte) bool {
	var err error
	if f.dhcp.cfg.V6 {
		err = dhcp.CheckV6(b)
	} else {
		err = dhcp.CheckV4(b)
	}
	if err != nil {
		f.vs.Prof.Conns.DgDropped.Add(1)
		f.l.e.env.Log.Debug("dhcp: dropped a client datagram", "virtual", f.Virtual, "client", f.Client.String(), "err", err)
		return false
	}
	return true
}

// dhcpRelay relays client message b (after CLIENT_DATA) to every
// available member of the flow's pool (a rule's pool command's when it
// chose one).
func (f *flow) dhcpRelay(b []byte) {
	pool := f.pool
	if rs := f.rs; rs != nil {
		rs.mu.Lock()
		if rs.Pool != nil {
			pool = rs.Pool
		}
		rs.mu.Unlock()
	}
	var snap *state.PoolSnap
	if pool != nil {
		snap = pool.Snap.Load()
	}
	if snap == nil {
		f.vs.Prof.Conns.DgDropped.Add(1)
		return
	}
	var buf [8]*leg
	legs := buf[:0]
	for _, m := range snap.Members {
		if m.Usable() {
			if lg := f.dhcpLeg(m, pool); lg != nil {
				legs = append(legs, lg)
			}
		}
	}
	if len(legs) == 0 {
		f.vs.Prof.Conns.DgDropped.Add(1) // no member can take it
		return
	}
	out, err := f.dhcpEdit(b, legs[0])
	if err != nil {
		f.vs.Prof.Conns.DgDropped.Add(1)
		f.l.e.env.Log.Debug("dhcp: not relayed", "virtual", f.Virtual, "client", f.Client.String(), "err", err)
		return
	}
	if f.clone != nil {
		f.clone.Server(out) // as the members get it
	}
	for _, lg := range legs {
		lg.member.Stats.Requests.Add(1)
		lg.member.Node.Stats.Requests.Add(1)
		pool.Stats.Requests.Add(1)
		lg.send(out)
	}
}

// dhcpEdit is client message b as the relay sends it on; first is the
// first member's server side, whose source address is giaddr when the
// virtual's address cannot be.
func (f *flow) dhcpEdit(b []byte, first *leg) ([]byte, error) {
	dc := f.dhcp.cfg
	link := f.dhcp.link
	if !link.IsValid() {
		link = first.rec.Client.Addr().Unmap()
	}
	if dc.V6 {
		extra := make([]dhcp.V6Opt, 0, len(dc.V6Options))
		for _, o := range dc.V6Options {
			extra = append(extra, dhcp.V6Opt{Code: o.Code, Data: o.Data})
		}
		return dhcp.RelayForward(b, link, f.Client.Addr().Unmap(), extra...)
	}
	return dhcp.RelayV4(b, dhcp.V4Relay{Giaddr: link, MaxHops: dc.MaxHops, AgentInfo: dc.AgentInfo})
}

// dhcpLeg is the flow's server side to member m of pool, opened (with
// SERVER_CONNECTED) when the flow has none; nil when none can be.
func (f *flow) dhcpLeg(m *state.Member, pool *state.Pool) *leg {
	for _, lg := range f.legs { // the reader is the only writer of legs
		if lg.member == m && lg.pool == pool && !lg.gone.Load() {
			return lg
		}
	}
	m.ReserveOverride() // the leg holds the count
	lg := f.openLeg(m.Cfg.Load().Addr, m, pool)
	if lg == nil {
		m.Release()
		return nil
	}
	pool.Stats.TryOpen(0)
	if !f.addLeg(lg) || !f.serverConnected(lg) {
		return nil
	}
	return lg
}

// dhcpOut is a member's answer b (after SERVER_DATA) as the client gets
// it: not DHCP is dropped [M]; in relay mode option 82 is taken out
// (relay-agent-id remove) or the Relay-Reply unwrapped.
func (f *flow) dhcpOut(b []byte) ([]byte, bool) {
	dc := f.dhcp.cfg
	var err error
	switch {
	case dc.V6 && !dc.Forwarding:
		b, _, err = dhcp.RelayReplyMessage(b)
	case dc.V6:
		err = dhcp.CheckV6(b)
	default:
		if err = dhcp.CheckV4(b); err == nil && !dc.Forwarding && dc.StripAgentInfo {
			b = dhcp.V4DeleteOption(b, dhcp.OptRelayAgent)
		}
	}
	if err != nil {
		f.vs.Prof.Conns.DgDropped.Add(1)
		f.l.e.env.Log.Debug("dhcp: dropped a member's answer", "virtual", f.Virtual, "err", err)
		return nil, false
	}
	return b, true
}
