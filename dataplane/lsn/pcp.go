package lsn

import (
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/pcp"
)

// The PCP server (RFC 6887) of a pool with pcp { profile selfip }: it
// listens on the selfip's address, UDP listening-port, and answers
//
//   - ANNOUNCE with SUCCESS (its epoch);
//   - MAP with a translation address and port of the pool held for the
//     mapping's lifetime (the request's, clamped to the profile's
//     min-mapping-lifetime and max-mapping-lifetime), whose inbound TCP
//     connections or UDP datagrams reach the client's internal address
//     and port whatever the pool's inbound-connections; lifetime 0
//     deletes it (internal port 0: every mapping of the client);
//   - PEER with the same kind of hold for outbound connections: the
//     subscriber's connections from that internal address and port take
//     the mapping's translation for as long as it lives.
//
// A mapping is a translation of the pool (counted with its
// translations, logged as they are) whose destination is the
// all-zeroes address. Errors answer with F5's and the RFC's result
// codes: a version other than 2 (UNSUPP_VERSION), a client address
// field other than the packet's source (ADDRESS_MISMATCH), a
// THIRD_PARTY option the profile does not allow (NOT_AUTHORIZED), an
// unknown opcode or mandatory option, a protocol other than TCP and UDP
// (UNSUPP_PROTOCOL), another client's mapping (NOT_AUTHORIZED: the
// nonce differs), map-limit-per-client reached (USER_EX_QUOTA), no port
// free (NO_RESOURCES), PREFER_FAILURE with a suggestion that cannot be
// had (CANNOT_PROVIDE_EXTERNAL). An error's lifetime is 30 seconds [M].

// errorLifetime is how long a client is told an error stands [M].
const errorLifetime = 30

// pcpKey is one mapping: the internal address and port, and protocol.
type pcpKey struct {
	internal netip.AddrPort
	udp      bool
}

// pcpMap is one PCP mapping.
type pcpMap struct {
	key     pcpKey
	owner   netip.Addr // the PCP client that made it
	nonce   [12]byte
	t       *Translation
	peer    bool // PEER only: no inbound
	expires time.Time
}

// pcpServer is a pool's PCP server.
type pcpServer struct {
	pool  *Pool
	cfg   *config.LSNPCP
	conn  *net.UDPConn
	start time.Time
	done  chan struct{}
}

// startPCP starts, restarts or stops the pool's PCP server for pc. The
// caller holds p.mu.
func (p *Pool) startPCP(pc *config.LSNPCP) {
	if s := p.pcpSrv; s != nil {
		if pc != nil && s.cfg.Listen == pc.Listen {
			s.cfg = pc // the same socket serves the new settings
			return
		}
		s.stop()
		p.pcpSrv = nil
	}
	if pc == nil || !pc.Listen.IsValid() {
		return
	}
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(pc.Listen))
	if err != nil {
		p.Stats.PCPListenFailures.Add(1)
		return
	}
	s := &pcpServer{pool: p, cfg: pc, conn: c, start: p.set.now(), done: make(chan struct{})}
	p.pcpSrv = s
	go s.serve()
}

// stop closes the server's socket; its goroutine ends on its own (the
// caller may hold p.mu, which an answer in progress waits for).
func (s *pcpServer) stop() { s.conn.Close() }

func (s *pcpServer) serve() {
	defer close(s.done)
	buf := make([]byte, pcp.MaxSize+4)
	var out []byte
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		out = s.answer(buf[:n], from, out[:0])
		if out != nil {
			s.conn.WriteToUDPAddrPort(out, from)
		}
	}
}

// answer serves one request; nil when it is dropped unanswered.
func (s *pcpServer) answer(b []byte, from netip.AddrPort, out []byte) []byte {
	p := s.pool
	r, code, ok := pcp.Parse(b)
	if !ok {
		return nil
	}
	p.Stats.PCPRequests.Add(1)
	resp := pcp.Response{Opcode: r.Opcode, Result: code, Req: &r,
		Epoch: uint32(p.set.now().Sub(s.start) / time.Second)}
	p.mu.Lock()
	pc := s.cfg
	p.mu.Unlock()
	if code == pcp.Success && pc.Rules != nil { // the profile's rule: PCP_REQUEST
		reject, drop := pc.Rules.PCPRequest(&r, from, pc.Listen)
		if drop {
			p.Stats.PCPRuleDrops.Add(1)
			return nil
		}
		if reject != 0 {
			resp.Result = reject
			p.Stats.PCPRuleRejects.Add(1)
		}
	}
	if code == pcp.Success && resp.Result == pcp.Success {
		resp.Result, resp.Lifetime, resp.ExtAddr, resp.ExtPort = p.pcpServe(pc, &r, from)
	}
	if resp.Result != pcp.Success {
		resp.Lifetime = errorLifetime
		p.Stats.PCPFailures.Add(1)
	}
	if pc.Rules != nil { // PCP_RESPONSE, successful or not
		pc.Rules.PCPResponse(&r, &resp, from, pc.Listen)
	}
	return resp.Append(out)
}

