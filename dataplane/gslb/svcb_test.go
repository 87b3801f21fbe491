package gslb

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/rules"
)

// svcbConfig has HTTPS and SVCB wide IPs whose members name an A wide
// IP (web.ex.test), a static-zone name (static.ex.test), a name outside
// (far.example.net) and the owner itself (.).
func svcbConfig() *Config {
	a := netip.MustParseAddr
	return &Config{
		Datacenters: map[string]*Datacenter{"/Common/dc": {Name: "/Common/dc"}},
		Servers: map[string]*Host{"/Common/s": {Name: "/Common/s", Datacenter: "/Common/dc", VirtualServers: []*VirtualServer{
			{Name: "v4", Destination: netip.AddrPortFrom(a("127.170.90.1"), 443)},
			{Name: "v6", Destination: netip.AddrPortFrom(a("fd00::170:1"), 443)},
		}}},
		Zones: []Zone{{Origin: "ex.test", Data: "@ IN SOA ns1.ex.test. h.ex.test. 1 3600 600 86400 60\n@ IN NS ns1.ex.test.\nns1 IN A 127.170.90.53\nstatic IN A 127.170.90.7\n"}},
		Pools: map[string]*Pool{
			"/Common/web":      {Name: "/Common/web", Members: []PoolMember{{Server: "/Common/s", VirtualServer: "v4"}}},
			"aaaa /Common/web": {Name: "/Common/web", Type: TypeAAAA, Members: []PoolMember{{Server: "/Common/s", VirtualServer: "v6"}}},
			"https /Common/h": {Name: "/Common/h", Type: TypeHTTPS, Mode: GlobalAvailability, MaxAnswers: 2, Members: []PoolMember{
				{Target: "web.ex.test", Priority: 1, Port: 8443, SVCB: SVCBParams{ALPN: []string{"h2", "h3"}, IPv4Hint: []netip.Addr{a("127.170.90.1")}}},
				{Target: "static.ex.test", Priority: 2, Order: 1, SVCB: SVCBParams{ALPN: []string{"h2"}, NoDefaultALPN: true, Mandatory: []string{"alpn"}}},
			}},
			"svcb /Common/alias": {Name: "/Common/alias", Type: TypeSVCB, MaxAnswers: 3, Members: []PoolMember{
				{Target: "far.example.net", StaticTarget: true},
				{Target: "other.example.net", StaticTarget: true, Order: 1},
			}},
			"svcb /Common/self": {Name: "/Common/self", Type: TypeSVCB, Members: []PoolMember{
				{Target: ".", StaticTarget: true, Priority: 1, SVCB: SVCBParams{IPv6Hint: []netip.Addr{a("fd00::170:1")}}},
			}},
		},
		WideIPs: map[string]*WideIP{
			"/Common/web.ex.test":           {Name: "/Common/web.ex.test", Pools: []WideIPPool{{Pool: "/Common/web"}}},
			"aaaa /Common/web.ex.test":      {Name: "/Common/web.ex.test", Type: TypeAAAA, Pools: []WideIPPool{{Pool: "aaaa /Common/web"}}},
			"https /Common/ex.test":         {Name: "/Common/ex.test", Type: TypeHTTPS, Pools: []WideIPPool{{Pool: "https /Common/h"}}},
			"svcb /Common/_dns.ex.test":     {Name: "/Common/_dns.ex.test", Type: TypeSVCB, Pools: []WideIPPool{{Pool: "svcb /Common/alias"}}},
			"svcb /Common/web.ex.test":      {Name: "/Common/web.ex.test", Type: TypeSVCB, Pools: []WideIPPool{{Pool: "svcb /Common/self"}}},
			"https /Common/nothing.ex.test": {Name: "/Common/nothing.ex.test", Type: TypeHTTPS, Pools: []WideIPPool{{Pool: "https /Common/h"}}, Disabled: true},
		},
	}
}

func rrData(rrs []dns.RR) string {
	var got []string
	for _, rr := range rrs {
		if rr.Header().Rrtype == dns.TypeOPT {
			continue
		}
		f := strings.SplitN(rr.String(), "\t", 5)
		got = append(got, f[0]+" "+f[3]+" "+f[len(f)-1])
	}
	return strings.Join(got, "|")
}

