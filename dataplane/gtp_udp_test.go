package dataplane

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/gtpmsg"
)

// startGTPMember is a GTP peer (gtpmsg.Serve) on addr naming itself
// label.
func startGTPMember(t *testing.T, addr, label string) {
	t.Helper()
	c, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatalf("member %s: %v", addr, err)
	}
	go gtpmsg.Serve(c, label)
	t.Cleanup(func() { c.Close() })
}

// gtpVirtual is a UDP virtual with a gtp profile over the members of
// /Common/pool, a second pool /Common/pool2 over members2, and rule.
func gtpVirtual(t *testing.T, vs, rule string, members, members2 []string) *Plane {
	t.Helper()
	p, _ := newPlane(t)
	cfg := udpBasic(vs, members...)
	cfg.Virtuals["/Common/vs"].GTP = &GTPProfile{IngressMax: 100}
	cfg.Pools["/Common/pool2"] = &Pool{Name: "/Common/pool2", LBMode: RoundRobin}
	for _, m := range members2 {
		a := ap(m)
		cfg.Pools["/Common/pool2"].Members = append(cfg.Pools["/Common/pool2"].Members, Member{Node: "/Common/" + a.Addr().String(), Addr: a})
	}
	if rule != "" {
		cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
	}
	mustApply(t, p, cfg)
	return p
}

// gtpAsk sends req on c and returns the answer, asking again after a
// second without one (three times at most); nil when none came.
func gtpAsk(t *testing.T, c *net.UDPConn, req []byte) *gtpmsg.Message {
	t.Helper()
	buf := make([]byte, 65535)
	for try := 0; try < 3; try++ {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, err := c.Read(buf)
		if err != nil {
			continue
		}
		m, err := gtpmsg.Parse(append([]byte(nil), buf[:n]...))
		if err != nil {
			t.Fatalf("answer % x: %v", buf[:n], err)
		}
		return m
	}
	return nil
}

