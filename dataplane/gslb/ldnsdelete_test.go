package gslb

import (
	"net/netip"
	"testing"
	"time"
)

// delete gtm path forgets the measurements of the LDNSes it names (every
// one without an address) and keeps the LDNSes, whose next query probes
// them afresh; delete gtm ldns forgets the LDNSes themselves.
func TestDeletePathsAndLDNS(t *testing.T) {
	a, b := netip.MustParseAddr("127.194.9.1"), netip.MustParseAddr("127.194.10.1")
	cases := []struct {
		name      string
		paths     netip.Addr // DeletePaths' argument; invalid: every LDNS
		ldns      netip.Addr // DeleteLDNS' argument, when deleteLDNS
		delLDNS   bool
		wantN     int // what the delete returned
		wantLDNS  int // LDNS entries left
		wantPaths map[netip.Addr]int
	}{
		{name: "paths of one LDNS", paths: a, wantN: 2, wantLDNS: 2, wantPaths: map[netip.Addr]int{a: 0, b: 2}},
		{name: "paths of every LDNS", wantN: 4, wantLDNS: 2, wantPaths: map[netip.Addr]int{a: 0, b: 0}},
		{name: "paths of an LDNS not in the table", paths: netip.MustParseAddr("127.194.11.1"), wantN: 0, wantLDNS: 2, wantPaths: map[netip.Addr]int{a: 2, b: 2}},
		{name: "one LDNS", delLDNS: true, ldns: b, wantN: 1, wantLDNS: 1, wantPaths: map[netip.Addr]int{a: 2}},
		{name: "every LDNS", delLDNS: true, wantN: 2, wantLDNS: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := cpuConfig(LowestRoundTripTime, GlobalAvailability, ReturnToDNS)
			cfg.Settings.ProbeProtocols = []string{"nothing"} // no packet leaves: every probe fails at once
			clk := newClock()
			s := newServer(t, cfg, Options{Now: clk.Now})
			for _, x := range []netip.Addr{a, b} {
				askA(t, s, x, "www.example.com.")
				key := ldnsKey(x, &s.plan.Load().settings)
				waitFor(t, "the probe to end", func() bool {
					s.rtt.mu.Lock()
					defer s.rtt.mu.Unlock()
					e := s.rtt.m[key]
					return e == nil || !e.probing
				})
				s.rtt.mu.Lock()
				e := s.rtt.m[key]
				e.paths = map[string]*pathRTT{
					"/Common/ny": {rtt: time.Millisecond, at: clk.Now(), hops: 3, sent: 2, answered: 1},
					"/Common/la": {rtt: 2 * time.Millisecond, at: clk.Now(), hops: -1, sent: 1, answered: 1},
				}
				s.rtt.mu.Unlock()
			}
			var n int
			if c.delLDNS {
				n = s.DeleteLDNS(c.ldns)
			} else {
				n = s.DeletePaths(c.paths)
			}
			if n != c.wantN {
				t.Errorf("deleted %d, want %d", n, c.wantN)
			}
			recs := s.LDNSRecords()
			if len(recs) != c.wantLDNS {
				t.Fatalf("%d LDNS entries left, want %d: %+v", len(recs), c.wantLDNS, recs)
			}
			for _, r := range recs {
				if want := c.wantPaths[r.Addr]; len(r.Paths) != want {
					t.Errorf("%v: %d paths, want %d", r.Addr, len(r.Paths), want)
				}
				if r.Requests != 1 {
					t.Errorf("%v: %d requests, want 1 (kept)", r.Addr, r.Requests)
				}
				for _, p := range r.Paths {
					if p.Path == "/Common/ny" && (p.Hops != 3 || p.Sent != 2 || p.Answered != 1) {
						t.Errorf("%v: path %+v, want hops 3, 1 of 2 answered", r.Addr, p)
					}
				}
			}
			if c.delLDNS {
				return
			}
			// The LDNS whose paths went is probed again at its next query.
			clk.Add(time.Second)
			askA(t, s, a, "www.example.com.")
			waitFor(t, "a fresh probe", func() bool {
				for _, r := range s.LDNSRecords() {
					if r.Addr == a && !r.Probing && r.Probes == 2 {
						return true
					}
				}
				return c.wantPaths[a] != 0 // not deleted: no probe expected
			})
		})
	}
}
