package dnsvs

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/dataplane/rpz"
	"github.com/openltm/openltm/rules"
)

// Service is one dns profile of one commit, as a virtual's snapshot
// holds it (state.DNSService).
type Service struct {
	e     *Engine
	p     *config.DNSProfile
	cache *Cache // nil without enable-cache
	st    *ProfileStats

	inflight atomic.Int64 // queries waiting for a member
	max      int64
	log      *logger                     // nil without enable-logging (dnslog.go)
	logMsg   func(id uint16, msg string) // DNS::log's lines (ruleLog); nil without a publisher
}

// Cache is the service's cache, nil for none (shows, tests).
func (s *Service) Cache() *Cache { return s.cache }

// step is what the profile decided for a query.
type step uint8

const (
	stepAnswer  step = iota // m is the answer
	stepDrop                // nothing is sent
	stepForward             // the pool answers
)

// decide runs the profile's steps short of the pool: the GSLB's wide IPs
// and zones, the cache, unhandled-query-action, less those the query's
// rules disabled (svc); a NOTIFY goes to DNS Express (wire is r as
// received, for its TSIG). origin is what answered (gslb.Origin*); hit
// the cache's response policy applied, nil for none.
func (s *Service) decide(r *dns.Msg, wire []byte, client netip.Addr, udp bool, svc gslb.Services) (m *dns.Msg, st step, origin string, hit *rpz.Hit) {
	if r.Response {
		return nil, stepDrop, "", nil
	}
	s.st.Queries.Add(1)
	express := s.p.Express && svc.Off&gslb.ServiceDNSX == 0
	if r.Opcode == dns.OpcodeNotify && express {
		if m, st, ok := s.notify(r, wire, client); ok {
			return m, st, gslb.OriginDNSX, nil
		}
	}
	if r.Opcode != dns.OpcodeQuery {
		s.st.Malformed.Add(1)
		return reply(r, dns.RcodeNotImplemented), stepAnswer, gslb.OriginLastAction, nil
	}
	if len(r.Question) != 1 {
		s.st.Malformed.Add(1)
		return reply(r, dns.RcodeFormatError), stepAnswer, gslb.OriginLastAction, nil
	}
	rd := r.RecursionDesired && s.p.NoProcessRD // process-rd no: straight to unhandled-query-action
	gtm := s.p.GTM && svc.Off&gslb.ServiceGTM == 0
	if (gtm || express) && !rd {
		if a := s.e.ans.Load(); a != nil {
			dnssec := s.p.DNSSEC && svc.Off&gslb.ServiceDNSSEC == 0
			if m, send, handled, origin := a.a.AnswerVirtual(r, client, udp, gtm, express, dnssec); handled {
				s.st.GSLB.Add(1)
				if !send {
					return nil, stepDrop, "", nil
				}
				return m, stepAnswer, origin, nil
			}
		}
	}
	return s.unhandled(r, rd, svc, client, udp)
}

// cacheFor is the cache a query uses: the profile's, unless its rules
// disabled it.
func (s *Service) cacheFor(svc gslb.Services) *Cache {
	if svc.Off&gslb.ServiceCache != 0 {
		return nil
	}
	return s.cache
}

// unhandled is the profile's step for a query neither DNS Express nor a
// wide IP answered, on a virtual and on a gtm listener alike: the
// cache's response policy zones (client, the querying client's address,
// for their client-IP triggers) and the cache (not for rd, a query
// process-rd no sends on), then unhandled-query-action (the rule's
// DNS::last_act when it gave one). hit is the response policy applied
// (a passthru lets the query go on), nil for none. udp says the query
// came over UDP (an rpz-tcp-only trigger answers it truncated).
func (s *Service) unhandled(r *dns.Msg, rd bool, svc gslb.Services, client netip.Addr, udp bool) (_ *dns.Msg, _ step, _ string, hit *rpz.Hit) {
	if c := s.cacheFor(svc); c != nil && !rd {
		if c.rpz != nil && svc.Off&gslb.ServiceRPZ == 0 {
			if hit = c.rpz.Check(s.e.policySource(), client, r.Question[0].Name, udp); hit != nil {
				switch hit.Policy {
				case rpz.PolicyDrop:
					return nil, stepDrop, "", hit
				case rpz.PolicyPassthru:
				default:
					return hit.Answer(r), stepAnswer, gslb.OriginRPZ, hit
				}
			}
		}
		if m := c.Get(r); m != nil {
			s.st.CacheHits.Add(1)
			if hit == nil {
				if m2, h := s.responsePolicy(c, svc, r, m, udp); h != nil && h.Policy != rpz.PolicyPassthru {
					if m2 == nil {
						return nil, stepDrop, "", h
					}
					return m2, stepAnswer, gslb.OriginRPZ, h
				} else if h != nil {
					hit = h
				}
			}
			return m, stepAnswer, gslb.OriginCache, hit
		}
	}
	act := s.p.Unhandled
	if svc.LastAct != "" {
		act = svc.LastAct
	}
	switch act {
	case "drop":
		s.st.Drop.Add(1)
		return nil, stepDrop, "", hit
	case "reject":
		s.st.Reject.Add(1)
		return reply(r, dns.RcodeRefused), stepAnswer, gslb.OriginLastAction, hit
	case "hint":
		s.st.Hint.Add(1)
		return hintReply(r), stepAnswer, gslb.OriginLastAction, hit // hint.go
	case "noerror":
		s.st.NoError.Add(1)
		return reply(r, dns.RcodeSuccess), stepAnswer, gslb.OriginLastAction, hit
	}
	s.st.Allow.Add(1)
	return nil, stepForward, gslb.OriginServer, hit
}

