package gslb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/internal/config"
)

// Options configure a Server.
type Options struct {
	// Logger receives status changes and probe failures; nil means
	// slog.Default().
	Logger *slog.Logger
	// Now is the clock for persistence and RTT ages; nil means time.Now.
	// Tests move it forward instead of sleeping. Probe round trips are
	// always timed with the real clock.
	Now func() time.Time
}

// Server is the GSLB DNS server. All methods are safe for concurrent use.
type Server struct {
	opts Options
	log  *slog.Logger
	now  func() time.Time

	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex // serializes Apply and Close
	closed    bool
	listeners map[listenerKey]*dnsListener
	monitors  map[string]*probeRun

	plan atomic.Pointer[plan]

	rtMu sync.Mutex // guards rt's maps (not the counters inside)
	rt   runtimes

	rtt     rttTable
	persist persistTable
	// avail moves on every change of a reported or probed status or
	// metric (availChanged): what is derived from availability for many
	// queries (a distributed application's places) is computed again
	// only when it moved.
	avail atomic.Uint64
	// appPersist holds LDNSes on a data center per distributed
	// application (distapp.go).
	appPersist appPersist

	probesInFlight atomic.Int64
	// suspended counts UDP queries answered in goroutines of their own
	// (rules that call after; suspend.go).
	suspended atomic.Int64
	// readers numbers the UDP readers, whose counter shards it chooses
	// (counter).
	readers atomic.Int32
	remote  atomic.Pointer[RemoteProber]
	mprober atomic.Pointer[MonitorProber]
	express atomic.Pointer[expressRef] // DNS Express (express.go)

	bgMu     sync.RWMutex // guards bgClosed against wg.Add
	bgClosed bool
	wg       sync.WaitGroup

	stats serverStats
}

type serverStats struct {
	queries   counter
	wideIP    counter
	static    counter
	nxdomain  counter
	refused   counter
	dropped   counter
	malformed counter
}

// New returns a Server serving nothing until the first Apply.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		opts:      opts,
		log:       opts.Logger,
		now:       opts.Now,
		ctx:       ctx,
		cancel:    cancel,
		listeners: map[listenerKey]*dnsListener{},
		monitors:  map[string]*probeRun{},
		rt: runtimes{
			vs: map[string]*vsRT{}, link: map[string]*linkRT{}, host: map[string]*hostRT{},
			pool: map[string]*poolRT{}, member: map[string]*memberRT{}, wideIP: map[string]*wipRT{},
			app: map[string]*appRT{},
		},
		rtt:     rttTable{m: map[netip.Prefix]*ldnsEntry{}},
		persist: persistTable{m: map[persistKey]*persistRec{}},
	}
	empty, _ := compile(&Config{})
	empty.bind(s.freshRT())
	s.plan.Store(empty)
	s.goBackground(s.janitor)
	return s
}

func (s *Server) freshRT() *runtimes {
	r := s.rt
	r.touched = map[any]bool{}
	return &r
}

// goBackground runs fn in a goroutine Close waits for; false once closed.
func (s *Server) goBackground(fn func()) bool {
	s.bgMu.RLock()
	defer s.bgMu.RUnlock()
	if s.bgClosed {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn()
	}()
	return true
}

// janitor expires persistence records, and LDNS entries and path
// measurements idle for inactive-ldns-ttl and inactive-paths-ttl.
func (s *Server) janitor() {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			now := s.now()
			s.persist.sweep(now)
			s.appPersist.sweep(now)
			s.ageLDNS(now)
		}
	}
}

// Plan is a Config checked and compiled, ready to be put in service by a
// Server: compiling is the costly part of an Apply (every reference
// resolved, topology sorted, zones parsed), so a caller that must refuse a
// bad configuration before committing to it compiles once, keeps the Plan,
// and hands it to ApplyPlan when the rest of its commit has succeeded.
type Plan struct {
	p *plan
	// served is set once the plan has been in service: its objects then
	// hold a Server's runtime state, which queries may still be reading.
	served atomic.Bool
}

