package gslb

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/gslb/gslbtest"
)

// expressApp is DNS Express holding app.example.com, which is a wide
// IP's alias too (the order of the two steps shows in the answer), and
// other.example.com, which the static zone holds as well.
type expressApp struct{}

func (expressApp) Answer(r *dns.Msg, qname string) *dns.Msg {
	if qname != "app.example.com." && qname != "other.example.com." {
		return nil
	}
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	rr, _ := dns.NewRR(qname + " 60 IN A 127.67.9.9")
	m.Answer = append(m.Answer, rr)
	return m
}

func (expressApp) Notify([]byte, *dns.Msg, netip.Addr) (*dns.Msg, bool) { return nil, false }

// stepsStub is a dns profile's cache and unhandled-query-action: it
// answers names under steps.test with a TXT, drops drop.test and
// passes the others (allow).
type stepsStub struct{}

func (stepsStub) Answer(r *dns.Msg, _ StepQuery, _ bool) (*dns.Msg, bool, bool) {
	name := strings.ToLower(r.Question[0].Name)
	switch {
	case name == "drop.test.":
		return nil, false, false
	case dns.IsSubDomain("steps.test.", name), name == wideName:
		m := new(dns.Msg)
		m.SetReply(r)
		rr, _ := dns.NewRR(r.Question[0].Name + " 5 IN TXT \"steps\"")
		m.Answer = append(m.Answer, rr)
		return m, true, false
	}
	return nil, false, true
}

// TestListenerProfileSteps: a listener's dns profile decides which of
// the wide IPs, DNS Express, its own steps (cache, unhandled-query-
// action) and the static zones answer, in BIG-IP's order, over UDP and
// TCP on real sockets.
func TestListenerProfileSteps(t *testing.T) {
	src := netip.MustParseAddr("127.67.1.9")
	type want struct {
		name  string
		rcode int
		first string // the first answer record's data, "" for none
	}
	cases := []struct {
		desc string
		set  func(l *Listener)
		want []want
	}{
		{"default", func(*Listener) {}, []want{
			{"app.example.com.", dns.RcodeSuccess, "wide"}, // the wide IP before DNS Express
			{"other.example.com.", dns.RcodeSuccess, "127.67.9.9"},
			{"static.example.com.", dns.RcodeSuccess, "127.0.80.80"},
			{"none.example.com.", dns.RcodeNameError, ""},
			{"elsewhere.test.", dns.RcodeRefused, ""},
		}},
		{"enable-dns-express no", func(l *Listener) { l.NoExpress = true }, []want{
			{"app.example.com.", dns.RcodeSuccess, "wide"},
			{"static.example.com.", dns.RcodeSuccess, "127.0.80.80"},
		}},
		{"enable-gtm no", func(l *Listener) { l.NoGTM = true }, []want{
			{wideName, dns.RcodeNameError, ""}, // the static zone has no such name
			{"app.example.com.", dns.RcodeSuccess, "127.67.9.9"},
		}},
		{"use-local-bind no", func(l *Listener) { l.NoBIND = true }, []want{
			{"static.example.com.", dns.RcodeRefused, ""},
			{wideName, dns.RcodeSuccess, "wide"},
		}},
		{"steps", func(l *Listener) { l.Steps = stepsStub{} }, []want{
			{"a.steps.test.", dns.RcodeSuccess, "\"steps\""},
			{wideName, dns.RcodeSuccess, "wide"}, // the wide IP first
			{"static.example.com.", dns.RcodeSuccess, "127.0.80.80"},
			{"elsewhere.test.", dns.RcodeRefused, ""},
		}},
		{"steps without gtm", func(l *Listener) { l.Steps, l.NoGTM = stepsStub{}, true }, []want{
			{wideName, dns.RcodeSuccess, "\"steps\""},
		}},
	}
	for i, c := range cases {
		t.Run(c.desc, func(t *testing.T) {
			listen := freeAddr(t, "127.67.1."+string(rune('1'+i)))
			cfg := testConfig(listen)
			c.set(&cfg.Listeners[0])
			s := newServer(t, cfg, Options{})
			s.SetExpress(expressApp{})
			for _, w := range c.want {
				for _, network := range []string{"udp", "tcp"} {
					m := queryNet(t, src, listen, network, w.name, dns.TypeA)
					got := ""
					if len(m.Answer) > 0 {
						f := strings.Fields(m.Answer[0].String())
						got = f[len(f)-1]
					}
					if w.first == "wide" && m.Rcode == dns.RcodeSuccess && len(gslbtest.Addrs(m)) > 0 && got != "127.67.9.9" {
						got = "wide"
					}
					if m.Rcode != w.rcode || got != w.first {
						t.Errorf("%s %s: %s %q, want %s %q", network, w.name, dns.RcodeToString[m.Rcode], got, dns.RcodeToString[w.rcode], w.first)
					}
				}
			}
		})
	}
}

// TestListenerProfileDrop: a query the profile drops gets no answer,
// and the listener goes on answering the next.
func TestListenerProfileDrop(t *testing.T) {
	listen := freeAddr(t, "127.67.1.20")
	cfg := testConfig(listen)
	cfg.Listeners[0].Steps = stepsStub{}
	newServer(t, cfg, Options{})
	if m, err := gslbtest.Query(netip.MustParseAddr("127.67.1.9"), listen, "udp", "drop.test.", dns.TypeA, 300*time.Millisecond); err == nil {
		t.Fatalf("a dropped query was answered: %v", m)
	}
	if m := queryNet(t, netip.MustParseAddr("127.67.1.9"), listen, "udp", "x.steps.test.", dns.TypeA); len(m.Answer) != 1 {
		t.Fatalf("after a drop: %v", m)
	}
}

// stepsSeen records the ends of each query the profile steps get.
type stepsSeen struct{ at chan StepQuery }

func (x stepsSeen) Answer(r *dns.Msg, at StepQuery, _ bool) (*dns.Msg, bool, bool) {
	x.at <- at
	m := new(dns.Msg)
	m.SetReply(r)
	return m, true, false
}

// TestListenerStepsEnds: the profile steps get the client's address and
// port and the listener's address and name, over UDP and TCP, so that a
// query waiting there can be a row of the connection table.
func TestListenerStepsEnds(t *testing.T) {
	listen := freeAddr(t, "127.210.1.1")
	cfg := testConfig(listen)
	seen := stepsSeen{at: make(chan StepQuery, 4)}
	cfg.Listeners[0].Steps = seen
	newServer(t, cfg, Options{})
	for i, network := range []string{"udp", "tcp"} {
		t.Run(network, func(t *testing.T) {
			client := netip.AddrPortFrom(netip.MustParseAddr("127.210.1.9"), uint16(30401+i))
			c := &dns.Client{Net: network, Timeout: 2 * time.Second, Dialer: &net.Dialer{Timeout: 2 * time.Second}}
			if network == "udp" {
				c.Dialer.LocalAddr = net.UDPAddrFromAddrPort(client)
			} else {
				c.Dialer.LocalAddr = net.TCPAddrFromAddrPort(client)
			}
			r := new(dns.Msg)
			r.SetQuestion("x.elsewhere.test.", dns.TypeA)
			if _, _, err := c.Exchange(r, listen.String()); err != nil {
				t.Fatal(err)
			}
			select {
			case at := <-seen.at:
				want := StepQuery{Client: client, Local: listen, Listener: cfg.Listeners[0].Name}
				if at != want {
					t.Errorf("steps got %+v, want %+v", at, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the steps were not asked")
			}
		})
	}
}
