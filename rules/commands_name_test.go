package rules

import (
	"context"
	"encoding/base64"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// nameServer is a DNS server on loopback answering www.example (two A
// records), 192.0.2.1's PTR, slow.example after a delay and
// none.example with NXDOMAIN; it counts the queries.
func nameServer(t *testing.T, addr string, delay time.Duration) (netip.AddrPort, *atomic.Int32) {
	t.Helper()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	var n atomic.Int32
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		n.Add(1)
		m := new(dns.Msg)
		m.SetReply(q)
		var rrs []string
		switch q.Question[0].Name {
		case "www.example.":
			rrs = []string{"www.example. 60 IN A 192.0.2.10", "www.example. 60 IN A 192.0.2.11"}
		case "slow.example.":
			time.Sleep(delay)
			rrs = []string{"slow.example. 60 IN A 192.0.2.20"}
		case "1.2.0.192.in-addr.arpa.":
			rrs = []string{"1.2.0.192.in-addr.arpa. 60 IN PTR host1.example."}
		default:
			m.Rcode = dns.RcodeNameError
		}
		for _, s := range rrs {
			rr, _ := dns.NewRR(s)
			m.Answer = append(m.Answer, rr)
		}
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return netip.MustParseAddrPort(pc.LocalAddr().String()), &n
}

// TestNameLookup: NAME::lookup returns at once, the event goes on, and
// NAME_RESOLVED runs after it with NAME::response's answer, once per
// lookup and in order; a name with no address answers an empty string.
func TestNameLookup(t *testing.T) {
	t.Parallel()
	server, _ := nameServer(t, "127.132.0.53:0", 0)
	for _, c := range []struct {
		name, lookups, want string
	}{
		{"A", "NAME::lookup @" + server.String() + " www.example", "|192.0.2.10 192.0.2.11"},
		{"PTR", "NAME::lookup @" + server.String() + " 192.0.2.1", "|host1.example"},
		{"nxdomain", "NAME::lookup @" + server.String() + " none.example", "|"},
		{"two", "NAME::lookup @" + server.String() + " www.example; NAME::lookup @" + server.String() + " 192.0.2.1", "|192.0.2.10 192.0.2.11|host1.example"},
		{"system resolver", "NAME::lookup www.example", "|192.0.2.10 192.0.2.11"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompile(t, "n", `when CLIENT_ACCEPTED {
    set got ""
    `+c.lookups+`
    set after_lookup 1
}
when NAME_RESOLVED {
    append got "|[NAME::response]"
}`)
			p := NewProgram(&Env{Resolver: fixedServer{server}}, r)
			s := p.NewConnState(blockConn{newFakeConn()})
			defer s.Release()
			if err := s.Run(ClientAccepted); err != nil {
				t.Fatal(err)
			}
			if v, _ := s.Var("after_lookup"); v != "1" {
				t.Error("the event did not go on after NAME::lookup")
			}
			if v, _ := s.Var("got"); v != c.want {
				t.Errorf("NAME_RESOLVED saw %q, want %q", v, c.want)
			}
		})
	}
}

// fixedServer is the system resolver, whose nameserver is the test's.
type fixedServer struct{ server netip.AddrPort }

func (f fixedServer) Lookup(ctx context.Context, server netip.AddrPort, qtype uint16, name string) ([]string, error) {
	if !server.IsValid() {
		server = f.server
	}
	return DNSResolver{}.Lookup(ctx, server, qtype, name)
}

