package rules

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/rules/tcl"
)

// Resolver answers RESOLV::lookup: the records of type qtype (dns.TypeA,
// AAAA, PTR, TXT, MX) for name, asked of server, or of the host's
// nameservers when server is not valid, each as the text the command
// returns. No record is an empty answer, not an error.
type Resolver interface {
	Lookup(ctx context.Context, server netip.AddrPort, qtype uint16, name string) ([]string, error)
}

// DNSResolver is the Resolver the daemon gives rules: a query over UDP
// (TCP when the answer is truncated) to the server, or in turn to each
// nameserver of the host's resolv.conf.
type DNSResolver struct {
	// Conf is the resolver configuration read for the host's
	// nameservers ("": /etc/resolv.conf).
	Conf string
}

// Lookup implements Resolver.
func (r DNSResolver) Lookup(ctx context.Context, server netip.AddrPort, qtype uint16, name string) ([]string, error) {
	servers := []string{server.String()}
	if !server.IsValid() {
		conf := r.Conf
		if conf == "" {
			conf = "/etc/resolv.conf"
		}
		cc, err := dns.ClientConfigFromFile(conf)
		if err != nil {
			return nil, fmt.Errorf("no nameserver: %v", err)
		}
		servers = servers[:0]
		for _, s := range cc.Servers {
			servers = append(servers, net.JoinHostPort(s, cc.Port))
		}
		if len(servers) == 0 {
			return nil, errors.New("no nameserver in " + conf)
		}
	}
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), qtype)
	var last error
	for _, s := range servers {
		in, err := exchange(ctx, q, s)
		if err != nil {
			last = err
			continue
		}
		if in.Rcode != dns.RcodeSuccess && in.Rcode != dns.RcodeNameError {
			last = fmt.Errorf("%s answered %s", s, dns.RcodeToString[in.Rcode])
			continue
		}
		return answers(in, qtype), nil
	}
	return nil, last
}

// exchange asks one server, again over TCP when the UDP answer is cut.
func exchange(ctx context.Context, q *dns.Msg, server string) (*dns.Msg, error) {
	c := &dns.Client{Net: "udp"}
	in, _, err := c.ExchangeContext(ctx, q, server)
	if err == nil && in.Truncated {
		c.Net = "tcp"
		in, _, err = c.ExchangeContext(ctx, q, server)
	}
	return in, err
}

// answers is the text of each record of type qtype in the answer section.
func answers(in *dns.Msg, qtype uint16) []string {
	var out []string
	for _, rr := range in.Answer {
		if rr.Header().Rrtype != qtype {
			continue // a CNAME on the way
		}
		switch v := rr.(type) {
		case *dns.A:
			out = append(out, v.A.String())
		case *dns.AAAA:
			out = append(out, v.AAAA.String())
		case *dns.PTR:
			out = append(out, strings.TrimSuffix(v.Ptr, "."))
		case *dns.TXT:
			out = append(out, strings.Join(v.Txt, ""))
		case *dns.MX:
			out = append(out, strconv.Itoa(int(v.Preference))+" "+strings.TrimSuffix(v.Mx, "."))
		}
	}
	return out
}

// maxLookupWait bounds one RESOLV::lookup, within the event's own
// deadline [M: BIG-IP's wait is the system resolver's].
const maxLookupWait = 2 * time.Second

// cmdResolvLookup is `RESOLV::lookup ?@server? ?inet|inet6?
// ?-a|-aaaa|-txt|-mx|-ptr? name|address`: the records as a list, empty
// when there are none or the lookup failed (as BIG-IP answers [M]; the
// failure is logged). Without a type an address asks for its PTR, a
// name for its A records (AAAA with inet6). The rule waits for the
// answer, no longer than its event may run: rules here run each event
// through, as `after` does.
func cmdResolvLookup(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const use = "RESOLV::lookup ?@server? ?inet|inet6? ?-a|-aaaa|-txt|-mx|-ptr? name|address"
	a := args[1:]
	var server netip.AddrPort
	if len(a) > 1 && strings.HasPrefix(a[0].String(), "@") {
		s := a[0].String()[1:]
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			addr, err2 := netip.ParseAddr(s)
			if err2 != nil {
				return tcl.Empty, tcl.Errorf("RESOLV::lookup: @%s is not a nameserver address (ADDRESS or ADDRESS:PORT; a virtual server's name is not supported)", s)
			}
			ap = netip.AddrPortFrom(addr, 53)
		}
		server, a = ap, a[1:]
	}
	inet6 := false
	if len(a) > 1 && (a[0].String() == "inet" || a[0].String() == "inet6") {
		inet6, a = a[0].String() == "inet6", a[1:]
	}
	qtype := uint16(0)
	if len(a) > 1 {
		switch a[0].String() {
		case "-a":
			qtype = dns.TypeA
		case "-aaaa":
			qtype = dns.TypeAAAA
		case "-txt":
			qtype = dns.TypeTXT
		case "-mx":
			qtype = dns.TypeMX
		case "-ptr":
			qtype = dns.TypePTR
		default:
			return tcl.Empty, tcl.WrongArgs(use)
		}
		a = a[1:]
	}
	if len(a) != 1 {
		return tcl.Empty, tcl.WrongArgs(use)
	}
	name := a[0].String()
	if addr, err := netip.ParseAddr(name); err == nil && (qtype == 0 || qtype == dns.TypePTR) {
		qtype = dns.TypePTR
		name, _ = dns.ReverseAddr(addr.Unmap().String())
	} else if qtype == 0 {
		qtype = dns.TypeA
		if inet6 {
			qtype = dns.TypeAAAA
		}
	} else if qtype == dns.TypePTR {
		return tcl.Empty, tcl.Errorf("RESOLV::lookup -ptr: %q is not an IP address", name)
	}
	s, _, err := sess(in, "RESOLV::lookup")
	if err != nil {
		return tcl.Empty, err
	}
	r := s.prog.env.resolver()
	if r == nil {
		return tcl.Empty, tcl.Errorf("RESOLV::lookup: no resolver on this system")
	}
	wait := waitFor(in, maxLookupWait)
	if wait <= 0 {
		return tcl.Empty, tcl.Errorf("RESOLV::lookup: the event's time is up")
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	start := time.Now()
	recs, err := r.Lookup(ctx, server, qtype, name)
	waited(in, start)
	if err != nil {
		s.prog.env.log("local0.warning", s.logLine(fmt.Sprintf("RESOLV::lookup %s %s: %v", dns.TypeToString[qtype], a[0].String(), err), false))
		return tcl.Empty, nil
	}
	out := make([]tcl.Value, len(recs))
	for i, rec := range recs {
		out[i] = tcl.Str(rec)
	}
	return tcl.List(out...), nil
}
