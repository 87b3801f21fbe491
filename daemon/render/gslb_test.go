package render

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/gslb"
)

var okStatus = gslb.ObjectStatus{Availability: gslb.Available, State: "enabled", Reason: "Available"}

func TestRenderGTMWideIP(t *testing.T) {
	var b bytes.Buffer
	err := GTMWideIP(&b, gslb.WideIPStats{
		Name: "/Common/www.example.com", Status: okStatus, Aliases: []string{"web.example.com"},
		Requests: 12, RequestsA: 11, RequestsOther: 1, Resolved: 11, Preferred: 9, Alternate: 2, ReturnedToDNS: 1, LastResort: 3,
	}, Options{Folder: "/Common"})
	if err != nil {
		t.Fatal(err)
	}
	dash := strings.Repeat("-", 69)
	diff(t, b.String(), dash+`
Gtm::WideIp::A: www.example.com
`+dash+`
Status
  Availability : available
  State        : enabled
  Reason       : Available
  Aliases      : web.example.com

Requests
  Total                         12
  A                             11
  Other                          1

Load Balancing
  Resolved                      11
  Persisted                      0
  Preferred                      9
  Alternate                      2
  Fallback                       0
  Last Resort                    3
  Returned to DNS                1
  Dropped                        0
`)
}

// TestRenderGTMBlocks checks the lines scripts look for in each show.
func TestRenderGTMBlocks(t *testing.T) {
	o := Options{Folder: "/Common"}
	down := gslb.ObjectStatus{Availability: gslb.Unavailable, State: "disabled", Reason: "The link is disabled"}
	cases := []struct {
		name   string
		render func(*bytes.Buffer) error
		want   []string
		absent []string
	}{
		{"pool without members", func(b *bytes.Buffer) error {
			return GTMPool(b, gslb.PoolStats{Name: "/Common/p", Status: okStatus, Mode: gslb.Topology, Alternate: gslb.RoundRobin, Fallback: gslb.ReturnToDNS, Preferred: 3,
				Members: []gslb.PoolMemberStats{{Member: "/Common/lc:vs1", Destination: "127.0.119.1:80", Status: okStatus}}}, o)
		}, []string{"Gtm::Pool::A: p\n", "  Preferred LB : topology\n", "  Preferred                      3\n"}, []string{"Gtm::Pool Member"}},
		{"pool with members", func(b *bytes.Buffer) error {
			return GTMPool(b, gslb.PoolStats{Name: "/Common/p", Status: okStatus,
				Members: []gslb.PoolMemberStats{{Member: "/Common/lc:vs1", Destination: "127.0.119.1:80", Order: 2, Ratio: 1, Status: down, Preferred: 4}}}, Options{Folder: "/Common", Members: true})
		}, []string{"  | Gtm::Pool Member: lc:vs1\n", "  |   Reason       : The link is disabled\n", "  |   Order        : 2\n", "  |   Preferred                      4\n"}, nil},
		{"cname pool with name members", func(b *bytes.Buffer) error {
			return GTMPool(b, gslb.PoolStats{Name: "/Common/c", Type: gslb.TypeCNAME, Status: okStatus,
				Members: []gslb.PoolMemberStats{{Member: "www.example.org", Status: okStatus}}}, Options{Folder: "/Common", Members: true})
		}, []string{"Gtm::Pool::CNAME: c\n", "  | Gtm::Pool Member: www.example.org\n"}, []string{"Destination"}},
		{"aaaa wide IP", func(b *bytes.Buffer) error {
			return GTMWideIP(b, gslb.WideIPStats{Name: "/Common/w", Type: gslb.TypeAAAA, Status: okStatus, RequestsA: 4}, o)
		}, []string{"Gtm::WideIp::AAAA: w\n", "  AAAA                           4\n"}, []string{"  A  "}},
		{"topology in evaluation order", func(b *bytes.Buffer) error {
			return GTMTopology(b, []gslb.TopologyStats{{LDNS: "subnet 10.0.0.0/8", Server: "not datacenter /Common/dc1", Order: 2, Score: 100}}, o)
		}, []string{"Gtm::Topology Records (in evaluation order)\n", "1  subnet 10.0.0.0/8  not datacenter dc1  2      100\n", "Total records: 1\n"}, nil},
		{"region", func(b *bytes.Buffer) error {
			return GTMRegion(b, gslb.RegionStats{Name: "/Common/r", Members: []string{"not region /Common/r2", "subnet 10.0.0.0/8"}, UsedBy: 2}, o)
		}, []string{"Gtm::Region: r\n", "  Used By      : 2\n", "    not region r2\n", "    subnet 10.0.0.0/8\n"}, nil},
		{"listener and counters", func(b *bytes.Buffer) error {
			if err := GTMListener(b, gslb.ListenerStats{Name: "/Common/l", Address: "127.0.0.53:53", Protocol: "udp", Status: okStatus}, o); err != nil {
				return err
			}
			return GTMCounters(b, gslb.ServerCounters{Queries: 9, Refused: 2}, o)
		}, []string{"Gtm::Listener: l\n", "  Address      : 127.0.0.53:53\n", "  Total                          9\n", "  Refused                        2\n"}, nil},
		{"server with a reported virtual server", func(b *bytes.Buffer) error {
			return GTMServer(b, gslb.ServerStats{Name: "/Common/lc", Datacenter: "/Common/dc1", Status: okStatus, VirtualServers: []gslb.VirtualServerStats{
				{Name: "/Common/lc:vs1", Destination: "127.0.119.1:80", Link: "/Common/isp1", Status: okStatus, Metrics: &gslb.VSMetrics{Status: gslb.StatusUp, Connections: 7, Bps: 12500}},
				{Name: "/Common/lc:vs2", Destination: "127.0.119.2:80", Status: okStatus},
			}}, o)
		}, []string{"Gtm::Server: lc\n", "  Data Center  : dc1\n", "  | Gtm::Virtual Server: lc:vs1\n", "  |   Link         : isp1\n",
			"  |   Current Connections            7\n", "  |   Bits/sec                   12.5K\n", "  |   Link         : none\n", "  |   Reported Status             none\n"}, nil},
		{"link over its limit", func(b *bytes.Buffer) error {
			return GTMLink(b, gslb.LinkStats{Name: "/Common/isp1", Datacenter: "/Common/dc1", Status: down, LimitTotalBps: 100,
				Metrics: &gslb.LinkMetrics{InBps: 300, OutBps: 900}}, Options{Folder: "/Common", Raw: true})
		}, []string{"Gtm::Link: isp1\n", "  Total                       1200\n", "  Total Limit                  100\n", "  Inbound Limit               none\n"}, nil},
		{"datacenter", func(b *bytes.Buffer) error {
			return GTMDatacenter(b, gslb.DatacenterStats{Name: "/Common/dc1", Status: okStatus, Prober: "127.0.119.1"}, o)
		}, []string{"Gtm::Datacenter: dc1\n", "  Prober       : 127.0.119.1\n"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := c.render(&b); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("missing %q in\n%s", w, b.String())
				}
			}
			for _, w := range c.absent {
				if strings.Contains(b.String(), w) {
					t.Errorf("unexpected %q in\n%s", w, b.String())
				}
			}
		})
	}
}

