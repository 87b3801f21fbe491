package rpz

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/dnszone"
)

type source map[string]*dnszone.Zone

func (s source) PolicyZone(name string) *dnszone.Zone { return s[name] }

func zone(t *testing.T, origin string, lines ...string) *dnszone.Zone {
	t.Helper()
	rrs := []dns.RR{}
	for _, l := range append([]string{origin + " 60 IN SOA ns1." + origin + " h. 1 3600 600 86400 30"}, lines...) {
		rr, err := dns.NewRR(l)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		rrs = append(rrs, rr)
	}
	return dnszone.Build(origin, rrs)
}

func TestCheckAndAnswer(t *testing.T) {
	src := source{
		"rpz.test.": zone(t, "rpz.test.",
			"bad.example.com.rpz.test. 60 IN CNAME .",
			"*.evil.example.com.rpz.test. 60 IN CNAME .",
			"ok.evil.example.com.rpz.test. 60 IN CNAME rpz-passthru.",
			"empty.example.com.rpz.test. 60 IN CNAME *.",
			"gone.example.com.rpz.test. 60 IN CNAME rpz-drop.",
			"local.example.com.rpz.test. 60 IN A 192.0.2.7",
			"*.redir.example.com.rpz.test. 60 IN CNAME *.safe.example.",
		),
		"wg.test.": zone(t, "wg.test.", "ads.example.net.wg.test. 60 IN CNAME .", "fine.example.net.wg.test. 60 IN CNAME rpz-passthru."),
	}
	garden, _ := dns.NewRR("garden.local. 60 IN A 192.0.2.99")
	p := &Policies{Zones: []Zone{
		{Name: "rpz.test.", Action: ActionNXDOMAIN},
		{Name: "missing.test.", Action: ActionNXDOMAIN},
		{Name: "wg.test.", Action: ActionWalledGarden, GardenName: "garden.local.", Garden: []dns.RR{garden}},
	}}
	for _, tt := range []struct {
		name   string
		qtype  uint16
		policy string // "" for no hit
		str    string
		rcode  int
		answer string // the first answer record's text, "" for none
	}{
		{"www.example.com.", dns.TypeA, "", "", 0, ""},
		{"bad.example.com.", dns.TypeA, PolicyNXDOMAIN, "rpz.test nxdomain bad.example.com", dns.RcodeNameError, ""},
		{"BAD.Example.COM", dns.TypeAAAA, PolicyNXDOMAIN, "rpz.test nxdomain bad.example.com", dns.RcodeNameError, ""},
		{"sub.bad.example.com.", dns.TypeA, "", "", 0, ""},
		{"a.b.evil.example.com.", dns.TypeA, PolicyNXDOMAIN, "rpz.test nxdomain *.evil.example.com", dns.RcodeNameError, ""},
		{"evil.example.com.", dns.TypeA, "", "", 0, ""},
		{"ok.evil.example.com.", dns.TypeA, PolicyPassthru, "rpz.test passthru ok.evil.example.com", 0, ""},
		{"empty.example.com.", dns.TypeA, PolicyNODATA, "rpz.test nodata empty.example.com", dns.RcodeSuccess, ""},
		{"gone.example.com.", dns.TypeA, PolicyDrop, "rpz.test drop gone.example.com", 0, ""},
		{"local.example.com.", dns.TypeA, PolicyLocalData, "rpz.test local-data local.example.com", dns.RcodeSuccess, "local.example.com.\t60\tIN\tA\t192.0.2.7"},
		{"local.example.com.", dns.TypeMX, PolicyLocalData, "rpz.test local-data local.example.com", dns.RcodeSuccess, ""},
		{"x.redir.example.com.", dns.TypeA, PolicyLocalData, "rpz.test local-data *.redir.example.com", dns.RcodeSuccess, "x.redir.example.com.\t60\tIN\tCNAME\tx.redir.example.com.safe.example."},
		{"ads.example.net.", dns.TypeA, PolicyWalledGarden, "wg.test walled-garden ads.example.net", dns.RcodeSuccess, "ads.example.net.\t60\tIN\tA\t192.0.2.99"},
		{"ads.example.net.", dns.TypeAAAA, PolicyWalledGarden, "wg.test walled-garden ads.example.net", dns.RcodeSuccess, ""},
		{"fine.example.net.", dns.TypeA, PolicyPassthru, "wg.test passthru fine.example.net", 0, ""},
	} {
		h := p.Check(src, netip.Addr{}, tt.name, true)
		if tt.policy == "" {
			if h != nil {
				t.Errorf("%s: hit %s, want none", tt.name, h)
			}
			continue
		}
		if h == nil || h.Policy != tt.policy || h.String() != tt.str {
			t.Errorf("%s: hit %v, want %s", tt.name, h, tt.str)
			continue
		}
		r := new(dns.Msg)
		r.SetQuestion(dns.Fqdn(tt.name), tt.qtype)
		m := h.Answer(r)
		if tt.policy == PolicyPassthru || tt.policy == PolicyDrop {
			if m != nil {
				t.Errorf("%s: %s answered %v", tt.name, tt.policy, m)
			}
			continue
		}
		if m == nil || m.Rcode != tt.rcode {
			t.Errorf("%s: answer %v, want rcode %d", tt.name, m, tt.rcode)
			continue
		}
		got := ""
		if len(m.Answer) > 0 {
			got = m.Answer[0].String()
		}
		if !strings.EqualFold(got, tt.answer) {
			t.Errorf("%s %s: answer %q, want %q", tt.name, dns.TypeToString[tt.qtype], got, tt.answer)
		}
		if got == "" && (len(m.Ns) != 1 || m.Ns[0].Header().Rrtype != dns.TypeSOA) {
			t.Errorf("%s: a negative answer without the policy zone's SOA: %v", tt.name, m.Ns)
		}
	}
	st := p.Stats()
	if st.NXDOMAIN.Load() != 3 || st.NODATA.Load() != 1 || st.Passthru.Load() != 2 || st.Drop.Load() != 1 || st.LocalData.Load() != 3 || st.WalledGarden.Load() != 2 {
		t.Errorf("counters %d %d %d %d %d %d", st.NXDOMAIN.Load(), st.NODATA.Load(), st.Passthru.Load(), st.Drop.Load(), st.LocalData.Load(), st.WalledGarden.Load())
	}
	st.Reset()
	if st.NXDOMAIN.Load() != 0 {
		t.Error("Reset left a count")
	}
}

