package render

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
)

func TestScale(t *testing.T) {
	for _, tc := range []struct {
		v    uint64
		want string
	}{
		{0, "0"}, {999, "999"}, {1000, "1.0K"}, {5000, "5.0K"}, {37300, "37.3K"},
		{999949, "999.9K"}, {999950, "1.0M"}, {52_000_000, "52.0M"}, {3_200_000_000, "3.2G"},
	} {
		if got := Scale(tc.v); got != tc.want {
			t.Errorf("Scale(%d) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func diff(t *testing.T, got, want string) {
	t.Helper()
	if got == want {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Fatalf("line %d:\n got %q\nwant %q\nwhole output:\n%s", i+1, gl, wl, got)
		}
	}
}

// The pool block and member block are reference §3.2 verbatim (values
// chosen to match it).
func TestRenderPoolMatchesReference(t *testing.T) {
	ps := dataplane.PoolStats{
		Name:    "/Common/pool1",
		Status:  dataplane.Status{Availability: dataplane.Offline, State: "enabled", Reason: "The children pool member(s) are down"},
		Monitor: "/Common/tcp_half_open", TotalMembers: 1,
		ServerSide: dataplane.Traffic{BitsIn: 37300, BitsOut: 52000, PktsIn: 64, PktsOut: 43, MaxConns: 2, TotConns: 15},
		Members: []dataplane.MemberStats{{
			Name:    "/Common/10.1.20.11:80",
			Status:  dataplane.Status{Availability: dataplane.Available, State: "enabled", Reason: "Pool member is available"},
			Monitor: "/Common/http (pool monitor)", MonitorStatus: "up", SessionStatus: "enabled",
		}},
	}
	want := `---------------------------------------------------------------------
Ltm::Pool: pool1
---------------------------------------------------------------------
Status
  Availability : offline
  State        : enabled
  Reason       : The children pool member(s) are down
  Monitor      : tcp_half_open
  Minimum Active Members : 0
  Current Active Members : 0
       Available Members : 0
           Total Members : 1
          Total Requests : 0
        Current Sessions : 0

Traffic                ServerSide
  Bits In                   37.3K
  Bits Out                  52.0K
  Packets In                   64
  Packets Out                  43
  Current Connections           0
  Maximum Connections           2
  Total Connections            15

  ---------------------------------------------------------------------
  | Ltm::Pool Member: 10.1.20.11:80
  ---------------------------------------------------------------------
  | Status
  |   Availability   : available
  |   State          : enabled
  |   Reason         : Pool member is available
  |   Monitor        : /Common/http (pool monitor)
  |   Monitor Status : up
  |   Session Status : enabled
  |
  | Traffic                 ServerSide  General
  |   Bits In                      0        -
  |   Bits Out                     0        -
  |   Packets In                   0        -
  |   Packets Out                  0        -
  |   Current Connections          0        -
  |   Maximum Connections          0        -
  |   Total Connections            0        -
  |   Total Requests               -        0
  |   Current Sessions             -        0
`
	var b bytes.Buffer
	if err := Pool(&b, ps, Options{Members: true, Folder: "/Common"}); err != nil {
		t.Fatal(err)
	}
	diff(t, b.String(), want)

	b.Reset()
	Pool(&b, ps, Options{Raw: true, Folder: "/Common"})
	if !strings.Contains(b.String(), "  Bits In                   37300\n") || strings.Contains(b.String(), "Pool Member") {
		t.Fatalf("raw without members:\n%s", b.String())
	}
}

// vip1Stats is the virtual server the show and field-fmt tests print.
func vip1Stats() dataplane.VirtualStats {
	return dataplane.VirtualStats{
		Name: "/Common/vip1", Destination: "10.99.99.102:80",
		Status:     dataplane.Status{Availability: dataplane.Available, State: "enabled", Reason: "The virtual server is available"},
		ClientSide: dataplane.Traffic{BitsIn: 1200, CurConns: 1, MaxConns: 3, TotConns: 9}, TotRequests: 9,
		MinConnDuration: 1, MaxConnDuration: 40, MeanConnDuration: 12,
	}
}

func TestRenderVirtual(t *testing.T) {
	v := vip1Stats()
	want := `------------------------------------------------------------------
Ltm::Virtual Server: vip1
------------------------------------------------------------------
Status
  Availability     : available
  State            : enabled
  Reason           : The virtual server is available
  CMP              : enabled
  CMP Mode         : all-cpus
  Destination      : 10.99.99.102:80

Traffic                             ClientSide  Ephemeral  General
  Bits In                                 1.2K          0        -
  Bits Out                                   0          0        -
  Packets In                                 0          0        -
  Packets Out                                0          0        -
  Current Connections                        1          0        -
  Maximum Connections                        3          0        -
  Total Connections                          9          0        -
  Evicted Connections                        0          0        -
  Slow Connections Killed                    0          0        -
  Min Conn Duration/msec                     -          -        1
  Max Conn Duration/msec                     -          -       40
  Mean Conn Duration/msec                    -          -       12
  Total Requests                             -          -        9
`
	var b bytes.Buffer
	Virtual(&b, v, Options{Folder: "/Common"})
	diff(t, b.String(), want)
}

func TestRenderNode(t *testing.T) {
	n := dataplane.NodeStats{Name: "/Common/10.1.20.11", Addr: netip.MustParseAddr("10.1.20.11"),
		Status:        dataplane.Status{Availability: dataplane.Unknown, State: "enabled", Reason: "Node address does not have service checking enabled"},
		MonitorStatus: "unchecked", SessionStatus: "enabled", ServerSide: dataplane.Traffic{TotConns: 4}, TotRequests: 4}
	var b bytes.Buffer
	Node(&b, n, Options{Folder: "/Common"})
	for _, want := range []string{
		"Ltm::Node: 10.1.20.11 (10.1.20.11)\n",
		"  Monitor        : none\n",
		"  Monitor Status : unchecked\n",
		"Traffic               ServerSide  General\n",
		"  Total Connections            4        -\n",
		"  Total Requests               -        4\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("node output lacks %q:\n%s", want, b.String())
		}
	}
}

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

// The connection lines and the all-properties block are reference §3.4
// (the lasthop is this system's own).
func TestRenderConnectionsMatchesReference(t *testing.T) {
	recs := []dataplane.Connection{
		{CSClient: ap("10.1.10.100:49930"), CSServer: ap("10.1.10.60:80"), Protocol: "tcp", Idle: 5 * time.Second},
		{CSClient: ap("10.1.10.100:49931"), CSServer: ap("10.1.10.60:80"), SSClient: ap("10.1.20.70:49931"),
			SSServer: ap("10.1.20.202:80"), Protocol: "tcp", Idle: 5 * time.Second},
	}
	var b bytes.Buffer
	cw := NewConnectionWriter(&b, false)
	for i := range recs {
		cw.Write(&recs[i])
	}
	cw.Close()
	diff(t, b.String(), `Sys::Connections
10.1.10.100:49930  10.1.10.60:80  any6.any  any6.any  tcp  5  (tmm: 0)  none  none
10.1.10.100:49931  10.1.10.60:80  10.1.20.70:49931  10.1.20.202:80  tcp  5  (tmm: 0)  none  none
Total records returned: 2
`)

	rec := recs[1]
	rec.Idle, rec.IdleTimeout = 19*time.Second, 300*time.Second
	rec.CSBytesIn, rec.CSBytesOut, rec.SSBytesIn, rec.SSBytesOut = 625, 4400, 4350, 625
	rec.CSPktsIn, rec.CSPktsOut, rec.SSPktsIn, rec.SSPktsOut = 6, 6, 5, 6
	b.Reset()
	cw = NewConnectionWriter(&b, true)
	cw.Write(&rec)
	cw.Close()
	diff(t, b.String(), `Sys::Connections
10.1.10.100:49931 - 10.1.10.60:80 - 10.1.20.70:49931 - 10.1.20.202:80
---------------------------------------------------------------------
  TMM           0
  Type          any
  Acceleration  none
  Protocol      tcp
  Idle Time     19
  Idle Timeout  300
  Unit ID       1
  Lasthop       /Common/loopback
  Virtual Path  10.1.10.60:80
                         ClientSide        ServerSide
  Client Addr  10.1.10.100:49931  10.1.20.70:49931
  Server Addr      10.1.10.60:80    10.1.20.202:80
  Bits In                   5.0K             34.8K
  Bits Out                 35.2K              5.0K
  Packets In                   6                 5
  Packets Out                  6                 6
Total records returned: 1
`)

	b.Reset()
	cw = NewConnectionWriter(&b, false)
	cw.Close()
	diff(t, b.String(), "Sys::Connections\nTotal records returned: 0\n")

	v6 := dataplane.Connection{CSClient: ap("[::1]:40000"), CSServer: ap("[::1]:80"), Protocol: "tcp"}
	b.Reset()
	cw = NewConnectionWriter(&b, false)
	cw.Write(&v6)
	cw.Close()
	if !strings.Contains(b.String(), "::1.40000  ::1.80  any6.any  any6.any  tcp") {
		t.Fatalf("IPv6 line:\n%s", b.String())
	}
}

// countingWriter counts bytes and the largest single write, to show that
// the connection writer streams.
type countingWriter struct{ n, maxWrite int }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += len(p)
	c.maxWrite = max(c.maxWrite, len(p))
	return len(p), nil
}