// responsePolicy applies the cache c's response-IP, NSDNAME and NSIP
// triggers to m, the answer to r about to go (rpz.CheckResponse; the
// name servers are those c's resolver knows for r's name and m's CNAME
// targets): m itself when none applies (hit nil) or for a passthru, the
// policy's answer otherwise, nil for a drop. The answer c keeps stays
// the real one, so that a change of the policy zone acts on the next
// query. udp says r came over UDP.
func (s *Service) responsePolicy(c *Cache, svc gslb.Services, r, m *dns.Msg, udp bool) (*dns.Msg, *rpz.Hit) {
	if c == nil || c.rpz == nil || svc.Off&gslb.ServiceRPZ != 0 {
		return m, nil
	}
	src := s.e.policySource()
	var nsBuf [16]rpz.NameServers
	var ns []rpz.NameServers
	if c.res != nil && c.rpz.WantsNameServers(src) {
		ns = c.nameServers(nsBuf[:0], r, m)
	}
	h := c.rpz.CheckResponse(src, m, ns, udp)
	if h == nil || h.Policy == rpz.PolicyPassthru {
		return m, h
	}
	return h.Answer(r), h
}

// answerPolicy is responsePolicy on the answer the pool or the cache's
// resolution gave, telling the rules (DNS::rpz_policy, DNS::origin RPZ);
// nil for a drop.
func (s *Service) answerPolicy(vr *gslb.VirtualRules, svc gslb.Services, r, m *dns.Msg, origin string, udp bool) (*dns.Msg, string) {
	m2, h := s.responsePolicy(s.cacheFor(svc), svc, r, m, udp)
	if h == nil {
		return m, origin
	}
	vr.SetRPZ(h.String())
	if h.Policy == rpz.PolicyPassthru {
		return m, origin
	}
	return m2, gslb.OriginRPZ
}

// reply is an empty answer to r with rcode, its OPT record echoed.
func reply(r *dns.Msg, rcode int) *dns.Msg {
	m := new(dns.Msg)
	m.SetRcode(r, rcode)
	m.RecursionAvailable = false
	if o := r.IsEdns0(); o != nil && rcode != dns.RcodeFormatError {
		m.SetEdns0(o.UDPSize(), o.Do())
	}
	return m
}

// admit is the virtual's admission of one UDP query: enabled, source,
// reject. Connection limits count connections, which a query is not.
func admit(cfg *config.Virtual, client netip.AddrPort) bool {
	return cfg.Enabled && !cfg.Reject && (!cfg.Source.IsValid() || cfg.Source.Bits() == 0 || cfg.Source.Contains(client.Addr())) &&
		(cfg.Match == nil || cfg.Match.Admits(client))
}

