package udp

import (
	"net"
	"net/netip"
	"testing"
)

// TestReplyConnsSweep: the sweep closes the answering sockets unused for
// dnsReplyIdle; a full set gives up its longest unused one only when
// unused for dnsReplyBusy; all closes every one.
func TestReplyConnsSweep(t *testing.T) {
	const s = int64(1e9)
	for _, tc := range []struct {
		name   string
		last   []int64 // each socket's last use
		now    int64
		oldest bool
		closed int
	}{
		{"none idle", []int64{100 * s, 110 * s}, 120 * s, false, 0},
		{"one idle", []int64{0, 110 * s}, dnsReplyIdle + s, false, 1},
		{"both idle", []int64{0, 0}, dnsReplyIdle, false, 2},
		{"full, the oldest unused long enough", []int64{100 * s, 110 * s}, 120 * s, true, 1},
		{"full, all busy", []int64{118 * s, 119 * s}, 120 * s, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := &replyConns{m: map[netip.AddrPort]*replyConn{}}
			var conns []*net.UDPConn
			for i, at := range tc.last {
				c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 239, 4, 1)})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				conns = append(conns, c)
				r := &replyConn{c: c}
				r.last.Store(at)
				rs.m[netip.AddrPortFrom(netip.MustParseAddr("127.239.4.1"), uint16(30000+i))] = r
			}
			rs.mu.Lock()
			got := rs.sweepLocked(tc.now, tc.oldest)
			rs.mu.Unlock()
			if got != tc.closed || rs.count() != len(tc.last)-tc.closed {
				t.Fatalf("closed %d, %d left; want %d closed", got, rs.count(), tc.closed)
			}
			rs.sweep(0, true)
			if rs.count() != 0 {
				t.Fatalf("%d left after closing all", rs.count())
			}
			for _, c := range conns {
				if _, err := c.WriteToUDPAddrPort([]byte("x"), netip.MustParseAddrPort("127.239.4.1:9")); err == nil {
					t.Error("a socket still open after closing all")
				}
			}
		})
	}
}
