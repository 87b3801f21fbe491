package daemon

import "testing"

// TestData0RTT: client-ssl's data-0rtt takes F5's values only, applies
// to an HTTP/3 virtual (warned of without session tickets) and is warned
// of on a TCP virtual, whose clients get no early data; server-ssl's is
// kept with a warning.
func TestData0RTT(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	runSteps(t, s, []step{
		{cmd: "create ltm pool p0 members add { 127.206.9.11:8080 }"},
		{cmd: "create ltm profile client-ssl cs_bad data-0rtt enabled", err: `"enabled" is not a valid value for "data-0rtt"`},
		{cmd: "create ltm profile server-ssl ss_bad data-0rtt enabled-with-anti-replay", err: `not a valid value`},
		{cmd: "create ltm profile client-ssl cs_0rtt data-0rtt enabled-with-anti-replay session-ticket enabled"},
		{cmd: "create ltm profile client-ssl cs_noticket data-0rtt enabled-no-anti-replay"},
		{cmd: "create ltm virtual v_h3 destination 127.206.9.1:24443 ip-protocol udp pool p0 profiles replace-all-with { udp { } quic { } http3 { } http { } cs_0rtt { context clientside } }"},
		{cmd: "create ltm virtual v_h3b destination 127.206.9.2:24443 ip-protocol udp pool p0 profiles replace-all-with { udp { } quic { } http3 { } http { } cs_noticket { context clientside } }",
			out: "profile /Common/cs_noticket (client-ssl) data-0rtt needs session-ticket enabled"},
		{cmd: "create ltm virtual v_tcp destination 127.206.9.3:24443 ip-protocol tcp pool p0 profiles replace-all-with { tcp { } http { } cs_0rtt { context clientside } }",
			out: "data-0rtt enabled-with-anti-replay is taken only from HTTP/3 clients"},
		{cmd: "create ltm profile server-ssl ss_0rtt data-0rtt enabled", out: "data-0rtt"},
	})
}