// pcpServe acts on a well-formed request: the result code, the
// lifetime granted and the external address and port assigned.
func (p *Pool) pcpServe(pc *config.LSNPCP, r *pcp.Request, from netip.AddrPort) (code uint8, life uint32, ext netip.Addr, port uint16) {
	src := from.Addr().Unmap()
	if r.Client != src {
		return pcp.AddressMismatch, 0, netip.Addr{}, 0
	}
	if r.Opcode == pcp.OpAnnounce {
		return pcp.Success, 0, netip.Addr{}, 0
	}
	internal := src
	if r.ThirdParty.IsValid() {
		if !pc.ThirdParty || !inPrefixes(pc.ThirdPartySubnets, src) {
			return pcp.NotAuthorized, 0, netip.Addr{}, 0
		}
		internal = r.ThirdParty
	}
	var udp bool
	switch r.Protocol {
	case 6:
	case 17:
		udp = true
	case 0:
		if r.Opcode != pcp.OpMap || r.InternalPort != 0 || r.Lifetime != 0 {
			return pcp.UnsuppProtocol, 0, netip.Addr{}, 0
		}
	default:
		return pcp.UnsuppProtocol, 0, netip.Addr{}, 0
	}
	if r.InternalPort == 0 && r.Lifetime != 0 {
		return pcp.MalformedRequest, 0, netip.Addr{}, 0
	}
	if r.Opcode == pcp.OpPeer && (r.PeerPort == 0 || pcp.Unspecified(r.PeerAddr) || r.InternalPort == 0) {
		return pcp.MalformedRequest, 0, netip.Addr{}, 0
	}
	now := p.set.now()
	if r.Lifetime == 0 {
		return p.pcpDelete(r, internal, udp, r.Protocol == 0), 0, netip.Addr{}, 0
	}
	life = r.Lifetime
	if min := uint32(pc.MinLifetime / time.Second); life < min {
		life = min
	}
	if max := uint32(pc.MaxLifetime / time.Second); max > 0 && life > max {
		life = max
	}
	key := pcpKey{internal: netip.AddrPortFrom(internal, r.InternalPort), udp: udp}
	p.mu.Lock()
	if m := p.pcp[key]; m != nil {
		defer p.mu.Unlock()
		if m.nonce != r.Nonce {
			return pcp.NotAuthorized, 0, netip.Addr{}, 0
		}
		m.expires = now.Add(time.Duration(life) * time.Second)
		if r.Opcode == pcp.OpMap && m.peer {
			m.peer = false
			p.Stats.PCPPeers.Add(-1)
			p.Stats.PCPMaps.Add(1)
			p.openInbound(m.t.use, pcpWant)
		}
		return pcp.Success, life, m.t.Addr.Addr(), m.t.Addr.Port()
	}
	if pc.MapLimit > 0 {
		n := 0
		for _, m := range p.pcp {
			if m.owner == src {
				n++
			}
		}
		if n >= pc.MapLimit {
			p.mu.Unlock()
			return pcp.UserExQuota, 0, netip.Addr{}, 0
		}
	}
	want := &Want{pcp: r.Opcode == pcp.OpMap, fromPCP: true}
	suggested := !pcp.Unspecified(r.ExtAddr)
	if suggested && (p.main.contains(r.ExtAddr) || p.back.contains(r.ExtAddr)) {
		want.Addr, want.Port = r.ExtAddr, r.ExtPort
	}
	four := internal.Is4()
	if suggested {
		four = r.ExtAddr.Is4()
	}
	p.mu.Unlock()
	dst := netip.AddrPortFrom(netip.IPv6Unspecified(), 0)
	if four {
		dst = netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
	}
	t, err := p.Translate(key.internal, dst, udp, want)
	if err != nil {
		if err == ErrClientLimit {
			return pcp.UserExQuota, 0, netip.Addr{}, 0
		}
		return pcp.NoResources, 0, netip.Addr{}, 0
	}
	if r.PreferFailure && suggested && (t.Addr.Addr() != r.ExtAddr || r.ExtPort != 0 && t.Addr.Port() != r.ExtPort) {
		t.Release()
		return pcp.CannotProvideExt, 0, netip.Addr{}, 0
	}
	m := &pcpMap{key: key, owner: src, nonce: r.Nonce, t: t, peer: r.Opcode == pcp.OpPeer,
		expires: now.Add(time.Duration(life) * time.Second)}
	p.mu.Lock()
	if old := p.pcp[key]; old != nil { // the same request twice at once: the first stands
		p.mu.Unlock()
		t.Release()
		return pcp.Success, life, old.t.Addr.Addr(), old.t.Addr.Port()
	}
	if p.pcp == nil {
		p.pcp = map[pcpKey]*pcpMap{}
	}
	p.pcp[key] = m
	if !m.peer {
		p.openInbound(t.use, pcpWant)
		p.Stats.PCPMaps.Add(1)
	} else {
		p.Stats.PCPPeers.Add(1)
	}
	p.mu.Unlock()
	return pcp.Success, life, t.Addr.Addr(), t.Addr.Port()
}

