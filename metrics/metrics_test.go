package metrics

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func snapshot() Snapshot {
	return Snapshot{
		Device:       "bigip1",
		Connections:  3,
		BusyPollOff:  true,
		LoopHolds:    7,
		BatchedSends: 11,
		Virtuals: []Virtual{{Name: "/Common/vs_http", Destination: "10.1.10.100:80",
			Status:  Status{Availability: "available", State: "enabled"},
			Traffic: Traffic{BitsIn: 8000, BitsOut: 16000, PktsIn: 10, PktsOut: 12, CurConns: 3, MaxConns: 5, TotConns: 42, TotRequests: 40}}},
		Pools: []Pool{{Name: "/Common/web_pool", Status: Status{Availability: "offline", State: "enabled"},
			AvailableMembers: 0, TotalMembers: 2}},
		Members: []Member{{Pool: "/Common/web_pool", Name: "/Common/10.1.20.11:80",
			Status: Status{Availability: "offline", State: "disabled"}, Traffic: Traffic{TotConns: 7}}},
		Nodes:       []Node{{Name: "/Common/10.1.20.11", Status: Status{Availability: "unknown", State: "enabled"}}},
		Persistence: []Persistence{{Profile: "/Common/source_addr", Mode: "source-address", Records: 17}},
		WideIPs: []WideIP{{Name: "www.example.com", Type: "a", Status: Status{Availability: "available", State: "enabled"},
			Requests: 12, Preferred: 8, Alternate: 1, Fallback: 1, ReturnedToDNS: 1, Dropped: 1, Persisted: 5, LastResort: 2}},
		GSLBPools: []GSLBPool{{Name: "/Common/gp1", Type: "a", Status: Status{Availability: "available", State: "enabled"},
			Preferred: 7, Alternate: 1, Members: []GSLBPoolMember{
				{Name: "/Common/dc1_server:vs1", Status: Status{Availability: "available", State: "enabled"}},
				{Name: "/Common/dc2_server:vs2", Status: Status{Availability: "offline", State: "enabled"}}}}},
		GSLBServers: []GSLBServer{{Name: "/Common/dc1_server", Datacenter: "/Common/dc1", Status: Status{Availability: "available", State: "enabled"},
			Picks: 7, VirtualServers: []GSLBVirtualServer{{Name: "vs1", Destination: "192.0.2.10:80", Status: Status{Availability: "available", State: "enabled"}, Picks: 7}}}},
		Datacenters:   []GSLBStatus{{Name: "/Common/dc1", Status: Status{Availability: "available", State: "enabled"}}},
		Links:         []GSLBStatus{{Name: "/Common/isp1", Status: Status{Availability: "offline", State: "enabled"}}},
		DNS:           &GSLBDNS{Queries: 20, WideIP: 12, Static: 3, NXDomain: 4, Malformed: 1},
		Sync:          &Sync{Group: "dg1", Status: "Changes Pending", Applied: 4, Head: 5},
		TrafficGroups: []TrafficGroup{{Name: "traffic-group-1", Active: true}},
		Peers:         []Peer{{Name: "bigipB", Age: 150 * time.Millisecond, Etcd: true}},
	}
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// value finds the sample of family name whose labels include want.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("no metric %s", name)
	}
next:
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("no sample of %s with %v", name, want)
	return 0
}

