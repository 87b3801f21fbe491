package daemon

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/ipfix/ipfixtest"
)

// ipfixRule sends one IPFIX record per connection, as F5's example does:
// the destination and the template made once, in static variables; a
// message per connection, filled in two events.
const ipfixRule = `create ltm rule ipfix_flows {
when RULE_INIT {
  set static::ipfix_dest ""
  set static::ipfix_tmpl ""
}
when CLIENT_ACCEPTED {
  if { $static::ipfix_dest eq "" } {
    set static::ipfix_dest [IPFIX::destination open -publisher /Common/ipfix_pub]
  }
  if { $static::ipfix_tmpl eq "" } {
    set static::ipfix_tmpl [IPFIX::template create "flowStartSeconds sourceIPv4Address sourceTransportPort destinationIPv4Address destinationTransportPort protocolIdentifier appLabel appLabel"]
  }
  set msg [IPFIX::msg create $static::ipfix_tmpl]
  IPFIX::msg set $msg flowStartSeconds [clock seconds]
  IPFIX::msg set $msg sourceIPv4Address [IP::client_addr]
  IPFIX::msg set $msg sourceTransportPort [TCP::client_port]
  IPFIX::msg set $msg appLabel -pos 1 "[virtual name]"
}
when SERVER_CONNECTED {
  IPFIX::msg set $msg destinationIPv4Address [IP::server_addr]
  IPFIX::msg set $msg destinationTransportPort [TCP::server_port]
  IPFIX::msg set $msg protocolIdentifier 6
  IPFIX::msg set $msg appLabel "app"
  IPFIX::destination send $static::ipfix_dest $msg
}
}`

// TestIPFIXFromARule: a rule on a standard virtual sends a record per
// connection through a publisher's ipfix destination to a collector
// over UDP; each field decodes to the connection's, the custom element
// (sys ipfix element) by its enterprise number.
func TestIPFIXFromARule(t *testing.T) {
	_, s := publisherEngine(t)
	c, _ := ipfixtest.UDP(t, "127.142.2.30:4739")
	labelServer(t, "127.142.2.21:9000", "S1 Response")
	mustRun(t, s,
		"create ltm pool app members add { 127.142.2.21:9000 }",
		"create ltm pool collectors members add { 127.142.2.30:4739 }",
		"create sys ipfix element appLabel data-type string enterprise-id 3375 id 900",
		"create sys log-config destination ipfix ipfix_dest pool-name collectors template-retransmit-interval 60",
		"create sys log-config publisher ipfix_pub destinations replace-all-with { ipfix_dest }",
		ipfixRule,
		"create ltm virtual vs_ipfix destination 127.142.2.20:9000 pool app source-address-translation { type automap } rules { ipfix_flows }",
	)
	for i := range 3 {
		if a := askVS(t, "127.142.2.20:9000", fmt.Sprint("C", i)); a != "S1 Response" {
			t.Fatalf("virtual answered %q", a)
		}
	}
	eventually(t, 10*time.Second, "3 records at the collector", func() bool {
		m, _ := c.Snapshot()
		return ipfixtest.Records(m) == 3
	})
	msgs, errs := c.Snapshot()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	fs := msgs[0].Templates[256]
	if len(fs) != 8 || fs[6].Enterprise != 3375 || fs[6].ID != 900 || fs[6].Length != 0xFFFF {
		t.Fatalf("template %+v", fs)
	}
	for _, m := range msgs {
		for _, r := range m.Records {
			if src := netip.AddrFrom4([4]byte(r.Fields[1])); src.String() != "127.0.0.1" {
				t.Errorf("source %s", src)
			}
			if port := binary.BigEndian.Uint16(r.Fields[2]); port == 0 {
				t.Errorf("source port 0")
			}
			if dst := netip.AddrFrom4([4]byte(r.Fields[3])); dst.String() != "127.142.2.21" {
				t.Errorf("destination %s", dst)
			}
			if port := binary.BigEndian.Uint16(r.Fields[4]); port != 9000 {
				t.Errorf("destination port %d", port)
			}
			if r.Fields[5][0] != 6 || string(r.Fields[6]) != "app" || string(r.Fields[7]) != "/Common/vs_ipfix" {
				t.Errorf("protocol %d, labels %q %q", r.Fields[5][0], r.Fields[6], r.Fields[7])
			}
			if at := int64(binary.BigEndian.Uint32(r.Fields[0])); time.Since(time.Unix(at, 0)).Abs() > time.Hour {
				t.Errorf("flowStartSeconds %d", at)
			}
		}
	}

	// transport-profile tcp: the next records go over a TCP connection
	// to the pool's new collector, the template first.
	tc, _, conns := ipfixtest.TCP(t, "127.142.2.31:4739")
	mustRun(t, s,
		"modify ltm pool collectors members replace-all-with { 127.142.2.31:4739 }",
		"modify sys log-config destination ipfix ipfix_dest transport-profile tcp",
	)
	for i := range 2 {
		askVS(t, "127.142.2.20:9000", fmt.Sprint("T", i))
	}
	eventually(t, 10*time.Second, "2 records over TCP", func() bool {
		m, _ := tc.Snapshot()
		return ipfixtest.Records(m) == 2
	})
	msgs, errs = tc.Snapshot()
	if len(errs) > 0 || conns() != 1 || len(msgs[0].Templates[256]) != 8 {
		t.Fatalf("errors %v, %d connections, first message's templates %v", errs, conns(), msgs[0].Templates)
	}
}

