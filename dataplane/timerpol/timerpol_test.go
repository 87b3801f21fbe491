package timerpol

import (
	"testing"
	"time"
)

func TestMatch(t *testing.T) {
	p := &Policy{Name: "/Common/tp", Rules: []Rule{
		{Name: "rest", Proto: AllOther, Idle: 300 * time.Second},
		{Name: "tcp", Proto: 6, Idle: 60 * time.Second},
		{Name: "ssh", Proto: 6, Ports: []PortRange{{22, 22}}, Idle: time.Hour},
		{Name: "ssh2", Proto: 6, Ports: []PortRange{{22, 22}}, Idle: 2 * time.Hour},
		{Name: "web", Proto: 6, Ports: []PortRange{{8000, 8099}}, Unspecified: true},
		{Name: "dns", Proto: 17, Ports: []PortRange{{53, 53}}, Idle: Immediate},
		{Name: "syslog", Proto: AllOther, Ports: []PortRange{{514, 514}}, Idle: 0},
	}}
	for _, tc := range []struct {
		name  string
		proto int
		port  uint16
		rule  string
		idle  time.Duration
		ok    bool
	}{
		{"the port's rule before the protocol's", 6, 22, "ssh", time.Hour, true},
		{"the protocol's rule for another port", 6, 23, "tcp", time.Minute, true},
		{"in a range, unspecified", 6, 8050, "web", 0, false},
		{"past a range", 6, 8100, "tcp", time.Minute, true},
		{"immediate", 17, 53, "dns", Immediate, true},
		{"all-other naming the port", 17, 514, "syslog", 0, true},
		{"all-other", 17, 54, "rest", 300 * time.Second, true},
		{"another protocol", 132, 22, "rest", 300 * time.Second, true},
	} {
		r := p.Match(tc.proto, tc.port)
		if r == nil || r.Name != tc.rule {
			t.Errorf("%s: rule %v, want %s", tc.name, r, tc.rule)
			continue
		}
		idle, ok := p.Idle(tc.proto, tc.port)
		if idle != tc.idle || ok != tc.ok {
			t.Errorf("%s: idle %v %v, want %v %v", tc.name, idle, ok, tc.idle, tc.ok)
		}
	}
	none := &Policy{Rules: []Rule{{Name: "ssh", Proto: 6, Ports: []PortRange{{22, 22}}, Idle: time.Hour}}}
	if r := none.Match(6, 80); r != nil {
		t.Errorf("no rule for tcp 80: got %s", r.Name)
	}
	if _, ok := none.Idle(17, 22); ok {
		t.Error("udp 22 decided by a tcp rule")
	}
}
