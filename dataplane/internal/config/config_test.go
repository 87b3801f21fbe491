package config

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

func TestJoinPort(t *testing.T) {
	for _, c := range []struct {
		name string
		port uint16
		want string
	}{
		{"/Common/10.1.1.1", 80, "/Common/10.1.1.1:80"},
		{"/Common/dead:beef::1", 80, "/Common/dead:beef::1.80"},
		{"/Common/web1", 0, "/Common/web1:0"},
		{"10.1.1.1", 443, "10.1.1.1:443"},
	} {
		if got := JoinPort(c.name, c.port); got != c.want {
			t.Errorf("JoinPort(%q, %d) = %q, want %q", c.name, c.port, got, c.want)
		}
	}
}

func TestMonitorRuleString(t *testing.T) {
	for _, c := range []struct {
		r    MonitorRule
		want string
	}{
		{MonitorRule{}, "none"},
		{MonitorRule{Names: []string{"/Common/tcp"}}, "/Common/tcp"},
		{MonitorRule{Names: []string{"/Common/tcp", "/Common/http"}}, "/Common/tcp and /Common/http"},
		{MonitorRule{Names: []string{"/Common/a", "/Common/b"}, MinUp: 1}, "min 1 of { /Common/a /Common/b }"},
	} {
		if got := c.r.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}

func TestPorts(t *testing.T) {
	dst := netip.MustParseAddrPort("10.0.0.1:80")
	any := netip.MustParseAddrPort("10.0.0.1:0")
	for _, c := range []struct {
		v    Virtual
		want int    // ports
		err  string // part of the error
	}{
		{Virtual{Destination: dst}, 1, ""},
		{Virtual{Destination: any}, 1, ""}, // every port: one listener at port 0

		{Virtual{Destination: any, PortRanges: []PortRange{{Low: 10, High: 19}, {Low: 15, High: 24}}}, 15, ""},
		{Virtual{Destination: any, PortRanges: []PortRange{{Low: 0, High: 5}}}, 0, "not valid"},
		{Virtual{Destination: any, PortRanges: []PortRange{{Low: 9, High: 8}}}, 0, "not valid"},
		{Virtual{Destination: any, PortRanges: []PortRange{{Low: 1, High: MaxPortsPerVirtual + 1}}}, 0, "at most"},
	} {
		ports, err := c.v.Ports()
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%+v: error %v, want one saying %q", c.v.PortRanges, err, c.err)
		case c.err == "" && (err != nil || len(ports) != c.want):
			t.Errorf("%+v: %d ports, %v; want %d", c.v.PortRanges, len(ports), err, c.want)
		}
	}
}

func TestEventLookupAndMask(t *testing.T) {
	// Every event of proxyEvents, as a fresh string too (not the
	// constant), finds its own position's bit and iRules event.
	for i, pe := range proxyEvents {
		for _, ev := range []Event{pe.ev, Event(strings.Clone(string(pe.ev)))} {
			bit, rev, ok := ev.Lookup()
			if !ok || bit != 1<<i || rev != pe.rev || fmt.Sprint(rev) != string(ev) {
				t.Errorf("%s: bit %b, %q, %v; want bit %b", ev, bit, rev, ok, 1<<i)
			}
		}
	}
	if bit, _, ok := Event("HTTP_REQUEST").Lookup(); ok || bit != 0 {
		t.Errorf("an event the proxy does not raise: %b %v", bit, ok)
	}
	if EventMask(nil) != 0 {
		t.Error("no rules, yet events")
	}
	if got, want := EventMask(handles{EventClientData: true, EventClientClosed: true}), bitOf(EventClientData)|bitOf(EventClientClosed); got != want {
		t.Errorf("mask %b, want %b", got, want)
	}
}

type handles map[Event]bool

func (h handles) Handles(ev Event) bool          { return h[ev] }
func (h handles) Run(ev Event, c RuleConn) error { return nil }

func bitOf(ev Event) uint32 { b, _, _ := ev.Lookup(); return b }
