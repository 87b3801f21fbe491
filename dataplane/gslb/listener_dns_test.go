package gslb

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// logRecorder is a QueryLog that keeps what it was given.
type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (l *logRecorder) Query(r *dns.Msg, client, local netip.AddrPort) {
	l.add(fmt.Sprintf("query %s %s from %v to %v", r.Question[0].Name, dns.TypeToString[r.Question[0].Qtype], client.Addr(), local))
	if client.Port() == 0 {
		l.add("query without the client's port")
	}
}

func (l *logRecorder) Response(m *dns.Msg, client netip.AddrPort) {
	l.add(fmt.Sprintf("response %s %d", dns.RcodeToString[m.Rcode], len(m.Answer)))
}

func (l *logRecorder) add(s string) {
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
}

func (l *logRecorder) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	return out
}

// xferStub is DNS Express serving transfers of example.com: it checks
// the request's TSIG over the bytes the listener received, so a
// listener that re-encoded the request would fail it.
type xferStub struct{ secret string }

func (x xferStub) Answer(*dns.Msg, string) *dns.Msg                     { return nil }
func (x xferStub) Notify([]byte, *dns.Msg, netip.Addr) (*dns.Msg, bool) { return nil, false }

func (x xferStub) msgs(r *dns.Msg, wire []byte, n int) []*dns.Msg {
	soa, _ := dns.NewRR("example.com. 300 IN SOA ns1.example.com. h.example.com. 7 3600 600 86400 60")
	m := new(dns.Msg)
	m.SetReply(r)
	if r.IsTsig() == nil || dns.TsigVerify(wire, x.secret, "", false) != nil {
		m.Rcode = dns.RcodeNotAuth
		return []*dns.Msg{m}
	}
	var out []*dns.Msg
	for i := range n {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true
		if i == 0 {
			m.Answer = append(m.Answer, soa)
		}
		txt, _ := dns.NewRR(fmt.Sprintf("t%d.example.com. 300 IN TXT \"%d\"", i, i))
		m.Answer = append(m.Answer, txt)
		if i == n-1 {
			m.Answer = append(m.Answer, soa)
		}
		out = append(out, m)
	}
	return out
}

func (x xferStub) Transfer(r *dns.Msg, wire []byte, _ netip.Addr) [][]byte {
	var out [][]byte
	for _, m := range x.msgs(r, wire, 3) {
		b, _ := m.Pack()
		out = append(out, b)
	}
	return out
}

func (x xferStub) TransferUDP(r *dns.Msg, wire []byte, _ netip.Addr, size int) []byte {
	m := x.msgs(r, wire, 1)[0]
	if r.Question[0].Qtype == dns.TypeAXFR {
		m = new(dns.Msg)
		m.SetRcode(r, dns.RcodeFormatError)
	}
	b, _ := m.Pack()
	return b
}

// TestListenerLogAndTransfers: a listener whose dns profile logs logs
// each query and answer over UDP and TCP, wide IPs and static zones
// alike; with process-xfr it hands DNS Express the transfer requests
// with their bytes as received, over TCP (several messages, the
// connection carrying on) and UDP; without, they stay queries.
func TestListenerLogAndTransfers(t *testing.T) {
	const secret = "c2VjcmV0c2VjcmV0"
	listen := freeAddr(t, "127.53.1.1")
	plain := freeAddr(t, "127.53.1.2")
	cfg := testConfig(listen)
	rec := &logRecorder{}
	cfg.Listeners[0].Log, cfg.Listeners[0].ProcessXfr = rec, true
	cfg.Listeners = append(cfg.Listeners, Listener{Name: "/Common/plain", Addr: plain})
	s := newServer(t, cfg, Options{})
	s.SetExpress(xferStub{secret: secret})

	signed := func(q *dns.Msg) *dns.Msg {
		q.SetTsig("k.", dns.HmacSHA256, 300, time.Now().Unix())
		return q
	}
	axfr := func() *dns.Msg { q := new(dns.Msg); q.SetAxfr("example.com."); return q }
	ixfr := func() *dns.Msg {
		q := new(dns.Msg)
		q.SetIxfr("example.com.", 1, "ns1.example.com.", "h.example.com.")
		return q
	}
	a := func(name string) *dns.Msg { q := new(dns.Msg); q.SetQuestion(name, dns.TypeA); return q }
	for _, tt := range []struct {
		name    string
		to      netip.AddrPort
		net     string
		q       *dns.Msg
		rcode   int
		answers int      // records received, over every message
		log     []string // what the listener logged
	}{
		{"UDP wide IP, logged", listen, "udp", a("www.example.com."), dns.RcodeSuccess, 1,
			[]string{"query www.example.com. A from 127.53.1.9 to " + listen.String(), "response NOERROR 1"}},
		{"TCP static name, logged", listen, "tcp", a("static.example.com."), dns.RcodeSuccess, 1,
			[]string{"query static.example.com. A from 127.53.1.9 to " + listen.String(), "response NOERROR 1"}},
		{"TCP AXFR, signed: DNS Express's three messages", listen, "tcp", signed(axfr()), dns.RcodeSuccess, 5,
			[]string{"query example.com. AXFR from 127.53.1.9 to " + listen.String()}},
		{"TCP AXFR unsigned: DNS Express refuses it", listen, "tcp", axfr(), dns.RcodeNotAuth, 0,
			[]string{"query example.com. AXFR from 127.53.1.9 to " + listen.String()}},
		{"UDP AXFR: FORMERR", listen, "udp", signed(axfr()), dns.RcodeFormatError, 0,
			[]string{"query example.com. AXFR from 127.53.1.9 to " + listen.String()}},
		{"UDP IXFR, signed: DNS Express's answer", listen, "udp", signed(ixfr()), dns.RcodeSuccess, 3,
			[]string{"query example.com. IXFR from 127.53.1.9 to " + listen.String()}},
		{"no process-xfr: a query like any other", plain, "tcp", signed(axfr()), dns.RcodeSuccess, 0, nil},
		{"no logging: nothing logged", plain, "udp", a("www.example.com."), dns.RcodeSuccess, 1, nil},
	} {
		c := &dns.Client{Net: tt.net, Timeout: 2 * time.Second, TsigSecret: map[string]string{"k.": secret}}
		if tt.net == "tcp" {
			c.Dialer = &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.53.1.9")}}
		} else {
			c.Dialer = &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.UDPAddr{IP: net.ParseIP("127.53.1.9")}}
		}
		conn, err := c.Dial(tt.to.String())
		if err != nil {
			t.Fatal(err)
		}
		if tt.q.IsTsig() != nil {
			conn.TsigSecret = c.TsigSecret
		}
		rcode, answers := -1, 0
		if err := conn.WriteMsg(tt.q); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		// A transfer is read to its closing SOA; anything else is one message.
		for range 5 {
			conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			m, err := conn.ReadMsg()
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
				break
			}
			rcode, answers = m.Rcode, answers+len(m.Answer)
			if !isXfr(tt.q) || tt.net == "udp" || m.Rcode != dns.RcodeSuccess || tt.to == plain {
				break
			}
			if _, end := m.Answer[len(m.Answer)-1].(*dns.SOA); end && answers > 1 {
				break
			}
		}
		if tt.net == "tcp" {
			// The connection carries on after a transfer.
			conn.TsigSecret = nil
			if err := conn.WriteMsg(a("static.example.com.")); err != nil {
				t.Errorf("%s: the connection did not carry on: %v", tt.name, err)
			} else if m, err := conn.ReadMsg(); err != nil || len(m.Answer) != 1 {
				t.Errorf("%s: the connection did not carry on: %v %v", tt.name, m, err)
			}
		}
		conn.Close()
		if rcode != tt.rcode || answers != tt.answers {
			t.Errorf("%s: rcode %d, %d records; want %d, %d", tt.name, rcode, answers, tt.rcode, tt.answers)
		}
		got := rec.take()
		if tt.net == "tcp" && tt.to == listen {
			got = got[:max(0, len(got)-2)] // the query after
		}
		if strings.Join(got, "\n") != strings.Join(tt.log, "\n") {
			t.Errorf("%s: logged\n%s\nwant\n%s", tt.name, strings.Join(got, "\n"), strings.Join(tt.log, "\n"))
		}
	}
}