func TestSVCBHTTPSAnswers(t *testing.T) {
	s := newServer(t, svcbConfig(), Options{})
	src := netip.MustParseAddr("127.170.91.1")
	cases := []struct {
		name         string
		qtype        uint16
		answer, more string // the answer and additional sections (owner type data, joined by |)
	}{
		{"ex.test.", dns.TypeHTTPS,
			`ex.test. HTTPS 1 web.ex.test. alpn="h2,h3" port="8443" ipv4hint="127.170.90.1"|ex.test. HTTPS 2 static.ex.test. mandatory="alpn" alpn="h2" no-default-alpn=""`,
			"web.ex.test. A 127.170.90.1|web.ex.test. AAAA fd00::170:1|static.ex.test. A 127.170.90.7"},
		{"ex.test.", dns.TypeSVCB, "", ""}, // an HTTPS wide IP does not answer SVCB: NODATA
		// Alias mode answers one record, whatever max-answers-returned.
		{"_dns.ex.test.", dns.TypeSVCB, "_dns.ex.test. SVCB 0 far.example.net.", ""},
		// "." is the owner: the owner's A and AAAA wide IPs give the addresses.
		{"web.ex.test.", dns.TypeSVCB, `web.ex.test. SVCB 1 . ipv6hint="fd00::170:1"`, "web.ex.test. A 127.170.90.1|web.ex.test. AAAA fd00::170:1"},
	}
	for _, c := range cases {
		m := ask(t, s, src, c.name, c.qtype)
		if m == nil {
			t.Fatalf("%s %s: no answer", c.name, dns.TypeToString[c.qtype])
		}
		if got := rrData(m.Answer); got != c.answer || m.Rcode != dns.RcodeSuccess || !m.Authoritative {
			t.Errorf("%s %s: rcode %s aa %v answer %q, want NOERROR aa %q", c.name, dns.TypeToString[c.qtype], dns.RcodeToString[m.Rcode], m.Authoritative, got, c.answer)
		}
		if got := rrData(m.Extra); got != c.more {
			t.Errorf("%s %s: additional %q, want %q", c.name, dns.TypeToString[c.qtype], got, c.more)
		}
		// The answer packs and unpacks as the same records.
		wire, err := m.Pack()
		if err != nil {
			t.Fatalf("%s: pack: %v", c.name, err)
		}
		var back dns.Msg
		if err := back.Unpack(wire); err != nil || rrData(back.Answer) != c.answer {
			t.Errorf("%s: unpacked %q (%v), want %q", c.name, rrData(back.Answer), err, c.answer)
		}
	}
}

// A member disabled leaves the answer; with none left the wide IP
// answers as the other types do (return to DNS: the zone's NODATA).
func TestSVCBMembersDisabled(t *testing.T) {
	cfg := svcbConfig()
	src := netip.MustParseAddr("127.170.91.1")
	h := cfg.Pools["https /Common/h"]
	h.Members[0].Disabled = true
	s := newServer(t, cfg, Options{})
	m := ask(t, s, src, "ex.test.", dns.TypeHTTPS)
	if got := rrData(m.Answer); !strings.HasPrefix(got, "ex.test. HTTPS 2 static.ex.test.") || strings.Contains(got, "web.ex.test") {
		t.Fatalf("first member disabled: answer %q, want only static.ex.test", got)
	}
	h.Members[1].Disabled = true
	if err := s.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	m = ask(t, s, src, "ex.test.", dns.TypeHTTPS)
	if len(m.Answer) != 0 || m.Rcode != dns.RcodeSuccess || len(m.Ns) == 0 || m.Ns[0].Header().Rrtype != dns.TypeSOA {
		t.Fatalf("every member disabled: rcode %s answer %q ns %v, want NOERROR NODATA with the SOA", dns.RcodeToString[m.Rcode], rrData(m.Answer), m.Ns)
	}
	w := cfg.WideIPs["https /Common/ex.test"]
	w.FailureResponse, w.FailureRcode = true, dns.RcodeServerFailure
	if err := s.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	if m = ask(t, s, src, "ex.test.", dns.TypeHTTPS); m.Rcode != dns.RcodeServerFailure {
		t.Fatalf("failure-rcode servfail: rcode %s", dns.RcodeToString[m.Rcode])
	}
}

