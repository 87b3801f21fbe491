package daemon

import (
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/dataplane/monitor"
	"github.com/openltm/openltm/objects"
)

// gtmConfig reads bigip.conf text over the built-ins, as a load does.
func gtmConfig(t *testing.T, text string) *objects.Config {
	t.Helper()
	s := objects.Default
	cfg := s.Builtins()
	objs, err := s.ReadConfig("test.conf", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		cfg.Put(o)
	}
	if err := cfg.Complete(s); err != nil {
		t.Fatal(err)
	}
	return cfg
}

const gtmBase = `
gtm datacenter /Common/dc1 { }
gtm datacenter /Common/dc2 { disabled }
gtm link /Common/isp1 { datacenter /Common/dc1 uplink-address 127.0.119.1 limit-max-total-bps 1000 limit-max-total-bps-status enabled limit-max-inbound-bps 50 }
gtm server /Common/lc1 {
    datacenter /Common/dc1
    addresses { 127.0.119.10 { device-name lc1 translation 10.0.0.1 } }
    limit-max-connections 100
    limit-max-connections-status enabled
    limit-max-bps 9000
    limit-max-bps-status enabled
    limit-max-pps 70
    monitor /Common/tcp
    virtual-servers {
        vs1 { destination 127.0.119.11:80 link /Common/isp1 }
        vs2 { destination 127.0.119.12:80 monitor none limit-max-connections 5 limit-max-connections-status enabled disabled }
    }
}
gtm pool a /Common/p1 {
    load-balancing-mode lowest-round-trip-time
    alternate-mode topology
    fallback-mode fallback-ip
    fallback-ip 127.0.119.99
    max-answers-returned 2
    ttl 60
    qos-rtt 10
    qos-vs-score 4
    manual-resume enabled
    min-members-up-mode percent
    min-members-up-value 50
    dynamic-ratio enabled
    qos-hops 2
    limit-max-connections 500
    limit-max-connections-status enabled
    limit-max-pps 70
    monitor /Common/http
    members {
        /Common/lc1:vs1 { member-order 1 ratio 3 }
        /Common/lc1:vs2 { member-order 0 disabled monitor none }
    }
}
gtm wideip a /Common/www.example.com {
    aliases { web.example.com *.shop.example.com }
    pool-lb-mode global-availability
    pools { /Common/p1 { order 0 ratio 2 } }
    persistence enabled
    ttl-persistence 600
    persist-cidr-ipv4 24
    last-resort-pool p1
    topology-prefer-edns0-client-subnet enabled
    load-balancing-decision-log-verbosity { pool-selection pool-member-traversal }
}
gtm region /Common/r1 { region-members { subnet 127.0.118.0/24 { } not pool /Common/p1 { } state "US/New York" { } } }
gtm topology ldns: region /Common/r1 server: subnet 127.0.119.0/24 { order 2 score 50 }
gtm topology ldns: not state "US/New Hampshire" server: subnet 127.0.119.0/24 { order 3 score 10 }
gtm listener /Common/l1 { address 127.0.119.53 port 5353 }
gtm zone /Common/example.com { definition {
@ IN SOA ns1 hostmaster 1 3600 600 86400 300
ns1 IN A 127.0.119.53
} }
gtm global-settings metrics { ldns-probe-port 5354 path-ttl 600 ldns-probe-protocols { icmp tcp } }
gtm global-settings load-balancing { topology-longest-match no topology-allow-zero-scores no }
gtm global-settings general { static-persist-cidr-ipv4 24 }
`

// monitorOf is what a test compares of a compiled GSLB monitor.
func monitorOf(m gslb.Monitor) []any {
	if m.Spec == nil {
		return nil
	}
	return []any{m.Spec.Name, m.Spec.Type, m.Spec.Interval, m.Spec.Timeout, m.Spec.Send}
}

func withoutMonitors(ms []gslb.PoolMember) []gslb.PoolMember {
	out := append([]gslb.PoolMember(nil), ms...)
	for i := range out {
		out[i].Monitor = gslb.Monitor{}
	}
	return out
}

