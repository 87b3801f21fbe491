package daemon

import (
	"regexp"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestDNSListenerProfileSteps: a gtm listener acts on its dns profile's
// enable-dns-express, enable-gtm, use-local-bind, enable-cache with its
// cache, and unhandled-query-action, in BIG-IP's order (DNS Express,
// the wide IPs, the cache, the action, BIND), over UDP and TCP, with a
// real primary for DNS Express and a real name server behind the
// resolver cache's forward zone.
func TestDNSListenerProfileSteps(t *testing.T) {
	t.Parallel()
	startXFRPrimary(t, "127.67.2.53:5312", "", "", "example.net. 300 IN SOA ns1.example.net. h.example.net. 7 3600 600 86400 60\n"+
		"example.net. 300 IN NS ns1.example.net.\nns1.example.net. 300 IN A 127.67.2.53\nwww.example.net. 300 IN A 127.67.2.80\n")
	upstream := startDNSPoolMember(t, "127.67.2.54:5312", map[string]string{"a.fwd.test. A": "x 60 IN A 127.67.2.77"})
	x, s := dnsExpressEngine(t, "127.67.2.100")
	mustRun(t, s,
		"create ltm dns nameserver primary address 127.67.2.53 port 5312",
		"create ltm dns zone example.net dns-express-server primary",
		"create gtm datacenter dc1",
		"create gtm server s1 datacenter dc1 virtual-servers add { v1 { destination 127.67.2.5:80 } }",
		"create gtm pool a gp members add { s1:v1 }",
		"create gtm wideip a www.example.com pools add { gp }",
		"create gtm zone example.com definition { @ IN SOA ns1 hostmaster 1 3600 600 86400 300\n ns1 IN A 127.67.2.53\n static IN A 127.67.2.7 }",
		"create ltm dns cache resolver rc forward-zones replace-all-with { fwd.test { nameservers replace-all-with { 127.67.2.54:5312 { } } } }",
		"create ltm profile dns gp_dns",
		"create gtm listener gl_udp address 127.67.2.1 port 5312 ip-protocol udp profiles add { gp_dns }",
		"create gtm listener gl_tcp address 127.67.2.1 port 5312 ip-protocol tcp profiles add { gp_dns }",
	)
	waitZone(t, func() bool { return x.Zone("example.net").Stats().Loaded })
	const listener = "127.67.2.1:5312"
	steps := []struct {
		cmd   string // the profile's change before the queries
		name  string
		want  string
		asked int64 // the forward zone's server's queries after
	}{
		{"", "www.example.net.", "NOERROR aa 127.67.2.80", 0},
		{"", "www.example.com.", "NOERROR aa 127.67.2.5", 0},
		{"", "static.example.com.", "NOERROR aa 127.67.2.7", 0},
		{"", "elsewhere.test.", "REFUSED", 0},
		{"enable-dns-express no", "www.example.net.", "REFUSED", 0},
		{"enable-dns-express yes enable-gtm no", "www.example.com.", "NXDOMAIN aa ns:SOA", 0}, // BIND's zone
		{"enable-gtm yes use-local-bind no", "static.example.com.", "REFUSED", 0},
		{"", "www.example.com.", "NOERROR aa 127.67.2.5", 0},
		{"unhandled-query-action noerror", "elsewhere.test.", "NOERROR", 0},
		{"", "static.example.com.", "NOERROR", 0}, // BIND not asked
		{"unhandled-query-action reject", "elsewhere.test.", "REFUSED", 0},
		{"unhandled-query-action hint", "elsewhere.test.", "NOERROR ns:NS ns:NS ns:NS ns:NS ns:NS ns:NS ns:NS ns:NS ns:NS ns:NS ns:NS ns:NS ns:NS", 0},
		{"unhandled-query-action drop", "elsewhere.test.", "timeout", 0},
		{"", "www.example.net.", "NOERROR aa 127.67.2.80", 0}, // DNS Express still answers
		{"unhandled-query-action allow use-local-bind yes enable-cache yes cache rc", "a.fwd.test.", "NOERROR aa 127.67.2.77", 1},
		{"", "a.fwd.test.", "NOERROR aa 127.67.2.77", 1}, // the cache's
		{"", "static.example.com.", "NOERROR aa 127.67.2.7", 1},
		{"unhandled-query-action reject", "a.fwd.test.", "NOERROR aa 127.67.2.77", 1}, // the cache before the action
		{"", "b.fwd.test.", "REFUSED", 1},
	}
	for i, st := range steps {
		if st.cmd != "" {
			mustRun(t, s, "modify ltm profile dns gp_dns "+st.cmd)
		}
		for _, network := range []string{"udp", "tcp"} {
			got := xAsk(t, network, "127.67.2.61", listener, query(st.name, dns.TypeA))
			if strings.HasPrefix(got, "error") && strings.Contains(got, "timeout") {
				got = "timeout"
			}
			if got != st.want {
				t.Errorf("step %d (%s) %s %s: %q, want %q", i, st.cmd, network, st.name, got, st.want)
			}
		}
		if n := upstream.queries.Load(); n != st.asked {
			t.Errorf("step %d (%s): the forward zone's server got %d queries, want %d", i, st.cmd, n, st.asked)
		}
	}
	out, _ := run(t, s, "show ltm dns cache resolver rc")
	if !regexp.MustCompile(`(?m)Hits +[1-9]`).MatchString(out) {
		t.Errorf("show ltm dns cache resolver rc: want hits\n%s", out)
	}
	// Refused as on a virtual, nothing changed.
	if _, err := run(t, s, "modify ltm profile dns gp_dns cache none"); !strings.Contains(err, "enable-cache yes needs a cache") {
		t.Errorf("enable-cache yes without a cache: %q", err)
	}
	if got := xAsk(t, "udp", "127.67.2.61", listener, query("a.fwd.test.", dns.TypeA)); got != "NOERROR aa 127.67.2.77" {
		t.Errorf("after the refused change: %q", got)
	}
}

// TestDNSListenerProfileRefusals: a dns profile a virtual would be
// refused with is refused on a gtm listener, nothing changed.
func TestDNSListenerProfileRefusals(t *testing.T) {
	_, s := dnsExpressEngine(t, "127.67.3.100")
	mustRun(t, s,
		"create ltm profile dns nocache enable-cache yes",
		"create ltm profile dns badprefix dns64 secondary dns64-prefix 10.0.0.1",
	)
	for _, c := range []struct{ cmd, err string }{
		{"create gtm listener l1 address 127.67.3.1 port 5313 ip-protocol udp profiles add { nocache }", "gtm listener /Common/l1: profile /Common/nocache: enable-cache yes needs a cache"},
		{"create gtm listener l2 address 127.67.3.1 port 5313 ip-protocol udp profiles add { badprefix }", "is not an IPv6 address"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.err) {
			t.Errorf("%s: error %q, want %q", c.cmd, err, c.err)
		}
	}
	if out, _ := run(t, s, "list gtm listener"); strings.Contains(out, "gtm listener") {
		t.Errorf("a refused listener was kept:\n%s", out)
	}
}
