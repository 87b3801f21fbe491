package dataplane

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/rtsp"
)

// TestRTSPChannelEphemeral: an rtsp profile's UDP media channels (RTP
// and RTCP) are connection table flows while they last (the client's
// port and the virtual's on the client side, the member's on the server
// side), counted in the virtual's Ephemeral column; deleting one closes
// the session's channels and frees their ports.
func TestRTSPChannelEphemeral(t *testing.T) {
	t.Parallel()
	m := rtspMember(t, "127.200.42.10:8554", "member-e")
	p, _ := newPlane(t)
	cfg := basic("127.200.42.1:8554", m.Addr())
	v := cfg.Virtuals["/Common/vs"]
	v.RTSP = &rtsp.Options{Profile: "/Common/rtsp", Idle: 30 * time.Second}
	mustApply(t, p, cfg)

	payload, _, svp := rtspSession(t, "127.200.42.100", "127.200.42.1:8554")
	if payload != "member-e" {
		t.Fatalf("media %q", payload)
	}
	var rows []Connection
	p.Connections(ConnFilter{Protocol: "udp", Virtual: "/Common/vs"}, func(c *Connection) bool {
		rows = append(rows, *c)
		return true
	})
	if len(rows) != 2 {
		t.Fatalf("%d udp flows of the virtual, want RTP's and RTCP's: %+v", len(rows), rows)
	}
	for _, r := range rows {
		if r.CSClient.Addr() != netip.MustParseAddr("127.200.42.100") || r.CSServer.Addr() != netip.MustParseAddr("127.200.42.1") ||
			(r.CSServer.Port() != svp.First && r.CSServer.Port() != svp.Last) || r.SSServer.Addr() != netip.MustParseAddr("127.200.42.10") {
			t.Errorf("media flow %+v", r)
		}
	}
	eventually(t, "the RTP flow counts the member's datagrams", func() bool {
		st, _ := p.Virtual("/Common/vs")
		return st.Ephemeral.CurConns == 2 && st.Ephemeral.TotConns == 2 && st.Ephemeral.PktsOut > 0
	})
	if n := p.DeleteConnections(ConnFilter{Protocol: "udp", CSServerPort: svp.First}); n != 1 {
		t.Fatalf("deleted %d flows", n)
	}
	eventually(t, "the session's channels are closed and gone from the table", func() bool {
		st, _ := p.Virtual("/Common/vs")
		n := p.Connections(ConnFilter{Protocol: "udp", Virtual: "/Common/vs"}, func(*Connection) bool { return true })
		c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr("127.200.42.1"), svp.First)))
		if err != nil {
			return false
		}
		c.Close()
		return n == 0 && st.Ephemeral.CurConns == 0
	})
}
