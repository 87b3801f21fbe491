package gslb

import (
	"errors"
	"net/netip"
	"testing"
	"time"
)

// metrics-exclusions: an excluded LDNS is answered but never probed; the
// one asking after it (in another /24, so another table entry) is, so a
// probe of the first would have started before the second's finished.
func TestMetricsExclusions(t *testing.T) {
	a := netip.MustParseAddr
	for _, tc := range []struct {
		name     string
		exclude  []netip.Addr
		probedEx bool // the excluded address's entry is probed
	}{
		{"none excluded", nil, true},
		{"one excluded", []netip.Addr{a("127.201.9.1")}, false},
		{"another excluded", []netip.Addr{a("127.201.11.1")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := cpuConfig(LowestRoundTripTime, GlobalAvailability, ReturnToDNS)
			cfg.Settings.ProbeProtocols = []string{"nothing"} // each probe fails at once
			cfg.Settings.NoProbe = tc.exclude
			s := newServer(t, cfg, Options{})
			askA(t, s, a("127.201.9.1"), "www.example.com.")
			askA(t, s, a("127.201.10.1"), "www.example.com.")
			probes := func(ldns netip.Addr) (uint64, bool) {
				for _, r := range s.LDNSRecords() {
					if r.Addr == ldns {
						return r.Probes, r.Probing
					}
				}
				return 0, false
			}
			waitFor(t, "the second LDNS probed", func() bool { n, _ := probes(a("127.201.10.1")); return n == 1 })
			if tc.probedEx {
				waitFor(t, "the first LDNS probed", func() bool { n, _ := probes(a("127.201.9.1")); return n == 1 })
				return
			}
			if n, probing := probes(a("127.201.9.1")); n != 0 || probing {
				t.Errorf("excluded LDNS: %d probes (probing %v), want none", n, probing)
			}
			// Asked again, still not probed, and still answered.
			if got := askA(t, s, a("127.201.9.1"), "www.example.com."); !got.IsValid() {
				t.Errorf("excluded LDNS not answered")
			}
			if n, probing := probes(a("127.201.9.1")); n != 0 || probing {
				t.Errorf("excluded LDNS asked again: %d probes (probing %v), want none", n, probing)
			}
		})
	}
}

// metrics-collection-protocols come first in each path measurement: with
// icmp, the loopback LDNS answers the echo (no DNS server needed); the
// LDNS probe protocols follow when it does not.
func TestMetricsCollectionProtocols(t *testing.T) {
	if _, err := probeICMP(t.Context(), netip.Addr{}, netip.MustParseAddr("127.201.12.1"), 2*time.Second); errors.Is(err, errICMPPrivilege) {
		t.Skip(err)
	}
	a := netip.MustParseAddr
	for _, tc := range []struct {
		name    string
		metrics []string
		ldns    []string
		want    string // the protocol that answered ("" none)
	}{
		{"icmp alone", []string{"icmp"}, []string{"nothing"}, "icmp"},
		{"icmp before tcp", []string{"icmp"}, []string{"tcp"}, "icmp"},
		{"unset: the probe protocols", nil, []string{"nothing"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := cpuConfig(LowestRoundTripTime, GlobalAvailability, ReturnToDNS)
			cfg.Settings.ProbeProtocols = tc.ldns
			cfg.Settings.MetricsProtocols = tc.metrics
			s := newServer(t, cfg, Options{})
			askA(t, s, a("127.201.12.1"), "www.example.com.")
			var rec LDNSRecord
			waitFor(t, "the LDNS probed", func() bool {
				rs := s.LDNSRecords()
				if len(rs) == 1 && rs[0].Probes == 1 {
					rec = rs[0]
					return true
				}
				return false
			})
			if len(rec.Paths) == 0 {
				t.Fatalf("no paths: %+v", rec)
			}
			for _, p := range rec.Paths {
				if p.Probe != tc.want {
					t.Errorf("path %s: answered by %q (error %q), want %q", p.Path, p.Probe, p.Error, tc.want)
				}
				if tc.want != "" && p.RTT <= 0 {
					t.Errorf("path %s: RTT %v, want a measurement", p.Path, p.RTT)
				}
			}
		})
	}
}
