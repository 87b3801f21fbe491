package dataplane

import (
	"testing"
	"time"
)

// TestPacketFilterRateClass: a packet filter's rate-class shapes the
// connections and flows it lets in (a TCP download through an accept
// filter, a UDP exchange through a continue filter the default then
// accepts), as a virtual's rate-class would: they take at least what the
// class's rate implies, and the class counts them.
func TestPacketFilterRateClass(t *testing.T) {
	for i, tc := range []struct {
		name, action, rule string
		udp                bool
	}{
		{"tcp accept", "accept", "tcp and dst port 25401", false},
		{"udp continue", "continue", "udp and dst port 25401", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, member := "127.188.3."+itoa(1+2*i)+":25401", "127.188.3."+itoa(2+2*i)+":25402"
			var cfg *Config
			if tc.udp {
				startUDPMember(t, member, "S1")
				cfg = udpBasic(vs, member)
			} else {
				bwcMember(t, member)
				cfg = basic(vs, member)
			}
			const bps = 2e6
			cfg.RateClasses = map[string]*RateClass{"/Common/two": {Name: "/Common/two", Rate: bps, Ceiling: bps}}
			p, _ := newPlane(t)
			mustApply(t, p, cfg)
			set := pfSet(t, 0, nil, [4]string{"shape", "5", tc.action, tc.rule})
			set.Filters[0].RateClass = "/Common/two"
			p.SetPacketFilter(set)

			start := time.Now()
			var bytes int
			if tc.udp {
				// 100 datagrams of 1000 bytes each way (within the flow's
				// queue, half a second of the class: 125 KB), 200 KB at 2 mbps.
				udpRound(t, vs, 100, 1000)
				bytes = 100 * 1000
			} else {
				download(t, vs, 512<<10)
				bytes = 512 << 10
			}
			if took, want := time.Since(start), atLeast(bytes, bps); took < want {
				t.Fatalf("%d bytes through a %d bps class took %v, less than %v", bytes, uint64(bps), took, want)
			}
			if st := p.bwc.Class("/Common/two").ClassStats(); st.Bytes < uint64(bytes) || st.Delayed == 0 {
				t.Fatalf("class counters %+v, want at least %d bytes passed, some delayed", st, bytes)
			}
			if got := p.PacketFilter().Stats("shape").Matches; got != 1 {
				t.Errorf("shape matched %d, want 1", got)
			}
		})
	}
}