func TestTranslateGSLB(t *testing.T) {
	gc, skipped, err := TranslateGSLB(objects.Default, gtmConfig(t, gtmBase))
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 0 {
		t.Fatalf("skipped: %v", skipped)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"dc2 disabled", gc.Datacenters["/Common/dc2"].Disabled, true},
		{"link datacenter", gc.Links["/Common/isp1"].Datacenter, "/Common/dc1"},
		{"link prober", gc.Links["/Common/isp1"].Prober, netip.MustParseAddr("127.0.119.1")},
		{"link total limit", gc.Links["/Common/isp1"].LimitTotalBps, int64(1000)},
		{"link inbound limit off", gc.Links["/Common/isp1"].LimitInboundBps, int64(0)},
		{"server addresses (no translation)", gc.Servers["/Common/lc1"].Addresses, []netip.Addr{netip.MustParseAddr("127.0.119.10")}},
		{"server limit", gc.Servers["/Common/lc1"].LimitMaxConnections, int64(100)},
		{"vs1 destination", gc.Servers["/Common/lc1"].VirtualServers[0].Destination, netip.MustParseAddrPort("127.0.119.11:80")},
		{"vs1 link", gc.Servers["/Common/lc1"].VirtualServers[0].Link, "/Common/isp1"},
		{"vs1 monitor from server (gtm tcp)", monitorOf(gc.Servers["/Common/lc1"].VirtualServers[0].Monitor), []any{"/Common/tcp", monitor.Type("tcp"), 30 * time.Second, 120 * time.Second, ""}},
		{"pool monitor on vs1 (gtm http)", monitorOf(gc.Pools[gslb.Key(gslb.TypeA, "/Common/p1")].Members[0].Monitor), []any{"/Common/http", monitor.Type("http"), 30 * time.Second, 120 * time.Second, "GET /\r\n"}},
		{"qos weights (the rest BIG-IP's defaults)", *gc.Pools["/Common/p1"].QoS, gslb.QoSWeights{RTT: 10, VSScore: 4, PacketRate: 1, Kbps: 3, LinkCapacity: 30, HitRatio: 5, Hops: 2}},
		{"pool admission", []any{gc.Pools["/Common/p1"].ManualResume, gc.Pools["/Common/p1"].MinUpMode, gc.Pools["/Common/p1"].MinUpValue, gc.Pools["/Common/p1"].DynamicRatio},
			[]any{true, gslb.MinUpPercent, 50, true}},
		{"pool limits (pps without its status)", []int64{gc.Pools["/Common/p1"].LimitMaxConnections, gc.Pools["/Common/p1"].LimitMaxPps}, []int64{500, 0}},
		{"member's own none", gc.Pools[gslb.Key(gslb.TypeA, "/Common/p1")].Members[1].Monitor, gslb.Monitor{}},
		{"vs2 monitor none", gc.Servers["/Common/lc1"].VirtualServers[1].Monitor, gslb.Monitor{}},
		{"vs2 disabled", gc.Servers["/Common/lc1"].VirtualServers[1].Disabled, true},
		{"vs2 limit", gc.Servers["/Common/lc1"].VirtualServers[1].LimitMaxConnections, int64(5)},
		{"pool modes", []gslb.Mode{gc.Pools["/Common/p1"].Mode, gc.Pools["/Common/p1"].Alternate, gc.Pools["/Common/p1"].Fallback}, []gslb.Mode{gslb.LowestRoundTripTime, gslb.Topology, gslb.FallbackIP}},
		{"pool fallback-ip", gc.Pools["/Common/p1"].FallbackIP, netip.MustParseAddr("127.0.119.99")},
		{"pool ttl, answers", []int{int(gc.Pools["/Common/p1"].TTL), gc.Pools["/Common/p1"].MaxAnswers}, []int{60, 2}},
		{"pool members (monitors above)", withoutMonitors(gc.Pools["/Common/p1"].Members), []gslb.PoolMember{
			{Server: "/Common/lc1", VirtualServer: "vs1", Order: 1, Ratio: 3},
			{Server: "/Common/lc1", VirtualServer: "vs2", Order: 0, Ratio: 1, Disabled: true},
		}},
		{"wide IP aliases", gc.WideIPs["/Common/www.example.com"].Aliases, []string{"web.example.com", "*.shop.example.com"}},
		{"wide IP mode", gc.WideIPs["/Common/www.example.com"].PoolLBMode, gslb.GlobalAvailability},
		{"wide IP pools", gc.WideIPs["/Common/www.example.com"].Pools, []gslb.WideIPPool{{Pool: "/Common/p1", Order: 0, Ratio: 2}}},
		{"persistence", []any{gc.WideIPs["/Common/www.example.com"].Persistence, gc.WideIPs["/Common/www.example.com"].PersistTTL, gc.WideIPs["/Common/www.example.com"].PersistCIDR4}, []any{true, 600 * time.Second, 24}},
		{"last resort", gc.WideIPs["/Common/www.example.com"].LastResortPool, "/Common/p1"},
		{"client subnet, decision log", []any{gc.WideIPs["/Common/www.example.com"].TopologyPreferECS, gc.WideIPs["/Common/www.example.com"].DecisionLog},
			[]any{true, gslb.LogPoolSelection | gslb.LogMemberTraversal}},
		{"server resource limits (pps without its status)", []int64{gc.Servers["/Common/lc1"].LimitMaxBps, gc.Servers["/Common/lc1"].LimitMaxPps, gc.Servers["/Common/lc1"].LimitCPUUsage, gc.Servers["/Common/lc1"].LimitMemAvail},
			[]int64{9000, 0, 0, 0}},
		{"region", gc.Regions["/Common/r1"].Members, []gslb.Match{
			{Kind: gslb.MatchSubnet, Prefix: netip.MustParsePrefix("127.0.118.0/24")},
			{Not: true, Kind: gslb.MatchPool, Name: "/Common/p1"},
			{Kind: gslb.MatchState, Name: "US/New York"},
		}},
		{"topology (a state with a space)", gc.Topology, []gslb.TopologyRecord{{
			LDNS:   gslb.Match{Not: true, Kind: gslb.MatchState, Name: "US/New Hampshire"},
			Server: gslb.Match{Kind: gslb.MatchSubnet, Prefix: netip.MustParsePrefix("127.0.119.0/24")},
			Order:  3, Score: 10,
		}, {
			LDNS:   gslb.Match{Kind: gslb.MatchRegion, Name: "/Common/r1"},
			Server: gslb.Match{Kind: gslb.MatchSubnet, Prefix: netip.MustParsePrefix("127.0.119.0/24")},
			Order:  2, Score: 50,
		}}},
		{"listener", gc.Listeners, []gslb.Listener{{Name: "/Common/l1", Addr: netip.MustParseAddrPort("127.0.119.53:5353"), Protocol: "udp"}}},
		{"zone origin", gc.Zones[0].Origin, "example.com."},
		{"zone data", strings.Contains(gc.Zones[0].Data, "ns1 IN A 127.0.119.53"), true},
		{"probe port, path ttl", []any{gc.Settings.ProbePort, gc.Settings.PathTTL}, []any{uint16(5354), 600 * time.Second}},
		{"probe protocols (icmp skipped)", gc.Settings.ProbeProtocols, []string{"tcp"}},
		{"topology settings", []bool{gc.Settings.TopologyOrderOnly, gc.Settings.TopologyDenyZeroScores}, []bool{true, true}},
		{"static persist cidr", gc.Settings.StaticPersistCIDR4, 24},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.what, c.got, c.want)
		}
	}
	// The translation compiles in the GSLB itself.
	if err := gslb.Check(gc); err != nil {
		t.Fatal(err)
	}
}

