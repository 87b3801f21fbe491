package daemon

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane"
)

// TestAnyPortKept: what openltm does not serve on every port (a
// Multipath TCP listener) and an ip-forward virtual on a given port (which
// would forward to its own listener) are kept with a warning saying why;
// none of them attaches the steering (TCP and UDP virtuals on every port
// are in dataplane's TestAnyPort and TestAnyPortUDP, in a namespace of
// their own, and the anyport transcripts).
func TestAnyPortKept(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, tc := range []struct{ cmd, want string }{
		{"create ltm profile tcp tcp_mp mptcp enabled", ""},
		{"create ltm virtual v_mp destination 127.212.4.1:any profiles replace-all-with { tcp_mp }",
			"Warning: ltm virtual /Common/v_mp: destination /Common/127.212.4.1:0 listens on every port: a Multipath TCP listener (tcp profile mptcp) cannot take the connections of every port; kept, and it carries no traffic"},
		{"create ltm virtual v_fwd80 destination 127.212.4.3:80 ip-forward",
			"Warning: ltm virtual /Common/v_fwd80: an ip-forward host virtual on one port or a port list would forward to its own listener: openltm forwards on every port, or on a network virtual's ports (mask); kept"},
	} {
		out, errText := run(t, s, tc.cmd)
		if errText != "" || !strings.Contains(out, tc.want) || tc.want == "" && out != "" {
			t.Errorf("%s:\n%q %q\nwant %q", tc.cmd, out, errText, tc.want)
		}
	}
	if out, _ := run(t, s, "list ltm virtual v_fwd80"); !strings.Contains(out, "    ip-forward\n") {
		t.Errorf("list: %s", out)
	}
}

// TestAnyPortHTTPServed: an http virtual on every port, with
// one-connect and a rule, an mblb one, an ftp one, a udp one with a dns
// profile, an ip-forward udp one, a sip one and an iiop one are served, with no warning
// (where this kernel and process can steer every port; otherwise kept,
// saying why). Their traffic is dataplane's TestAnyPortHTTP, in a
// namespace of its own, and the anyport_http transcript; the virtuals
// are deleted at once, which detaches the steering.
func TestAnyPortHTTPServed(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, cmd := range []string{
		"create ltm pool p_any members replace-all-with { 127.233.4.11:any }",
		"create ltm rule r_port { when HTTP_REQUEST { HTTP::header insert X-Port [TCP::local_port] } }",
	} {
		if out, errText := run(t, s, cmd); errText != "" || out != "" {
			t.Fatalf("%s: %q %q", cmd, out, errText)
		}
	}
	why := dataplane.AnyPortSupport()
	for _, cmd := range []string{
		"create ltm virtual v_http destination 127.233.4.1:any pool p_any rules { r_port } profiles replace-all-with { tcp { } http { } oneconnect { } }",
		"create ltm virtual v_mblb destination 127.233.4.2:any pool p_any profiles replace-all-with { tcp { } mblb { } }",
		"create ltm virtual v_ftp destination 127.233.4.3:any pool p_any profiles replace-all-with { tcp { } ftp { } }",
		"create ltm virtual v_dns destination 127.233.4.4:any ip-protocol udp pool p_any profiles replace-all-with { udp { } dns { } }",
		"create ltm virtual v_udpfwd destination 127.233.4.5:any ip-protocol udp ip-forward profiles replace-all-with { udp { } }",
		"create ltm virtual v_sip destination 127.233.4.6:any pool p_any profiles replace-all-with { tcp { } mblb { } sip { } }",
		"create ltm virtual v_iiop destination 127.233.4.7:any pool p_any profiles replace-all-with { tcp { } iiop { } }",
	} {
		out, errText := run(t, s, cmd)
		switch {
		case errText != "":
			t.Errorf("%s: %s", cmd, errText)
		case why == nil && out != "":
			t.Errorf("%s: %q, want no warning", cmd, out)
		case why != nil && !strings.Contains(out, "which openltm cannot do here"):
			t.Errorf("%s: %q, want kept for %v", cmd, out, why)
		}
	}
	for _, cmd := range []string{"delete ltm virtual v_http", "delete ltm virtual v_mblb", "delete ltm virtual v_ftp", "delete ltm virtual v_dns", "delete ltm virtual v_udpfwd", "delete ltm virtual v_sip", "delete ltm virtual v_iiop"} {
		if _, errText := run(t, s, cmd); errText != "" {
			t.Errorf("%s: %s", cmd, errText)
		}
	}
}

// TestVirtualMask: a mask shorter than the host's makes a network
// virtual, served on every port or on its port (kept, saying why, where
// the steering cannot run here); a mask that is none, or a destination with host bits under it,
// is refused and changes nothing (a network virtual on every port is in
// dataplane's TestAnyPortNetwork and the anyport_network transcript).
func TestVirtualMask(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	net80 := "" // served: no warning
	if err := dataplane.AnyPortSupport(); err != nil {
		net80 = "Warning: ltm virtual /Common/v_net80: destination /Common/127.249.4.0:30080 mask 255.255.255.0 takes every address of its network, which openltm cannot do here"
	}
	if out, errText := run(t, s, "create ltm virtual v_net80 destination 127.249.4.0:30080 mask 255.255.255.0"); errText != "" || net80 == "" && out != "" || !strings.Contains(out, net80) {
		t.Errorf("v_net80: %q %q, want %q", out, errText, net80)
	}
	for _, tc := range []struct{ cmd, out, err string }{
		{"create ltm virtual v_bits destination 127.215.4.9:any mask 255.255.255.0", "", "ltm virtual /Common/v_bits: destination /Common/127.215.4.9:0 has host bits set under mask 255.255.255.0 (a network virtual's address is its network's, 127.215.4.0)"},
		{"create ltm virtual v_holes destination 127.215.0.0:any mask 255.0.255.0", "", "mask 255.0.255.0 is not a network mask"},
		{"create ltm virtual v_v6 destination 127.215.4.0:any mask ffff:ffff::", "", "mask ffff:ffff:: is not a network mask"},
	} {
		out, errText := run(t, s, tc.cmd)
		if tc.err == "" && (errText != "" || !strings.Contains(out, tc.out)) || tc.err != "" && !strings.Contains(errText, tc.err) {
			t.Errorf("%s:\n%q %q\nwant %q %q", tc.cmd, out, errText, tc.out, tc.err)
		}
	}
	for _, name := range []string{"v_bits", "v_holes", "v_v6"} {
		if out, _ := run(t, s, "list ltm virtual "+name); strings.Contains(out, "destination") {
			t.Errorf("%s was created: %s", name, out)
		}
	}
}