// ServeUDP answers one datagram of a dns-profile virtual (state.DNSService).
func (s *Service) ServeUDP(vs *state.Virtual, snap *state.VirtualSnap, conn *net.UDPConn, client, local netip.AddrPort, b []byte, ifx int) {
	vs.Stats.In(len(b), 1)
	if !admit(snap.Cfg, client) {
		return
	}
	// The query outlives the listener's buffer when it waits for a
	// member, and an unpacked option may point into what it unpacked.
	b = append([]byte(nil), b...)
	var qc *queryClone
	if snap.Clone != nil || snap.Cfg.Rules != nil {
		qc = s.newUDPClone(vs, snap) // clone.go; nil when it copies nothing
	}
	r := new(dns.Msg)
	if err := r.Unpack(b); err != nil {
		qc.datagram(b, b)
		if len(b) >= 12 && b[2]&0x80 == 0 { // a query's header: FORMERR
			m := new(dns.Msg)
			m.Id, m.Response, m.Rcode = binary.BigEndian.Uint16(b), true, dns.RcodeFormatError
			s.sendUDP(vs, conn, client, m, nil)
		}
		return
	}
	if s.p.Rapid {
		if m, done := s.rapid(r); done { // rapid.go
			qc.datagram(b, b)
			if m != nil {
				s.sendUDP(vs, conn, client, m, r)
			}
			return
		}
	}
	if s.log != nil {
		s.log.query(r, client, local)
	}
	if s.p.ProcessXfr && isXfr(r) {
		qc.datagram(b, b)
		s.transferUDP(vs, conn, client, r, b) // xfr.go
		return
	}
	vr, m, send, done := s.request(snap, r, client.Addr(), local, true, qc.cloner())
	if qc != nil {
		qc.datagram(b, ruleWire(vr, r, b)) // the copies, the rule's clones with them
	}
	if done {
		if send {
			s.sendUDP(vs, conn, client, m, r)
		}
		vr.Release()
		return
	}
	if vr != nil {
		if wire, err := r.Pack(); err == nil { // as the rule left it
			b = wire
		}
	}
	svc := vr.Services()
	m, st, origin, hit := s.decide(r, b, client.Addr(), true, svc)
	if hit != nil {
		vr.SetRPZ(hit.String())
	}
	switch st {
	case stepAnswer:
		vr.SetOrigin(origin)
		if m, send = vr.Response(m); send {
			s.sendUDP(vs, conn, client, m, r)
		}
		vr.Release()
		return
	case stepDrop:
		vr.Release()
		return
	}
	if s.inflight.Add(1) > s.max {
		s.inflight.Add(-1)
		vs.Prof.Conns.DgDropped.Add(1)
		vr.Release()
		return
	}
	wire := b
	go func() {
		defer s.inflight.Add(-1)
		defer vr.Release()
		w := s.e.waiting(vs, snap, client, local)
		if w != nil {
			defer s.e.Table.Remove(&w.Flow)
		}
		if m, origin := s.forward(vs, snap, r, wire, client, local, true, ifx, s.cacheFor(svc), w); m != nil && !w.deleted() {
			if hit == nil {
				if m, origin = s.answerPolicy(vr, svc, r, m, origin, true); m == nil {
					return
				}
			}
			vr.SetOrigin(origin)
			if m, send := vr.Response(m); send {
				s.sendUDP(vs, conn, client, m, r)
			}
		}
	}()
}

// waitingQuery is a UDP query waiting for a member, as the connection
// table lists it: the client and the virtual's (or gtm listener's)
// address on the client side; on the server side the exchange under
// way (its source and the member or name server), none between two
// [M: the member is the pool's choice inside the exchange; BIG-IP shows
// such a flow as any6.any until it has one]. delete sys connection
// drops it: the exchange under way is closed (a resolution cancelled),
// no other member is asked, its answer (were one to come) is not sent,
// and the dns profile counts it (Deleted).
type waitingQuery struct {
	flows.Flow
	dropped atomic.Bool
	mu      sync.Mutex
	conn    net.Conn           // the member exchange under way; nil between
	leg     *flows.Leg         // conn as the table shows it
	stop    context.CancelFunc // a resolution under way (cache.go); nil between
}

// errDeleted is an exchange not begun: its query was deleted.
var errDeleted = errors.New("dnsvs: the query was deleted from the connection table")

// hold makes c the exchange delete closes (nil: the exchange ended);
// false when the query was deleted already, and c is not to be used.
func (w *waitingQuery) hold(c net.Conn) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c != nil && w.dropped.Load() {
		return false
	}
	if w.leg != nil {
		w.RemoveLeg(w.leg)
		w.leg = nil
	}
	w.conn = c
	if c != nil {
		w.leg = &flows.Leg{Client: addrPortOf(c.LocalAddr()), Server: addrPortOf(c.RemoteAddr())}
		w.AddLeg(w.leg)
	}
	return true
}

// holdResolution makes stop what delete calls to end a resolution
// under way (nil: it ended); false when the query was deleted already.
func (w *waitingQuery) holdResolution(stop context.CancelFunc) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if stop != nil && w.dropped.Load() {
		return false
	}
	w.stop = stop
	return true
}