// pcpWant opens a MAP mapping's inbound listener whatever the pool's
// inbound-connections.
var pcpWant = &Want{pcp: true, fromPCP: true}

// pcpDelete ends the client's mapping of r (every mapping of the
// internal address with internal port 0); another client's mapping (a
// nonce that differs) is NOT_AUTHORIZED; none is SUCCESS.
func (p *Pool) pcpDelete(r *pcp.Request, internal netip.Addr, udp, anyProto bool) uint8 {
	var ended []*pcpMap
	p.mu.Lock()
	for k, m := range p.pcp {
		if k.internal.Addr() != internal || (!anyProto && k.udp != udp) {
			continue
		}
		if r.InternalPort != 0 && k.internal.Port() != r.InternalPort {
			continue
		}
		if (r.Opcode == pcp.OpPeer) != m.peer && r.InternalPort != 0 {
			continue
		}
		if m.nonce != r.Nonce {
			if r.InternalPort != 0 {
				p.mu.Unlock()
				return pcp.NotAuthorized
			}
			continue
		}
		delete(p.pcp, k)
		ended = append(ended, m)
	}
	p.mu.Unlock()
	p.endMaps(ended)
	return pcp.Success
}

// endMaps releases ended mappings' translations, and closes the
// inbound listeners they opened.
func (p *Pool) endMaps(ms []*pcpMap) {
	for _, m := range ms {
		if !m.peer {
			p.mu.Lock()
			if u := m.t.use; u.in != nil && u.pcpIn {
				u.in.close()
				u.in, u.pcpIn = nil, false
			}
			p.mu.Unlock()
		}
		if m.peer {
			p.Stats.PCPPeers.Add(-1)
		} else {
			p.Stats.PCPMaps.Add(-1)
		}
		m.t.Release()
	}
}

// sweepPCP ends the mappings whose lifetime is over. The caller holds
// p.mu; the translations are released after it lets go.
func (p *Pool) sweepPCP(now time.Time) []*pcpMap {
	return takeExpired(p.pcp, now, func(m *pcpMap) time.Time { return m.expires })
}

// stopPCP stops the server and ends every mapping. The caller holds
// p.mu; the translations are released after it lets go.
func (p *Pool) stopPCP() []*pcpMap {
	if p.pcpSrv != nil {
		p.pcpSrv.stop()
		p.pcpSrv = nil
	}
	var ended []*pcpMap
	for k, m := range p.pcp {
		delete(p.pcp, k)
		ended = append(ended, m)
	}
	return ended
}

// PCPMapping is one PCP mapping, for show: what an operator needs to
// tell a subscriber's mapping from another's (show ltm lsn-pool NAME
// detail).
type PCPMapping struct {
	Internal netip.AddrPort
	External netip.AddrPort
	UDP      bool
	Peer     bool
	Expires  time.Time
	// Owner is the PCP client that made the mapping (the internal
	// address, or the one that asked for it with THIRD_PARTY), Nonce the
	// mapping nonce that owns it.
	Owner netip.Addr
	Nonce [12]byte
}

// PCPMappings is the pool's PCP mappings, read under the pool's lock
// (nothing on the packet path), ordered by internal address and port.
func (p *Pool) PCPMappings() []PCPMapping {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]PCPMapping, 0, len(p.pcp))
	for k, m := range p.pcp {
		out = append(out, PCPMapping{Internal: k.internal, External: m.t.Addr, UDP: k.udp, Peer: m.peer, Expires: m.expires,
			Owner: m.owner, Nonce: m.nonce})
	}
	slices.SortFunc(out, func(a, b PCPMapping) int {
		if c := a.Internal.Compare(b.Internal); c != 0 {
			return c
		}
		if a.UDP != b.UDP {
			if a.UDP {
				return 1
			}
			return -1
		}
		return 0
	})
	return out
}

func inPrefixes(ps []netip.Prefix, a netip.Addr) bool {
	if len(ps) == 0 {
		return true
	}
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
