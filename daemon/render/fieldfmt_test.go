package render

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane"
)

// The pool's field-fmt has the shape scripts parse on a BIG-IP: keys
// sorted, the members block among them, a member named node:port with a
// numeric port, counters scaled unless raw.
func TestPoolFields(t *testing.T) {
	ps := dataplane.PoolStats{
		Name:    "/Common/api_pool",
		Status:  dataplane.Status{Availability: dataplane.Available, State: "enabled", Reason: "The pool is available"},
		Monitor: "/Common/tcp", CurActiveMembers: 1, AvailableMembers: 1, TotalMembers: 1,
		ServerSide: dataplane.Traffic{BitsIn: 36200, BitsOut: 87900, PktsIn: 20, PktsOut: 20, MaxConns: 3, TotConns: 3},
		Members: []dataplane.MemberStats{{
			Name: "/Common/api01:8080", Node: "/Common/api01", Addr: netip.MustParseAddrPort("192.0.2.1:8080"),
			Status:  dataplane.Status{Availability: dataplane.Available, State: "enabled", Reason: "Pool member is available"},
			Monitor: "/Common/tcp (pool monitor)", MonitorStatus: "up", SessionStatus: "enabled",
			ServerSide: dataplane.Traffic{BitsIn: 36200, BitsOut: 87900, PktsIn: 20, PktsOut: 20, MaxConns: 3, TotConns: 3},
		}},
	}
	want := `ltm pool api_pool {
    active-member-cnt 1
    available-member-cnt 1
    connq-all.age-edm 0
    connq-all.age-ema 0
    connq-all.age-head 0
    connq-all.age-max 0
    connq-all.depth 0
    connq-all.serviced 0
    connq.age-edm 0
    connq.age-ema 0
    connq.age-head 0
    connq.age-max 0
    connq.depth 0
    connq.serviced 0
    cur-sessions 0
    member-cnt 1
    members {
        api01:8080 {
            addr 192.0.2.1
            connq.age-edm 0
            connq.age-ema 0
            connq.age-head 0
            connq.age-max 0
            connq.depth 0
            connq.serviced 0
            cur-sessions 0
            monitor-rule /Common/tcp (pool monitor)
            monitor-status up
            node-name api01
            pool-name api_pool
            port 8080
            serverside.bits-in 36.2K
            serverside.bits-out 87.9K
            serverside.cur-conns 0
            serverside.max-conns 3
            serverside.pkts-in 20
            serverside.pkts-out 20
            serverside.tot-conns 3
            session-status enabled
            status.availability-state available
            status.enabled-state enabled
            status.status-reason Pool member is available
            tot-requests 0
        }
    }
    min-active-members 0
    monitor-rule /Common/tcp
    name api_pool
    serverside.bits-in 36.2K
    serverside.bits-out 87.9K
    serverside.cur-conns 0
    serverside.max-conns 3
    serverside.pkts-in 20
    serverside.pkts-out 20
    serverside.tot-conns 3
    status.availability-state available
    status.enabled-state enabled
    status.status-reason The pool is available
    tot-requests 0
}
`
	show := FieldFmt(Pool, PoolFields)
	var b bytes.Buffer
	if err := show(&b, ps, Options{Members: true, FieldFmt: true, Folder: "/Common"}); err != nil {
		t.Fatal(err)
	}
	diff(t, b.String(), want)

	b.Reset()
	show(&b, ps, Options{Raw: true, FieldFmt: true, Folder: "/Common"})
	if got := b.String(); !strings.Contains(got, "\n    serverside.bits-in 36200\n") || strings.Contains(got, "members {") {
		t.Fatalf("raw without members:\n%s", got)
	}
	b.Reset()
	show(&b, ps, Options{Folder: "/Common"})
	if !strings.HasPrefix(b.String(), "-----") {
		t.Fatalf("without field-fmt the table is drawn:\n%s", b.String())
	}
}

func TestVirtualAndNodeFields(t *testing.T) {
	v := vip1Stats()
	n := dataplane.NodeStats{
		Name: "/Part/web1", Addr: netip.MustParseAddr("192.0.2.7"),
		Status:  dataplane.Status{Availability: dataplane.Unknown, State: "enabled", Reason: "Node address does not have service checking enabled"},
		Monitor: "", MonitorStatus: "unchecked", SessionStatus: "enabled",
	}
	for _, tc := range []struct {
		name  string
		draw  func(*bytes.Buffer) error
		first string
		lines []string
	}{
		{"virtual", func(b *bytes.Buffer) error { return VirtualFields(b, v, Options{Folder: "/Common"}) }, "ltm virtual vip1 {",
			[]string{"clientside.bits-in 1.2K", "clientside.cur-conns 1", "clientside.tot-conns 9", "cs-max-conn-dur 40",
				"cs-mean-conn-dur 12", "cs-min-conn-dur 1", "destination 10.99.99.102:80", "name vip1",
				"status.availability-state available", "status.status-reason The virtual server is available", "tot-requests 9"}},
		{"node in another folder", func(b *bytes.Buffer) error { return NodeFields(b, n, Options{Folder: "/Common"}) }, "ltm node /Part/web1 {",
			[]string{"addr 192.0.2.7", "monitor-rule none", "monitor-status unchecked", "name /Part/web1", "session-status enabled",
				"status.availability-state unknown", "serverside.cur-conns 0"}},
	} {
		var b bytes.Buffer
		if err := tc.draw(&b); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if lines[0] != tc.first || lines[len(lines)-1] != "}" {
			t.Fatalf("%s: not one block:\n%s", tc.name, b.String())
		}
		body := lines[1 : len(lines)-1]
		for i := 1; i < len(body); i++ {
			if body[i-1] >= body[i] {
				t.Errorf("%s: keys out of order: %q before %q", tc.name, body[i-1], body[i])
			}
		}
		for _, want := range tc.lines {
			if !strings.Contains(b.String(), "\n    "+want+"\n") {
				t.Errorf("%s: no line %q in\n%s", tc.name, want, b.String())
			}
		}
	}
}

func TestVirtualAddressLayouts(t *testing.T) {
	a := VirtualAddressStats{Name: "/Common/10.0.0.1", Addr: "10.0.0.1",
		Status:     dataplane.Status{Availability: dataplane.Available, State: "enabled", Reason: "The virtual address is available"},
		ClientSide: dataplane.Traffic{BitsIn: 37300, PktsIn: 4, CurConns: 1, MaxConns: 2, TotConns: 3}}
	want := `---------------------------------------------------------------------
Ltm::Virtual Address: 10.0.0.1
---------------------------------------------------------------------
Status
  Availability : available
  State        : enabled
  Reason       : The virtual address is available

Traffic                ClientSide
  Bits In                   37.3K
  Bits Out                      0
  Packets In                    4
  Packets Out                   0
  Current Connections           1
  Maximum Connections           2
  Total Connections             3
`
	var b bytes.Buffer
	if err := VirtualAddress(&b, a, Options{Folder: "/Common"}); err != nil {
		t.Fatal(err)
	}
	diff(t, b.String(), want)
	b.Reset()
	if err := VirtualAddress(&b, a, Options{Folder: "/Common", FieldFmt: true, Raw: true}); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"ltm virtual-address 10.0.0.1 {\n", "\n    clientside.bits-in 37300\n", "\n    name 10.0.0.1\n", "\n    addr 10.0.0.1\n", "\n    status.availability-state available\n"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("field-fmt lacks %q:\n%s", line, b.String())
		}
	}
}
