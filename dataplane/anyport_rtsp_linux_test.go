//go:build linux

package dataplane

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/rtsp"
)

// TestAnyPortRTSP: an rtsp virtual on every port of 127.239.10.1, its
// member at port any (two RTSP members, ports 30554 and 30555), sets up
// and plays a UDP session on each port: SETUP and PLAY on connections of
// their own reach the member on the port asked, and its RTP reaches the
// client from the virtual's address and the port it was told, beside a
// UDP virtual on every port of the same address, which does not take
// the datagrams the client sends to the ports of the session's data
// channel (the steering passes them over while it is open) but does
// take those of a port no channel holds.
func TestAnyPortRTSP(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	rtspMember(t, "127.239.10.11:30554", "member-30554")
	rtspMember(t, "127.239.10.11:30555", "member-30555")
	p, _ := loggedPlane(t)
	cfg := basic("127.239.10.1:0", "127.239.10.11:0")
	cfg.Virtuals["/Common/vs"].RTSP = &rtsp.Options{Profile: "/Common/rtsp", Idle: 30 * time.Second}
	cfg.Virtuals["/Common/udp"] = &Virtual{Name: "/Common/udp", Destination: ap("127.239.10.1:0"), Enabled: true, Protocol: ProtoUDP,
		TranslateAddress: true, TranslatePort: true, Pool: "/Common/pool", SNAT: SNAT{Type: SNATNone}}
	mustApply(t, p, cfg)
	var told []uint16
	for _, port := range []string{"30554", "30555"} {
		payload, _, svp := rtspSession(t, "127.239.10.100", "127.239.10.1:"+port)
		if payload != "member-"+port {
			t.Errorf("port %s: media %q, want the member on that port's", port, payload)
		}
		told = append(told, svp.First)
	}
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap("127.239.10.101:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, port := range told {
		c.WriteToUDPAddrPort([]byte("rtcp"), netip.AddrPortFrom(netip.MustParseAddr("127.239.10.1"), port))
	}
	c.WriteToUDPAddrPort([]byte("other"), ap("127.239.10.1:30999"))
	udpIn := func() uint64 { // taken, whether or not a flow could be made
		st := p.ProfileStats(ProfileUDP, "", []string{"/Common/udp"}).Conns
		return st.DatagramsIn + st.Dropped
	}
	eventually(t, "the udp virtual takes the port no channel holds", func() bool { return udpIn() >= 1 })
	time.Sleep(200 * time.Millisecond)
	if n := udpIn(); n != 1 {
		t.Errorf("the udp virtual on every port took %d datagrams, want 1 (not the channels' ports %v)", n, told)
	}
}
