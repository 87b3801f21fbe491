package gslb

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

// The LDNS table: every LDNS that asked for a wide IP, grouped by prefix,
// with the round-trip time each probe path measured to it.

type pathRTT struct {
	rtt   time.Duration
	at    time.Time
	proto string
	err   string
	// sent and answered count the probes over the path to the LDNS
	// since it entered the table: their ratio is quality-of-service's
	// hit ratio.
	sent, answered uint32
	// hops is the hop count the reply crossed (measureHops), -1 when
	// not known: quality-of-service's hops.
	hops int
}

type ldnsEntry struct {
	key      netip.Prefix
	addr     netip.Addr // the last address seen: what is probed
	first    time.Time
	last     time.Time
	requests uint64
	paths    map[string]*pathRTT // by path name
	probing  bool
	probedAt time.Time
	probes   uint64
}

type rttTable struct {
	mu sync.Mutex
	m  map[netip.Prefix]*ldnsEntry
}

// maxLDNS bounds the LDNS table: a new LDNS beyond it is answered (by the
// alternate method) but neither remembered nor probed until the janitor
// has dropped entries idle for inactive-ldns-ttl.
const maxLDNS = 200000

// expire drops entries not seen since before cutoff (every entry when
// cutoff is later than all) and, in those kept, the
// path measurements taken before pathCutoff. An entry being probed
// stays: its probe's results have a place to land.
func (t *rttTable) expire(cutoff, pathCutoff time.Time) {
	t.mu.Lock()
	for k, e := range t.m {
		if e.probing {
			continue
		}
		if e.last.Before(cutoff) {
			delete(t.m, k)
			continue
		}
		for name, r := range e.paths {
			if r.at.Before(pathCutoff) {
				delete(e.paths, name)
			}
		}
	}
	t.mu.Unlock()
}

// ageLDNS applies inactive-ldns-ttl, inactive-paths-ttl and
// cache-ldns-servers to the LDNS table at now. A full table also sheds
// the LDNSes idle for two path TTLs (their measurements are stale
// anyway), so new LDNSes are not kept out for the weeks of
// inactive-ldns-ttl.
func (s *Server) ageLDNS(now time.Time) {
	p := s.plan.Load()
	if p == nil {
		return
	}
	st := &p.settings
	cutoff := now.Add(-st.InactiveLDNSTTL)
	s.rtt.mu.Lock()
	full := len(s.rtt.m) >= maxLDNS
	s.rtt.mu.Unlock()
	if stale := now.Add(-2 * st.PathTTL); full && stale.After(cutoff) {
		cutoff = stale
	}
	if st.NoCacheLDNS {
		cutoff = now.Add(time.Hour) // every entry
	}
	s.rtt.expire(cutoff, now.Add(-st.InactivePathsTTL))
}

func ldnsKey(a netip.Addr, st *Settings) netip.Prefix {
	return maskAddr(a, st.LDNSPrefix4, st.LDNSPrefix6)
}

// seen records one wide IP request from an LDNS.
func (t *rttTable) seen(key netip.Prefix, addr netip.Addr, now time.Time) {
	t.seenN(key, addr, now, 1)
}

// seenN records n queries of an LDNS at once (a UDP reader's batch).
func (t *rttTable) seenN(key netip.Prefix, addr netip.Addr, now time.Time, n uint64) {
	t.mu.Lock()
	e := t.m[key]
	if e == nil {
		if len(t.m) >= maxLDNS {
			t.mu.Unlock()
			return
		}
		e = &ldnsEntry{key: key, first: now, paths: map[string]*pathRTT{}}
		t.m[key] = e
	}
	e.addr, e.last = addr, now
	e.requests += n
	t.mu.Unlock()
}

// pickRTT is lowest-round-trip-time: the member whose probe path has the
// lowest measured RTT to the LDNS. An LDNS with no measurement for any
// candidate gets no answer here (the alternate method answers it) and
// starts a probe from every path, whose results answer its next query.
func (s *Server) pickRTT(rq *request, pl *pool, cands []*member) int {
	var rtts [64]time.Duration
	got := s.pathRTTs(rq, cands, rtts[:0])
	var idx [16]int
	ties := 0
	var best time.Duration
	for i, r := range got {
		if r <= 0 {
			continue
		}
		if ties == 0 || r < best {
			best, ties = r, 0
		}
		if r == best && ties < len(idx) {
			idx[ties] = i
			ties++
		}
	}
	if ties == 0 {
		return -1
	}
	if pl.cfg.DynamicRatio {
		var buf [64]float64
		w := buf[:0]
		if len(got) > len(buf) {
			w = make([]float64, 0, len(got))
		}
		for _, r := range got {
			x := 0.0
			if r > 0 {
				x = float64(best) / float64(r)
			}
			w = append(w, x)
		}
		return ratioPick(pl, w)
	}
	return idx[int((pl.rt.rr.Add(1)-1)%uint64(ties))]
}