func TestRenderGTMPersistAndLDNS(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	if err := GTMPersist(&b, nil, now, Options{}); err != nil {
		t.Fatal(err)
	}
	diff(t, b.String(), "Gtm::Persistence Records\nTotal persistence records returned: 0\n")
	b.Reset()
	recs := []gslb.PersistRecord{{
		WideIP: "/Common/www.example.com", LDNS: netip.MustParsePrefix("127.0.118.5/32"), Pool: "/Common/p", Member: "/Common/lc:vs1",
		Addr: netip.MustParseAddr("127.0.119.1"), Expires: now.Add(90 * time.Second),
	}}
	if err := GTMPersist(&b, recs, now, Options{Folder: "/Common"}); err != nil {
		t.Fatal(err)
	}
	diff(t, b.String(), `Gtm::Persistence Records
Wide IP          LDNS            Pool  Member  Answer       Expires
www.example.com  127.0.118.5/32  p     lc:vs1  127.0.119.1  90s
Total persistence records returned: 1
`)
	b.Reset()
	ldns := []gslb.LDNSRecord{
		{Prefix: netip.MustParsePrefix("127.0.118.0/24"), Requests: 3, Probes: 1, Paths: []gslb.PathRTT{
			{Path: "/Common/isp1", Kind: "link", RTT: 5600 * time.Microsecond, Probe: "dns_dot"},
			{Path: "/Common/isp2", Kind: "link", Error: "timeout"},
		}},
		{Prefix: netip.MustParsePrefix("127.0.117.0/24"), Requests: 1, Probing: true},
	}
	if err := GTMLDNS(&b, ldns, Options{Folder: "/Common"}); err != nil {
		t.Fatal(err)
	}
	diff(t, b.String(), `Gtm::LDNS
LDNS                      Requests  Probes  Path       RTT     Probe
127.0.118.0/24            3         1       link isp1  5.6ms   dns_dot
                                            link isp2  failed  timeout
127.0.117.0/24 (probing)  1         0       -          -       -
Total records returned: 2
`)
}