// Compile checks cfg as Apply would, without a Server: dangling
// references, modes out of place, wide IP names given twice, zones that do
// not parse, listeners listed twice. It binds and probes nothing; whether
// a listener's address can be bound is only known to ApplyPlan. cfg must
// not be modified afterwards.
func Compile(cfg *Config) (*Plan, error) {
	p, err := compile(cfg)
	if err != nil {
		return nil, err
	}
	return &Plan{p: p}, nil
}

// Check reports what Compile would refuse in cfg.
func Check(cfg *Config) error {
	_, err := compile(cfg)
	return err
}

// Apply compiles cfg and puts it in service (Compile, then ApplyPlan).
// On error nothing changes.
func (s *Server) Apply(cfg *Config) error {
	pl, err := Compile(cfg)
	if err != nil {
		return err
	}
	return s.ApplyPlan(pl)
}

// ApplyPlan puts a compiled configuration in service without a gap:
// listeners that stay are not rebound, probes of unchanged virtual servers
// go on, and the RTT table, persistence records, metrics and counters of
// objects that stay are kept. A plan goes in service once: to return to
// an earlier configuration, compile it again. On error (a listener address
// that cannot be bound) nothing changes.
func (s *Server) ApplyPlan(pl *Plan) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("gslb: server closed")
	}
	if pl.served.Load() {
		return errors.New("gslb: this plan has already been in service; compile the configuration again")
	}
	p := pl.p
	s.rtMu.Lock()
	rt := s.freshRT()
	p.bind(rt)
	p.resumeHolds(s.plan.Load())
	s.rtMu.Unlock()
	// Bind what is new before anything else changes.
	var fresh []*dnsListener
	for k := range p.listeners {
		if s.listeners[k] != nil {
			continue
		}
		l, err := s.listen(k, p.listeners[k].VLANs)
		if err != nil {
			for _, f := range fresh {
				f.close()
			}
			return err
		}
		fresh = append(fresh, l)
	}
	for _, pr := range p.programs {
		if err := pr.Init(); err != nil {
			s.log.Warn("gslb: RULE_INIT failed", "error", err)
		}
	}
	pl.served.Store(true)
	s.plan.Store(p)
	for _, f := range fresh {
		s.listeners[f.key] = f
	}
	for k, l := range s.listeners {
		if pl, ok := p.listeners[k]; !ok {
			l.close()
			delete(s.listeners, k)
		} else {
			l.setVLANs(pl.VLANs) // vlans_linux.go
		}
	}
	s.rtMu.Lock()
	rt.prune()
	s.rtMu.Unlock()
	s.applyMonitors(p)
	return nil
}

// Close stops serving, probing and monitoring, and waits for them.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for k, l := range s.listeners {
		l.close()
		delete(s.listeners, k)
	}
	for k, m := range s.monitors {
		m.stop()
		delete(s.monitors, k)
	}
	s.mu.Unlock()
	s.cancel()
	s.bgMu.Lock()
	s.bgClosed = true
	s.bgMu.Unlock()
	s.wg.Wait()
	return nil
}

// Listeners

type listenerKey struct {
	addr  netip.AddrPort
	proto string
}

// dnsListener is one listener: a miekg/dns server for TCP, sockets with
// their readers for UDP (udp.go).
type dnsListener struct {
	key     listenerKey
	srv     *dns.Server
	sockets int    // UDP: how many
	stop    func() // UDP: makes the readers return (done closes then)
	running sync.WaitGroup
	done    chan struct{}
	listenerVLANs
}