// A cache without policies, or a zone with no copy yet, answers nothing
// and allocates nothing.
func TestCheckNone(t *testing.T) {
	var p *Policies
	if p.Check(source{}, netip.Addr{}, "a.example.", true) != nil {
		t.Fatal("a nil Policies hit")
	}
	q := &Policies{Zones: []Zone{{Name: "rpz.test.", Action: ActionNXDOMAIN}}}
	var src Source = source{}
	if n := testing.AllocsPerRun(100, func() { q.Check(src, netip.MustParseAddr("192.0.2.1"), "a.example.", true) }); n != 0 {
		t.Errorf("Check of a zone without a copy allocates %v", n)
	}
}

func TestCheckResponse(t *testing.T) {
	src := source{"rpz.test.": zone(t, "rpz.test.",
		"32.7.2.0.192.rpz-ip.rpz.test. 60 IN CNAME .",
		"24.0.2.0.192.rpz-ip.rpz.test. 60 IN CNAME rpz-passthru.",
		"16.0.0.10.10.rpz-ip.rpz.test. 60 IN A 192.0.2.99",
		"48.zz.db8.2001.rpz-ip.rpz.test. 60 IN CNAME *.",
		"128.1.zz.rpz-ip.rpz.test. 60 IN CNAME rpz-drop.",
	)}
	p := New([]Zone{{Name: "rpz.test.", Action: ActionNXDOMAIN}})
	for _, tt := range []struct {
		rr  string
		str string
	}{
		{"a.example. 60 IN A 192.0.2.7", "rpz.test nxdomain 32.7.2.0.192.rpz-ip"},
		{"a.example. 60 IN A 192.0.2.8", "rpz.test passthru 24.0.2.0.192.rpz-ip"},
		{"a.example. 60 IN A 10.10.200.1", "rpz.test local-data 16.0.0.10.10.rpz-ip"},
		{"a.example. 60 IN A 10.11.0.1", ""},
		{"a.example. 60 IN AAAA 2001:db8:0:5::1", "rpz.test nodata 48.zz.db8.2001.rpz-ip"},
		{"a.example. 60 IN AAAA ::1", "rpz.test drop 128.1.zz.rpz-ip"},
		{"a.example. 60 IN AAAA 2001:db9::1", ""},
		{"a.example. 60 IN TXT \"192.0.2.7\"", ""},
	} {
		rr, err := dns.NewRR(tt.rr)
		if err != nil {
			t.Fatal(err)
		}
		m := new(dns.Msg)
		m.Answer = []dns.RR{rr}
		if got := p.CheckResponse(src, m, nil, true).String(); got != tt.str {
			t.Errorf("%s: %q, want %q", tt.rr, got, tt.str)
		}
	}
	// A zone without response-IP triggers is passed over.
	plain := source{"rpz.test.": zone(t, "rpz.test.", "bad.example.rpz.test. 60 IN CNAME .")}
	rr, _ := dns.NewRR("a.example. 60 IN A 192.0.2.7")
	if h := p.CheckResponse(plain, &dns.Msg{Answer: []dns.RR{rr}}, nil, true); h != nil {
		t.Errorf("hit %s in a zone without rpz-ip", h)
	}
}

