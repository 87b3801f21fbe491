package daemon

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestDHCPProfileTranslated: a UDP virtual's dhcpv4 or dhcpv6 profile
// reaches the dataplane with its mode, idle-timeout, max-hops and relay
// options; the built-in *_fwd profiles forward; settings openltm keeps
// only warn.
func TestDHCPProfileTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.118.3.11:67 }",
		"create ltm profile dhcpv4 d4 defaults-from dhcpv4 max-hops 2 idle-timeout 9 relay-agent-id { add true remove true suboption { id1 1 value1 port7 id2 2 value2 relay1 } }",
		"create ltm profile dhcpv6 d6 remote-id-option { add true enterprise-number 3561 value r1 } subscriber-id-option { add true value sub9 } idle-timeout indefinite",
		"create ltm virtual v4 destination 127.118.3.1:67 ip-protocol udp pool p profiles replace-all-with { udp { } d4 { } }",
		"create ltm virtual v4fwd destination 127.118.3.2:67 ip-protocol udp pool p profiles replace-all-with { udp { } dhcpv4_fwd { } }",
		"create ltm virtual v6 destination 127.118.3.3:547 ip-protocol udp pool p profiles replace-all-with { udp { } d6 { } }",
		"create ltm virtual v6b destination 127.118.3.4:547 ip-protocol udp pool p profiles replace-all-with { udp { } dhcpv6 { } }",
	} {
		if out, err := run(t, s, c); err != "" || strings.Contains(out, "kept") {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	out, _ := run(t, s, "modify ltm profile dhcpv4 d4 default-lease-time 600 ttl-value 3")
	for _, name := range []string{"default-lease-time", "ttl-value"} {
		if !strings.Contains(out, `property "`+name+`" is kept`) {
			t.Errorf("no warning for %s:\n%s", name, out)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	d4 := dc.Virtuals["/Common/v4"].DHCP
	if d4 == nil || d4.V6 || d4.Forwarding || d4.MaxHops != 2 || d4.Idle != 9*time.Second || !d4.StripAgentInfo ||
		!bytes.Equal(d4.AgentInfo, []byte("\x01\x05port7\x02\x06relay1")) {
		t.Errorf("v4: %+v", d4)
	}
	if f := dc.Virtuals["/Common/v4fwd"].DHCP; f == nil || !f.Forwarding || f.MaxHops != 4 || f.AgentInfo != nil || f.Idle != 60*time.Second {
		t.Errorf("v4fwd: %+v", f)
	}
	d6 := dc.Virtuals["/Common/v6"].DHCP
	if d6 == nil || !d6.V6 || d6.Forwarding || d6.Idle != dhcpIndefinite || len(d6.V6Options) != 2 ||
		d6.V6Options[0].Code != 37 || !bytes.Equal(d6.V6Options[0].Data, []byte("\x00\x00\x0d\xe9r1")) ||
		d6.V6Options[1].Code != 38 || string(d6.V6Options[1].Data) != "sub9" {
		t.Errorf("v6: %+v", d6)
	}
	if b := dc.Virtuals["/Common/v6b"].DHCP; b == nil || !b.V6 || len(b.V6Options) != 0 {
		t.Errorf("v6b: %+v", b)
	}
}

// TestDHCPProfileRefused: a dhcp profile needs a udp profile, one of
// dhcpv4 and dhcpv6, and no sip, radius or tftp profile beside it; BIG-IP's
// bad values are refused as typed.
func TestDHCPProfileRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	if _, err := run(t, s, "create ltm pool p members add { 127.118.3.11:67 }"); err != "" {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd, want string
	}{
		{"create ltm virtual v_tcp destination 127.118.3.5:67 pool p profiles replace-all-with { tcp { } dhcpv4 { } }", "(dhcpv4) requires a udp profile"},
		{"create ltm virtual v_both destination 127.118.3.6:67 ip-protocol udp pool p profiles replace-all-with { udp { } dhcpv4 { } dhcpv6 { } }", "cannot be used with dhcpv4 profile /Common/dhcpv4"},
		{"create ltm virtual v_rad destination 127.118.3.7:67 ip-protocol udp pool p profiles replace-all-with { udp { } dhcpv4 { } radiusLB { } }", "cannot be used with radius profile /Common/radiusLB"},
		{"create ltm virtual v_tftp destination 127.118.3.8:67 ip-protocol udp pool p profiles replace-all-with { udp { } dhcpv6 { } tftp { } }", "cannot be used with tftp profile /Common/tftp"},
	} {
		_, err := run(t, s, c.cmd)
		if !strings.Contains(err, c.want) {
			t.Errorf("%s: error %q, want one saying %q", c.cmd, err, c.want)
		}
		if out, err := run(t, s, "list ltm virtual "+strings.Fields(c.cmd)[3]); err == "" {
			t.Errorf("the refused virtual exists:\n%s", out)
		}
	}
	for _, c := range []string{
		"create ltm profile dhcpv4 bad1 mode proxy",
		"create ltm profile dhcpv4 bad2 max-hops 300",
		"create ltm profile dhcpv4 bad3 relay-agent-id { add maybe }",
		"create ltm profile dhcpv4 bad4 ttl-dec-value by-3",
		"create ltm profile dhcpv6 bad5 max-hops 3",
		"create ltm profile dhcpv4 bad6 idle-timeout soon",
	} {
		if _, err := run(t, s, c); err == "" {
			t.Errorf("%s was taken", c)
		}
	}
}