func TestConnectionWriterStreams(t *testing.T) {
	var w countingWriter
	cw := NewConnectionWriter(&w, false)
	r := dataplane.Connection{CSClient: ap("127.0.0.1:1000"), CSServer: ap("127.0.0.2:80"), Protocol: "tcp"}
	for i := 0; i < 100000; i++ {
		cw.Write(&r)
	}
	cw.Close()
	if cw.Count() != 100000 || w.maxWrite > 64<<10 || w.n < 100000*40 {
		t.Fatalf("count %d, bytes %d, largest write %d", cw.Count(), w.n, w.maxWrite)
	}
}

func TestRenderPoolMembersTable(t *testing.T) {
	ps := dataplane.PoolStats{Name: "/Common/p", Members: []dataplane.MemberStats{
		{Name: "/Common/127.0.0.2:9000", Status: dataplane.Status{Availability: dataplane.Available, State: "enabled"},
			MonitorStatus: "up", SessionStatus: "enabled", ServerSide: dataplane.Traffic{TotConns: 1500, BitsIn: 2048}},
		{Name: "/Common/127.0.0.3:9000", Status: dataplane.Status{Availability: dataplane.Offline, State: "disabled"},
			MonitorStatus: "down", SessionStatus: "user-disabled"},
	}}
	var b bytes.Buffer
	if err := PoolMembersTable(&b, ps, Options{Folder: "/Common"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 4 || lines[0] != "Ltm::Pool: p" || !strings.HasPrefix(lines[1], "Member") ||
		!strings.Contains(lines[2], "127.0.0.2:9000") || !strings.Contains(lines[2], "1.5K") ||
		!strings.Contains(lines[3], "user-disabled") {
		t.Fatalf("table:\n%s", b.String())
	}
	for _, l := range lines {
		if strings.HasSuffix(l, " ") {
			t.Fatalf("trailing blank in %q", l)
		}
	}
}
