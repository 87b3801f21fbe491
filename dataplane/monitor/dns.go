package monitor

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"syscall"

	"github.com/miekg/dns"
)

// DNSQuery is a dns monitor's query and what its answer must hold.
type DNSQuery struct {
	Name string
	// Type is the query type: dns.TypeA (BIG-IP's default) or
	// dns.TypeAAAA.
	Type uint16
	// AcceptRcode is no-error ("" too) or anything.
	AcceptRcode string
	// AnswerContains is query-type ("" too), any-type or anything.
	AnswerContains string
	// Recv, when valid, is an address the answer must hold.
	Recv netip.Addr
}

// ParseQType reads a dns monitor's qtype keyword (a, aaaa).
func ParseQType(s string) (uint16, error) {
	switch s {
	case "", "a":
		return dns.TypeA, nil
	case "aaaa":
		return dns.TypeAAAA, nil
	}
	return 0, fmt.Errorf("qtype %q is not valid (a, aaaa)", s)
}

func (q *DNSQuery) equal(o *DNSQuery) bool {
	if q == nil || o == nil {
		return q == o
	}
	return *q == *o
}

func (q *DNSQuery) check() error {
	switch q.Type {
	case 0, dns.TypeA, dns.TypeAAAA:
	default:
		return fmt.Errorf("qtype %s is not valid for a dns monitor (a, aaaa)", dns.TypeToString[q.Type])
	}
	switch q.AcceptRcode {
	case "", "no-error", "anything":
	default:
		return fmt.Errorf("accept-rcode %q is not valid (no-error, anything)", q.AcceptRcode)
	}
	switch q.AnswerContains {
	case "", "query-type", "any-type", "anything":
	default:
		return fmt.Errorf("answer-contains %q is not valid (query-type, any-type, anything)", q.AnswerContains)
	}
	return nil
}

func probeDNS(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	q := spec.DNS
	if q == nil || q.Name == "" {
		return Outcome{}, errors.New("dns monitor without qname")
	}
	qtype := q.Type
	if qtype == 0 {
		qtype = dns.TypeA
	}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(q.Name), qtype)
	m.RecursionDesired = true
	c := &dns.Client{Net: "udp", Dialer: dialer(ctx)}
	resp, _, err := c.ExchangeContext(ctx, m, target.String())
	if err == nil && resp.Truncated {
		c.Net = "tcp"
		resp, _, err = c.ExchangeContext(ctx, m, target.String())
	}
	if err != nil {
		if ctx.Err() != nil {
			return Outcome{}, ErrNoResponse
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			return Outcome{}, ErrPortUnreachable
		}
		return Outcome{}, fmt.Errorf("DNS query failed; %v", unwrapSyscall(err))
	}
	if (q.AcceptRcode == "" || q.AcceptRcode == "no-error") && resp.Rcode != dns.RcodeSuccess {
		return Outcome{}, fmt.Errorf("DNS response code %s, not NOERROR", dns.RcodeToString[resp.Rcode])
	}
	switch q.AnswerContains {
	case "", "query-type":
		found := false
		for _, rr := range resp.Answer {
			if rr.Header().Rrtype == qtype {
				found = true
				break
			}
		}
		if !found {
			return Outcome{}, fmt.Errorf("DNS answer holds no %s record", dns.TypeToString[qtype])
		}
	case "any-type":
		if len(resp.Answer) == 0 {
			return Outcome{}, errors.New("DNS answer section is empty")
		}
	}
	if !q.Recv.IsValid() {
		return Outcome{Up: true}, nil
	}
	match := false
	for _, rr := range resp.Answer {
		var a netip.Addr
		switch r := rr.(type) {
		case *dns.A:
			a, _ = netip.AddrFromSlice(r.A.To4())
		case *dns.AAAA:
			a, _ = netip.AddrFromSlice(r.AAAA)
		}
		if a.IsValid() && a.Unmap() == q.Recv.Unmap() {
			match = true
		}
	}
	switch {
	case match && spec.Reverse:
		return Outcome{}, ErrReverseMatch
	case match || spec.Reverse:
		return Outcome{Up: true}, nil
	}
	return Outcome{}, ErrNoMatch
}
