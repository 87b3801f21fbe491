//go:build linux

package dataplane

import (
	"testing"
	"time"
)

// TestAnyPortUDPForward: an ip-forward UDP virtual on every port of
// 127.239.5.1 sends each datagram on to the socket the client sent to
// (two sockets of other programs bound to the address, one port each),
// from the virtual's address, and the answers reach a
// connected client from the port it sent to; a port nobody holds gets
// no answer, and a client's second datagram goes the same way.
func TestAnyPortUDPForward(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	own := startUDPMember(t, "127.239.5.1:30071", "E71")
	other := startUDPMember(t, "127.239.5.1:30072", "E72")
	p, _ := loggedPlane(t)
	cfg := &Config{Virtuals: map[string]*Virtual{"/Common/fwd": {Name: "/Common/fwd", Destination: ap("127.239.5.1:0"),
		Enabled: true, Protocol: ProtoUDP, IPForward: true, SNAT: SNAT{Type: SNATNone}}},
		Pools: map[string]*Pool{}, Monitors: map[string]*Monitor{}}
	mustApply(t, p, cfg)
	for _, tc := range []struct {
		dst, msg, want string
		m              *udpMember
	}{
		{"127.239.5.1:30071", "a", "E71:a", own},
		{"127.239.5.1:30072", "b", "E72:b", other},
	} {
		u := dialUDP(t, "127.239.5.100:0", tc.dst)
		for _, msg := range []string{tc.msg, tc.msg + "2"} {
			if got := u.mustAsk(msg); got != tc.want[:4]+msg {
				t.Errorf("%s: %q, want %q", tc.dst, got, tc.want[:4]+msg)
			}
		}
		for _, from := range tc.m.sources() {
			if from.Addr().String() != "127.239.5.1" {
				t.Errorf("%s: forwarded from %v, want the virtual's own address", tc.dst, from)
			}
		}
		if n := len(tc.m.sources()); n < 2 {
			t.Errorf("%s: %d datagrams reached the socket there, want 2", tc.dst, n)
		}
	}
	u := dialUDP(t, "127.239.5.100:0", "127.239.5.1:30073")
	u.c.Write([]byte("c"))
	u.c.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 512)
	if n, err := u.c.Read(buf); err == nil {
		t.Errorf("port 30073 with nobody there: answered %q", buf[:n])
	}
	if v, _ := p.Virtual("/Common/fwd"); v.ClientSide.PktsOut < 4 {
		t.Errorf("%d datagrams counted out, want at least 4", v.ClientSide.PktsOut)
	}
}