// listen binds and serves listener k, taking traffic only from the
// interfaces vl admits (nil: every one) from its first datagram or
// connection on.
func (s *Server) listen(k listenerKey, vl *config.VLANFilter) (*dnsListener, error) {
	if k.proto == "udp" {
		return s.listenUDP(k, vl)
	}
	srv := &dns.Server{Handler: s, Net: k.proto, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
		DecorateReader: s.xfrReader(k)} // listener_dns.go
	// Plain TCP, not Go's default Multipath TCP: a VLAN list needs the
	// arrival interface of each connection (IP_PKTINFO), which an MPTCP
	// listener does not keep, and DNS clients do not use MPTCP.
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	ln, err := lc.Listen(context.Background(), "tcp", k.addr.String())
	if err != nil {
		return nil, fmt.Errorf("gtm listener %s tcp: %w", k.addr, err)
	}
	l := &dnsListener{key: k, srv: srv, done: make(chan struct{})}
	l.tcp = ln
	l.setVLANs(vl)
	srv.Listener = l.vlanAccept(s, ln) // vlans_linux.go
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go func() {
		defer close(l.done)
		if err := srv.ActivateAndServe(); err != nil {
			s.log.Warn("gslb: listener stopped", "listener", k.addr, "protocol", k.proto, "error", err)
		}
	}()
	select {
	case <-started:
	case <-l.done:
		return nil, fmt.Errorf("gtm listener %s %s: did not start", k.addr, k.proto)
	}
	return l, nil
}

func (l *dnsListener) close() {
	if l.srv == nil {
		l.stop()
		<-l.done
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	l.srv.ShutdownContext(ctx)
	<-l.done
}

// ListenerAddrs lists what is served now, as "udp 127.0.0.1:53", sorted:
// a show of the listeners, and a check that Apply rebound nothing.
func (s *Server) ListenerAddrs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.listeners {
		out = append(out, k.proto+" "+k.addr.String())
	}
	sort.Strings(out)
	return out
}

// Queries

// ServeDNS answers one query; Server is a dns.Handler so it can be served
// on sockets the caller owns too.
func (s *Server) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	udp := isUDP(w)
	v := via{key: listenerKey{addr: addrPortOf(w.LocalAddr()), proto: "tcp"}, port: addrPortOf(w.RemoteAddr()).Port()}
	if udp {
		v.key.proto = "udp"
	}
	l := s.listenerDNS(v.key)
	v.l = l
	if l != nil && l.Log != nil {
		l.Log.Query(r, addrPortOf(w.RemoteAddr()), v.key.addr)
	}
	m, send := s.answer(r, addrOf(w.RemoteAddr()), udp, v)
	if !send {
		return
	}
	if l != nil && l.Log != nil {
		l.Log.Response(m, addrPortOf(w.RemoteAddr()))
	}
	w.WriteMsg(m)
}

// Answer builds the response to r from an LDNS at src; send is false when
// the query is to be dropped (drop-packet, or a response to a response).
// udp caps the answer at the requester's UDP size with the TC bit.
func (s *Server) Answer(r *dns.Msg, src netip.Addr, udp bool) (m *dns.Msg, send bool) {
	return s.answer(r, src, udp, via{})
}