// addrPortOf is a socket's address as the connection table shows it.
func addrPortOf(a net.Addr) netip.AddrPort {
	switch a := a.(type) {
	case *net.UDPAddr:
		return a.AddrPort()
	case *net.TCPAddr:
		return a.AddrPort()
	}
	return netip.AddrPort{}
}

// drop is the flow's Closer: the query is deleted, and its exchange
// under way closed, which ends the wait at once.
func (w *waitingQuery) drop(bool) {
	w.dropped.Store(true)
	w.mu.Lock()
	if w.conn != nil {
		w.conn.Close()
	}
	if w.stop != nil {
		w.stop()
	}
	w.mu.Unlock()
}

// waiting puts a query of client's to local in the table (nil when the
// engine has none).
func (e *Engine) waiting(vs *state.Virtual, snap *state.VirtualSnap, client, local netip.AddrPort) *waitingQuery {
	return e.waitingAt(vs.Name, snap.Idle, client, local)
}

// waitingAt puts a query of client's to local, on the virtual or gtm
// listener name, in the table (nil when the engine has none).
func (e *Engine) waitingAt(name string, idle time.Duration, client, local netip.AddrPort) *waitingQuery {
	if e.Table == nil {
		return nil
	}
	w := &waitingQuery{Flow: flows.Flow{Client: client, Local: local, Virtual: name, Protocol: "udp"}}
	w.SetIdleTimeout(idle)
	w.Closer = w.drop
	e.Table.Add(&w.Flow)
	return w
}

// deleted says whether delete sys connection dropped the query.
func (w *waitingQuery) deleted() bool { return w != nil && w.dropped.Load() }

// request runs the virtual's iRules' DNS_REQUEST through the GSLB (nil
// when its rules handle no DNS event or no GSLB is attached): done says
// the rule ended the query, with m to send when send.
// cl takes the rules' clone command (clone.go; nil: none copies).
func (s *Service) request(snap *state.VirtualSnap, r *dns.Msg, client netip.Addr, local netip.AddrPort, udp bool, cl rules.Cloner) (vr *gslb.VirtualRules, m *dns.Msg, send, done bool) {
	if snap.Cfg.Rules == nil {
		return nil, nil, false, false
	}
	a := s.e.ans.Load()
	if a == nil {
		return nil, nil, false, false
	}
	return a.a.VirtualRequest(irules.Program(snap.Cfg.Rules), r, client, local, udp, s.logMsg, cl)
}

// ruleWire is r's wire form as the virtual's DNS_REQUEST left it, for a
// serverside copy: b (as received) when no rule ran or it cannot be
// packed.
func ruleWire(vr *gslb.VirtualRules, r *dns.Msg, b []byte) []byte {
	if vr == nil {
		return b
	}
	if wire, err := r.Pack(); err == nil {
		return wire
	}
	return b
}

// sendUDP sends m to client, cut to the client's UDP size (r's OPT).
func (s *Service) sendUDP(vs *state.Virtual, conn *net.UDPConn, client netip.AddrPort, m, r *dns.Msg) {
	if r != nil {
		m.Truncate(clientUDPSize(r))
	}
	out, err := m.Pack()
	if err != nil {
		return
	}
	if s.log != nil {
		s.log.response(m, client)
	}
	if n, err := conn.WriteToUDPAddrPort(out, client); err == nil {
		vs.Stats.Out(n, 1)
	}
}

// clientUDPSize is the largest UDP answer r's sender takes: its EDNS
// size, 512 without.
func clientUDPSize(r *dns.Msg) int {
	size := dns.MinMsgSize
	if o := r.IsEdns0(); o != nil && int(o.UDPSize()) > size {
		size = int(o.UDPSize())
	}
	return size
}

// maxTCPQueries bounds the queries of one TCP connection [M].
const maxTCPQueries = 10000