func TestTranslateGSLBRefusesAndSkips(t *testing.T) {
	cases := []struct {
		name    string
		text    string
		err     string // substring of the error; "" for none
		skipped string // substring of one skipped reason
	}{
		{name: "alternate must be static", text: `gtm pool a /Common/p { alternate-mode lowest-round-trip-time }`, err: "only static methods are allowed"},
		{name: "fallback-ip needs an address", text: `gtm pool a /Common/p { fallback-mode fallback-ip }`, err: "without a fallback-ip address"},
		{name: "bad fallback-ip", text: `gtm pool a /Common/p { fallback-ip nowhere }`, err: "is not an IP address"},
		{name: "server needs a datacenter", text: `gtm server /Common/s { }`, err: "must be in a datacenter"},
		{name: "vs needs a destination", text: "gtm datacenter /Common/dc { }\ngtm server /Common/s { datacenter /Common/dc virtual-servers { v { } } }", err: "has no destination"},
		{name: "wildcard destination", text: "gtm datacenter /Common/dc { }\ngtm server /Common/s { datacenter /Common/dc virtual-servers { v { destination 0.0.0.0:80 } } }", err: "no address to answer with"},
		{name: "bad uplink", text: "gtm datacenter /Common/dc { }\ngtm link /Common/l { datacenter /Common/dc uplink-address somewhere }", err: "not an IP address"},
		{name: "member of a missing server", text: `gtm pool a /Common/p { members { /Common/nope:v { } } }`, skipped: "server /Common/nope does not exist"},
		{name: "member of a missing virtual server", text: "gtm datacenter /Common/dc { }\ngtm server /Common/s { datacenter /Common/dc }\ngtm pool a /Common/p { members { /Common/s:v { } } }", skipped: "has no virtual server v"},
		{name: "server in a missing datacenter", text: `gtm server /Common/s { datacenter /Common/nope }`, skipped: "datacenter /Common/nope does not exist"},
		{name: "virtual server over a missing link", text: "gtm datacenter /Common/dc { }\ngtm server /Common/s { datacenter /Common/dc virtual-servers { v { destination 127.0.119.1:80 link /Common/nope } } }", skipped: "link /Common/nope does not exist"},
		{name: "wide IP over a missing pool", text: `gtm wideip a /Common/w.example.com { pools { /Common/nope { } } }`, skipped: "pool /Common/nope does not exist"},
		{name: "missing last resort pool", text: `gtm wideip a /Common/w.example.com { last-resort-pool nope }`, skipped: "last-resort-pool nope does not exist"},
		{name: "decision log word", text: `gtm wideip a /Common/w.example.com { load-balancing-decision-log-verbosity { pool-selection verbose } }`, err: `"verbose" is not one of pool-selection`},
		{name: "decision log none", text: `gtm wideip a /Common/w.example.com { load-balancing-decision-log-verbosity none }`},
		{name: "cpu limit over 100", text: "gtm datacenter /Common/dc { }\ngtm server /Common/s { datacenter /Common/dc product bigip limit-cpu-usage 150 limit-cpu-usage-status enabled }", err: "it is a percentage, 0 to 100"},
		{name: "cpu limit of a generic host", text: "gtm datacenter /Common/dc { }\ngtm server /Common/s { datacenter /Common/dc limit-mem-avail 1024 limit-mem-avail-status enabled }", skipped: "a generic-host reports no CPU or memory"},
		{name: "topology over a missing region", text: `gtm topology ldns: region /Common/nope server: subnet 10.0.0.0/8 { }`, skipped: "region /Common/nope does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, skipped, err := TranslateGSLB(objects.Default, gtmConfig(t, c.text))
			switch {
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("error %v, want one with %q", err, c.err)
			case c.err == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			}
			if c.skipped != "" && !strings.Contains(strings.Join(skipped, "\n"), c.skipped) {
				t.Fatalf("skipped %q, want one with %q", skipped, c.skipped)
			}
		})
	}
}