// answerCore is Answer without the listener's rules; rc, when rules are
// configured anywhere, runs a wide IP's. The wide IPs answer first, then
// DNS Express, then the listener l's dns profile (its cache and
// unhandled-query-action), then the static zones, BIG-IP's order; l (nil
// for none) may leave any of them out; port (the client's) and local
// (the listener's address) go to its profile steps.
func (s *Server) answerCore(p *plan, r *dns.Msg, src netip.Addr, udp bool, rc *ruleConn, l *Listener, port uint16, local netip.AddrPort) (m *dns.Msg, send bool) {
	s.stats.queries.Inc(0)
	if r.Response {
		s.stats.malformed.Inc(0)
		return nil, false
	}
	m = new(dns.Msg)
	m.SetReply(r)
	m.RecursionAvailable = false
	if r.Opcode != dns.OpcodeQuery {
		m.SetRcode(r, dns.RcodeNotImplemented)
		return m, true
	}
	if len(r.Question) != 1 {
		s.stats.malformed.Inc(0)
		m.SetRcode(r, dns.RcodeFormatError)
		return m, true
	}
	q := r.Question[0]
	opt := r.IsEdns0()
	client := src
	var ecs *dns.EDNS0_SUBNET
	var ecsAddr netip.Addr
	if opt != nil {
		for _, o := range opt.Option {
			if e, ok := o.(*dns.EDNS0_SUBNET); ok {
				ecs = e
			}
		}
		if ecs != nil {
			// The answer's own copy: its scope is 0 until a topology
			// score reads the subnet (request.topoClient).
			e := *ecs
			e.SourceScope = 0
			ecs = &e
			ecsAddr = ecsClient(ecs)
			if ecsAddr.IsValid() && p.settings.UseClientSubnet {
				client = ecsAddr
			}
		}
	}
	qname := strings.ToLower(q.Name)
	if q.Qclass != dns.ClassINET && q.Qclass != dns.ClassANY {
		s.stats.refused.Inc(0)
		m.Rcode = dns.RcodeRefused
		return s.finishMsg(m, opt, nil, udp), true
	}
	if w, some := p.wideIPFor(qname, q.Qtype); some != nil && (l == nil || !l.NoGTM) {
		s.stats.wideIP.Inc(0)
		if rc != nil {
			rc.origin = OriginGTM // DNS::origin; a wide IP's DNS::return makes it TCL
		}
		some.rt.requests.Inc(0)
		if w == nil {
			some.rt.requestsOther.Inc(0)
			// The name exists; no wide IP of the name has that type.
			m.Authoritative = true
			if z := p.zoneFor(qname); z != nil {
				if set := z.Set(qname); set != nil && len(set[q.Qtype]) > 0 {
					z.Answer(m, qname, q.Name, q.Qtype)
				} else {
					m.Ns = append(m.Ns, z.Negative())
				}
			}
			return s.finishMsg(m, opt, ecs, udp), true
		}
		w.rt.requestsA.Inc(0)
		if w.cfg.Disabled {
			return s.unresolved(p, m, qname, q, opt, ecs, udp, w), true
		}
		rq := request{plan: p, ldns: src, client: client, topoAddr: client, now: s.now()}
		if ecsAddr.IsValid() && (w.cfg.TopologyPreferECS || client == ecsAddr) {
			rq.topoAddr, rq.ecs = ecsAddr, ecs
		}
		if !p.settings.NoCacheLDNS {
			s.rtt.seen(ldnsKey(src, &p.settings), src, rq.now)
		}
		var d decision
		if rc != nil && w.rules != nil {
			if m, send, done := s.wideIPRules(rc, &rq, w, m, qname, q, opt, ecs, udp, &d); done {
				return m, send
			}
		} else {
			s.resolve(&rq, w, &d)
		}
		w.rt.ended(d.out, 0)
		switch d.out {
		case outDrop:
			s.stats.dropped.Inc(0)
			return nil, false
		case outReturnToDNS:
			return s.unresolved(p, m, qname, q, opt, ecs, udp, w), true
		}
		if w.typ.named() {
			return s.withNS(p, s.decidedNames(p, &rq, m, qname, q, opt, ecs, udp, w, &d), qname, w, opt, udp), true
		}
		return s.withNS(p, s.decided(p, m, qname, q, opt, ecs, udp, w.typ, &d), qname, w, opt, udp), true
	}
	if l == nil || !l.NoExpress {
		if xm := s.expressAnswer(r, qname); xm != nil {
			return s.finishMsg(xm, opt, ecs, udp), true
		}
	}
	if pm, send, ok := s.profileAnswer(l, r, src, port, local, udp); ok { // listener_dns.go
		return pm, send
	}
	if z := p.zoneFor(qname); z != nil && (l == nil || !l.NoBIND) {
		s.stats.static.Inc(0)
		z.Answer(m, qname, q.Name, q.Qtype)
		if m.Rcode == dns.RcodeNameError {
			s.stats.nxdomain.Inc(0)
		}
		return s.finishMsg(m, opt, ecs, udp), true
	}
	s.stats.refused.Inc(0)
	m.Rcode = dns.RcodeRefused
	return s.finishMsg(m, opt, nil, udp), true
}

