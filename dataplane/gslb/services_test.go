package gslb

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/gslb/gslbtest"
	"github.com/openltm/openltm/rules"
)

// TestListenerRuleServices: a gtm listener's rule skips the wide IPs for
// one query (DNS::disable gtm) and reads what answered (DNS::origin) and
// whether the name is a wide IP (DNS::is_wideip); the services openltm
// acts on for virtuals only are Tcl errors there, which drop the query.
func TestListenerRuleServices(t *testing.T) {
	var logs ruleLog
	svc := compileRule(t, "/Common/svc", `
when DNS_REQUEST {
  switch [IP::client_addr] {
    127.92.0.101 { DNS::disable gtm }
    127.92.0.102 { DNS::disable gtm ; DNS::enable gtm }
    127.92.0.103 { DNS::last_act reject }
    127.92.0.104 { DNS::disable cache }
  }
}
when DNS_RESPONSE {
  DNS::additional insert "origin.rule. 0 IN TXT [DNS::origin] [DNS::is_wideip [DNS::question name]] [DNS::log]"
}`)
	listen := freeAddr(t, "127.92.0.40")
	newServer(t, ruleConfig(listen, nil, []*rules.Rule{svc}, &logs), Options{})
	for _, network := range []string{"udp", "tcp"} {
		for _, tt := range []struct {
			client, name string
			wide         bool   // the wide IP's pools answered
			txt          string // what the rule added; "" for no answer
		}{
			{"127.92.0.100", wideName, true, "GTM_BUILD 1 0"},
			{"127.92.0.101", wideName, false, "SERVER 1 0"},
			{"127.92.0.102", wideName, true, "GTM_BUILD 1 0"},
			{"127.92.0.100", "a.internal.example.com.", false, "SERVER 0 0"},
			{"127.92.0.103", wideName, false, ""},
			{"127.92.0.104", wideName, false, ""},
		} {
			m, err := gslbtest.Query(netip.MustParseAddr(tt.client), listen, network, tt.name, dns.TypeA, time.Second)
			if tt.txt == "" {
				if err == nil && network == "udp" {
					t.Errorf("%s from %s over %s: answered %v, want nothing", tt.name, tt.client, network, m)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s from %s over %s: %v", tt.name, tt.client, network, err)
			}
			if wide := len(gslbtest.Addrs(m)) > 0; wide != tt.wide {
				t.Errorf("%s from %s over %s: the wide IP answered %v, want %v: %v", tt.name, tt.client, network, wide, tt.wide, m)
			}
			var txt string
			for _, rr := range m.Extra {
				if x, ok := rr.(*dns.TXT); ok {
					txt = strings.Join(x.Txt, " ")
				}
			}
			if txt != tt.txt {
				t.Errorf("%s from %s over %s: the rule saw %q, want %q", tt.name, tt.client, network, txt, tt.txt)
			}
		}
	}
	var errs int
	for _, l := range logs.get() {
		if strings.Contains(l, "not on a gtm listener") {
			errs++
		}
	}
	if errs == 0 {
		t.Errorf("no Tcl error logged for DNS::last_act and DNS::disable cache on a listener: %q", logs.get())
	}
}
