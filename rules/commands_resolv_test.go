package rules

import (
	"context"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// recordingResolver answers every lookup with fixed records and keeps
// what it was asked.
type recordingResolver struct {
	asked []string
	recs  []string
	err   error
}

func (r *recordingResolver) Lookup(_ context.Context, server netip.AddrPort, qtype uint16, name string) ([]string, error) {
	s := "system"
	if server.IsValid() {
		s = server.String()
	}
	r.asked = append(r.asked, s+" "+dns.TypeToString[qtype]+" "+name)
	return r.recs, r.err
}

func TestResolvLookupArguments(t *testing.T) {
	for _, c := range []struct {
		expr, asked, want, err string
		recs                   []string
	}{
		{expr: "RESOLV::lookup www.example", asked: "system A www.example", recs: []string{"192.0.2.1", "192.0.2.2"}, want: "192.0.2.1 192.0.2.2"},
		{expr: "RESOLV::lookup inet6 www.example", asked: "system AAAA www.example", recs: []string{"2001:db8::1"}, want: "2001:db8::1"},
		{expr: "RESOLV::lookup @192.0.2.53 -aaaa www.example", asked: "192.0.2.53:53 AAAA www.example"},
		{expr: "RESOLV::lookup @192.0.2.53:5353 -txt www.example", asked: "192.0.2.53:5353 TXT www.example", recs: []string{"v=spf1 -all"}, want: "{v=spf1 -all}"},
		{expr: "RESOLV::lookup -mx example", asked: "system MX example", recs: []string{"10 mx.example"}, want: "{10 mx.example}"},
		{expr: "RESOLV::lookup 192.0.2.7", asked: "system PTR 7.2.0.192.in-addr.arpa.", recs: []string{"host.example"}, want: "host.example"},
		{expr: "RESOLV::lookup -ptr 2001:db8::1", asked: "system PTR 1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa."},
		{expr: "RESOLV::lookup -a 192.0.2.7", asked: "system A 192.0.2.7"},
		{expr: "RESOLV::lookup -ptr www.example", err: `-ptr: "www.example" is not an IP address`},
		{expr: "RESOLV::lookup @vs_dns www.example", err: "is not a nameserver address"},
		{expr: "RESOLV::lookup -srv www.example", err: "wrong # args"},
		{expr: "RESOLV::lookup", err: "wrong # args"},
	} {
		r := &recordingResolver{recs: c.recs}
		got, err := evalIn(t, newFakeConn(), &Env{Resolver: r}, ClientAccepted, c.expr)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.expr, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want || len(r.asked) != 1 || r.asked[0] != c.asked {
			t.Errorf("%s: %q %v, asked %q; want %q, asked %q", c.expr, got, err, r.asked, c.want, c.asked)
		}
	}
	// A failed lookup answers nothing and is logged; no resolver is an
	// error.
	logs := &logSink{}
	r := &recordingResolver{err: context.DeadlineExceeded}
	if got, err := evalIn(t, newFakeConn(), &Env{Resolver: r, Log: logs.log}, ClientAccepted, "RESOLV::lookup www.example"); err != nil || got != "" {
		t.Errorf("failed lookup: %q %v", got, err)
	}
	if all := strings.Join(logs.lines, "\n"); !strings.Contains(all, "local0.warning") || !strings.Contains(all, "RESOLV::lookup A www.example: context deadline exceeded") {
		t.Errorf("failed lookup not logged: %q", all)
	}
	if _, err := evalIn(t, newFakeConn(), &Env{}, ClientAccepted, "RESOLV::lookup www.example"); err == nil {
		t.Error("lookup without a resolver: no error")
	}
}

// TestDNSResolver asks a DNS server on loopback for each record type,
// through resolv.conf and directly, with a truncated answer retried
// over TCP.
func TestDNSResolver(t *testing.T) {
	// A fixed address of this test's own, so that the TCP port is free
	// wherever the UDP one is (an ephemeral UDP port's TCP twin may be
	// some other test's connection).
	const server = "127.0.225.53:5353"
	pc, err := net.ListenPacket("udp", server)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", server)
	if err != nil {
		t.Fatal(err)
	}
	zone := map[uint16][]string{
		dns.TypeA:    {"www.example. 60 IN A 192.0.2.1", "www.example. 60 IN A 192.0.2.2"},
		dns.TypeAAAA: {"www.example. 60 IN CNAME web.example.", "web.example. 60 IN AAAA 2001:db8::1"},
		dns.TypeTXT:  {`www.example. 60 IN TXT "v=spf1 " "-all"`},
		dns.TypeMX:   {"www.example. 60 IN MX 10 mx.example."},
		dns.TypePTR:  {"1.2.0.192.in-addr.arpa. 60 IN PTR www.example."},
	}
	handler := func(udp bool) dns.HandlerFunc {
		return func(w dns.ResponseWriter, q *dns.Msg) {
			m := new(dns.Msg)
			m.SetReply(q)
			if q.Question[0].Name == "big.example." && udp {
				m.Truncated = true
			} else if q.Question[0].Name == "big.example." {
				rr, _ := dns.NewRR("big.example. 60 IN A 192.0.2.9")
				m.Answer = append(m.Answer, rr)
			} else if q.Question[0].Name == "none.example." {
				m.Rcode = dns.RcodeNameError
			} else {
				for _, s := range zone[q.Question[0].Qtype] {
					rr, _ := dns.NewRR(s)
					m.Answer = append(m.Answer, rr)
				}
			}
			w.WriteMsg(m)
		}
	}
	us := &dns.Server{PacketConn: pc, Handler: handler(true)}
	ts := &dns.Server{Listener: ln, Handler: handler(false)}
	go us.ActivateAndServe()
	go ts.ActivateAndServe()
	t.Cleanup(func() { us.Shutdown(); ts.Shutdown() })

	direct := netip.MustParseAddrPort(pc.LocalAddr().String())
	for _, c := range []struct {
		qtype uint16
		name  string
		want  string
	}{
		{dns.TypeA, "www.example", "192.0.2.1,192.0.2.2"},
		{dns.TypeAAAA, "www.example", "2001:db8::1"},
		{dns.TypeTXT, "www.example", "v=spf1 -all"},
		{dns.TypeMX, "www.example", "10 mx.example"},
		{dns.TypePTR, "1.2.0.192.in-addr.arpa.", "www.example"},
		{dns.TypeA, "big.example", "192.0.2.9"},
		{dns.TypeA, "none.example", ""},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		got, err := DNSResolver{}.Lookup(ctx, direct, c.qtype, c.name)
		cancel()
		if err != nil || strings.Join(got, ",") != c.want {
			t.Errorf("%s %s: %q %v, want %q", dns.TypeToString[c.qtype], c.name, got, err, c.want)
		}
	}
	// The host's nameservers come from resolv.conf (on port 53, which a
	// test cannot count on having): without the file, an error.
	if _, err := (DNSResolver{Conf: filepath.Join(t.TempDir(), "missing")}).Lookup(context.Background(), netip.AddrPort{}, dns.TypeA, "www.example"); err == nil {
		t.Error("no resolv.conf: no error")
	}
}
