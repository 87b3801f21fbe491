package daemon

import (
	"strconv"
	"strings"
	"testing"
)

// TestRuleHAStatusCPU: real clients ask two virtual servers whose rule
// answers HA::status and cpu usage: a standalone device is active; in a
// sync-failover group a virtual on a floating address follows its
// traffic group's state here, one on a traffic-group-local-only address
// the device's; cpu usage is a percent.
func TestRuleHAStatusCPU(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm virtual-address 127.185.30.2 traffic-group traffic-group-local-only",
		"create ltm rule ha {\nwhen CLIENT_ACCEPTED {\n  TCP::respond \"[HA::status active] [HA::status standby] [cpu usage 5secs] [cpu usage 1min] [cpu usage 5mins]\\n\"\n  TCP::close\n}\n}",
		"create ltm virtual floating destination 127.185.30.1:20080 rules { ha }",
		"create ltm virtual local destination 127.185.30.2:20080 rules { ha }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	ask := func(addr string) (string, []int) {
		t.Helper()
		f := strings.Fields(askVS(t, addr, "x"))
		if len(f) != 5 {
			t.Fatalf("%s answered %q", addr, f)
		}
		var cpu []int
		for _, w := range f[2:] {
			n, err := strconv.Atoi(w)
			if err != nil || n < 0 || n > 100 {
				t.Fatalf("%s: cpu usage %q", addr, w)
			}
			cpu = append(cpu, n)
		}
		return f[0] + " " + f[1], cpu
	}
	for _, tc := range []struct {
		name            string
		float           *floatState
		floating, local string
	}{
		{"standalone", nil, "1 0", "1 0"},
		{"active for traffic-group-1", &floatState{active: map[string]bool{"traffic-group-1": true}}, "1 0", "1 0"},
		{"standby for traffic-group-1, active for tg2", &floatState{active: map[string]bool{"traffic-group-1": false, "tg2": true}}, "0 1", "1 0"},
		{"standby", &floatState{active: map[string]bool{}}, "0 1", "0 1"},
	} {
		// The virtuals keep serving: the state is read per connection,
		// as when a failover happens under running virtuals.
		e.float.Store(tc.float)
		if got, _ := ask("127.185.30.1:20080"); got != tc.floating {
			t.Errorf("%s: floating virtual answers %q, want %q", tc.name, got, tc.floating)
		}
		if got, _ := ask("127.185.30.2:20080"); got != tc.local {
			t.Errorf("%s: local-only virtual answers %q, want %q", tc.name, got, tc.local)
		}
	}
	e.float.Store(nil)
}