// netExpress is DNS Express holding example.net: www answers, any other
// name under it is NXDOMAIN.
type netExpress struct{ xferStub }

func (netExpress) Answer(r *dns.Msg, qname string) *dns.Msg {
	if !strings.HasSuffix(qname, "example.net.") {
		return nil
	}
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	if qname == "www.example.net." {
		rr, _ := dns.NewRR(r.Question[0].Name + " 60 IN A 127.53.1.80")
		m.Answer = append(m.Answer, rr)
	} else {
		m.Rcode = dns.RcodeNameError
	}
	return m
}

// TestListenerRapid: a listener whose dns profile has Rapid Response
// answers UDP queries from DNS Express before its wide IPs and logging,
// and gives the others the last action; TCP takes the usual path.
func TestListenerRapid(t *testing.T) {
	listen := freeAddr(t, "127.53.1.3")
	rec := &logRecorder{}
	s := newServer(t, testConfig(listen), Options{})
	s.SetExpress(netExpress{})
	for _, tt := range []struct {
		name, last, net, qname string
		want                   string // rcode, flags, answers; "timeout"
		logged                 bool
	}{
		{"DNS Express's name", "drop", "udp", "www.example.net.", "NOERROR aa 1", false},
		{"DNS Express's NXDOMAIN", "drop", "udp", "nope.example.net.", "NXDOMAIN aa 0", false},
		{"a wide IP, drop", "drop", "udp", "www.example.com.", "timeout", false},
		{"a wide IP, allow: the usual path, logged", "allow", "udp", "www.example.com.", "NOERROR aa 1", true},
		{"noerror", "noerror", "udp", "www.example.com.", "NOERROR 0", false},
		{"nxdomain", "nxdomain", "udp", "www.example.com.", "NXDOMAIN 0", false},
		{"refuse", "refuse", "udp", "www.example.com.", "REFUSED 0", false},
		{"truncate", "truncate", "udp", "www.example.com.", "NOERROR tc 0", false},
		{"TCP: the usual path", "drop", "tcp", "www.example.com.", "NOERROR aa 1", true},
	} {
		cfg := testConfig(listen)
		cfg.Listeners[0].Log, cfg.Listeners[0].Rapid, cfg.Listeners[0].RapidLast = rec, true, tt.last
		if err := s.Apply(cfg); err != nil {
			t.Fatal(err)
		}
		q := new(dns.Msg)
		q.SetQuestion(tt.qname, dns.TypeA)
		c := &dns.Client{Net: tt.net, Timeout: 300 * time.Millisecond}
		got := "timeout"
		if m, _, err := c.Exchange(q, listen.String()); err == nil {
			got = dns.RcodeToString[m.Rcode]
			if m.Truncated {
				got += " tc"
			}
			if m.Authoritative {
				got += " aa"
			}
			got += fmt.Sprintf(" %d", len(m.Answer))
		} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
		if lines := rec.take(); (len(lines) > 0) != tt.logged {
			t.Errorf("%s: logged %q", tt.name, lines)
		}
	}
}
