package gslb

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// The UDP path's answers (wire fast path or not) are Answer's: two
// servers with one configuration get the same queries in the same order,
// one through answerUDP, the other through Answer, and the decoded
// answers must match.
func TestUDPAnswersAsAnswer(t *testing.T) {
	type query struct {
		name    string
		qtype   uint16
		qclass  uint16
		edns    int // UDP size; 0 for no OPT
		do      bool
		ecs     bool
		rd, cd  bool
		ldns    netip.Addr
		compact bool // the wire path takes it (and may complete it through dns.Msg)
	}
	queries := []query{
		{name: wideName, qtype: dns.TypeA, compact: true},
		{name: "WWW.Example.COM.", qtype: dns.TypeA, rd: true, cd: true, compact: true},
		{name: "app.example.com.", qtype: dns.TypeA, edns: 4096, do: true, compact: true},
		{name: "x.cdn.example.com.", qtype: dns.TypeA, edns: 1232, compact: true},
		{name: "x.cdn.example.com.", qtype: dns.TypeA, edns: 100, compact: true},
		{name: wideName, qtype: dns.TypeA, ldns: ldnsCT, compact: true},
		{name: wideName, qtype: dns.TypeA, edns: 1232, ecs: true},
		{name: wideName, qtype: dns.TypeAAAA},
		{name: wideName, qtype: dns.TypeANY},
		{name: wideName, qtype: dns.TypeA, qclass: dns.ClassCHAOS},
		{name: "static.example.com.", qtype: dns.TypeA},
		{name: "nothing.example.com.", qtype: dns.TypeA},
		{name: "nothing.example.org.", qtype: dns.TypeA},
		{name: "off.example.com.", qtype: dns.TypeA, compact: true},  // disabled wide IP
		{name: "drop.example.com.", qtype: dns.TypeA, compact: true}, // drop-packet
		{name: "dns.example.com.", qtype: dns.TypeA, compact: true},  // return to DNS
		{name: "v6.example.com.", qtype: dns.TypeA, compact: true},   // only an IPv6 member: NODATA
		{name: "we\\.ird.example.com.", qtype: dns.TypeA},
	}
	mk := func() *Server {
		cfg := testConfig(netip.AddrPort{})
		cfg.Pools["/Common/app_pool"].MaxAnswers = 3
		cfg.Servers["/Common/v6"] = &Host{Name: "/Common/v6", Datacenter: "/Common/dc-bj",
			VirtualServers: []*VirtualServer{{Name: "vs6", Destination: netip.MustParseAddrPort("[::1]:80")}}}
		cfg.Pools["/Common/v6_pool"] = &Pool{Name: "/Common/v6_pool", Members: []PoolMember{{Server: "/Common/v6", VirtualServer: "vs6"}}}
		cfg.Pools["/Common/empty"] = &Pool{Name: "/Common/empty", Mode: DropPacket, Alternate: DropPacket}
		cfg.Pools["/Common/rtd"] = &Pool{Name: "/Common/rtd", Mode: ReturnToDNS, Alternate: ReturnToDNS}
		cfg.Pools["/Common/rtd"].Members = cfg.Pools["/Common/app_pool"].Members
		cfg.Pools["/Common/empty"].Members = cfg.Pools["/Common/app_pool"].Members
		cfg.WideIPs["/Common/off.example.com"] = &WideIP{Name: "/Common/off.example.com", Disabled: true, Pools: []WideIPPool{{Pool: "/Common/app_pool"}}}
		cfg.WideIPs["/Common/drop.example.com"] = &WideIP{Name: "/Common/drop.example.com", Pools: []WideIPPool{{Pool: "/Common/empty"}}}
		cfg.WideIPs["/Common/dns.example.com"] = &WideIP{Name: "/Common/dns.example.com", Pools: []WideIPPool{{Pool: "/Common/rtd"}}}
		cfg.WideIPs["/Common/v6.example.com"] = &WideIP{Name: "/Common/v6.example.com", Pools: []WideIPPool{{Pool: "/Common/v6_pool"}}}
		cfg.Settings.UseClientSubnet = true
		return newServer(t, cfg, Options{})
	}
	viaUDP, viaAnswer := mk(), mk()
	out := make([]byte, 0, 2048)
	for round := 0; round < 3; round++ {
		for _, c := range queries {
			q := new(dns.Msg)
			q.SetQuestion(c.name, c.qtype)
			q.RecursionDesired, q.CheckingDisabled = c.rd, c.cd
			if c.qclass != 0 {
				q.Question[0].Qclass = c.qclass
			}
			if c.edns > 0 {
				q.SetEdns0(uint16(c.edns), c.do)
				if c.ecs {
					q.IsEdns0().Option = append(q.IsEdns0().Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, Address: net.IP{127, 0, 86, 0}})
				}
			}
			ldns := ldnsCNC
			if c.ldns.IsValid() {
				ldns = c.ldns
			}
			in, err := q.Pack()
			if err != nil {
				t.Fatal(err)
			}
			var wq wireQuery
			if got := parseWire(in, &wq) && viaUDP.plan.Load().lookupName(string(wq.name[:wq.nameLen])) != nil; got != c.compact {
				t.Errorf("%s %s: wire path %v, want %v", c.name, dns.TypeToString[c.qtype], got, c.compact)
			}
			bc := batchCtx{now: time.Now()}
			resp, send := viaUDP.answerUDP(in, ldns, out[:0], listenerKey{}, &bc)
			viaUDP.flushSeen(&bc)
			want, wantSend := viaAnswer.Answer(q, ldns, true)
			if send != wantSend {
				t.Fatalf("%s: send %v, Answer's %v", c.name, send, wantSend)
			}
			if !send {
				continue
			}
			got := new(dns.Msg)
			if err := got.Unpack(resp); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			wb, _ := want.Pack()
			want = new(dns.Msg)
			want.Unpack(wb)
			if got.String() != want.String() {
				t.Errorf("%s %s:\n%s\nAnswer's:\n%s", c.name, dns.TypeToString[c.qtype], got, want)
			}
		}
	}
}