// pathHits appends to out the hit ratio of each candidate's probe path
// to the LDNS of rq: the share of its probes the LDNS answered, -1 when
// none was sent. It reads what pathRTTs had probed.
func (s *Server) pathHits(rq *request, cands []*member, out []float64) []float64 {
	return s.pathStat(rq, cands, out, func(r *pathRTT) float64 {
		if r.sent > 0 {
			return float64(r.answered) / float64(r.sent)
		}
		return -1
	})
}

// pathHops appends to out the hops between each candidate's probe path
// and the LDNS of rq, as its last answered probe measured them; -1 when
// not known.
func (s *Server) pathHops(rq *request, cands []*member, out []float64) []float64 {
	return s.pathStat(rq, cands, out, func(r *pathRTT) float64 {
		if r.err == "" && r.hops >= 0 {
			return float64(r.hops)
		}
		return -1
	})
}

// pathStat appends to out what stat reads of each candidate's probe path
// to the LDNS of rq, -1 for a path never probed.
func (s *Server) pathStat(rq *request, cands []*member, out []float64, stat func(*pathRTT) float64) []float64 {
	key := ldnsKey(rq.ldns, &rq.plan.settings)
	t := &s.rtt
	t.mu.Lock()
	e := t.m[key]
	for _, m := range cands {
		x := -1.0
		if p := m.vs.path(); e != nil && p != nil {
			if r := e.paths[p.name]; r != nil {
				x = stat(r)
			}
		}
		out = append(out, x)
	}
	t.mu.Unlock()
	return out
}

// pathRTTs appends to out the measured round trip from the LDNS of rq
// over each candidate's probe path (0: not measured, or the probe
// failed), and starts a probe of the LDNS when its measurements are
// missing or older than the path TTL.
func (s *Server) pathRTTs(rq *request, cands []*member, out []time.Duration) []time.Duration {
	st := &rq.plan.settings
	key := ldnsKey(rq.ldns, st)
	probe := false
	measured := false
	if st.NoCacheLDNS {
		for range cands {
			out = append(out, 0)
		}
		return out
	}
	t := &s.rtt
	t.mu.Lock()
	e := t.m[key]
	if e == nil {
		if len(t.m) >= maxLDNS {
			t.mu.Unlock()
			for range cands {
				out = append(out, 0)
			}
			return out
		}
		e = &ldnsEntry{key: key, addr: rq.ldns, first: rq.now, last: rq.now, paths: map[string]*pathRTT{}}
		t.m[key] = e
	}
	for _, m := range cands {
		var rtt time.Duration
		if p := m.vs.path(); p != nil {
			if r := e.paths[p.name]; r != nil && r.err == "" && (st.IgnorePathTTL || rq.now.Sub(r.at) < st.PathTTL) {
				rtt = max(r.rtt, time.Nanosecond)
				measured = true
			}
		}
		out = append(out, rtt)
	}
	if !e.probing && !st.excluded(rq.ldns) && !st.excluded(e.addr) {
		age := rq.now.Sub(e.probedAt)
		switch {
		case e.probedAt.IsZero():
			probe = true
		case !measured && age >= st.PathTTL/10:
			probe = true // nothing measured: retry sooner
		case age >= st.PathTTL:
			probe = true
		}
		if probe {
			e.probing = true
		}
	}
	target := e.addr
	t.mu.Unlock()
	if probe {
		s.startProbe(rq.plan, key, target)
	}
	return out
}

