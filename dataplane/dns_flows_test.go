package dataplane

import (
	"net"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/dnsvs"
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

// TestDNSQueryDeleteCancels: delete sys connection of a UDP query waiting
// for a member closes the member exchange under way: the query leaves
// the table long before the forward timeout (set to a minute here, so a
// wait that only dropped the answer would outlast the test's ten
// seconds), the client gets no answer even when the member answers
// later, and the dns profile counts it deleted, not unanswered. Not
// parallel: it sets dnsvs.ForwardTimeout, which the parallel tests run
// after.
func TestDNSQueryDeleteCancels(t *testing.T) {
	old := dnsvs.ForwardTimeout
	dnsvs.ForwardTimeout = time.Minute
	defer func() { dnsvs.ForwardTimeout = old }()
	member, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap("127.205.6.11:30353")))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	release := make(chan struct{}, 1)
	got := make(chan struct{}, 1)
	go func() { // answers the query, with QR set, once released
		b := make([]byte, 2048)
		n, from, err := member.ReadFromUDPAddrPort(b)
		if err != nil {
			return
		}
		got <- struct{}{}
		select {
		case <-release:
		case <-time.After(20 * time.Second):
		}
		ans := append([]byte(nil), b[:n]...)
		ans[2] |= 0x80
		member.WriteToUDPAddrPort(ans, from)
	}()
	p, _ := newPlane(t)
	vs := "127.205.6.1:30353"
	cfg := udpBasic(vs, "127.205.6.11:30353")
	cfg.Virtuals["/Common/vs"].DNS = &DNSProfile{Name: "/Common/dns-cancel", Unhandled: "allow"}
	mustApply(t, p, cfg)
	u := dialUDP(t, "127.205.6.2:0", vs)
	port := u.local().Port()
	u.c.Write([]byte("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01"))
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the member got no query")
	}
	waiting := func() int {
		return p.Connections(ConnFilter{CSClientPort: port, Protocol: "udp"}, func(*Connection) bool { return true })
	}
	if waiting() != 1 {
		t.Fatal("the waiting query is not in the connection table")
	}
	if n := p.DeleteConnections(ConnFilter{CSClientPort: port, Protocol: "udp"}); n != 1 {
		t.Fatalf("deleted %d", n)
	}
	eventually(t, "the deleted query's exchange to end", func() bool { return waiting() == 0 })
	release <- struct{}{}
	u.c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := u.c.Read(make([]byte, 2048)); err == nil {
		t.Fatalf("the client got %d bytes after the delete", n)
	}
	if st := p.DNSProfileStats("/Common/dns-cancel"); st.Deleted != 1 || st.NoAnswer != 0 {
		t.Errorf("profile counts: deleted %d, unanswered %d; want 1 and 0", st.Deleted, st.NoAnswer)
	}
}