// Round robin and ratio turn among SVCB members as among SRV ones.
func TestSVCBRoundRobin(t *testing.T) {
	cfg := svcbConfig()
	cfg.Pools["https /Common/h"].Mode = RoundRobin
	cfg.Pools["https /Common/h"].MaxAnswers = 1
	s := newServer(t, cfg, Options{})
	src := netip.MustParseAddr("127.170.91.1")
	seen := map[string]int{}
	for range 4 {
		m := ask(t, s, src, "ex.test.", dns.TypeHTTPS)
		if len(m.Answer) != 1 {
			t.Fatalf("answer %q, want one record", rrData(m.Answer))
		}
		seen[m.Answer[0].(*dns.HTTPS).Target]++
	}
	if seen["web.ex.test."] != 2 || seen["static.ex.test."] != 2 {
		t.Fatalf("round robin over 4 queries: %v, want 2 each", seen)
	}
}

func TestSVCBConfigRefused(t *testing.T) {
	a := netip.MustParseAddr
	cases := []struct {
		name    string
		members []PoolMember
		want    string
	}{
		{"alias with params", []PoolMember{{Target: "x.ex.test", Port: 443}}, "alias mode (priority 0) takes no SvcParams"},
		{"alias with hint", []PoolMember{{Target: "x.ex.test", SVCB: SVCBParams{IPv4Hint: []netip.Addr{a("127.170.0.1")}}}}, "alias mode"},
		{"mixed modes", []PoolMember{{Target: "x.ex.test"}, {Target: "y.ex.test", Priority: 1}}, "cannot share a pool"},
		{"no-default-alpn alone", []PoolMember{{Target: "x.ex.test", Priority: 1, SVCB: SVCBParams{NoDefaultALPN: true}}}, "needs alpn"},
		{"mandatory unset", []PoolMember{{Target: "x.ex.test", Priority: 1, SVCB: SVCBParams{Mandatory: []string{"port"}}}}, "does not set"},
	}
	for _, c := range cases {
		cfg := svcbConfig()
		cfg.Pools["svcb /Common/bad"] = &Pool{Name: "/Common/bad", Type: TypeSVCB, Members: c.members}
		err := New(Options{}).Apply(cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "gtm pool svcb /Common/bad") {
			t.Errorf("%s: %v, want an error on gtm pool svcb /Common/bad saying %q", c.name, err, c.want)
		}
	}
}

func TestParseSVCBParams(t *testing.T) {
	cases := []struct {
		alpn, v4, v6, mand string
		want               string // error text, "" for none
	}{
		{"h2, h3", "127.170.0.1,127.170.0.2", "fd00::1", "alpn,port", ""},
		{"", "fd00::1", "", "", "not an IPv4 address"},
		{"", "", "127.170.0.1", "", "not an IPv6 address"},
		{"", "", "", "mandatory", "not a key a member sets"},
		{"", "", "", "alpn,ALPN", "twice"},
		{strings.Repeat("x", 256), "", "", "", "255 bytes"},
	}
	for _, c := range cases {
		sp, err := ParseSVCBParams(c.alpn, c.v4, c.v6, c.mand, false)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q %q %q %q: %v", c.alpn, c.v4, c.v6, c.mand, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q %q %q %q: %v, want %q", c.alpn, c.v4, c.v6, c.mand, err, c.want)
		case c.want == "" && (len(sp.ALPN) != 2 || sp.ALPN[1] != "h3" || len(sp.IPv4Hint) != 2 || len(sp.Mandatory) != 2):
			t.Errorf("parsed %+v", sp)
		}
	}
}