// startProbe measures the RTT from every probe path to one LDNS, in the
// background, and stores the results.
func (s *Server) startProbe(p *plan, key netip.Prefix, target netip.Addr) {
	st := p.settings
	done := func() {
		s.rtt.mu.Lock()
		if e := s.rtt.m[key]; e != nil {
			e.probing = false
		}
		s.rtt.mu.Unlock()
	}
	if int(s.probesInFlight.Add(1)) > st.MaxProbes || len(p.paths) == 0 || !s.goBackground(func() {
		defer s.probesInFlight.Add(-1)
		type res struct {
			path *probePath
			r    pathRTT
		}
		results := make(chan res, len(p.paths))
		for _, path := range p.paths {
			go func() {
				rtt, proto, hops, err := s.measureVia(s.ctx, path.src, target, st.ProbePort, st.ProbeTimeout, st.ProbeProtocols)
				r := pathRTT{rtt: rtt, proto: proto, at: s.now(), hops: hops}
				if err != nil {
					r.err = err.Error()
				}
				results <- res{path, r}
			}()
		}
		var got []res
		for range p.paths {
			got = append(got, <-results)
		}
		now := s.now()
		s.rtt.mu.Lock()
		if e := s.rtt.m[key]; e != nil {
			for _, g := range got {
				r := g.r
				if r.err == errNotProbed {
					delete(e.paths, g.path.name) // no metrics: not probed
					continue
				}
				if prev := e.paths[g.path.name]; prev != nil {
					r.sent, r.answered = prev.sent, prev.answered
				}
				r.sent++
				if r.err == "" {
					r.answered++
				}
				e.paths[g.path.name] = &r
			}
			e.probing = false
			e.probedAt = now
			e.probes++
		}
		s.rtt.mu.Unlock()
		for _, g := range got {
			if g.r.err != "" && g.r.err != errNotProbed {
				s.log.Debug("gslb: LDNS probe failed", "ldns", target, "path", g.path.name, "source", g.path.src, "error", g.r.err)
			}
		}
	}) {
		s.probesInFlight.Add(-1)
		done()
	}
}

// measure is one RTT probe from src to the LDNS at dst: the protocols are
// tried in order until one gets an answer.
//
//   - dns_dot sends a non-recursive UDP query for `. NS` and times the
//     first reply with its ID, whatever its rcode (BIG-IP's big3d probe of
//     the same name). An ICMP port unreachable counts as a reply too.
//   - dns_rev does the same with a query for the PTR record of the
//     LDNS's own address (its in-addr.arpa or ip6.arpa name) [M: BIG-IP
//     names the probe, a reverse lookup of the LDNS, and says no more].
//   - tcp times a TCP handshake with the port; a reset (connection
//     refused) is an answer as good as a SYN-ACK.
func measure(ctx context.Context, src, dst netip.Addr, port uint16, timeout time.Duration, protos []string) (time.Duration, string, error) {
	rtt, proto, _, err := measureHops(ctx, src, dst, port, timeout, protos)
	return rtt, proto, err
}

// measureHops is measure with the hops the answer crossed, estimated
// from a dns_dot reply's TTL (hopsFrom); -1 when not known (a tcp probe,
// an ICMP refusal, a system that does not say).
func measureHops(ctx context.Context, src, dst netip.Addr, port uint16, timeout time.Duration, protos []string) (time.Duration, string, int, error) {
	var err error
	for _, proto := range protos {
		var rtt time.Duration
		hops := -1
		switch proto {
		case "dns_dot":
			rtt, hops, err = probeDNS(ctx, src, dst, port, timeout, ".", dns.TypeNS)
		case "dns_rev":
			rev, rerr := dns.ReverseAddr(dst.Unmap().String())
			if err = rerr; err == nil {
				rtt, hops, err = probeDNS(ctx, src, dst, port, timeout, rev, dns.TypePTR)
			}
		case "tcp":
			rtt, err = probeTCP(ctx, src, dst, port, timeout)
		case "icmp":
			rtt, err = probeICMP(ctx, src, dst, timeout)
		default:
			err = errors.New("unknown probe protocol " + proto)
		}
		if err == nil {
			return rtt, proto, hops, nil
		}
	}
	if err == nil {
		err = errors.New("no probe protocol")
	}
	return 0, "", -1, err
}

// probeDNS times a non-recursive UDP query of qname and qtype to the
// LDNS: dns_dot's `. NS`, dns_rev's PTR of the LDNS's own address.
func probeDNS(ctx context.Context, src, dst netip.Addr, port uint16, timeout time.Duration, qname string, qtype uint16) (time.Duration, int, error) {
	var laddr *net.UDPAddr
	if src.IsValid() {
		laddr = net.UDPAddrFromAddrPort(netip.AddrPortFrom(src, 0))
	}
	c, err := net.DialUDP("udp", laddr, net.UDPAddrFromAddrPort(netip.AddrPortFrom(dst, port)))
	if err != nil {
		return 0, -1, err
	}
	defer c.Close()
	ttl := recvTTL(c, !dst.Unmap().Is4())
	q := new(dns.Msg)
	q.SetQuestion(qname, qtype)
	q.RecursionDesired = false
	buf, err := q.Pack()
	if err != nil {
		return 0, -1, err
	}
	start := time.Now()
	c.SetDeadline(start.Add(timeout))
	// After the timeout's deadline: a cancel (the server closing) that
	// came first would otherwise be overwritten by it, and the probe
	// would hold Close for the whole timeout.
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	if _, err := c.Write(buf); err != nil {
		return 0, -1, err
	}
	in := make([]byte, 1500)
	oob := make([]byte, 64)
	for {
		n, oobn, _, _, err := c.ReadMsgUDP(in, oob)
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				return time.Since(start), -1, nil
			}
			return 0, -1, err
		}
		if n >= 2 && in[0] == buf[0] && in[1] == buf[1] {
			rtt, hops := time.Since(start), -1
			if ttl {
				hops = hopsFrom(ttlOf(oob[:oobn]))
			}
			return rtt, hops, nil
		}
	}
}