// show gtm path: one line per measured path, the LDNSes without a
// measurement left out; hops, completion and age "-" when not known.
func TestRenderGTMPath(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		recs []gslb.LDNSRecord
		want string
	}{
		{"empty", nil, "Gtm::Path\nTotal records returned: 0\n"},
		{"LDNS without paths", []gslb.LDNSRecord{{Prefix: netip.MustParsePrefix("127.194.1.0/24"), Requests: 1, Probing: true}}, "Gtm::Path\nTotal records returned: 0\n"},
		{"paths", []gslb.LDNSRecord{
			{Prefix: netip.MustParsePrefix("127.194.1.0/24"), Paths: []gslb.PathRTT{
				{Path: "/Common/dc1", Kind: "datacenter", RTT: 5600 * time.Microsecond, Probe: "dns_dot", Hops: 3, Sent: 4, Answered: 3, Time: now.Add(-12 * time.Second)},
				{Path: "/Common/isp2", Kind: "link", Error: "timeout", Hops: -1, Sent: 1, Time: now.Add(-2 * time.Second)},
			}},
			{Prefix: netip.MustParsePrefix("127.194.2.0/24"), Paths: []gslb.PathRTT{
				{Path: "/Common/dc1", Kind: "datacenter", RTT: 31 * time.Millisecond, Probe: "tcp", Hops: -1},
			}},
		}, `Gtm::Path
Local DNS       Path            RTT     Hops  Completion  Probe    Last Probe
127.194.1.0/24  datacenter dc1  5.6ms   3     75%         dns_dot  12s ago
127.194.1.0/24  link isp2       failed  -     0%          timeout  2s ago
127.194.2.0/24  datacenter dc1  31ms    -     -           tcp      -
Total records returned: 3
`},
	} {
		var b bytes.Buffer
		if err := GTMPath(&b, c.recs, now, Options{Folder: "/Common"}); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.name, b.String(), c.want)
		}
	}
}

func TestRTTText(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{0, "0.0ms"}, {5600 * time.Microsecond, "5.6ms"}, {31 * time.Millisecond, "31ms"}, {1500 * time.Millisecond, "1500ms"}} {
		if got := rttText(c.d); got != c.want {
			t.Errorf("rttText(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// The wide IP's and the pool's field-fmt: the status lines scripts grep
// for, and the counters, keys sorted.
func TestRenderGTMFieldFmt(t *testing.T) {
	var b bytes.Buffer
	o := Options{Folder: "/Common", FieldFmt: true, Members: true}
	if err := GTMWideIP(&b, gslb.WideIPStats{Name: "/Common/www.example.com", Status: okStatus, Requests: 12, Resolved: 11, Preferred: 9, Alternate: 2}, o); err != nil {
		t.Fatal(err)
	}
	diff(t, b.String(), `gtm wideip a www.example.com {
    alternate 2
    dropped 0
    fallback 0
    persisted 0
    preferred 9
    requests 12
    resolutions 11
    return-to-dns 0
    status.availability-state available
    status.enabled-state enabled
    status.status-reason Available
    wip-name www.example.com
    wip-type A
}
`)
	b.Reset()
	down := gslb.ObjectStatus{Availability: gslb.Offline, State: "enabled", Reason: "Monitor /Common/http from 127.0.0.1 : down"}
	if err := GTMPool(&b, gslb.PoolStats{Name: "/Common/p_a", Type: "aaaa", Status: okStatus, Preferred: 5,
		Members: []gslb.PoolMemberStats{{Member: "/Common/s1:vs1", Order: 1, Ratio: 2, Status: down, Destination: "10.1.1.1:80"}}}, o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gtm pool aaaa p_a {\n", "\n    pool-type AAAA\n", "\n    preferred 5\n", "\n    members {\n        s1:vs1 {\n",
		"\n            destination 10.1.1.1:80\n", "\n            order 1\n", "\n            ratio 2\n", "\n            status.availability-state offline\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("pool field-fmt lacks %q:\n%s", want, b.String())
		}
	}
}