// TestTCPOnly: an rpz-tcp-only trigger answers a query over UDP with an
// empty truncated answer, so the client asks again over TCP, where the
// trigger is a passthru that later zones do not override; response-IP
// triggers act the same way.
func TestTCPOnly(t *testing.T) {
	src := source{
		"rpz.test.": zone(t, "rpz.test.",
			"slow.example.com.rpz.test. 60 IN CNAME rpz-tcp-only.",
			"*.tcp.example.com.rpz.test. 60 IN CNAME RPZ-TCP-ONLY.",
			"32.9.2.0.192.rpz-ip.rpz.test. 60 IN CNAME rpz-tcp-only.",
		),
		"late.test.": zone(t, "late.test.", "slow.example.com.late.test. 60 IN CNAME ."),
	}
	p := New([]Zone{{Name: "rpz.test.", Action: ActionNXDOMAIN}, {Name: "late.test.", Action: ActionNXDOMAIN}})
	a, _ := dns.NewRR("www.example.org. 60 IN A 192.0.2.9")
	for _, tt := range []struct {
		name   string
		qname  string // "" for the response-IP trigger on a
		udp    bool
		policy string
		str    string
	}{
		{"udp qname", "slow.example.com.", true, PolicyTCPOnly, "rpz.test tcp-only slow.example.com"},
		{"tcp qname", "slow.example.com.", false, PolicyPassthru, "rpz.test passthru slow.example.com"},
		{"udp wildcard", "x.tcp.example.com.", true, PolicyTCPOnly, "rpz.test tcp-only *.tcp.example.com"},
		{"tcp wildcard", "x.tcp.example.com.", false, PolicyPassthru, "rpz.test passthru *.tcp.example.com"},
		{"udp response ip", "", true, PolicyTCPOnly, "rpz.test tcp-only 32.9.2.0.192.rpz-ip"},
		{"tcp response ip", "", false, PolicyPassthru, "rpz.test passthru 32.9.2.0.192.rpz-ip"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := new(dns.Msg)
			r.SetQuestion("www.example.org.", dns.TypeA)
			r.SetEdns0(4096, true)
			var h *Hit
			if tt.qname != "" {
				r.Question[0].Name = tt.qname
				h = p.Check(src, netip.Addr{}, tt.qname, tt.udp)
			} else {
				h = p.CheckResponse(src, &dns.Msg{Answer: []dns.RR{a}}, nil, tt.udp)
			}
			if h == nil || h.Policy != tt.policy || h.String() != tt.str {
				t.Fatalf("hit %v, want %s", h, tt.str)
			}
			m := h.Answer(r)
			if tt.policy == PolicyPassthru {
				if m != nil {
					t.Fatalf("a passthru answered %v", m)
				}
				return
			}
			if m == nil || !m.Truncated || m.Rcode != dns.RcodeSuccess || len(m.Answer)+len(m.Ns) != 0 || m.Id != r.Id {
				t.Fatalf("answer %v, want an empty truncated NOERROR", m)
			}
			if o := m.IsEdns0(); o == nil || !o.Do() {
				t.Fatalf("the query's OPT (DO) is not echoed: %v", m.Extra)
			}
		})
	}
	if st := p.Stats(); st.TCPOnly.Load() != 3 || st.Passthru.Load() != 3 {
		t.Errorf("counters tcp-only %d passthru %d, want 3 and 3", st.TCPOnly.Load(), st.Passthru.Load())
	}
}