func probeTCP(ctx context.Context, src, dst netip.Addr, port uint16, timeout time.Duration) (time.Duration, error) {
	d := net.Dialer{Timeout: timeout}
	if src.IsValid() {
		d.LocalAddr = net.TCPAddrFromAddrPort(netip.AddrPortFrom(src, 0))
	}
	start := time.Now()
	c, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(dst, port).String())
	rtt := time.Since(start)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return rtt, nil
		}
		return 0, err
	}
	c.Close()
	return rtt, nil
}

// PathRTT is one probe path's measurement to an LDNS.
type PathRTT struct {
	// Path is the datacenter's or link's full path; Kind says which.
	Path  string
	Kind  string
	RTT   time.Duration
	Probe string // the protocol that answered
	Time  time.Time
	Error string // why the probe failed; RTT is then 0
	// Hops is the hop count the last answered probe crossed, -1 when
	// not known: `show gtm path` prints it beside the RTT.
	Hops int
	// Sent and Answered count the probes over the path since the LDNS
	// entered the table or its paths were deleted: `show gtm path`'s
	// completion rate, quality-of-service's hit ratio.
	Sent, Answered uint32
}

// LDNSRecord is one row of the LDNS table (`show gtm ldns`-like): an LDNS
// prefix, when it asked, and its measured paths.
type LDNSRecord struct {
	Prefix    netip.Prefix
	Addr      netip.Addr
	FirstSeen time.Time
	LastSeen  time.Time
	Requests  uint64
	Probes    uint64
	Probing   bool
	Paths     []PathRTT
}

// LDNSRecords lists the LDNS table sorted by prefix, for shows and for
// tests waiting for a probe to finish.
func (s *Server) LDNSRecords() []LDNSRecord {
	p := s.plan.Load()
	kinds := map[string]string{}
	if p != nil {
		for _, x := range p.paths {
			kinds[x.name] = x.kind
		}
	}
	s.rtt.mu.Lock()
	out := make([]LDNSRecord, 0, len(s.rtt.m))
	for _, e := range s.rtt.m {
		r := LDNSRecord{Prefix: e.key, Addr: e.addr, FirstSeen: e.first, LastSeen: e.last, Requests: e.requests, Probes: e.probes, Probing: e.probing}
		for name, x := range e.paths {
			r.Paths = append(r.Paths, PathRTT{Path: name, Kind: kinds[name], RTT: x.rtt, Probe: x.proto, Time: x.at, Error: x.err,
				Hops: x.hops, Sent: x.sent, Answered: x.answered})
		}
		sort.Slice(r.Paths, func(i, j int) bool { return r.Paths[i].Path < r.Paths[j].Path })
		out = append(out, r)
	}
	s.rtt.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Prefix.Addr().Less(out[j].Prefix.Addr()) })
	return out
}

// DeleteLDNS removes LDNS entries whose prefix holds addr (all entries for
// the zero Addr), as `delete gtm ldns` would, so they are probed afresh.
func (s *Server) DeleteLDNS(addr netip.Addr) int {
	s.rtt.mu.Lock()
	defer s.rtt.mu.Unlock()
	n := 0
	for k := range s.rtt.m {
		if !addr.IsValid() || k.Contains(addr.Unmap()) {
			delete(s.rtt.m, k)
			n++
		}
	}
	return n
}

// DeletePaths forgets the path measurements (RTT, hops, probe counts) of
// the LDNS entries whose prefix holds addr (every entry for the zero
// Addr), as `delete gtm path` does: the LDNSes stay in the table with
// their request counts, and their next query that needs a round trip
// probes them afresh. It returns how many paths it dropped.
func (s *Server) DeletePaths(addr netip.Addr) int {
	s.rtt.mu.Lock()
	defer s.rtt.mu.Unlock()
	n := 0
	for k, e := range s.rtt.m {
		if addr.IsValid() && !k.Contains(addr.Unmap()) {
			continue
		}
		n += len(e.paths)
		clear(e.paths)
		e.probedAt = time.Time{}
	}
	return n
}
