package gslb

import (
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/gslb/gslbtest"
	"github.com/openltm/openltm/rules"
)

func compileRule(t *testing.T, name, body string) *rules.Rule {
	t.Helper()
	r, err := rules.Compile(name, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// ruleConfig is the test configuration with a second pool of the ct
// virtual servers only, and the given rules on the wide IP and on every
// listener.
func ruleConfig(listen netip.AddrPort, wide, listener []*rules.Rule, logs *ruleLog) *Config {
	cfg := testConfig(listen)
	cfg.Pools["/Common/ct_pool"] = &Pool{Name: "/Common/ct_pool", Members: []PoolMember{
		{Server: "/Common/bj-ltm", VirtualServer: "vs_ct"}, {Server: "/Common/gz-ltm", VirtualServer: "vs_ct"}}}
	cfg.WideIPs["/Common/www.example.com"].Rules = wide
	for i := range cfg.Listeners {
		cfg.Listeners[i].Rules = listener
	}
	cfg.RuleEnv = &rules.Env{Log: logs.add}
	return cfg
}

// ruleLog collects what rules log; the server's readers write it while
// the test reads it.
type ruleLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *ruleLog) add(_, line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
}

func (l *ruleLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// Wide IP rules in the style published for BIG-IP DNS: steering by the
// LDNS's subnet to another pool, a static host or a CNAME, and ending the
// query; load balancing goes on as configured when the rule chooses
// nothing.
func TestWideIPRules(t *testing.T) {
	var logs ruleLog
	steer := compileRule(t, "/Common/steer", `
when DNS_REQUEST {
  if { [IP::addr [IP::client_addr] equals 127.0.86.0/24] } {
    pool ct_pool
  } elseif { [IP::addr [IP::client_addr] equals 127.0.87.0/24] } {
    host 192.0.2.87
  } elseif { [IP::addr [IP::client_addr] equals 127.0.88.0/24] } {
    cname www.example.net
  } elseif { [IP::addr [IP::client_addr] equals 127.0.89.0/24] } {
    DNS::drop
  } elseif { [DNS::question name] starts_with "app." } {
    DNS::header rcode REFUSED
    DNS::return
  }
}`)
	s := newServer(t, ruleConfig(netip.AddrPort{}, []*rules.Rule{steer}, nil, &logs), Options{})
	ask := func(src string, name string) (*dns.Msg, bool) {
		q := new(dns.Msg)
		q.SetQuestion(name, dns.TypeA)
		return s.Answer(q, netip.MustParseAddr(src), true)
	}
	for i := 0; i < 4; i++ {
		m, _ := ask("127.0.86.1", wideName)
		if a := gslbtest.Addrs(m); len(a) != 1 || (a[0] != bjCT && a[0] != gzCT) {
			t.Fatalf("ct LDNS: %v", m)
		}
	}
	got := map[netip.Addr]bool{}
	for i := 0; i < 8; i++ {
		m, _ := ask("127.0.85.1", wideName)
		got[gslbtest.Addrs(m)[0]] = true
	}
	if len(got) != 4 {
		t.Errorf("no choice: round robin over the four, got %v", got)
	}
	m, _ := ask("127.0.87.1", wideName)
	if a := gslbtest.Addrs(m); len(a) != 1 || a[0].String() != "192.0.2.87" || !m.Authoritative {
		t.Errorf("host: %v", m)
	}
	m, _ = ask("127.0.88.1", wideName)
	if len(m.Answer) != 1 || m.Answer[0].(*dns.CNAME).Target != "www.example.net." {
		t.Errorf("cname: %v", m)
	}
	if m, send := ask("127.0.89.1", wideName); send {
		t.Errorf("drop: %v", m)
	}
	m, _ = ask("127.0.85.1", "app.example.com.")
	if m.Rcode != dns.RcodeRefused || len(m.Answer) != 0 {
		t.Errorf("return: %v", m)
	}
	if got := logs.get(); len(got) > 0 {
		t.Errorf("logs: %q", got)
	}

	// A rule naming a pool that does not exist is refused by Compile.
	bad := compileRule(t, "/Common/bad", "when DNS_REQUEST {\n  pool nosuch\n}")
	err := Check(ruleConfig(netip.AddrPort{}, []*rules.Rule{bad}, nil, &logs))
	if err == nil || !strings.Contains(err.Error(), "/Common/bad:2:8: gtm pool a /Common/nosuch does not exist") {
		t.Errorf("Check: %v", err)
	}
}

// Listener rules over a real listener: zone steering (names of an
// internal zone refused to LDNSes outside it), rate limiting by query
// name with the session table, answer rewriting in DNS_RESPONSE, and
// NXDOMAIN turned into an answer.
func TestListenerRules(t *testing.T) {
	var logs ruleLog
	zone := compileRule(t, "/Common/zone_steer", `
when DNS_REQUEST {
  if { [DNS::question name] ends_with ".internal.example.com" && ![IP::addr [IP::client_addr] equals 127.0.85.0/24] } {
    DNS::header rcode REFUSED
    DNS::return
  }
}`)
	limit := compileRule(t, "/Common/rate_limit", `
when DNS_REQUEST {
  set key "q:[string tolower [DNS::question name]]"
  if { [table incr $key] > 3 } {
    log local0. "rate limited [DNS::question name] from [IP::client_addr]"
    DNS::drop
  }
}`)
	rewrite := compileRule(t, "/Common/rewrite", `
when DNS_RESPONSE {
  foreach rr [DNS::answer] {
    if { [DNS::type $rr] eq "A" && [DNS::rdata $rr] eq "127.0.81.11" } {
      DNS::ttl $rr 5
      DNS::rdata [DNS::rr [DNS::name $rr] A IN 5 127.0.81.11] 192.0.2.11
    }
  }
  if { [DNS::ptype] eq "NXDOMAIN" && [DNS::question type] eq "A" } {
    DNS::header rcode NOERROR
    DNS::authority clear
    DNS::answer insert "[DNS::question name]. 60 [DNS::question class] [DNS::question type] 192.0.2.245"
  }
}`)
	listen := freeAddr(t, "127.0.80.40")
	cfg := ruleConfig(listen, nil, []*rules.Rule{zone, limit, rewrite}, &logs)
	cfg.Pools["/Common/app_pool"].Mode = GlobalAvailability // always bj-cnc 127.0.81.11
	s := newServer(t, cfg, Options{})

	for _, network := range []string{"udp", "tcp"} {
		m := queryNet(t, ldnsCNC, listen, network, "a.internal.example.com.", dns.TypeA)
		// Inside: not refused; the zone's NXDOMAIN is then rewritten.
		if a := gslbtest.Addrs(m); m.Rcode != dns.RcodeSuccess || len(a) != 1 || a[0].String() != "192.0.2.245" {
			t.Errorf("%s: inside LDNS: %v", network, m)
		}
		m = queryNet(t, ldnsCT, listen, network, "b.internal.example.com.", dns.TypeA)
		if m.Rcode != dns.RcodeRefused {
			t.Errorf("%s: outside LDNS: %v", network, m)
		}
	}

	m := queryNet(t, ldnsCNC, listen, "udp", wideName, dns.TypeA)
	if a := gslbtest.Addrs(m); len(a) != 1 || a[0].String() != "192.0.2.11" || m.Answer[0].Header().Ttl != 5 {
		t.Errorf("rewrite: %v", m)
	}
	m = queryNet(t, ldnsCNC, listen, "udp", "nothing.example.com.", dns.TypeA)
	if a := gslbtest.Addrs(m); m.Rcode != dns.RcodeSuccess || len(a) != 1 || a[0].String() != "192.0.2.245" {
		t.Errorf("NXDOMAIN rewrite: %v", m)
	}

	// Rate limit: the fourth query for one name is dropped (the first
	// www query above counted); the same query path answers the
	// socket-less way too.
	q := new(dns.Msg)
	q.SetQuestion("WWW.example.com.", dns.TypeA)
	v := via{key: listenerKey{listen, "udp"}}
	sent := 0
	for i := 0; i < 4; i++ {
		if _, send := s.answer(q, ldnsCNC, true, v); send {
			sent++
		}
	}
	if sent != 2 {
		t.Errorf("%d of 4 sent after one, want 2", sent)
	}
	if got := logs.get(); len(got) != 2 || !strings.Contains(got[0], "Rule /Common/rate_limit <DNS_REQUEST>: rate limited WWW.example.com from 127.0.85.1") {
		t.Errorf("logs: %q", got)
	}
}

// Without rules the wire path answers; with a listener rule every query
// goes through the rules.
func TestRulesTurnOffWirePath(t *testing.T) {
	var logs ruleLog
	r := compileRule(t, "/Common/log", `when DNS_REQUEST { log local0. "q [DNS::question name] [DNS::len]" }`)
	listen := freeAddr(t, "127.0.80.41")
	cfg := ruleConfig(listen, nil, []*rules.Rule{r}, &logs)
	cfg.Listeners[0].Protocol = "udp"
	newServer(t, cfg, Options{})
	queryNet(t, ldnsCNC, listen, "udp", wideName, dns.TypeA)
	if got := logs.get(); len(got) != 1 || !strings.HasSuffix(got[0], "q www.example.com 33") {
		t.Errorf("logs: %q", got)
	}
}

// DNS::query reads the static zones as DNS Express: F5's documented
// walk over the sections it returns (answer, authority, additional),
// a CNAME followed in the zone, glue in the additional section, the SOA
// of a name the zone lacks, and an empty list for a name outside every
// zone; the response the rule builds is its own.
func TestListenerRuleDNSQuery(t *testing.T) {
	var logs ruleLog
	r := compileRule(t, "/Common/dnsx", `
when DNS_REQUEST {
  if { [DNS::question name] eq "copy.example.com" } {
    foreach rrs [DNS::query dnsx alias.example.com A] {
      foreach rr $rrs { DNS::answer insert $rr }
    }
    foreach rrs [DNS::query dns-express nothing.example.com A dnssec] {
      foreach rr $rrs {
        if { [DNS::type $rr] eq "SOA" } { DNS::additional insert $rr }
      }
    }
    log local0. "outside [llength [DNS::query dnsx www.example.org A]] glue [lindex [DNS::query dnsx example.com MX] 2]"
    DNS::return
  }
}`)
	listen := freeAddr(t, "127.0.80.42")
	newServer(t, ruleConfig(listen, nil, []*rules.Rule{r}, &logs), Options{})
	for _, network := range []string{"udp", "tcp"} {
		m := queryNet(t, ldnsCNC, listen, network, "copy.example.com.", dns.TypeA)
		var got []string
		for _, rr := range append(m.Answer, m.Extra...) {
			if rr.Header().Rrtype != dns.TypeOPT {
				got = append(got, dns.TypeToString[rr.Header().Rrtype]+" "+rr.Header().Name)
			}
		}
		want := []string{"CNAME alias.example.com.", "A static.example.com.", "SOA example.com."}
		if m.Rcode != dns.RcodeSuccess || !slices.Equal(got, want) {
			t.Errorf("%s: records %q, want %q:\n%v", network, got, want, m)
		}
	}
	if got := logs.get(); len(got) != 2 || !strings.Contains(got[0], "outside 0 glue {mail.example.com.") || !strings.Contains(got[0], "127.0.80.25") {
		t.Errorf("logs: %q", got)
	}
}