// DNS_REQUEST rules run on HTTPS and SVCB wide IPs as on the other
// types: DNS::question type reads HTTPS or SVCB, `pool` steers to a pool
// of the wide IP's type, `host` is refused (an address is not an HTTPS
// answer), and a pool of another type is refused when checked.
func TestSVCBWideIPRules(t *testing.T) {
	var logs ruleLog
	cfg := svcbConfig()
	cfg.RuleEnv = &rules.Env{Log: logs.add}
	cfg.Pools["https /Common/h2only"] = &Pool{Name: "/Common/h2only", Type: TypeHTTPS, Members: []PoolMember{
		{Target: "web.ex.test", Priority: 1, SVCB: SVCBParams{ALPN: []string{"h2"}}},
	}}
	cfg.WideIPs["https /Common/ex.test"].Rules = []*rules.Rule{compileRule(t, "/Common/https_steer", `
when DNS_REQUEST {
  if { [DNS::question type] eq "HTTPS" && [IP::addr [IP::client_addr] equals 127.170.94.0/24] } {
    pool h2only
  } elseif { [IP::addr [IP::client_addr] equals 127.170.97.0/24] } {
    host 192.0.2.1
  }
}`)}
	cfg.WideIPs["svcb /Common/_dns.ex.test"].Rules = []*rules.Rule{compileRule(t, "/Common/svcb_log", `
when DNS_REQUEST {
  log local0. "type [DNS::question type] name [DNS::question name]"
}`)}
	s := newServer(t, cfg, Options{})
	cases := []struct {
		src, name string
		qtype     uint16
		want      string // the answer's first record, "drop" when nothing is sent
	}{
		{"127.170.93.1", "ex.test.", dns.TypeHTTPS, `ex.test. HTTPS 1 web.ex.test. alpn="h2,h3" port="8443" ipv4hint="127.170.90.1"`},
		{"127.170.94.1", "ex.test.", dns.TypeHTTPS, `ex.test. HTTPS 1 web.ex.test. alpn="h2"`},
		{"127.170.97.1", "ex.test.", dns.TypeHTTPS, "drop"},
		{"127.170.93.1", "_dns.ex.test.", dns.TypeSVCB, "_dns.ex.test. SVCB 0 far.example.net."},
	}
	for _, c := range cases {
		q := new(dns.Msg)
		q.SetQuestion(c.name, c.qtype)
		m, send := s.Answer(q, netip.MustParseAddr(c.src), true)
		switch {
		case c.want == "drop":
			if send {
				t.Errorf("%s from %s: %v, want nothing sent", c.name, c.src, m)
			}
		case !send || len(m.Answer) == 0 || rrData(m.Answer[:1]) != c.want:
			t.Errorf("%s %s from %s: sent %v %v, want %q", c.name, dns.TypeToString[c.qtype], c.src, send, m, c.want)
		}
	}
	l := logs.get()
	if len(l) != 2 || !strings.Contains(l[0], "a gtm wideip https answers names, not addresses") || !strings.Contains(l[1], "type SVCB name _dns.ex.test") {
		t.Errorf("logs %q, want the host error and the SVCB question", l)
	}
	bad := svcbConfig()
	bad.WideIPs["svcb /Common/_dns.ex.test"].Rules = []*rules.Rule{compileRule(t, "/Common/b", "when DNS_REQUEST {\n  pool h\n}")}
	if err := Check(bad); err == nil || !strings.Contains(err.Error(), "gtm pool svcb /Common/h does not exist") {
		t.Errorf("Check: %v", err)
	}
}

// plan.typed has a name table for every type.
func TestTypedNameTables(t *testing.T) {
	var p plan
	if len(p.typed) != len(Types) {
		t.Fatalf("plan.typed holds %d types, Types lists %d", len(p.typed), len(Types))
	}
	for _, typ := range Types {
		if typ.index() < 0 || (typ != TypeA && typ != TypeAAAA && !typ.named()) {
			t.Errorf("%s: index %d named %v", typ, typ.index(), typ.named())
		}
		if got, ok := typeOfQuery(typ.qtype()); !ok || got != typ {
			t.Errorf("%s: qtype %d reads back as %q %v", typ, typ.qtype(), got, ok)
		}
	}
}
