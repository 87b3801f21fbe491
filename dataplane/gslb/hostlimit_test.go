package gslb

import (
	"testing"
)

// A gtm server's resource limits: at its CPU, bandwidth or packet limit,
// or with its available memory at or under its limit, the server's
// virtual servers leave the answers and show says why; a figure nobody
// reported does not count, and throughput the server does not report
// itself is its virtual servers' together.
func TestServerResourceLimits(t *testing.T) {
	cases := []struct {
		name    string
		limits  Host // only the limit fields are read
		host    *HostMetrics
		vs      *VSMetrics // west's virtual server
		wantOut string     // west's reason; "" when west is available
	}{
		{"no limits", Host{}, &HostMetrics{CPUUsage: 100, MemAvail: 0, Bps: 1e12, Pps: 1e9}, nil, ""},
		{"cpu under", Host{LimitCPUUsage: 80}, &HostMetrics{CPUUsage: 79, MemAvail: -1, Bps: -1, Pps: -1}, nil, ""},
		{"cpu at", Host{LimitCPUUsage: 80}, &HostMetrics{CPUUsage: 80, MemAvail: -1, Bps: -1, Pps: -1}, nil, reasonHostCPU},
		{"cpu unknown", Host{LimitCPUUsage: 80}, &HostMetrics{CPUUsage: -1, MemAvail: -1, Bps: -1, Pps: -1}, nil, ""},
		{"cpu never reported", Host{LimitCPUUsage: 1}, nil, nil, ""},
		{"memory above", Host{LimitMemAvail: 1024}, &HostMetrics{CPUUsage: -1, MemAvail: 1025, Bps: -1, Pps: -1}, nil, ""},
		{"memory at", Host{LimitMemAvail: 1024}, &HostMetrics{CPUUsage: -1, MemAvail: 1024, Bps: -1, Pps: -1}, nil, reasonHostMem},
		{"memory unknown", Host{LimitMemAvail: 1024}, &HostMetrics{CPUUsage: -1, MemAvail: -1, Bps: -1, Pps: -1}, nil, ""},
		{"bps reported by the server", Host{LimitMaxBps: 1000}, &HostMetrics{CPUUsage: -1, MemAvail: -1, Bps: 1000, Pps: -1}, nil, reasonHostBps},
		{"bps under", Host{LimitMaxBps: 1000}, &HostMetrics{CPUUsage: -1, MemAvail: -1, Bps: 999, Pps: -1}, &VSMetrics{Bps: 5000}, ""},
		{"bps from the virtual servers", Host{LimitMaxBps: 1000}, nil, &VSMetrics{Bps: 1000}, reasonHostBps},
		{"pps from the virtual servers", Host{LimitMaxPps: 50}, &HostMetrics{CPUUsage: -1, MemAvail: -1, Bps: -1, Pps: -1}, &VSMetrics{PacketRate: 60}, reasonHostPps},
		{"pps under", Host{LimitMaxPps: 50}, nil, &VSMetrics{PacketRate: 49}, ""},
		{"first limit reached wins", Host{LimitCPUUsage: 90, LimitMaxPps: 50}, &HostMetrics{CPUUsage: 95, MemAvail: -1, Bps: -1, Pps: 70}, nil, reasonHostCPU},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := ecsConfig()
			cfg.Pools["/Common/web"].Mode = GlobalAvailability // west first while it is available
			w := cfg.Servers["/Common/west"]
			w.LimitCPUUsage, w.LimitMemAvail, w.LimitMaxBps, w.LimitMaxPps = c.limits.LimitCPUUsage, c.limits.LimitMemAvail, c.limits.LimitMaxBps, c.limits.LimitMaxPps
			s := newServer(t, cfg, Options{})
			s.SetServerMetrics("/Common/west", c.host)
			if c.vs != nil {
				s.SetVirtualServerMetrics("/Common/west", "vs", *c.vs)
			}
			want := ecsWest
			if c.wantOut != "" {
				want = ecsEast
			}
			if got := askA(t, s, ecsResolver, "www.ecs.test."); got != want {
				t.Errorf("answer %v, want %v", got, want)
			}
			for _, ss := range s.Servers() {
				if ss.Name != "/Common/west" {
					continue
				}
				if c.wantOut == "" && ss.Status.Availability != Available {
					t.Errorf("show: %+v, want available", ss.Status)
				}
				if c.wantOut != "" && (ss.Status.Reason != c.wantOut || ss.Status.Availability == Available) {
					t.Errorf("show: %+v, want %q", ss.Status, c.wantOut)
				}
				if (ss.Host != nil) != (c.host != nil) {
					t.Errorf("show: reported load %v, want %v", ss.Host, c.host)
				}
			}
			// The server stops reporting: its own figures no longer count.
			s.SetServerMetrics("/Common/west", nil)
			if c.vs == nil {
				if got := askA(t, s, ecsResolver, "www.ecs.test."); got != ecsWest {
					t.Errorf("after the report is gone: answer %v, want %v", got, ecsWest)
				}
			}
		})
	}
}