func TestScrape(t *testing.T) {
	var calls atomic.Int32
	e := New(func() Snapshot { calls.Add(1); return snapshot() })
	e.ObserveCommit(3*time.Millisecond, false)
	e.ObserveCommit(20*time.Millisecond, true)
	e.ObserveCommit(30*time.Millisecond, true)
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()
	fams := scrape(t, srv.URL+"/metrics")
	if calls.Load() != 1 {
		t.Fatalf("snapshot called %d times for one scrape", calls.Load())
	}
	vs := map[string]string{"virtual": "/Common/vs_http"}
	pool := map[string]string{"pool": "/Common/web_pool"}
	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"openltm_connections", nil, 3},
		{"openltm_busy_poll_off", nil, 1},
		{"openltm_event_loop_holds_total", nil, 7},
		{"openltm_event_loop_batched_sends_total", nil, 11},
		{"openltm_virtual_info", map[string]string{"virtual": "/Common/vs_http", "destination": "10.1.10.100:80"}, 1},
		{"openltm_virtual_status", map[string]string{"virtual": "/Common/vs_http", "availability": "available"}, 1},
		{"openltm_virtual_status", map[string]string{"virtual": "/Common/vs_http", "availability": "offline"}, 0},
		{"openltm_virtual_enabled", vs, 1},
		{"openltm_virtual_client_bits_in_total", vs, 8000},
		{"openltm_virtual_client_connections", vs, 3},
		{"openltm_virtual_client_connections_max", vs, 5},
		{"openltm_virtual_client_connections_total", vs, 42},
		{"openltm_virtual_requests_total", vs, 40},
		{"openltm_pool_status", map[string]string{"pool": "/Common/web_pool", "availability": "offline"}, 1},
		{"openltm_pool_members", pool, 2},
		{"openltm_pool_members_available", pool, 0},
		{"openltm_pool_member_enabled", map[string]string{"member": "/Common/10.1.20.11:80"}, 0},
		{"openltm_pool_member_server_connections_total", map[string]string{"member": "/Common/10.1.20.11:80"}, 7},
		{"openltm_node_status", map[string]string{"node": "/Common/10.1.20.11", "availability": "unknown"}, 1},
		{"openltm_persistence_records", map[string]string{"mode": "source-address"}, 17},
		{"openltm_gslb_wideip_requests_total", map[string]string{"wideip": "www.example.com", "type": "a"}, 12},
		{"openltm_gslb_wideip_resolutions_total", map[string]string{"wideip": "www.example.com", "method": "preferred"}, 8},
		{"openltm_gslb_wideip_resolutions_total", map[string]string{"wideip": "www.example.com", "method": "fallback"}, 1},
		{"openltm_gslb_wideip_resolutions_total", map[string]string{"wideip": "www.example.com", "method": "return-to-dns"}, 1},
		{"openltm_gslb_wideip_resolutions_total", map[string]string{"wideip": "www.example.com", "method": "dropped"}, 1},
		{"openltm_gslb_wideip_persisted_total", map[string]string{"wideip": "www.example.com"}, 5},
		{"openltm_gslb_wideip_last_resort_total", map[string]string{"wideip": "www.example.com"}, 2},
		{"openltm_gslb_wideip_status", map[string]string{"wideip": "www.example.com", "availability": "available"}, 1},
		{"openltm_gslb_pool_status", map[string]string{"pool": "/Common/gp1", "type": "a", "availability": "available"}, 1},
		{"openltm_gslb_pool_resolutions_total", map[string]string{"pool": "/Common/gp1", "method": "alternate"}, 1},
		{"openltm_gslb_pool_member_status", map[string]string{"member": "/Common/dc2_server:vs2", "availability": "offline"}, 1},
		{"openltm_gslb_pool_member_status", map[string]string{"member": "/Common/dc1_server:vs1", "availability": "offline"}, 0},
		{"openltm_gslb_server_status", map[string]string{"server": "/Common/dc1_server", "datacenter": "/Common/dc1", "availability": "available"}, 1},
		{"openltm_gslb_server_picks_total", map[string]string{"server": "/Common/dc1_server"}, 7},
		{"openltm_gslb_virtual_server_info", map[string]string{"virtual_server": "vs1", "destination": "192.0.2.10:80"}, 1},
		{"openltm_gslb_virtual_server_status", map[string]string{"virtual_server": "vs1", "availability": "available"}, 1},
		{"openltm_gslb_virtual_server_picks_total", map[string]string{"virtual_server": "vs1"}, 7},
		{"openltm_gslb_datacenter_status", map[string]string{"datacenter": "/Common/dc1", "availability": "available"}, 1},
		{"openltm_gslb_link_status", map[string]string{"link": "/Common/isp1", "availability": "offline"}, 1},
		{"openltm_gslb_dns_queries_total", nil, 20},
		{"openltm_gslb_dns_responses_total", map[string]string{"outcome": "nxdomain"}, 4},
		{"openltm_sync_status", map[string]string{"group": "dg1", "status": "Changes Pending"}, 1},
		{"openltm_sync_status", map[string]string{"group": "dg1", "status": "In Sync"}, 0},
		{"openltm_sync_generation", map[string]string{"which": "head"}, 5},
		{"openltm_failover_active", map[string]string{"traffic_group": "traffic-group-1"}, 1},
		{"openltm_network_failover_heartbeat_age_seconds", map[string]string{"peer": "bigipB"}, 0.15},
		{"openltm_network_failover_peer_etcd", map[string]string{"peer": "bigipB"}, 1},
		{"openltm_commit_duration_seconds", map[string]string{"scope": "group"}, 2},
		{"openltm_commit_duration_seconds", map[string]string{"scope": "local"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := value(t, fams, tt.name, tt.labels); got != tt.want {
				t.Fatalf("%s%v = %v, want %v", tt.name, tt.labels, got, tt.want)
			}
		})
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Fatal("Go runtime metrics missing")
	}
	// The next scrape reads a fresh snapshot.
	scrape(t, srv.URL+"/metrics")
	if calls.Load() != 2 {
		t.Fatalf("snapshot called %d times for two scrapes", calls.Load())
	}
}

// A device in no group exports no sync series, and a snapshot that names an
// object twice still serves the rest.
func TestStandaloneAndDuplicates(t *testing.T) {
	s := snapshot()
	s.Sync = nil
	s.Nodes = append(s.Nodes, s.Nodes[0])
	srv := httptest.NewServer(New(func() Snapshot { return s }).Handler())
	defer srv.Close()
	fams := scrape(t, srv.URL)
	if _, ok := fams["openltm_sync_status"]; ok {
		t.Fatal("sync status exported for a standalone device")
	}
	if got := value(t, fams, "openltm_virtual_client_connections", map[string]string{"virtual": "/Common/vs_http"}); got != 3 {
		t.Fatalf("virtual connections %v", got)
	}
}

func BenchmarkScrape1000Virtuals(b *testing.B) {
	s := snapshot()
	for i := 0; i < 1000; i++ {
		v := s.Virtuals[0]
		v.Name = "/Common/vs_" + string(rune('a'+i%26)) + time.Duration(i).String()
		s.Virtuals = append(s.Virtuals, v)
	}
	e := New(func() Snapshot { return s })
	h := e.Handler()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}
