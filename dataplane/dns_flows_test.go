package dataplane

import (
	"net"
	"testing"
	"time"
)

// TestDNSQueryFlows: a UDP query a dns profile's virtual forwards to its
// pool is a flow of the connection table while it waits for the member
// (the client and the virtual on the client side), gone once answered;
// delete sys connection drops it, so its answer is not sent.
func TestDNSQueryFlows(t *testing.T) {
	t.Parallel()
	member, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap("127.200.44.11:30053")))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	release := make(chan struct{}, 4)
	go func() { // answers each query, with QR set, once released
		b := make([]byte, 2048)
		for {
			n, from, err := member.ReadFromUDPAddrPort(b)
			if err != nil {
				return
			}
			select {
			case <-release:
			case <-time.After(20 * time.Second):
			}
			ans := append([]byte(nil), b[:n]...)
			ans[2] |= 0x80
			member.WriteToUDPAddrPort(ans, from)
		}
	}()
	p, _ := newPlane(t)
	vs := "127.200.44.1:30053"
	cfg := udpBasic(vs, "127.200.44.11:30053")
	cfg.Virtuals["/Common/vs"].DNS = &DNSProfile{Name: "/Common/dns", Unhandled: "allow"}
	mustApply(t, p, cfg)
	query := func(id byte) string {
		return "\x12" + string([]byte{id}) + "\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01"
	}
	for _, tc := range []struct {
		name   string
		delete bool
		want   string
	}{
		{"answered", false, "answer"},
		{"deleted while waiting", true, "nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := dialUDP(t, "127.200.44.2:0", vs)
			port := u.c.LocalAddr().(*net.UDPAddr).AddrPort().Port()
			u.c.Write([]byte(query(byte(port))))
			var row *Connection
			for i := 0; i < 200 && row == nil; i++ {
				p.Connections(ConnFilter{CSClientPort: port, Protocol: "udp"}, func(c *Connection) bool {
					cp := *c
					row = &cp
					return false
				})
				if row == nil {
					time.Sleep(20 * time.Millisecond)
				}
			}
			if row == nil {
				t.Fatal("the waiting query is not in the connection table")
			}
			if row.CSServer != ap(vs) || row.Virtual != "/Common/vs" {
				t.Fatalf("row %+v", row)
			}
			if tc.delete {
				if n := p.DeleteConnections(ConnFilter{CSClientPort: port, Protocol: "udp"}); n != 1 {
					t.Fatalf("deleted %d", n)
				}
			}
			release <- struct{}{}
			u.c.SetReadDeadline(time.Now().Add(3 * time.Second))
			buf := make([]byte, 2048)
			got := "answer"
			if _, err := u.c.Read(buf); err != nil {
				got = "nothing"
			}
			if got != tc.want {
				t.Fatalf("the client got %s, want %s", got, tc.want)
			}
			for i := 0; i < 200; i++ {
				if p.Connections(ConnFilter{CSClientPort: port, Protocol: "udp"}, func(*Connection) bool { return true }) == 0 {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Fatal("the query stayed in the table")
		})
	}
}