// decided builds the answer of a wide IP whose decision is an answer.
func (s *Server) decided(p *plan, m *dns.Msg, qname string, q dns.Question, opt *dns.OPT, ecs *dns.EDNS0_SUBNET, udp bool, t RRType, d *decision) *dns.Msg {
	m.Authoritative = true
	if len(d.targets) > 0 { // a pools-cname pool answered
		m.Answer = append(m.Answer, nameRRs(TypeCNAME, q.Name, d.ttl, d.targets)...)
		return s.finishMsg(m, opt, ecs, udp)
	}
	for _, a := range d.addrs() {
		if t.family(a) { // an A wide IP answers IPv4 virtual servers, an AAAA one IPv6
			m.Answer = append(m.Answer, addrRR(q.Name, a, d.ttl))
		}
	}
	if len(m.Answer) == 0 {
		if z := p.zoneFor(qname); z != nil {
			m.Ns = append(m.Ns, z.Negative())
		}
	}
	return s.finishMsg(m, opt, ecs, udp)
}

// unresolved answers a query the wide IP could not resolve: with its
// failure RCODE and the zone's SOA (at failure-rcode-ttl) when
// failure-rcode-response is enabled, else from the static zones.
func (s *Server) unresolved(p *plan, m *dns.Msg, qname string, q dns.Question, opt *dns.OPT, ecs *dns.EDNS0_SUBNET, udp bool, w *wideIP) *dns.Msg {
	if !w.cfg.FailureResponse {
		return s.returnToDNS(p, m, qname, q, opt, ecs, udp, w)
	}
	m.Authoritative = true
	m.Rcode = w.cfg.FailureRcode
	if z := p.zoneFor(qname); z != nil {
		soa := *z.SOA()
		soa.Hdr.Ttl = w.cfg.FailureTTL
		m.Ns = append(m.Ns, &soa)
	}
	return s.finishMsg(m, opt, ecs, udp)
}

// withNS adds the zone's NS records and their addresses to an answer of a
// wide IP with minimal-response disabled. The OPT record stays last.
func (s *Server) withNS(p *plan, m *dns.Msg, qname string, w *wideIP, opt *dns.OPT, udp bool) *dns.Msg {
	if !w.cfg.FullResponse || len(m.Answer) == 0 || m.Truncated {
		return m
	}
	z := p.zoneFor(qname)
	if z == nil {
		return m
	}
	ns := z.Set(z.Origin())[dns.TypeNS]
	if len(ns) == 0 {
		return m
	}
	var ours []dns.RR // the answer's OPT record
	if n := len(m.Extra); n > 0 && m.Extra[n-1].Header().Rrtype == dns.TypeOPT {
		ours, m.Extra = []dns.RR{m.Extra[n-1]}, m.Extra[:n-1]
	}
	m.Ns = append(m.Ns, ns...)
	z.Glue(m, ns)
	m.Extra = append(m.Extra, ours...)
	if udp {
		m.Truncate(udpSize(opt))
	}
	return m
}

// returnToDNS answers a wide IP from the static zones, as BIG-IP hands
// the query to BIND: the zone's records for the name, else NXDOMAIN (or
// REFUSED when no zone holds the name).
func (s *Server) returnToDNS(p *plan, m *dns.Msg, qname string, q dns.Question, opt *dns.OPT, ecs *dns.EDNS0_SUBNET, udp bool, w *wideIP) *dns.Msg {
	if z := p.zoneFor(qname); z != nil {
		z.Answer(m, qname, q.Name, q.Qtype)
		if m.Rcode == dns.RcodeNameError {
			// The wide IP's name exists even when BIND has nothing for it.
			m.Rcode = dns.RcodeSuccess
		}
		return s.finishMsg(m, opt, ecs, udp)
	}
	m.Authoritative = true
	return s.finishMsg(m, opt, ecs, udp)
}

// udpSize is how large a UDP answer may be for a query with opt (nil:
// without EDNS).
func udpSize(opt *dns.OPT) int {
	size := dns.MinMsgSize
	if opt != nil {
		if sz := int(opt.UDPSize()); sz > size {
			size = min(sz, 1232)
		}
	}
	return size
}