// ServeTCP answers the queries of one TCP connection in turn until the
// client closes it or it idles past the virtual's idle timeout
// (state.DNSService).
func (s *Service) ServeTCP(vs *state.Virtual, snap *state.VirtualSnap, c *net.TCPConn, ifx int) {
	defer c.Close()
	client, local := addrPort(c.RemoteAddr()), addrPort(c.LocalAddr())
	idle := snap.FlowIdle(local) // a service-policy's timer policy (state/timers.go)
	if idle <= 0 {
		idle = 300 * time.Second
	}
	var qc *queryClone
	if snap.Clone != nil || snap.Cfg.Rules != nil {
		qc = s.newTCPClone(vs, snap) // clone.go; nil when it copies nothing
		defer qc.close()
	}
	var lenBuf [2]byte
	for range maxTCPQueries {
		c.SetReadDeadline(time.Now().Add(idle))
		if _, err := io.ReadFull(c, lenBuf[:]); err != nil {
			return
		}
		b := make([]byte, binary.BigEndian.Uint16(lenBuf[:]))
		if _, err := io.ReadFull(c, b); err != nil {
			return
		}
		vs.Stats.In(len(b)+2, 1)
		r := new(dns.Msg)
		if err := r.Unpack(b); err != nil {
			qc.stream(b, b)
			return
		}
		if s.log != nil {
			s.log.query(r, client, local)
		}
		if s.p.ProcessXfr && isXfr(r) {
			qc.stream(b, b)
			if !s.transfer(vs, c, r, b, client.Addr(), idle) {
				return
			}
			continue
		}
		m, send := s.answerTCP(vs, snap, r, b, client, local, ifx, qc)
		if !send {
			continue
		}
		out, err := m.Pack()
		if err != nil {
			continue
		}
		if s.log != nil {
			s.log.response(m, client)
		}
		frame := make([]byte, 2+len(out))
		binary.BigEndian.PutUint16(frame, uint16(len(out)))
		copy(frame[2:], out)
		c.SetWriteDeadline(time.Now().Add(idle))
		n, err := c.Write(frame)
		vs.Stats.Out(n, 1)
		if err != nil {
			return
		}
	}
}

// answerTCP is the answer to one query of a TCP connection (b its wire
// form): the virtual's DNS_REQUEST, the profile's steps, the pool, its
// DNS_RESPONSE. send is false when nothing goes back. qc is the
// connection's copies (clone.go; nil for none).
func (s *Service) answerTCP(vs *state.Virtual, snap *state.VirtualSnap, r *dns.Msg, b []byte, client, local netip.AddrPort, ifx int, qc *queryClone) (*dns.Msg, bool) {
	return s.answerStream(vs, snap, r, b, client, local, false, ifx, qc)
}

// answerStream is answerTCP's work; doh asks the pool over UDP first, and
// again over TCP when the member's answer is truncated, as a DoH query
// (dataplane/doh) has no size of its own to keep to. ifx is the
// client's arrival interface (0: not known or not read).
func (s *Service) answerStream(vs *state.Virtual, snap *state.VirtualSnap, r *dns.Msg, b []byte, client, local netip.AddrPort, doh bool, ifx int, qc *queryClone) (*dns.Msg, bool) {
	vr, m, send, done := s.request(snap, r, client.Addr(), local, false, qc.cloner())
	defer vr.Release()
	if qc != nil {
		qc.stream(b, ruleWire(vr, r, b)) // the copies, the rule's clones with them
	}
	if done {
		return m, send
	}
	if vr != nil {
		if wire, err := r.Pack(); err == nil {
			b = wire
		}
	}
	svc := vr.Services()
	m, st, origin, hit := s.decide(r, b, client.Addr(), false, svc)
	if hit != nil {
		vr.SetRPZ(hit.String())
	}
	switch st {
	case stepDrop:
		return nil, false
	case stepForward:
		m, origin = s.forward(vs, snap, r, b, client, local, doh, ifx, s.cacheFor(svc), nil)
		if doh && m != nil && m.Truncated {
			m, origin = s.forward(vs, snap, r, b, client, local, false, ifx, s.cacheFor(svc), nil)
		}
		if m == nil {
			return nil, false
		}
		if hit == nil {
			if m, origin = s.answerPolicy(vr, svc, r, m, origin, false); m == nil {
				return nil, false
			}
		}
	}
	vr.SetOrigin(origin)
	return vr.Response(m)
}