func gtpDial(t *testing.T, src, vs string) *net.UDPConn {
	t.Helper()
	c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(src), 0)), net.UDPAddrFromAddrPort(ap(vs)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func createSession(imsi, apn string, seq uint32) []byte {
	id, _ := gtpmsg.EncodeTBCD(imsi)
	m := gtpmsg.Message{Header: gtpmsg.Header{Version: 2, Type: gtpmsg.CreateSessionRequest, HasTEID: true, Seq: seq},
		IEs: []gtpmsg.IE{{Type: gtpmsg.IEv2IMSI, Value: id}, {Type: gtpmsg.IEv2APN, Value: gtpmsg.EncodeAPN(apn)}}}
	return m.Append(nil)
}

// TestGTPBalancedPerMessage: every message of one client socket is
// balanced by itself (round robin over both members), v1 and v2, and
// each answer comes back to the request it answers.
func TestGTPBalancedPerMessage(t *testing.T) {
	vs := "127.122.1.1:2123"
	startGTPMember(t, "127.122.1.2:2123", "M1")
	startGTPMember(t, "127.122.1.3:2123", "M2")
	gtpVirtual(t, vs, "", []string{"127.122.1.2:2123", "127.122.1.3:2123"}, nil)
	c := gtpDial(t, "127.122.1.100", vs)
	seen := map[string]int{}
	for i := 1; i <= 8; i++ {
		req := gtpmsg.Echo(1+i%2, uint32(i))
		if i > 4 {
			req = createSession("001010000000001", "internet", uint32(i))
		}
		a := gtpAsk(t, c, req)
		if a == nil {
			t.Fatalf("request %d: no answer", i)
		}
		if a.Seq != uint32(i) {
			t.Fatalf("request %d: answer to sequence number %d", i, a.Seq)
		}
		seen[gtpmsg.Label(a)]++
	}
	if seen["M1"] == 0 || seen["M2"] == 0 {
		t.Fatalf("answers by member: %v; want both", seen)
	}
}

// TestGTPRuleChoosesPool: a rule reads the IMSI and APN IEs of a
// Create Session Request and chooses the pool.
func TestGTPRuleChoosesPool(t *testing.T) {
	vs := "127.122.2.1:2123"
	startGTPMember(t, "127.122.2.2:2123", "DEFAULT")
	startGTPMember(t, "127.122.2.3:2123", "ROAMING")
	rule := `when GTP_SIGNALLING_INGRESS {
	if { [GTP::header type] == 32 } {
		if { [GTP::ie get value 1] starts_with "20801" || [GTP::ie get value 71] eq "ims" } {
			pool /Common/pool2
		} else {
			pool /Common/pool
		}
	}
}`
	gtpVirtual(t, vs, rule, []string{"127.122.2.2:2123"}, []string{"127.122.2.3:2123"})
	c := gtpDial(t, "127.122.2.100", vs)
	for i, tc := range []struct{ imsi, apn, want string }{
		{"001010000000001", "internet", "DEFAULT"},
		{"208010000000001", "internet", "ROAMING"},
		{"001010000000002", "ims", "ROAMING"},
		{"001010000000003", "internet", "DEFAULT"},
	} {
		a := gtpAsk(t, c, createSession(tc.imsi, tc.apn, uint32(i+1)))
		if a == nil {
			t.Fatalf("%s %s: no answer", tc.imsi, tc.apn)
		}
		if got := gtpmsg.Label(a); got != tc.want || a.Type != gtpmsg.CreateSessionResponse {
			t.Errorf("%s %s: type %d from %s, want %s", tc.imsi, tc.apn, a.Type, got, tc.want)
		}
	}
}

// TestGTPRespondEcho: a rule answers Echo Requests itself with
// GTP::respond (Recovery 7) and discards them; Create Session Requests
// still reach the member.
func TestGTPRespondEcho(t *testing.T) {
	vs := "127.122.3.1:2123"
	startGTPMember(t, "127.122.3.2:2123", "M1")
	rule := `when GTP_SIGNALLING_INGRESS {
	if { [GTP::header type] == 1 } {
		set r [GTP::new [GTP::header version] 2]
		GTP::header -message $r seq [GTP::header seq]
		GTP::ie -message $r insert 3 7
		GTP::respond $r
		GTP::discard
	}
}`
	gtpVirtual(t, vs, rule, []string{"127.122.3.2:2123"}, nil)
	c := gtpDial(t, "127.122.3.100", vs)
	a := gtpAsk(t, c, gtpmsg.Echo(2, 4242))
	if a == nil || a.Type != gtpmsg.EchoResponse || a.Seq != 4242 {
		t.Fatalf("echo answer %+v", a)
	}
	if ie, ok := a.Find(gtpmsg.IEv2Recovery, 0, 0); !ok || len(ie.Value) != 1 || ie.Value[0] != 7 || gtpmsg.Label(a) != "" {
		t.Fatalf("echo answer's IEs %+v: want the rule's Recovery 7, not the member's", a.IEs)
	}
	if a := gtpAsk(t, c, createSession("001010000000001", "internet", 5)); a == nil || gtpmsg.Label(a) != "M1" {
		t.Fatalf("create session answer %+v", a)
	}
}

// TestGTPMalformedDropped: datagrams that are not GTP (short, a length
// past the datagram, an IE past the message, text) never reach the
// member and are counted dropped; a good message after them is answered.
func TestGTPMalformedDropped(t *testing.T) {
	vs := "127.122.4.1:2123"
	startGTPMember(t, "127.122.4.2:2123", "M1")
	p := gtpVirtual(t, vs, "", []string{"127.122.4.2:2123"}, nil)
	c := gtpDial(t, "127.122.4.100", vs)
	bad := [][]byte{
		{0x32, 1},
		{0x32, 1, 0, 40, 0, 0, 0, 0, 0, 1, 0, 0},
		{0x40, 1, 0, 9, 0, 0, 1, 0, 3, 0, 9, 0, 0},
		[]byte("GET / HTTP/1.0\r\n\r\n"),
	}
	for _, b := range bad {
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if a := gtpAsk(t, c, gtpmsg.Echo(1, 9)); a == nil || a.Seq != 9 || gtpmsg.Label(a) != "M1" {
		t.Fatalf("echo answer %+v", a)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := p.ProfileStats(ProfileUDP, "/Common/udp", []string{"/Common/vs"})
		if st.Conns.Dropped >= uint64(len(bad)) {
			if st.Conns.Dropped > uint64(len(bad)) {
				t.Fatalf("%d dropped, want %d", st.Conns.Dropped, len(bad))
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d dropped, want %d", st.Conns.Dropped, len(bad))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