// What miekg/dns's server refuses before a handler sees it, the UDP path
// refuses the same way: responses and headerless datagrams get nothing,
// other opcodes NOTIMP, a query without exactly one question FORMERR.
func TestUDPRejects(t *testing.T) {
	s := newServer(t, testConfig(netip.AddrPort{}), Options{})
	q := new(dns.Msg)
	q.SetQuestion(wideName, dns.TypeA)
	ok, _ := q.Pack()
	withHdr := func(f func(b []byte)) []byte {
		b := append([]byte(nil), ok...)
		f(b)
		return b
	}
	cases := []struct {
		name  string
		in    []byte
		send  bool
		rcode int
	}{
		{"short", ok[:11], false, 0},
		{"response", withHdr(func(b []byte) { b[2] |= 0x80 }), false, 0},
		{"update", withHdr(func(b []byte) { b[2] = b[2]&^0x78 | 5<<3 }), true, dns.RcodeNotImplemented},
		{"two questions", withHdr(func(b []byte) { b[5] = 2 }), true, dns.RcodeFormatError},
		{"no question", withHdr(func(b []byte) { b[5] = 0 }), true, dns.RcodeFormatError},
		{"cut in the name", ok[:15], true, dns.RcodeFormatError},
		{"fine", ok, true, dns.RcodeSuccess},
	}
	for _, c := range cases {
		resp, send := s.answerUDP(c.in, ldnsCNC, nil, listenerKey{}, &batchCtx{now: time.Now()})
		if send != c.send {
			t.Errorf("%s: send %v, want %v", c.name, send, c.send)
			continue
		}
		if !send {
			continue
		}
		m := new(dns.Msg)
		if err := m.Unpack(resp); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if m.Rcode != c.rcode || m.Id != q.Id || !m.Response {
			t.Errorf("%s: %s", c.name, m)
		}
	}
}

// A UDP listener has udpSockets sockets on one address; closing it
// releases the port, and another socket without SO_REUSEPORT holding the
// port refuses it.
func TestUDPListenerSockets(t *testing.T) {
	listen := freeAddr(t, "127.0.80.30")
	cfg := testConfig(listen)
	cfg.Listeners[0].Protocol = "udp"
	s := newServer(t, cfg, Options{})
	l := s.listeners[listenerKey{listen, "udp"}]
	if l.sockets != udpSockets() {
		t.Fatalf("%d sockets, want %d", l.sockets, udpSockets())
	}
	for i := 0; i < 2*l.sockets; i++ {
		c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(listen))
		if err != nil {
			t.Fatal(err)
		}
		q := new(dns.Msg)
		q.SetQuestion(wideName, dns.TypeA)
		b, _ := q.Pack()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		c.Write(b)
		in := make([]byte, 512)
		n, err := c.Read(in)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		m := new(dns.Msg)
		if err := m.Unpack(in[:n]); err != nil || len(m.Answer) != 1 {
			t.Fatalf("%v %v", m, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	held, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(listen))
	if err != nil {
		t.Fatalf("port not released: %v", err)
	}
	defer held.Close()
	s2 := New(Options{})
	defer s2.Close()
	if err := s2.Apply(cfg); err == nil {
		t.Fatal("bound a port another socket holds")
	}
}