func addrPort(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		ap := t.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

// forward asks the pool (a resolver cache's forward zone's name servers
// for a name under one) and returns its answer to r, kept in the cache
// c (the profile's, nil when none or the rule disabled it); nil when no
// member answered. wire is r as the client sent it. origin is SERVER,
// or CACHE when the cache answered itself (local zones, resolution,
// forward zones). ifx is the client's arrival interface (0: not known),
// for a VLAN-limited SNAT's choice of the member query's source.
func (s *Service) forward(vs *state.Virtual, snap *state.VirtualSnap, r *dns.Msg, wire []byte, client, local netip.AddrPort, udp bool, ifx int, c *Cache, w *waitingQuery) (_ *dns.Msg, origin string) {
	orig := r
	if s.p.ClientSubnet {
		if r, wire = withClientSubnet(r, wire, client.Addr()); r == nil {
			return nil, ""
		}
	}
	var m *dns.Msg
	own := false
	if r.Question[0].Qtype == dns.TypeAAAA && s.p.DNS64 != "" {
		m, own = s.dns64(vs, snap, r, wire, client, local, udp, ifx, c, w) // dns64.go
	} else {
		m, own = s.ask(vs, snap, r, wire, client, local, udp, ifx, c, w)
	}
	if m == nil {
		if w.deleted() {
			s.st.Deleted.Add(1)
		} else {
			s.st.NoAnswer.Add(1)
		}
		return nil, ""
	}
	origin = gslb.OriginServer
	if own {
		origin = gslb.OriginCache
	}
	s.st.PoolAnswers.Add(1)
	if s.p.ClientSubnet {
		m = echoOPT(orig, m)
	}
	if s.p.DNS64Additional != "" && s.p.DNS64 != "" {
		rewriteAdditional(s.p.DNS64Additional, s.dns64Prefix(), m) // dns64.go
	}
	if c != nil {
		c.Put(orig, m)
	}
	return m, origin
}

// echoOPT gives m, the pool's answer to a query with the client subnet
// inserted, the OPT record the client's query r calls for: none when r
// had none, else the member's without the subnet option.
func echoOPT(r, m *dns.Msg) *dns.Msg {
	extra := m.Extra[:0:0]
	for _, x := range m.Extra {
		o, ok := x.(*dns.OPT)
		if !ok {
			extra = append(extra, x)
			continue
		}
		if r.IsEdns0() == nil {
			continue
		}
		c := *o
		c.Option = nil
		for _, opt := range o.Option {
			if _, ecs := opt.(*dns.EDNS0_SUBNET); !ecs {
				c.Option = append(c.Option, opt)
			}
		}
		extra = append(extra, &c)
	}
	m.Extra = extra
	return m
}

// ask sends wire (r) to a forward zone's name server or a member and
// returns the answer; own is true when the cache c answered itself.
func (s *Service) ask(vs *state.Virtual, snap *state.VirtualSnap, r *dns.Msg, wire []byte, client, local netip.AddrPort, udp bool, ifx int, c *Cache, w *waitingQuery) (_ *dns.Msg, own bool) {
	if m, ok := cacheOwn(c, r, wire, snap.Pool != nil, udp, w); ok {
		return m, true
	}
	if snap.Pool == nil {
		return nil, false
	}
	if c != nil {
		slots, ok := c.upstream(udp) // cache.go
		if !ok {
			return reply(r, dns.RcodeServerFailure), true
		}
		if slots != nil {
			defer slots.Add(-1)
		}
	}
	return askPool(vs, snap, r, wire, client, local, udp, ifx, w), false
}

// AskPool sends wire (r) to a member of the virtual's pool, chosen by
// the pool's load balancing and monitors, over UDP (udp) or TCP, from
// the virtual's SNAT address, and returns its answer; a member that
// does not answer is passed over for one more. nil when none answered
// or there is no pool. A DoH virtual's queries take this way too
// (dataplane/doh); a doh-proxy whose members are DoH servers takes the
// query itself (PoolAsker). ifx is the client's arrival interface (0:
// not known), for a VLAN-limited SNAT's choice (askPool).
func AskPool(vs *state.Virtual, snap *state.VirtualSnap, r *dns.Msg, wire []byte, client, local netip.AddrPort, udp bool, ifx int) *dns.Msg {
	return askPool(vs, snap, r, wire, client, local, udp, ifx, nil)
}

// askPool is AskPool for a UDP query the connection table lists (w; nil
// for none): delete sys connection closes the exchange under way and
// no other member is asked. ifx is the client's arrival interface (0:
// not known): a SNAT whose VLAN list does not admit it is passed over
// (state.SNATSourceHeldOn).
func askPool(vs *state.Virtual, snap *state.VirtualSnap, r *dns.Msg, wire []byte, client, local netip.AddrPort, udp bool, ifx int, w *waitingQuery) *dns.Msg {
	if snap.Pool == nil {
		return nil
	}
	if a, ok := snap.DNS.(PoolAsker); ok {
		if m, handled := a.AskPool(vs, snap, r, wire, client, local); handled {
			return m
		}
	}
	var failed []*state.Member
	for attempt := 0; attempt < 2; attempt++ {
		mem, pool, _ := state.Choose(snap.Pool, state.Target{}, nil, failed, state.Chooser{})
		if mem == nil {
			return nil
		}
		dst := state.Translate(snap.Cfg, mem.Cfg.Load().Addr, local)
		// An ltm snat-translation's connection-limit holds the address
		// for the exchange; every address full leaves the query
		// unanswered by the pool, as no lsn translation does.
		h := state.SNATSourceHeldOn(vs, snap, client, local, dst, nil, pool, ifx)
		if h.Err != nil {
			return nil
		}
		src := h.Src
		var t *lsn.Translation
		if lp := snap.LSN; lp != nil {
			// source-address-translation type lsn: the exchange goes from a
			// translation of the pool, given back when it ends; none
			// (counted by the pool) leaves the query unanswered by the pool.
			var err error
			if t, err = lp.Translate(client, dst, udp, nil); err != nil {
				if h.Hold != nil {
					h.Hold.Release()
				}
				return nil
			}
			src = t.Addr
		}
		mem.Stats.Requests.Add(1)
		mem.Stats.Out(len(wire), 1)
		var m *dns.Msg
		var err error
		if h.Strict && t == nil {
			// source-port preserve-strict: from exactly the client's
			// port, or not at all.
			m, err = exchangeStrict(src, dst, r, wire, udp, w)
		} else {
			m, err = exchange(src, dst, r, wire, udp, w)
		}
		t.Release()
		if h.Hold != nil {
			h.Hold.Release()
		}
		if err == nil {
			mem.Stats.In(m.Len(), 1)
			return m
		}
		if w.deleted() || err == errStrictPort {
			return nil
		}
		failed = append(failed, mem)
	}
	return nil
}

// PoolAsker is a virtual's service that asks its pool its own way: a
// doh-proxy whose members are DoH servers (dataplane/doh), whose dns
// profile's pool step then goes to them as DoH. handled is false when it
// leaves the query to DNS over UDP or TCP.
type PoolAsker interface {
	AskPool(vs *state.Virtual, snap *state.VirtualSnap, r *dns.Msg, wire []byte, client, local netip.AddrPort) (m *dns.Msg, handled bool)
}

// cacheOwn is the cache c's own answer to r (wire), before any pool: a
// local zone's, a resolution's, a forward zone's name servers'. ok is
// false when the cache leaves r to the pool (pooled: there is one), or
// there is no cache. w (nil: none) is r's row of the connection table:
// delete ends the forward exchange or the resolution under way, and
// no answer comes back.
func cacheOwn(c *Cache, r *dns.Msg, wire []byte, pooled, udp bool, w *waitingQuery) (*dns.Msg, bool) {
	if c == nil {
		return nil, false
	}
	if c.res != nil { // cache.go
		if m, ok := c.answerOwn(r, pooled, forwardZone(c.cfg.Forward, r.Question[0].Name) != nil, w); ok {
			if w.deleted() {
				return nil, true
			}
			return m, true
		}
	}
	if len(c.cfg.Forward) > 0 {
		if servers := forwardZone(c.cfg.Forward, r.Question[0].Name); servers != nil {
			for _, ns := range servers {
				if m, err := exchange(netip.AddrPort{}, ns, r, wire, udp, w); err == nil {
					return m, true
				}
				if w.deleted() {
					break
				}
			}
			return nil, true
		}
	}
	return nil, false
}

// waits says whether the cache c's own answer to r may wait on the
// network (a forward zone's name servers, a resolution), the cases
// where a UDP query takes a row of the connection table; a local
// zone's answer does not wait, but is told apart only inside.
func (c *Cache) waits(r *dns.Msg, pooled bool) bool {
	if len(c.cfg.Forward) > 0 && forwardZone(c.cfg.Forward, r.Question[0].Name) != nil {
		return true
	}
	return c.res != nil && c.cfg.Recurse && (!pooled || c.cfg.Hinted)
}

// forwardZone is the name servers of the longest forward zone holding
// name, nil when none does.
func forwardZone(zones map[string][]netip.AddrPort, name string) []netip.AddrPort {
	name = strings.ToLower(dns.Fqdn(name))
	for {
		if ns, ok := zones[name]; ok {
			return ns
		}
		if name == "." {
			return nil
		}
		i := strings.IndexByte(name, '.')
		name = name[i+1:]
		if name == "" {
			name = "."
		}
	}
}

var errMismatch = errors.New("the answer is not to the query")

// exchange sends wire to dst over UDP (udp) or TCP from src's address
// (any when it is not valid or cannot be bound) and reads the answer.
// A src with a port is an lsn translation: bound exactly (shared with
// its inbound listener, lsn.ReusePort), no other source.
func exchange(src, dst netip.AddrPort, r *dns.Msg, wire []byte, udp bool, w *waitingQuery) (*dns.Msg, error) {
	network := "tcp"
	if udp {
		network = "udp"
	}
	d := net.Dialer{Timeout: ForwardTimeout}
	if src.Port() != 0 {
		if udp {
			d.LocalAddr = net.UDPAddrFromAddrPort(src)
		} else {
			d.LocalAddr = net.TCPAddrFromAddrPort(src)
		}
		d.Control = func(_, _ string, rc syscall.RawConn) error {
			var err error
			if cerr := rc.Control(func(fd uintptr) { err = lsn.ReusePort(int(fd)) }); cerr != nil {
				return cerr
			}
			return err
		}
		c, err := d.Dial(network, dst.String())
		if err != nil {
			return nil, err
		}
		return exchangeOn(c, r, wire, w)
	}
	if src.Addr().IsValid() && src.Addr().Is4() == dst.Addr().Is4() {
		if udp {
			d.LocalAddr = net.UDPAddrFromAddrPort(netip.AddrPortFrom(src.Addr(), 0))
		} else {
			d.LocalAddr = net.TCPAddrFromAddrPort(netip.AddrPortFrom(src.Addr(), 0))
		}
	}
	c, err := d.Dial(network, dst.String())
	if err != nil && d.LocalAddr != nil {
		d.LocalAddr = nil // the SNAT address is not ours: let the kernel choose [M]
		c, err = d.Dial(network, dst.String())
	}
	if err != nil {
		return nil, err
	}
	return exchangeOn(c, r, wire, w)
}

// errStrictPort: source-port preserve-strict, and the translation
// address has the client's port in use; the query is not sent.
var errStrictPort = errors.New("dnsvs: the client's port is in use on the SNAT translation address (preserve-strict)")

// exchangeStrict is exchange from exactly src, its port included, for an
// ltm snat's source-port preserve-strict: the socket shares the port
// with no other (no SO_REUSEPORT; a TCP one takes SO_REUSEADDR, so a
// port held only by connections in TIME_WAIT is free, as on a standard
// virtual [M]), and a port in use fails with errStrictPort, nothing
// sent.
func exchangeStrict(src, dst netip.AddrPort, r *dns.Msg, wire []byte, udp bool, w *waitingQuery) (*dns.Msg, error) {
	d := net.Dialer{Timeout: ForwardTimeout}
	network := "tcp"
	if udp {
		network = "udp"
		d.LocalAddr = net.UDPAddrFromAddrPort(src)
	} else {
		d.LocalAddr = net.TCPAddrFromAddrPort(src)
		d.Control = func(_, _ string, rc syscall.RawConn) error {
			var err error
			if cerr := rc.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1) }); cerr != nil {
				return cerr
			}
			return err
		}
	}
	c, err := d.Dial(network, dst.String())
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, errStrictPort
	}
	if err != nil {
		return nil, err
	}
	return exchangeOn(c, r, wire, w)
}