// TestNameLookupErrors: bad words are Tcl errors; a virtual server's
// name is asked at its address; an unknown @ name is an error; a
// lookup that is never answered in time runs NAME_RESOLVED with an
// empty answer, logged.
func TestNameLookupErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ expr, err string }{
		{"NAME::lookup", "wrong # args"},
		{"NAME::lookup a b c", "wrong # args"},
		{"NAME::lookup {bad name}", "neither a host name nor an IP address"},
		{"NAME::lookup @nowhere www.example", "neither a nameserver address nor a virtual server"},
	} {
		if _, err := evalIn(t, newFakeConn(), &Env{Resolver: DNSResolver{}}, ClientAccepted, c.expr); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want %q", c.expr, err, c.err)
		}
	}
	server, n := nameServer(t, "127.132.0.54:0", 0)
	env := &Env{Resolver: DNSResolver{}, VirtualAddr: func(name string) (netip.AddrPort, bool) {
		return server, name == "/Common/vs_dns"
	}}
	r := mustCompile(t, "n", `when CLIENT_ACCEPTED { NAME::lookup @vs_dns www.example }
when NAME_RESOLVED { set got [NAME::response] }`)
	s := NewProgram(env, r).NewConnState(blockConn{newFakeConn()})
	if err := s.Run(ClientAccepted); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Var("got"); v != "192.0.2.10 192.0.2.11" || n.Load() != 1 {
		t.Errorf("@vs_dns: %q after %d queries", v, n.Load())
	}
	s.Release()

	// A server that never answers: the rule sees an empty answer, once
	// the lookup's time is up (a Conn that may not block: 2 s).
	dead, err := net.ListenPacket("udp", "127.132.0.55:0")
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	logs := &logSink{}
	r = mustCompile(t, "n", `when CLIENT_ACCEPTED { NAME::lookup @`+dead.LocalAddr().String()+` www.example }
when NAME_RESOLVED { set got "<[NAME::response]>" }`)
	s = NewProgram(&Env{Resolver: DNSResolver{}, Log: logs.log}, r).NewConnState(newFakeConn())
	defer s.Release()
	if err := s.Run(ClientAccepted); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Var("got"); v != "<>" {
		t.Errorf("unanswered lookup: %q", v)
	}
	if all := strings.Join(logs.lines, "\n"); !strings.Contains(all, "NAME::lookup A www.example") {
		t.Errorf("unanswered lookup not logged: %q", all)
	}
}

// TestNameLookupParked: the event that asked ends before the answer is
// in, and the connection waits for it: Run returns only after
// NAME_RESOLVED ran; a rule with NAME::lookup
// is one that waits (its connections are kept off the event loops).
func TestNameLookupParked(t *testing.T) {
	t.Parallel()
	server, _ := nameServer(t, "127.132.0.56:0", 300*time.Millisecond)
	r := mustCompile(t, "n", `when HTTP_RESPONSE { NAME::lookup @`+server.String()+` slow.example; set asked 1 }
when NAME_RESOLVED { set got [NAME::response] }`)
	p := NewProgram(&Env{Resolver: DNSResolver{}}, r)
	if !p.Waits() {
		t.Error("a rule with NAME::lookup does not wait")
	}
	s := p.NewConnState(blockConn{newFakeConn()})
	defer s.Release()
	if err := s.Run(HTTPResponse); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Var("got"); v != "192.0.2.20" {
		t.Errorf("slow answer: %q", v)
	}
}

// TestResolverSummarize: the answer section of a RESOLVER::name_lookup
// answer, one {name ttl class type rdata} list per record.
func TestResolverSummarize(t *testing.T) {
	m := new(dns.Msg)
	m.SetQuestion("www.example.", dns.TypeA)
	m.Response = true
	for _, s := range []string{"www.example. 60 IN A 192.0.2.10", "www.example. 30 IN A 192.0.2.11"} {
		rr, _ := dns.NewRR(s)
		m.Answer = append(m.Answer, rr)
	}
	wire, _ := m.Pack()
	msg := dnsMsgPrefix + base64.StdEncoding.EncodeToString(wire)
	got, err := evalIn(t, newFakeConn(), &Env{}, ClientAccepted, "RESOLVER::summarize "+msg)
	if want := "{www.example. 60 IN A 192.0.2.10} {www.example. 30 IN A 192.0.2.11}"; err != nil || got != want {
		t.Errorf("summarize: %q %v, want %q", got, err, want)
	}
	if got, err := evalIn(t, newFakeConn(), &Env{}, ClientAccepted, "RESOLVER::summarize {}"); err != nil || got != "" {
		t.Errorf("summarize of nothing: %q %v", got, err)
	}
	if _, err := evalIn(t, newFakeConn(), &Env{}, ClientAccepted, "RESOLVER::summarize xyz"); err == nil || !strings.Contains(err.Error(), "not a dns_message") {
		t.Errorf("summarize of a string: %v", err)
	}
}

// TestIPUnsupported: a rule with an IP Intelligence or ingress-limit
// command compiles with a warning saying why, and is kept rather than
// run.
func TestIPUnsupported(t *testing.T) {
	for name, why := range ipUnsupported {
		r, err := Compile("r", "when CLIENT_ACCEPTED { log local0. ["+name+" [IP::client_addr]] }")
		var ue *UnsupportedError
		if !errors.As(err, &ue) || r == nil || len(r.Unsupported()) != 1 || r.Unsupported()[0] != name+" ("+why+")" {
			t.Errorf("%s: %v", name, err)
		}
	}
}
