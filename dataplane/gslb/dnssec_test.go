package gslb

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/dnssec"
)

func testSigner(t *testing.T) *dnssec.Signer {
	t.Helper()
	day := 24 * time.Hour
	s, err := dnssec.NewKeyring().Build([]dnssec.ZoneConfig{{Name: "example.com", Keys: []*dnssec.KeyConfig{
		{Name: "zsk", Algorithm: dns.ECDSAP256SHA256, TTL: 86400, Rollover: 21 * day, Expiration: 30 * day, Validity: 7 * day, Publication: 4 * day},
		{Name: "ksk", KSK: true, Algorithm: dns.ECDSAP256SHA256, TTL: 86400, Rollover: 340 * day, Expiration: 365 * day, Validity: 7 * day, Publication: 4 * day},
	}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// verifySigs checks every RRSIG of m against the zone's DNSKEYs and
// returns the types they cover.
func verifySigs(t *testing.T, sg *dnssec.Signer, m *dns.Msg) []uint16 {
	t.Helper()
	keys := map[uint16]*dns.DNSKEY{}
	for _, k := range sg.DNSKEYs("example.com.") {
		keys[k.(*dns.DNSKEY).KeyTag()] = k.(*dns.DNSKEY)
	}
	var covered []uint16
	for _, sec := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
		for _, x := range sec {
			sig, ok := x.(*dns.RRSIG)
			if !ok {
				continue
			}
			var set []dns.RR
			for _, y := range sec {
				if y.Header().Rrtype == sig.TypeCovered && strings.EqualFold(y.Header().Name, sig.Hdr.Name) {
					set = append(set, y)
				}
			}
			k := keys[sig.KeyTag]
			if k == nil {
				t.Fatalf("RRSIG of key %d, not in the DNSKEY RRset", sig.KeyTag)
			}
			if err := sig.Verify(k, set); err != nil {
				t.Fatalf("RRSIG over %s %s does not verify: %v", sig.Hdr.Name, dns.TypeToString[sig.TypeCovered], err)
			}
			covered = append(covered, sig.TypeCovered)
		}
	}
	slices.Sort(covered)
	return covered
}

// The GSLB signs what it answers under an ltm dns dnssec zone: wide IPs,
// static records, negative answers, referrals, the zone's DNSKEYs; a
// query without the DO bit gets the same answer as without a signer.
func TestDNSSECAnswers(t *testing.T) {
	sg := testSigner(t)
	cfg := testConfig(netip.AddrPort{})
	cfg.DNSSEC = sg
	s := newServer(t, cfg, Options{})
	plain := newServer(t, testConfig(netip.AddrPort{}), Options{})
	ask := func(name string, qt uint16, do bool) *dns.Msg {
		q := new(dns.Msg)
		q.SetQuestion(name, qt)
		q.SetEdns0(1232, do)
		return q
	}
	for _, tt := range []struct {
		name  string
		qname string
		qtype uint16
		rcode int
		want  []uint16 // types the RRSIGs cover
	}{
		{"wide IP", wideName, dns.TypeA, dns.RcodeSuccess, []uint16{dns.TypeA}},
		{"wide IP, other type", wideName, dns.TypeAAAA, dns.RcodeSuccess, []uint16{dns.TypeSOA, dns.TypeNSEC3}},
		{"static record", "static.example.com.", dns.TypeA, dns.RcodeSuccess, []uint16{dns.TypeA}},
		{"CNAME in the zone", "alias.example.com.", dns.TypeA, dns.RcodeSuccess, []uint16{dns.TypeA, dns.TypeCNAME}},
		{"NXDOMAIN", "nothing.example.com.", dns.TypeA, dns.RcodeNameError, []uint16{dns.TypeSOA, dns.TypeNSEC3, dns.TypeNSEC3, dns.TypeNSEC3}},
		{"NXDOMAIN below an empty non-terminal", "x.er.name.example.com.", dns.TypeA, dns.RcodeNameError, []uint16{dns.TypeSOA, dns.TypeNSEC3, dns.TypeNSEC3, dns.TypeNSEC3}},
		{"NODATA", "static.example.com.", dns.TypeMX, dns.RcodeSuccess, []uint16{dns.TypeSOA, dns.TypeNSEC3}},
		{"NODATA, empty non-terminal", "er.name.example.com.", dns.TypeA, dns.RcodeSuccess, []uint16{dns.TypeSOA, dns.TypeNSEC3}},
		// The glue of ns.sub.example.com is the child's: not signed.
		{"referral", "www.sub.example.com.", dns.TypeA, dns.RcodeSuccess, []uint16{dns.TypeNSEC3}},
		{"DNSKEY", "example.com.", dns.TypeDNSKEY, dns.RcodeSuccess, []uint16{dns.TypeDNSKEY}},
		{"NSEC3PARAM", "example.com.", dns.TypeNSEC3PARAM, dns.RcodeSuccess, []uint16{dns.TypeNSEC3PARAM}},
		// The addresses of the zone's own name servers and mail
		// exchanger, in the additional section, are signed.
		{"apex NS", "example.com.", dns.TypeNS, dns.RcodeSuccess, []uint16{dns.TypeA, dns.TypeA, dns.TypeNS}},
		{"apex MX", "example.com.", dns.TypeMX, dns.RcodeSuccess, []uint16{dns.TypeA, dns.TypeMX}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, send := s.Answer(ask(tt.qname, tt.qtype, true), ldnsCNC, true)
			if !send || m.Rcode != tt.rcode {
				t.Fatalf("send %v, answer %v", send, m)
			}
			if got := verifySigs(t, sg, m); !slices.Equal(got, tt.want) {
				t.Fatalf("signatures over %v, want %v:\n%v", got, tt.want, m)
			}
			if opt := m.IsEdns0(); opt == nil || !opt.Do() || m.Extra[len(m.Extra)-1] != opt {
				t.Fatalf("the answer's OPT with DO is not last: %v", m)
			}
			if _, err := m.Pack(); err != nil {
				t.Fatal(err)
			}
			// Without DO: nothing signed, and (the zone's DNSKEY and
			// NSEC3PARAM aside)
			// what a GSLB without a signer answers.
			m, _ = s.Answer(ask(tt.qname, tt.qtype, false), ldnsCNC, true)
			if got := verifySigs(t, sg, m); len(got) != 0 {
				t.Fatalf("signed without DO: %v", m)
			}
			if tt.qtype != dns.TypeDNSKEY && tt.qtype != dns.TypeNSEC3PARAM {
				p, _ := plain.Answer(ask(tt.qname, tt.qtype, false), ldnsCNC, true)
				if len(p.Answer) != len(m.Answer) || len(p.Ns) != len(m.Ns) || p.Rcode != m.Rcode {
					t.Fatalf("unsigned answer differs:\n%v\nfrom\n%v", m, p)
				}
			}
		})
	}
	// An LTM virtual's dns profile with enable-dnssec no gets no signatures.
	for _, on := range []bool{true, false} {
		m, _, handled, _ := s.AnswerVirtual(ask("static.example.com.", dns.TypeA, true), ldnsCNC, true, true, true, on)
		if !handled {
			t.Fatal("not handled")
		}
		if got := len(verifySigs(t, sg, m)); (got > 0) != on {
			t.Fatalf("enable-dnssec %v: %d signatures", on, got)
		}
	}
}

// Over a real listener, UDP and TCP: a wide IP's A query with the DO bit
// leaves the wire fast path and is signed; without DO it is answered as
// before, unsigned.
func TestDNSSECListener(t *testing.T) {
	sg := testSigner(t)
	addr := freeAddr(t, "127.38.1.1")
	cfg := testConfig(addr)
	cfg.DNSSEC = sg
	newServer(t, cfg, Options{})
	for _, tt := range []struct {
		net string
		do  bool
	}{{"udp", true}, {"udp", false}, {"tcp", true}} {
		q := new(dns.Msg)
		q.SetQuestion(wideName, dns.TypeA)
		q.SetEdns0(1232, tt.do)
		c := &dns.Client{Net: tt.net, Timeout: 2 * time.Second}
		m, _, err := c.Exchange(q, addr.String())
		if err != nil {
			t.Fatalf("%s: %v", tt.net, err)
		}
		if len(m.Answer) == 0 || m.Answer[0].Header().Rrtype != dns.TypeA {
			t.Fatalf("%s: no A answer: %v", tt.net, m)
		}
		got := verifySigs(t, sg, m)
		if want := map[bool]int{true: 1, false: 0}[tt.do]; len(got) != want {
			t.Fatalf("%s do %v: signatures over %v:\n%v", tt.net, tt.do, got, m)
		}
	}
}
