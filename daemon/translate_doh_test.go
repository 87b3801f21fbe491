package daemon

import (
	"strings"
	"testing"
)

// TestDoHRefusals: the profile stack a doh profile needs, and the DoH
// listeners' checks; what is refused changes nothing.
func TestDoHRefusals(t *testing.T) {
	e, _ := dnsProfileEngine(t, false)
	s := e.NewSession("admin").(*Session)
	mustRun(t, s, "create ltm pool dns_pool", "create ltm virtual taken destination 127.171.20.1:8443 profiles add { tcp http dns doh-server } pool dns_pool")
	for _, c := range []struct{ cmd, err string }{
		{"create ltm virtual v1 destination 127.171.20.2:443 profiles add { tcp http doh-server } pool dns_pool", "profile /Common/doh-server (doh-server) requires a dns profile on the virtual server (/Common/v1)"},
		{"create ltm virtual v2 destination 127.171.20.2:443 profiles add { tcp dns doh-proxy } pool dns_pool", "profile /Common/doh-proxy (doh-proxy) requires an http profile on the virtual server (/Common/v2)"},
		{"create ltm virtual v3 destination 127.171.20.2:443 ip-protocol udp profiles add { udp http dns doh-server } pool dns_pool", "needs ip-protocol tcp"},
		{"create ltm virtual v4 destination 127.171.20.2:443 profiles add { tcp http dns doh-server doh-proxy } pool dns_pool", "cannot be used with doh-server profile /Common/doh-server"},
		{"create gtm listener-doh-server l1 address 127.171.20.3 profiles add { tcp http dns }", "gtm listener-doh-server /Common/l1 requires a doh-server profile in its profiles"},
		{"create gtm listener-doh-server taken address 127.171.20.3 profiles add { tcp http dns doh-server }", "ltm virtual /Common/taken exists"},
	} {
		_, err := run(t, s, c.cmd)
		if !strings.Contains(err, c.err) {
			t.Errorf("%s: error %q, want %q", c.cmd, err, c.err)
		}
	}
	if out, _ := run(t, s, "list ltm virtual"); strings.Count(out, "ltm virtual ") != 1 {
		t.Errorf("a refused virtual was kept:\n%s", out)
	}
	if out, _ := run(t, s, "list gtm listener-doh-server"); strings.Contains(out, "listener-doh-server") {
		t.Errorf("a refused listener was kept:\n%s", out)
	}
	// The http profile's own settings are not used: said.
	mustRun(t, s, "create ltm profile http http_xff insert-xforwarded-for enabled")
	out, err := run(t, s, "create ltm virtual v6 destination 127.171.20.4:8080 profiles add { tcp http_xff doh-proxy } pool dns_pool")
	if err != "" || !strings.Contains(out, "profile /Common/http_xff (http): insert-xforwarded-for not used on a DNS over HTTPS virtual") {
		t.Errorf("http settings on a DoH virtual: out %q, error %q", out, err)
	}
	// doh-proxy with server-ssl (BIG-IP's DoH-to-DoH proxy): served, no
	// warning.
	out, err = run(t, s, "create ltm virtual v5 destination 127.171.20.2:443 profiles add { tcp http doh-proxy serverssl } pool dns_pool")
	if err != "" || strings.Contains(out, "not served") || strings.Contains(out, "carries no traffic") {
		t.Errorf("doh-proxy with server-ssl: out %q, error %q", out, err)
	}
	// An httprouter profile's own settings are not used either: said.
	mustRun(t, s, "create ltm profile httprouter hr max-pending-messages 100")
	out, err = run(t, s, "create ltm virtual v7 destination 127.171.20.5:443 profiles add { tcp http http2 clientssl hr doh-proxy serverssl } pool dns_pool")
	if err != "" || !strings.Contains(out, "profile /Common/hr (httprouter): max-pending-messages not used on a DNS over HTTPS virtual") {
		t.Errorf("httprouter settings on a DoH virtual: out %q, error %q", out, err)
	}
}

// TestDoHProxyServerSSLEvents: a doh-proxy's member connections are the
// virtual's, shared by its clients, and run no rule events: a rule's
// SERVERSSL_CLIENTHELLO_SEND and SERVERSSL_HANDSHAKE on such a virtual
// are kept, and the commit says they do not run.
func TestDoHProxyServerSSLEvents(t *testing.T) {
	e, _ := dnsProfileEngine(t, false)
	s := e.NewSession("admin").(*Session)
	runSteps(t, s, []step{
		{cmd: "create ltm pool doh_members members add { 127.206.21.11:24443 }"},
		{cmd: "create ltm rule r_member { when SERVERSSL_CLIENTHELLO_SEND { log local0. hello }\n when SERVERSSL_HANDSHAKE { log local0. [SSL::cipher name] } }"},
		{cmd: "create ltm virtual v_proxy destination 127.206.21.1:24443 profiles add { tcp http doh-proxy serverssl { context serverside } } pool doh_members rules { r_member }",
			out: "the rules' [SERVERSSL_CLIENTHELLO_SEND SERVERSSL_HANDSHAKE] events do not run on a DNS over HTTPS virtual"},
	})
}