// exchangeOn is exchange over c, which it closes.
func exchangeOn(c net.Conn, r *dns.Msg, wire []byte, w *waitingQuery) (*dns.Msg, error) {
	defer c.Close()
	if w != nil {
		if !w.hold(c) {
			return nil, errDeleted
		}
		defer w.hold(nil)
	}
	c.SetDeadline(time.Now().Add(ForwardTimeout))
	dc := &dns.Conn{Conn: c, UDPSize: dns.MaxMsgSize}
	if _, err := dc.Write(wire); err != nil {
		return nil, err
	}
	for range 8 { // a stray datagram is skipped, within the deadline
		m, err := dc.ReadMsg()
		if err != nil {
			return nil, err
		}
		if m.Id == r.Id && m.Response && len(m.Question) == len(r.Question) {
			return m, nil
		}
	}
	return nil, errMismatch
}

// withClientSubnet is r with an EDNS client subnet option holding the
// client's address (a /32, an IPv6 /128 [M]) in place of any the client
// sent, and its wire form; nil when it cannot be packed.
func withClientSubnet(r *dns.Msg, wire []byte, client netip.Addr) (*dns.Msg, []byte) {
	r = r.Copy()
	o := r.IsEdns0()
	if o == nil {
		r.SetEdns0(1232, false)
		o = r.IsEdns0()
	}
	opts := o.Option[:0]
	for _, x := range o.Option {
		if _, ecs := x.(*dns.EDNS0_SUBNET); !ecs {
			opts = append(opts, x)
		}
	}
	e := &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 32, Address: net.IP(client.AsSlice())}
	if client.Is6() {
		e.Family, e.SourceNetmask = 2, 128
	}
	o.Option = append(opts, e)
	out, err := r.Pack()
	if err != nil {
		return nil, wire
	}
	return r, out
}
