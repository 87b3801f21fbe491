// Package authtest is a small authoritative DNS server (miekg/dns) that
// serves zones from their records: answers, referrals with glue, NODATA
// and NXDOMAIN with the SOA. The resolver's tests, the daemon's and the
// tcpkit dnsauth command start root, TLD and authoritative servers of
// their own with it, so that recursion is shown on loopback.
package authtest

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/miekg/dns"
)

// Server serves the zones whose SOA records it holds.
type Server struct {
	rrs []dns.RR
	// TruncateUDP makes every UDP answer an empty truncated one, so that
	// a resolver must come back over TCP.
	TruncateUDP bool
	// LowerCase answers with the question's name in lower case, as a
	// server that does not preserve it (or a forger that does not know
	// it) would.
	LowerCase bool

	// Log, when set, is told of each query as received (the name as
	// spelled, case kept) and the answer's rcode.
	Log func(name string, qtype uint16, network string, rcode int)

	// Queries counts the queries received; UDP and TCP by transport.
	Queries, UDP, TCP atomic.Int64

	mu      sync.Mutex
	servers []*dns.Server

	sigs        map[sigKey][]dns.RR // Sign's signatures, by owner and type covered
	denial      map[string][]dns.RR // Sign's NSEC or NSEC3 records, by zone
	noWildProof bool
}

// New parses records (zone-file lines, fully qualified names).
func New(records ...string) (*Server, error) {
	s := &Server{}
	for _, line := range records {
		rr, err := dns.NewRR(line)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", line, err)
		}
		if rr != nil {
			s.rrs = append(s.rrs, rr)
		}
	}
	return s, nil
}

// Zones are the zones the server holds (its SOA records' owners).
func (s *Server) Zones() []string {
	var out []string
	for _, rr := range s.rrs {
		if rr.Header().Rrtype == dns.TypeSOA {
			out = append(out, rr.Header().Name)
		}
	}
	return out
}

// Start serves on addr (ADDR:PORT) over UDP and TCP until Close.
func (s *Server) Start(addr string) error {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		pc.Close()
		return err
	}
	u := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(s.serve)}
	t := &dns.Server{Listener: ln, Handler: dns.HandlerFunc(s.serve)}
	s.mu.Lock()
	s.servers = append(s.servers, u, t)
	s.mu.Unlock()
	go u.ActivateAndServe()
	go t.ActivateAndServe()
	return nil
}

// Close stops serving.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, srv := range s.servers {
		srv.Shutdown()
	}
	s.servers = nil
}

func (s *Server) serve(w dns.ResponseWriter, r *dns.Msg) {
	s.Queries.Add(1)
	udp := w.LocalAddr().Network() == "udp"
	if udp {
		s.UDP.Add(1)
	} else {
		s.TCP.Add(1)
	}
	m := s.Answer(r)
	if udp && s.TruncateUDP {
		m.Answer, m.Ns, m.Extra, m.Truncated = nil, nil, nil, true
	}
	if s.Log != nil && len(r.Question) == 1 {
		network := "tcp"
		if udp {
			network = "udp"
		}
		s.Log(r.Question[0].Name, r.Question[0].Qtype, network, m.Rcode)
	}
	if s.LowerCase && len(m.Question) == 1 {
		m.Question[0].Name = strings.ToLower(m.Question[0].Name)
	}
	w.WriteMsg(m)
}

// Answer is the server's answer to r.
func (s *Server) Answer(r *dns.Msg) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(r)
	if len(r.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		return m
	}
	name := strings.ToLower(r.Question[0].Name)
	qtype := r.Question[0].Qtype
	zone := ""
	for _, rr := range s.rrs {
		if rr.Header().Rrtype == dns.TypeSOA && dns.IsSubDomain(rr.Header().Name, name) && len(rr.Header().Name) > len(zone) {
			zone = strings.ToLower(rr.Header().Name)
		}
	}
	if zone == "" {
		m.Rcode = dns.RcodeRefused
		return m
	}
	do := r.IsEdns0() != nil && r.IsEdns0().Do()
	if do {
		m.SetEdns0(1232, true)
	}
	// A delegation between the zone and the name: a referral (a DS at
	// the cut is the parent's to answer).
	cut := ""
	for _, rr := range s.rrs {
		o := strings.ToLower(rr.Header().Name)
		if rr.Header().Rrtype == dns.TypeNS && o != zone && dns.IsSubDomain(zone, o) && dns.IsSubDomain(o, name) && len(o) > len(cut) &&
			(qtype != dns.TypeDS || o != name) {
			cut = o
		}
	}
	if cut != "" {
		defer func() {
			if do {
				s.signed(m, zone, name, qtype, cut, "")
			}
		}()
		for _, rr := range s.rrs {
			if rr.Header().Rrtype == dns.TypeNS && strings.EqualFold(rr.Header().Name, cut) {
				m.Ns = append(m.Ns, rr)
				for _, g := range s.rrs {
					t := g.Header().Rrtype
					if (t == dns.TypeA || t == dns.TypeAAAA) && strings.EqualFold(g.Header().Name, rr.(*dns.NS).Ns) {
						m.Extra = append(m.Extra, g)
					}
				}
			}
		}
		return m
	}
	m.Authoritative = true
	wild := "" // the wildcard the answer is made from
	if do {
		defer func() { s.signed(m, zone, name, qtype, "", wild) }()
	}
	exists := false
	for target, hops := name, 0; hops < 8; hops++ {
		var next string
		for _, rr := range s.rrs {
			if !strings.EqualFold(rr.Header().Name, target) {
				continue
			}
			exists = true
			if rr.Header().Rrtype == qtype {
				m.Answer = append(m.Answer, rr)
			} else if c, ok := rr.(*dns.CNAME); ok {
				m.Answer = append(m.Answer, rr)
				next = strings.ToLower(c.Target)
			}
		}
		if next == "" || !dns.IsSubDomain(zone, next) {
			break
		}
		target = next
	}
	if !exists { // a wildcard at the closest encloser answers for the name
		if wild = s.wildcard(zone, name); wild != "" {
			exists = true
			for _, rr := range s.rrs {
				if strings.EqualFold(rr.Header().Name, wild) && (rr.Header().Rrtype == qtype || rr.Header().Rrtype == dns.TypeCNAME) {
					c := dns.Copy(rr)
					c.Header().Name = r.Question[0].Name
					m.Answer = append(m.Answer, c)
				}
			}
		}
	}
	if len(m.Answer) == 0 {
		if !exists {
			m.Rcode = dns.RcodeNameError
		}
		for _, rr := range s.rrs {
			if rr.Header().Rrtype == dns.TypeSOA && strings.EqualFold(rr.Header().Name, zone) {
				m.Ns = append(m.Ns, rr)
			}
		}
	}
	return m
}