// TestIPFIXConfigErrors: what cannot export is refused, and nothing
// changes; an IPFIX::destination open naming a publisher without an
// ipfix destination is the rule's error.
func TestIPFIXConfigErrors(t *testing.T) {
	_, s := publisherEngine(t)
	mustRun(t, s, "create ltm pool collectors members add { 127.142.2.40:4739 }")
	for _, c := range []struct{ cmd, err string }{
		{"create sys log-config destination ipfix no_pool", "pool-name is required"},
		{"create sys log-config destination ipfix bad_tp pool-name collectors transport-profile http", "transport-profile http: must be an ltm profile tcp or udp"},
		{"create sys ipfix element noType id 5 enterprise-id 3375", "data-type is required"},
		{"create sys ipfix element badSize data-type unsigned16 size 4 id 5 enterprise-id 3375", "a unsigned16 takes at most 2 octets"},
		{"create sys ipfix element octetDeltaCount data-type unsigned64 id 1 enterprise-id 3375", "IANA element"},
		{"create sys log-config destination splunk lonely", "forward-to is required"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.err) {
			t.Errorf("%s: error %q, want %q", c.cmd, err, c.err)
		}
	}
	if out, _ := run(t, s, "list sys log-config destination ipfix"); strings.TrimSpace(out) != "" {
		t.Fatalf("a refused destination was kept:\n%s", out)
	}
	mustRun(t, s, "create sys log-config destination ipfix tcp_dest pool-name collectors transport-profile tcp protocol-version netflow-v9")
}

// TestSplunkArcSightFromARule: HSL::send through a publisher with a
// splunk and an arcsight destination reaches their forward-to
// destinations reformatted.
func TestSplunkArcSightFromARule(t *testing.T) {
	_, s := publisherEngine(t)
	sink := &lineSink{lines: map[string][]string{}}
	sink.udp(t, "127.142.2.51:5514")
	labelServer(t, "127.142.2.41:9000", "S1 Response")
	mustRun(t, s,
		"create ltm pool app members add { 127.142.2.41:9000 }",
		"create ltm pool siem members add { 127.142.2.51:5514 }",
		"create sys log-config destination remote-high-speed-log siem_hsl pool-name siem protocol udp",
		"create sys log-config destination splunk to_splunk forward-to siem_hsl",
		"create sys log-config destination arcsight to_arcsight forward-to siem_hsl",
		"create sys log-config publisher siem_pub destinations replace-all-with { to_splunk to_arcsight }",
		"create ltm rule siem_log {\nwhen CLIENT_ACCEPTED {\n  HSL::send [HSL::open -publisher siem_pub] \"<190>client=[IP::client_addr] vs=\\\"[virtual name]\\\"\"\n}\n}",
		"create ltm virtual vs_siem destination 127.142.2.40:9000 pool app rules { siem_log }",
	)
	askVS(t, "127.142.2.40:9000", "C1")
	eventually(t, 10*time.Second, "two lines at the SIEM", func() bool { return len(sink.get("127.142.2.51:5514")) == 2 })
	got := strings.Join(sink.get("127.142.2.51:5514"), "\n")
	for _, re := range []string{
		`(?m)^<190>date_time="[A-Z][a-z]{2} \d\d \d{4} \d\d:\d\d:\d\d",hostname="[^"]+",severity="info",client="127\.0\.0\.1",vs="/Common/vs_siem"$`,
		`(?m)^<190>CEF:0\|F5\|Local Traffic Manager\|[\d.]+\|0\|Log Message\|3\|rt=\d+ dvchost=\S+ client=127\.0\.0\.1 vs=/Common/vs_siem$`,
	} {
		if !regexp.MustCompile(re).MatchString(got) {
			t.Errorf("no line matches %s in:\n%s", re, got)
		}
	}
}