func (s *Server) finishMsg(m *dns.Msg, opt *dns.OPT, ecs *dns.EDNS0_SUBNET, udp bool) *dns.Msg {
	if opt != nil {
		o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		o.SetUDPSize(1232)
		if opt.Do() {
			o.SetDo()
		}
		if ecs != nil {
			e := *ecs // the scope stays as the decision set it
			o.Option = append(o.Option, &e)
		}
		m.Extra = append(m.Extra, o)
	}
	if udp {
		m.Truncate(udpSize(opt))
	}
	return m
}

func addrRR(name string, a netip.Addr, ttl uint32) dns.RR {
	if a.Is4() {
		b := a.As4()
		return &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: ttl}, A: net.IP(b[:])}
	}
	b := a.As16()
	return &dns.AAAA{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeAAAA, Class: dns.ClassINET, Ttl: ttl}, AAAA: net.IP(b[:])}
}

func addrPortOf(a net.Addr) netip.AddrPort {
	switch x := a.(type) {
	case *net.UDPAddr:
		ap := x.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	case *net.TCPAddr:
		ap := x.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

func addrOf(a net.Addr) netip.Addr {
	switch x := a.(type) {
	case *net.UDPAddr:
		return x.AddrPort().Addr().Unmap()
	case *net.TCPAddr:
		return x.AddrPort().Addr().Unmap()
	}
	if a == nil {
		return netip.Addr{}
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

func isUDP(w dns.ResponseWriter) bool {
	_, ok := w.RemoteAddr().(*net.UDPAddr)
	return ok
}

// Metrics inputs

// SetVirtualServerMetrics records what the LTM side measures for the
// virtual server VSKey(server, vs): the next decision uses it. Metrics
// for an object the configuration does not (yet) have are kept until the
// next Apply.
func (s *Server) SetVirtualServerMetrics(server, vsName string, m VSMetrics) {
	s.rtMu.Lock()
	r := s.rt.vs[VSKey(server, vsName)]
	if r == nil {
		r = new(vsRT)
		s.rt.vs[VSKey(server, vsName)] = r
	}
	s.rtMu.Unlock()
	prev := StatusUnknown
	if o := r.metrics.Swap(&m); o != nil {
		prev = o.Status
	}
	wentDown(prev, m.Status, &r.downs)
	s.availChanged()
}

// ClearVirtualServerMetrics forgets the reported metrics, so the
// virtual server counts as unreported again (dynamic methods skip it).
func (s *Server) ClearVirtualServerMetrics(server, vsName string) {
	s.rtMu.Lock()
	r := s.rt.vs[VSKey(server, vsName)]
	s.rtMu.Unlock()
	if r != nil {
		r.metrics.Store(nil)
		s.availChanged()
	}
}

// SetLinkMetrics records a link's status and throughput as the link
// controller reports them.
func (s *Server) SetLinkMetrics(link string, m LinkMetrics) {
	s.rtMu.Lock()
	r := s.rt.link[link]
	if r == nil {
		r = new(linkRT)
		s.rt.link[link] = r
	}
	s.rtMu.Unlock()
	r.metrics.Store(&m)
	s.availChanged()
}

// availChanged records that some availability input changed.
func (s *Server) availChanged() { s.avail.Add(1) }

// hostRT is server's runtime state, made at its first report.
func (s *Server) hostRT(server string) *hostRT {
	s.rtMu.Lock()
	defer s.rtMu.Unlock()
	r := s.rt.host[server]
	if r == nil {
		r = new(hostRT)
		s.rt.host[server] = r
	}
	return r
}

// SetServerIQuery records how the daemon's iQuery channel reaches a gtm
// server (which of its addresses is connected, or why none is), for
// `show gtm server`; "" says it is not followed.
func (s *Server) SetServerIQuery(server, state string) {
	r := s.hostRT(server)
	if state == "" {
		r.iquery.Store(nil)
		return
	}
	r.iquery.Store(&state)
}

// SetServerStatus records a gtm server's status (its bigip monitor):
// StatusDown takes all its virtual servers out.
func (s *Server) SetServerStatus(server string, st Status) {
	r := s.hostRT(server)
	wentDown(Status(r.status.Swap(int32(st))), st, &r.downs)
	s.availChanged()
}
