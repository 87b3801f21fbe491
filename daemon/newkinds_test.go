package daemon

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// gtm global-settings metrics-exclusions and metrics-collection-protocols
// reach the GSLB's settings; protocols openltm does not run are kept
// with a warning naming them.
func TestGTMMetricsExclusionsSettings(t *testing.T) {
	for _, tc := range []struct {
		name     string
		text     string
		noProbe  []netip.Addr
		metrics  []string
		warnings string
	}{
		{"unset", "", nil, nil, ""},
		{"exclusions", "gtm global-settings metrics-exclusions { addresses { 127.201.3.1 127.201.3.2 } }",
			[]netip.Addr{netip.MustParseAddr("127.201.3.1"), netip.MustParseAddr("127.201.3.2")}, nil, ""},
		{"none", "gtm global-settings metrics-exclusions { addresses none }", nil, nil, ""},
		{"icmp", "gtm global-settings metrics { metrics-collection-protocols { icmp } }", nil, []string{"icmp"}, ""},
		{"some not run", "gtm global-settings metrics { metrics-collection-protocols { udp icmp dns_rev tcp } }", nil, []string{"icmp", "dns_rev", "tcp"},
			"metrics-collection-protocols udp: openltm measures paths with icmp, dns_dot, dns_rev and tcp only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := gtmConfig(t, tc.text)
			gc, _, kept, err := translateGSLB(objects.Default, cfg, rules.Compile)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(gc.Settings.NoProbe, tc.noProbe) {
				t.Errorf("NoProbe %v, want %v", gc.Settings.NoProbe, tc.noProbe)
			}
			if !slices.Equal(gc.Settings.MetricsProtocols, tc.metrics) && (len(tc.metrics) > 0 || len(gc.Settings.MetricsProtocols) > 0) {
				t.Errorf("MetricsProtocols %v, want %v", gc.Settings.MetricsProtocols, tc.metrics)
			}
			if got := strings.Join(kept, "\n"); tc.warnings == "" && got != "" || !strings.Contains(got, tc.warnings) {
				t.Errorf("warnings %q, want %q", got, tc.warnings)
			}
		})
	}
}

// A bad exclusion or protocol is refused at its line and column.
func TestGTMMetricsRefusals(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"gtm global-settings metrics-exclusions { addresses { 127.201.3.1 nope } }", `"nope" is not an IP address`},
		{"gtm global-settings metrics-exclusions { bogus 1 }", "bogus"},
		{"gtm global-settings metrics { metrics-collection-protocols { smoke } }", `"smoke" is not a valid value`},
	} {
		_, err := objects.Default.ReadConfig("t.conf", []byte(tc.text), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "1:") {
			t.Errorf("%s: %v, want %q at a line:column", tc.text, err, tc.want)
		}
	}
}

// Port lockdown: which services a self IP's allow-service admits, with
// the configured or built-in net self-allow defaults.
func TestSelfAllows(t *testing.T) {
	for _, tc := range []struct {
		allow, defaults string
		want            bool
	}{
		{"", "", false}, // none, BIG-IP's default
		{"allow-service none", "", false},
		{"allow-service all", "", true},
		{"allow-service default", "", true}, // BIG-IP's defaults hold tcp:4353
		{"allow-service default", "net self-allow { defaults { tcp:22 } }", false},
		{"allow-service { tcp:4353 }", "", true},
		{"allow-service { udp:4353 }", "", false},
		{"allow-service { tcp:0 }", "", true},
		{"allow-service { tcp:22 default }", "net self-allow { defaults { udp:53 tcp:4353 } }", true},
		{"allow-service { tcp:22 default }", "net self-allow { defaults { udp:53 } }", false},
	} {
		cfg := gtmConfig(t, fmt.Sprintf("%s\nnet self /Common/s1 { address 127.201.3.9/32 %s }", tc.defaults, tc.allow))
		o := cfg.Get(netSelf, "/Common/s1")
		if got := selfAllows(cfg, o, "tcp", int(IQueryPort)); got != tc.want {
			t.Errorf("%s with %q: tcp:4353 allowed %v, want %v", tc.allow, tc.defaults, got, tc.want)
		}
	}
}

// A virtual's traffic-classes reach the rules' environment as classes,
// in the virtual's order, addresses masked, defaults for what is unset.
func TestVirtualTrafficClasses(t *testing.T) {
	cfg := gtmConfig(t, `ltm traffic-class /Common/a { classification gold source-address 127.201.4.9 }
ltm traffic-class /Common/b { classification lab source-address 127.201.4.77 source-mask 255.255.255.0 destination-port 80 protocol tcp }
ltm traffic-class /Common/unused { classification none }
ltm virtual /Common/v { destination /Common/127.201.4.1:80 traffic-classes { /Common/b /Common/a } }
ltm virtual /Common/w { destination /Common/127.201.4.2:80 }`)
	got := virtualTrafficClasses(cfg)
	want := map[string][]rules.TrafficClass{"/Common/v": {
		{Name: "/Common/b", Classification: "lab", Src: netip.MustParsePrefix("127.201.4.0/24"), DstPort: 80, Proto: 6},
		{Name: "/Common/a", Classification: "gold", Src: netip.MustParsePrefix("127.201.4.9/32")},
	}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("classes %v, want %v", got, want)
	}
}