func TestServerAddrs(t *testing.T) {
	cases := []struct {
		in   string
		want string
	}{
		{"{ 10.0.0.5 { device-name bigip1 translation none } }", "[10.0.0.5]"},
		{"{ 10.0.0.5 { device-name a translation 192.0.2.1 } 10.0.0.6 { } }", "[10.0.0.5 10.0.0.6]"},
		{"{ 2001:db8::1 { translation none } }", "[2001:db8::1]"},
		{"none", "[]"},
		// BIG-IP 13 and later list a server's addresses under its devices.
		{"none devices { 0 { addresses { 10.2.3.7 { } } } }", "[10.2.3.7]"},
		{"{ 10.0.0.5 { } } devices { bigip1 { addresses { 10.0.0.5 { } 10.0.0.7 { translation 192.0.2.7 } } } bigip2 { addresses { 2001:db8::2 { } } } }", "[10.0.0.5 10.0.0.7 2001:db8::2]"},
	}
	for _, c := range cases {
		cfg := gtmConfig(t, "gtm datacenter dc1 { }\ngtm server s { datacenter dc1 addresses "+c.in+" }\n")
		o := cfg.Get(gtmServer, "/Common/s")
		if got := fmt.Sprint(serverAddrs(o)); got != c.want {
			t.Errorf("serverAddrs(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestZoneText(t *testing.T) {
	cases := []struct{ in, want string }{
		{" @ IN SOA ns1 hostmaster 1 2 3 4 5\n   ns1 IN A 127.0.119.53 ", "@ IN SOA ns1 hostmaster 1 2 3 4 5\nns1 IN A 127.0.119.53 "},
		{"\n\t$TTL 60\n\twww IN A 127.0.119.1\n", "\n$TTL 60\nwww IN A 127.0.119.1\n"},
	}
	for _, c := range cases {
		if got := zoneText(c.in); got != c.want {
			t.Errorf("zoneText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
