package gslb

import (
	"net/netip"
	"testing"
	"time"
)

// inactive-ldns-ttl drops the LDNSes that stopped asking, inactive-paths-ttl
// the measurements no probe renewed, and cache-ldns-servers no keeps no
// LDNS at all (nothing probed: the round-trip method passes to the
// alternate).
func TestLDNSAgeing(t *testing.T) {
	day := 24 * time.Hour
	a, b := netip.MustParseAddr("127.61.9.1"), netip.MustParseAddr("127.61.10.1")
	cases := []struct {
		name      string
		st        Settings
		askB      time.Duration // when b asks, after a
		pathAge   time.Duration // age of a's one measurement at the sweep
		sweep     time.Duration // when the janitor sweeps, after a asked
		wantLDNS  []netip.Addr
		wantPaths int // measurements kept on a's entry
	}{
		{"defaults keep 27 days", Settings{}, day, 6 * day, 27 * day, []netip.Addr{a, b}, 1},
		{"defaults drop at 28 days", Settings{}, 10 * day, 6 * day, 28*day + time.Second, []netip.Addr{b}, 0},
		{"path older than 7 days dropped", Settings{}, day, 7*day + time.Second, 8 * day, []netip.Addr{a, b}, 0},
		{"inactive-ldns-ttl 3600", Settings{InactiveLDNSTTL: time.Hour}, 50 * time.Minute, time.Minute, 70 * time.Minute, []netip.Addr{b}, 0},
		{"inactive-paths-ttl 60", Settings{InactivePathsTTL: time.Minute}, time.Second, 2 * time.Minute, 2 * time.Minute, []netip.Addr{a, b}, 0},
		{"inactive-paths-ttl 60, fresh", Settings{InactivePathsTTL: time.Minute}, time.Second, 30 * time.Second, 2 * time.Minute, []netip.Addr{a, b}, 1},
		{"cache-ldns-servers no", Settings{NoCacheLDNS: true}, time.Second, time.Second, 2 * time.Second, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := cpuConfig(LowestRoundTripTime, GlobalAvailability, ReturnToDNS)
			cfg.Settings = c.st
			cfg.Settings.ProbeProtocols = []string{"nothing"} // no packet leaves: every probe fails at once
			clk := newClock()
			s := newServer(t, cfg, Options{Now: clk.Now})
			t0 := clk.Now()
			if got := askA(t, s, a, "www.example.com."); got != netip.MustParseAddr("127.61.1.11") {
				t.Fatalf("first answer %v, want the alternate's", got)
			}
			key := ldnsKey(a, &s.plan.Load().settings)
			waitFor(t, "the probe to end", func() bool {
				s.rtt.mu.Lock()
				defer s.rtt.mu.Unlock()
				e := s.rtt.m[key]
				return e == nil || !e.probing
			})
			clk.Add(c.askB)
			askA(t, s, b, "www.example.com.")
			sweep := t0.Add(c.sweep)
			s.rtt.mu.Lock()
			if e := s.rtt.m[key]; e != nil {
				e.paths = map[string]*pathRTT{"/Common/ny": {rtt: time.Millisecond, at: sweep.Add(-c.pathAge), hops: -1}}
			}
			s.rtt.mu.Unlock()
			s.ageLDNS(sweep)
			var got []netip.Addr
			paths := 0
			for _, r := range s.LDNSRecords() {
				got = append(got, r.Addr)
				if r.Addr == a {
					paths = len(r.Paths)
				}
			}
			if len(got) != len(c.wantLDNS) {
				t.Fatalf("LDNS table %v, want %v", got, c.wantLDNS)
			}
			for i := range got {
				if got[i] != c.wantLDNS[i] {
					t.Fatalf("LDNS table %v, want %v", got, c.wantLDNS)
				}
			}
			if paths != c.wantPaths {
				t.Errorf("%d measurements kept for %v, want %d", paths, a, c.wantPaths)
			}
		})
	}
}

// cache-ldns-servers no empties a table filled before it was set, and
// starts no probe: the round-trip method has no figure.
func TestCacheLDNSServersOff(t *testing.T) {
	cfg := cpuConfig(LowestRoundTripTime, GlobalAvailability, ReturnToDNS)
	cfg.Settings.ProbeProtocols = []string{"nothing"}
	s := newServer(t, cfg, Options{})
	a := netip.MustParseAddr("127.61.9.1")
	askA(t, s, a, "www.example.com.")
	waitFor(t, "the LDNS probed", func() bool {
		r := s.LDNSRecords()
		return len(r) == 1 && r[0].Probes == 1
	})
	cfg.Settings.NoCacheLDNS = true
	if err := s.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	s.ageLDNS(time.Now())
	for i := 0; i < 3; i++ {
		if got := askA(t, s, a, "www.example.com."); got != netip.MustParseAddr("127.61.1.11") {
			t.Fatalf("answer %v, want the alternate's", got)
		}
	}
	if r := s.LDNSRecords(); len(r) != 0 {
		t.Errorf("LDNS table %v, want empty", r)
	}
	if st := s.Pools()[0]; st.AltCount != 4 || st.Preferred != 0 {
		t.Errorf("preferred %d alternate %d, want 0 and 4", st.Preferred, st.AltCount)
	}
}

// A full LDNS table sheds the LDNSes idle for two path TTLs, though
// inactive-ldns-ttl would keep them for weeks; one not full keeps them.
func TestLDNSTableFullSheds(t *testing.T) {
	for _, full := range []bool{false, true} {
		s := newServer(t, cpuConfig(RoundRobin, RoundRobin, ReturnToDNS), Options{})
		t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		n := 1000
		if full {
			n = maxLDNS
		}
		s.rtt.mu.Lock()
		for i := 0; i < n; i++ {
			// Keys only (nothing is sent): 127.61.0.0/16 holds 65536
			// addresses, each taken with four prefix lengths.
			a := netip.AddrFrom4([4]byte{127, 61, byte(i >> 8), byte(i)})
			k := netip.PrefixFrom(a, 32-(i>>16))
			s.rtt.m[k] = &ldnsEntry{key: k, addr: a, first: t0, last: t0, paths: map[string]*pathRTT{}}
		}
		s.rtt.mu.Unlock()
		s.ageLDNS(t0.Add(2*2400*time.Second + time.Second))
		got := len(s.LDNSRecords())
		if want := map[bool]int{false: n, true: 0}[full]; got != want {
			t.Errorf("full %v: %d LDNSes kept, want %d", full, got, want)
		}
	}
}
