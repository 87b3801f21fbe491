package fqdn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Server queries DNS servers directly (miekg/dns), in order until one
// answers, and follows CNAME chains; it knows the records' TTLs.
type Server struct {
	// Addrs are "host:port" addresses; a bare address means port 53.
	Addrs []string
	// Search are the domains a name is completed with (`sys dns
	// search`), as a stub resolver's search list: a name with fewer
	// than NDots dots is asked with each of them before it is asked as
	// written; a name with at least NDots dots is asked as written
	// first. A name ending in a dot is never completed.
	Search []string
	NDots  int
}

// Candidates are the names asked for name, in order (resolv.conf's
// search and ndots): with no search domains, only the name itself.
func (s *Server) Candidates(name string) []string {
	if strings.HasSuffix(name, ".") || len(s.Search) == 0 {
		return []string{strings.TrimSuffix(name, ".")}
	}
	out := make([]string, 0, len(s.Search)+1)
	asIs := strings.Count(name, ".") >= s.NDots
	if asIs {
		out = append(out, name)
	}
	for _, d := range s.Search {
		d = strings.Trim(d, ".")
		if d != "" {
			out = append(out, name+"."+d)
		}
	}
	if !asIs {
		out = append(out, name)
	}
	return out
}

// maxChain bounds CNAME following.
const maxChain = 8

// Resolve implements Resolver.
func (s *Server) Resolve(ctx context.Context, name string, fam Family) (Answer, error) {
	if len(s.Addrs) == 0 {
		return Answer{}, errNoServer
	}
	// Each candidate in turn, as a stub resolver does: a name that does
	// not exist or has no address of the family moves on to the next; a
	// server that fails ends the search. The TTL of an answer without
	// addresses is the smallest of the candidates' negative TTLs.
	var none Answer
	for i, cand := range s.Candidates(name) {
		ans, err := s.resolveOne(ctx, cand, fam)
		if err != nil {
			return Answer{}, err
		}
		if len(ans.Addrs) > 0 {
			return ans, nil
		}
		if i == 0 || ans.TTL < none.TTL {
			none.TTL = ans.TTL
		}
	}
	return none, nil
}

// resolveOne asks the servers, in order until one answers, for name.
func (s *Server) resolveOne(ctx context.Context, name string, fam Family) (Answer, error) {
	var lastErr error
	for _, a := range s.Addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			a = net.JoinHostPort(a, "53")
		}
		ans, err := resolveAt(ctx, a, name, fam)
		if err == nil {
			return ans, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return Answer{}, lastErr
}

func resolveAt(ctx context.Context, server, name string, fam Family) (Answer, error) {
	qtype := dns.TypeA
	if fam == IPv6 {
		qtype = dns.TypeAAAA
	}
	want := dns.Fqdn(strings.ToLower(name))
	var out Answer
	ttl := uint32(0)
	seenTTL := false
	note := func(t uint32) {
		if !seenTTL || t < ttl {
			ttl, seenTTL = t, true
		}
	}
	for hop := 0; hop < maxChain; hop++ {
		resp, err := exchange(ctx, server, want, qtype)
		if err != nil {
			return Answer{}, err
		}
		switch resp.Rcode {
		case dns.RcodeSuccess:
		case dns.RcodeNameError:
			noteNegative(resp, note)
			out.TTL = time.Duration(ttl) * time.Second
			return out, nil
		default:
			return Answer{}, fmt.Errorf("DNS server %s answered %s for %s", server, dns.RcodeToString[resp.Rcode], want)
		}
		// Walk the chain inside this answer.
		cur := want
		for range maxChain {
			next := ""
			for _, rr := range resp.Answer {
				if c, ok := rr.(*dns.CNAME); ok && strings.EqualFold(c.Hdr.Name, cur) {
					next = strings.ToLower(c.Target)
					note(c.Hdr.Ttl)
				}
			}
			if next == "" {
				break
			}
			cur = next
		}
		for _, rr := range resp.Answer {
			if !strings.EqualFold(rr.Header().Name, cur) {
				continue
			}
			var a netip.Addr
			switch r := rr.(type) {
			case *dns.A:
				a, _ = netip.AddrFromSlice(r.A.To4())
			case *dns.AAAA:
				a, _ = netip.AddrFromSlice(r.AAAA)
			}
			if a.IsValid() {
				out.Addrs = append(out.Addrs, a)
				note(rr.Header().Ttl)
			}
		}
		if len(out.Addrs) > 0 || cur == want {
			if len(out.Addrs) == 0 {
				noteNegative(resp, note)
			}
			out.TTL = time.Duration(ttl) * time.Second
			return out, nil
		}
		want = cur // the server gave the alias only: ask for its target
	}
	return Answer{}, fmt.Errorf("CNAME chain of %s longer than %d", name, maxChain)
}

// noteNegative takes the negative-caching TTL from the SOA in authority.
func noteNegative(resp *dns.Msg, note func(uint32)) {
	for _, rr := range resp.Ns {
		if soa, ok := rr.(*dns.SOA); ok {
			note(min(soa.Hdr.Ttl, soa.Minttl))
		}
	}
}

func exchange(ctx context.Context, server, name string, qtype uint16) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = true
	c := &dns.Client{Net: "udp"}
	resp, _, err := c.ExchangeContext(ctx, m, server)
	if err == nil && resp.Truncated {
		c.Net = "tcp"
		resp, _, err = c.ExchangeContext(ctx, m, server)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("no answer from DNS server %s before the deadline", server)
		}
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err
		}
		return nil, fmt.Errorf("DNS server %s: %v", server, err)
	}
	return resp, nil
}

// System uses the host's resolver (/etc/hosts, resolv.conf), which does
// not tell TTLs: with `interval ttl` the name is asked again after
// UnknownTTL.
type System struct {
	// Resolver is the resolver to use; nil is net.DefaultResolver.
	Resolver *net.Resolver
}

// Resolve implements Resolver.
func (s *System) Resolve(ctx context.Context, name string, fam Family) (Answer, error) {
	r := s.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	network := "ip4"
	if fam == IPv6 {
		network = "ip6"
	}
	addrs, err := r.LookupNetIP(ctx, network, name)
	if err != nil {
		var de *net.DNSError
		if errors.As(err, &de) && de.IsNotFound {
			return Answer{}, nil
		}
		return Answer{}, err
	}
	for i, a := range addrs {
		addrs[i] = a.Unmap()
	}
	return Answer{Addrs: addrs}, nil
}