// TestRuleCloneKept: a rule's clone pool never stops a virtual server
// carrying traffic: on one openltm cannot clone from a rule (a dns
// profile's here), or in an event the virtual cannot start the copy in,
// the commit warns that the clone is skipped and the virtual runs; on a
// standard, an http and a UDP virtual, in CLIENT_ACCEPTED (and on http
// in HTTP_REQUEST, on a plain TCP one in SERVER_CONNECTED), it runs
// without a warning.
func TestRuleCloneKept(t *testing.T) {
	e, p := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool ids members add { 127.189.31.9:20001 }",
		"create ltm rule tap { when CLIENT_ACCEPTED { clone pool ids } }",
		"create ltm rule reqtap { when HTTP_REQUEST { clone pool ids } }",
		"create ltm rule late { when SERVER_CONNECTED { clone pool ids } }",
		"create ltm rule closed { when CLIENT_CLOSED { clone pool ids } }",
		"create net dns-resolver r1 forward-zones replace-all-with { . { nameservers replace-all-with { 127.197.31.53:20053 { } } } }",
		"create ltm profile http fwd proxy-type explicit explicit-proxy { dns-resolver r1 }",
		"create ltm rule dnstap { when DNS_REQUEST { clone pool ids } }",
		"create ltm rule dnslate { when DNS_RESPONSE { clone pool ids } }",
		"create ltm rule mqtap { when MQTT_CLIENT_INGRESS { clone pool ids } }",
		"create ltm rule mqsrv { when MQTT_SERVER_INGRESS { clone pool ids } }",
		"create ltm rule mqegr { when MQTT_CLIENT_EGRESS { clone pool ids } }",
		"create ltm rule mrin { when MR_INGRESS { clone pool ids } }",
		"create ltm rule mrout { when MR_EGRESS { clone pool ids } }",
		"create ltm rule srvdata { when SERVER_DATA { clone pool ids } }",
		"create ltm rule sockreq { when SOCKS_REQUEST { clone pool ids } }",
		"create ltm profile socks sp default-connect-handling allow",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, tc := range []struct {
		name, create string
		warn         string // the warning; "" none
	}{
		{"plain", "destination 127.189.31.1:20080 rules { tap }", ""},
		{"web", "destination 127.189.31.2:20080 profiles replace-all-with { tcp http } rules { tap reqtap }", ""},
		{"dgram", "destination 127.189.31.3:20053 ip-protocol udp profiles replace-all-with { udp } rules { tap }", ""},
		{"resolver", "destination 127.189.31.4:20053 ip-protocol udp profiles replace-all-with { udp dns } rules { tap }",
			"rule /Common/tap: clone pool in CLIENT_ACCEPTED is valid on BIG-IP but skipped here: openltm starts a rule's clone on this virtual server in DNS_REQUEST only, CLIENT_ACCEPTED does not run on a dns virtual server's queries"},
		{"resolvreq", "destination 127.189.31.7:20053 ip-protocol udp profiles replace-all-with { udp dns } rules { dnstap }", ""},
		{"resolvresp", "destination 127.189.31.8:20053 ip-protocol udp profiles replace-all-with { udp dns } rules { dnslate }",
			"rule /Common/dnslate: clone pool in DNS_RESPONSE is valid on BIG-IP but skipped here: openltm starts a rule's clone on this virtual server in DNS_REQUEST only"},
		{"resolvtcp", "destination 127.189.31.8:20053 profiles replace-all-with { tcp dns } rules { dnstap dnslate }", ""},
		{"fwd", "destination 127.197.31.1:23128 profiles replace-all-with { tcp fwd } rules { tap }", ""},
		{"media", "destination 127.197.31.3:20554 profiles replace-all-with { tcp rtsp } rules { tap }", ""},
		{"doh", "destination 127.197.31.4:20443 profiles replace-all-with { tcp http dns doh-server } rules { dnstap }", ""},
		{"dohpools", "destination 127.197.31.5:20443 profiles replace-all-with { tcp http dns doh-server } clone-pools replace-all-with { ids }", ""},
		{"dohproxy", "destination 127.202.31.7:20443 profiles replace-all-with { tcp http doh-proxy } clone-pools replace-all-with { ids } rules { dnstap }",
			"rule /Common/dnstap: clone pool on a DNS over HTTPS virtual server without a dns profile"},
		// The message gateways clone from a client message's events
		// and from the member's ingress (the member's messages), not
		// from its egress events; a standard virtual from SERVER_DATA;
		// socks from SOCKS_REQUEST.
		{"mqttmsg", "destination 127.214.31.11:21883 profiles replace-all-with { tcp mqtt } rules { mqtap late }", ""},
		{"mqttsrv", "destination 127.214.31.12:21883 profiles replace-all-with { tcp mqtt } rules { mqsrv }", ""},
		{"mqttegress", "destination 127.217.31.15:21883 profiles replace-all-with { tcp mqtt } rules { mqegr }",
			"rule /Common/mqegr: clone pool in MQTT_CLIENT_EGRESS is valid on BIG-IP but skipped here: openltm starts a rule's clone on this virtual server in CLIENT_ACCEPTED, MQTT_CLIENT_INGRESS, MQTT_CLIENT_DATA, MQTT_SERVER_INGRESS, MQTT_SERVER_DATA, LB_SELECTED, LB_FAILED or SERVER_CONNECTED only, the events over a message where it is read"},
		{"srvdata", "destination 127.214.31.13:20080 rules { srvdata }", ""},
		{"sockreq", "destination 127.214.31.14:21080 profiles replace-all-with { tcp sp } rules { sockreq }", ""},
		// Message routing over UDP: from a client message's ingress
		// events, not from the answers' egress.
		{"sipudp", "destination 127.217.31.16:25060 ip-protocol udp profiles replace-all-with { udp sipsession siprouter } rules { mrin }", ""},
		{"sipudpout", "destination 127.217.31.17:25060 ip-protocol udp profiles replace-all-with { udp sipsession siprouter } rules { mrout }",
			"rule /Common/mrout: clone pool in MR_EGRESS is valid on BIG-IP but skipped here: openltm starts a rule's clone on this virtual server in CLIENT_ACCEPTED, SIP_REQUEST or MR_INGRESS only, the events over a message where it is read"},
		// A doh-proxy's clone pools copy its queries: no warning.
		{"dohproxypools", "destination 127.202.31.8:20443 profiles replace-all-with { tcp http doh-proxy } clone-pools replace-all-with { ids }", ""},
		{"fwdlate", "destination 127.197.31.2:23128 profiles replace-all-with { tcp fwd } rules { reqtap }",
			"rule /Common/reqtap: clone pool in HTTP_REQUEST is valid on BIG-IP but skipped here: openltm starts a rule's clone on this virtual server in CLIENT_ACCEPTED only"},
		{"plainlate", "destination 127.189.31.5:20080 rules { late }", ""},
		{"plainclosed", "destination 127.202.31.5:20080 rules { closed }",
			"rule /Common/closed: clone pool in CLIENT_CLOSED is valid on BIG-IP but skipped here: openltm starts a rule's clone on this virtual server in CLIENT_ACCEPTED, CLIENT_DATA, LB_SELECTED, LB_FAILED, SERVER_CONNECTED or SERVER_DATA only"},
		// rtsp: the member's choice after the first request clones
		// from it (l4.bindMsg).
		{"medialate", "destination 127.202.31.6:20554 profiles replace-all-with { tcp rtsp } rules { late }", ""},
		{"weblate", "destination 127.189.31.6:20080 profiles replace-all-with { tcp http } rules { late }",
			"rule /Common/late: clone pool in SERVER_CONNECTED is valid on BIG-IP but skipped here: openltm starts a rule's clone on this virtual server in CLIENT_ACCEPTED, HTTP_REQUEST or HTTP_REQUEST_DATA only"},
	} {
		out, errText := run(t, s, "create ltm virtual "+tc.name+" "+tc.create)
		_, carries := p.Virtual("/Common/" + tc.name)
		if errText != "" || !carries {
			t.Errorf("%s: %q %q, carries traffic %v; want it running", tc.name, out, errText, carries)
			continue
		}
		if tc.warn == "" && (strings.Contains(out, "clone pool") || strings.Contains(out, "clone-pools")) || tc.warn != "" && !strings.Contains(out, tc.warn) {
			t.Errorf("%s: %q; want the warning %q", tc.name, out, tc.warn)
		}
	}
}
