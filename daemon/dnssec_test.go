package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// DNSSEC through an LTM virtual with a dns profile: the wide IP's and the
// static zone's answers carry RRSIGs that verify against the zone's
// DNSKEY RRset (fetched through the virtual too), itself signed by the
// key-signing key whose DS `show ltm dns dnssec zone` gives; the
// profile's enable-dnssec no turns signing off for that virtual. Bad
// keys are refused and change nothing.
func TestDNSSECVirtual(t *testing.T) {
	e, _ := dnsProfileEngine(t, true)
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create gtm datacenter dc1",
		"create gtm server s1 datacenter dc1 virtual-servers add { v1 { destination 127.38.5.5:80 } }",
		"create gtm pool a gp members add { s1:v1 }",
		"create gtm wideip a www.example.com pools add { gp }",
		"create gtm zone example.com definition { @ IN SOA ns1 hostmaster 1 3600 600 86400 300\n ns1 IN A 127.38.0.53\n static IN A 127.38.7.7 }",
		"create ltm profile dns dnsp",
		"create ltm virtual dns_udp destination 127.38.0.1:5300 ip-protocol udp profiles add { dnsp udp }",
		"create ltm virtual dns_tcp destination 127.38.0.1:5300 ip-protocol tcp profiles add { dnsp tcp }",
		"create ltm dns dnssec key example.com_zsk key-type zsk algorithm rsasha256 certificate-file default.crt key-file default.key",
		"create ltm dns dnssec key example.com_ksk key-type ksk key-management automatic algorithm ecdsap256sha256 rollover-period 29376000 expiration-period 31536000",
		"create ltm dns dnssec zone example.com keys add { example.com_zsk example.com_ksk }",
	)
	ask := func(network, name string, qt uint16, do bool) *dns.Msg {
		t.Helper()
		q := new(dns.Msg)
		q.SetQuestion(name, qt)
		q.SetEdns0(1232, do)
		c := &dns.Client{Net: network, Timeout: 2 * time.Second}
		m, _, err := c.Exchange(q, "127.38.0.1:5300")
		if err != nil {
			t.Fatalf("%s %s: %v", network, name, err)
		}
		return m
	}
	// The chain: DS (from show) -> KSK -> DNSKEY RRset.
	out, errs := run(t, s, "show ltm dns dnssec zone example.com")
	if errs != "" {
		t.Fatal(errs)
	}
	var ds []*dns.DS
	for _, l := range strings.Split(out, "\n") {
		if rr, err := dns.NewRR(strings.TrimSpace(l)); err == nil && rr != nil {
			if d, ok := rr.(*dns.DS); ok {
				ds = append(ds, d)
			}
		}
	}
	if len(ds) != 2 {
		t.Fatalf("show gives %d DS records:\n%s", len(ds), out)
	}
	km := ask("udp", "example.com.", dns.TypeDNSKEY, true)
	keys := map[uint16]*dns.DNSKEY{}
	var keySet []dns.RR
	var keySig *dns.RRSIG
	for _, rr := range km.Answer {
		switch x := rr.(type) {
		case *dns.DNSKEY:
			keys[x.KeyTag()] = x
			keySet = append(keySet, x)
		case *dns.RRSIG:
			keySig = x
		}
	}
	ksk := keys[ds[0].KeyTag]
	if ksk == nil || !strings.EqualFold(ksk.ToDS(ds[1].DigestType).Digest, ds[1].Digest) {
		t.Fatalf("no DNSKEY for DS %v in %v", ds, km)
	}
	if keySig == nil || keySig.KeyTag != ksk.KeyTag() || keySig.Verify(ksk, keySet) != nil {
		t.Fatalf("the DNSKEY RRset is not signed by the KSK: %v", km)
	}
	verified := func(m *dns.Msg) int {
		t.Helper()
		n := 0
		for _, sec := range [][]dns.RR{m.Answer, m.Ns} {
			for _, rr := range sec {
				sig, ok := rr.(*dns.RRSIG)
				if !ok {
					continue
				}
				var set []dns.RR
				for _, x := range sec {
					if x.Header().Rrtype == sig.TypeCovered && strings.EqualFold(x.Header().Name, sig.Hdr.Name) {
						set = append(set, x)
					}
				}
				k := keys[sig.KeyTag]
				if k == nil || k.Flags&dns.SEP != 0 {
					t.Fatalf("RRSIG by %d, not a zone-signing key: %v", sig.KeyTag, m)
				}
				if err := sig.Verify(k, set); err != nil {
					t.Fatalf("RRSIG over %s: %v", dns.TypeToString[sig.TypeCovered], err)
				}
				n++
			}
		}
		return n
	}
	for _, tt := range []struct {
		cmd     string
		network string
		name    string
		qtype   uint16
		do      bool
		rcode   int
		sigs    int
	}{
		{network: "udp", name: "www.example.com.", qtype: dns.TypeA, do: true, sigs: 1},
		{network: "tcp", name: "www.example.com.", qtype: dns.TypeA, do: true, sigs: 1},
		{network: "udp", name: "www.example.com.", qtype: dns.TypeA},
		{network: "udp", name: "static.example.com.", qtype: dns.TypeA, do: true, sigs: 1},
		// The SOA and three NSEC3, signed by a 2048-bit RSA key, are
		// more than 1232 octets: over TCP, as a resolver asks again.
		{network: "tcp", name: "nothere.example.com.", qtype: dns.TypeA, do: true, rcode: dns.RcodeNameError, sigs: 4},
		{network: "udp", name: "static.example.com.", qtype: dns.TypeTXT, do: true, sigs: 2},
		{cmd: "modify ltm profile dns dnsp enable-dnssec no", network: "udp", name: "www.example.com.", qtype: dns.TypeA, do: true},
		{network: "udp", name: "static.example.com.", qtype: dns.TypeA, do: true},
		{cmd: "modify ltm profile dns dnsp enable-dnssec yes", network: "udp", name: "static.example.com.", qtype: dns.TypeA, do: true, sigs: 1},
		{cmd: "modify ltm dns dnssec zone example.com disabled", network: "udp", name: "static.example.com.", qtype: dns.TypeA, do: true},
		{cmd: "modify ltm dns dnssec zone example.com enabled", network: "udp", name: "static.example.com.", qtype: dns.TypeA, do: true, sigs: 1},
	} {
		if tt.cmd != "" {
			mustRun(t, s, tt.cmd)
		}
		m := ask(tt.network, tt.name, tt.qtype, tt.do)
		if m.Rcode != tt.rcode {
			t.Fatalf("%s %s: rcode %s", tt.cmd, tt.name, dns.RcodeToString[m.Rcode])
		}
		if got := verified(m); got != tt.sigs {
			t.Fatalf("%s %s %s do %v: %d signatures, want %d:\n%v", tt.cmd, tt.network, tt.name, tt.do, got, tt.sigs, m)
		}
	}
	// The same keys after a commit that does not touch them.
	mustRun(t, s, "create ltm dns dnssec key spare key-type zsk key-management automatic algorithm ecdsap256sha256")
	if again, _ := run(t, s, "show ltm dns dnssec zone example.com"); again != out {
		t.Fatalf("the DS records changed:\n%s\nwas\n%s", again, out)
	}
	before, _ := run(t, s, "list ltm dns dnssec")
	for _, tt := range []struct{ cmd, want string }{
		{"create ltm dns dnssec key k1 key-management manual", "needs a key-file"},
		{"create ltm dns dnssec key k2 key-management automatic rollover-period 100 expiration-period 50", "rollover-period (100) must be shorter than expiration-period (50)"},
		{"create ltm dns dnssec key k3 key-management automatic signature-validity-period 600 signature-publication-period 600", "must be shorter than signature-validity-period"},
		{"create ltm dns dnssec key k4 key-management automatic bit-width 512", "bit-width 512 is out of range"},
		{"create ltm dns dnssec key k5 algorithm ecdsap256sha256 certificate-file default.crt key-file default.key", "needs an ECDSA one"},
		{"create ltm dns dnssec key k6 algorithm sha1", "sha1"},
		{"create ltm dns dnssec zone other.com keys add { nosuch }", "nosuch"},
		{"delete ltm dns dnssec key example.com_ksk", "in use"},
	} {
		if _, errs := run(t, s, tt.cmd); !strings.Contains(errs, tt.want) {
			t.Errorf("%s: error %q, want %q", tt.cmd, errs, tt.want)
		}
	}
	if after, _ := run(t, s, "list ltm dns dnssec"); after != before {
		t.Fatalf("a refused change changed the configuration:\n%s", after)
	}
}
