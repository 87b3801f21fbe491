package daemon

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// pcpReq is a PCP request (RFC 6887) as a client writes it: the common
// header, the MAP or PEER payload, the options.
type pcpReq struct {
	version, opcode uint8
	lifetime        uint32
	client          netip.Addr
	nonce           [12]byte
	proto           uint8
	internalPort    uint16
	extPort         uint16
	extAddr         netip.Addr
	peerPort        uint16
	peerAddr        netip.Addr
	options         []byte
	raw             []byte // sent as is when set
}

func put16(b []byte, a netip.Addr) {
	if a.IsValid() {
		x := a.As16()
		copy(b, x[:])
	} else {
		b[10], b[11] = 0xff, 0xff // ::ffff:0.0.0.0
	}
}

func (r pcpReq) bytes() []byte {
	if r.raw != nil {
		return r.raw
	}
	b := make([]byte, 24)
	b[0], b[1] = r.version, r.opcode
	binary.BigEndian.PutUint32(b[4:], r.lifetime)
	put16(b[8:24], r.client)
	if r.opcode == 1 || r.opcode == 2 {
		n := 36
		if r.opcode == 2 {
			n = 56
		}
		p := make([]byte, n)
		copy(p, r.nonce[:])
		p[12] = r.proto
		binary.BigEndian.PutUint16(p[16:], r.internalPort)
		binary.BigEndian.PutUint16(p[18:], r.extPort)
		put16(p[20:36], r.extAddr)
		if r.opcode == 2 {
			binary.BigEndian.PutUint16(p[36:], r.peerPort)
			put16(p[40:56], r.peerAddr)
		}
		b = append(b, p...)
	}
	return append(b, r.options...)
}

// pcpResp is what the server answered.
type pcpResp struct {
	opcode, result uint8
	lifetime       uint32
	ext            netip.AddrPort
}

// pcpAsk sends r from src to the server and reads the answer.
func pcpAsk(t *testing.T, src, server string, r pcpReq) pcpResp {
	t.Helper()
	c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(src)), net.UDPAddrFromAddrPort(netip.MustParseAddrPort(server)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 1100)
	for try := 0; try < 10; try++ { // PCP retransmits: the server may not listen yet
		c.Write(r.bytes())
		c.SetReadDeadline(time.Now().Add(time.Second))
		n, err := c.Read(buf)
		if err != nil {
			continue
		}
		if n < 24 || buf[1]&0x80 == 0 {
			t.Fatalf("answer of %d octets, opcode %#x", n, buf[1])
		}
		a := pcpResp{opcode: buf[1] &^ 0x80, result: buf[3], lifetime: binary.BigEndian.Uint32(buf[4:])}
		if n >= 24+36 && (a.opcode == 1 || a.opcode == 2) {
			p := buf[24:]
			a.ext = netip.AddrPortFrom(netip.AddrFrom16([16]byte(p[20:36])).Unmap(), binary.BigEndian.Uint16(p[18:]))
		}
		return a
	}
	t.Fatalf("no PCP answer from %s", server)
	return pcpResp{}
}

// TestLSNPoolPCP: an lsn pool with a pcp profile and selfip answers PCP
// on the selfip's address: a MAP gives the subscriber an external
// address and port of the pool whose inbound TCP connections and UDP
// datagrams reach the subscriber's internal port; lifetimes are clamped
// to the profile; lifetime 0 deletes; the errors answer with RFC 6887's
// result codes; show ltm lsn-pool counts the mappings.
func TestLSNPoolPCP(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	runAll(t, s,
		"create net vlan internal",
		"create net self pcp_self address 127.161.0.1/16 vlan internal allow-service { udp:5351 }",
		"create ltm profile pcp pcp_lim defaults-from pcp map-limit-per-client 2 max-mapping-lifetime 600 min-mapping-lifetime 120 listening-port 5351",
		"create ltm lsn-pool cg members add { 127.161.10.0/30 } translation-port-range 40000:40999 pcp { profile pcp_lim selfip pcp_self }",
	)
	server := "127.161.0.1:5351"
	sub := netip.MustParseAddr("127.161.1.5")

	// The subscriber's TCP service, on its internal port.
	fromMember(t, "127.161.1.5:8022", fromInside, false)
	nonce := [12]byte{1, 2, 3}
	m := pcpAsk(t, "127.161.1.5:0", server, pcpReq{version: 2, opcode: 1, lifetime: 30, client: sub, nonce: nonce, proto: 6, internalPort: 8022})
	if m.result != 0 || m.lifetime != 120 {
		t.Fatalf("MAP: result %d lifetime %d, want 0 and 120 (the profile's minimum)", m.result, m.lifetime)
	}
	inPrefix(t, m.ext, "127.161.10.0/30", 40000, 40999)
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.161.2.9")}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", m.ext.String())
	if err != nil {
		t.Fatalf("inbound to the mapping %s: %v", m.ext, err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	c.Close()
	if err != nil || !strings.HasPrefix(line, "inside 127.161.2.9:") {
		t.Fatalf("inbound through the mapping: %q %v", line, err)
	}
	// Asking again refreshes the same mapping; the lifetime is clamped
	// to the maximum.
	again := pcpAsk(t, "127.161.1.5:0", server, pcpReq{version: 2, opcode: 1, lifetime: 99999, client: sub, nonce: nonce, proto: 6, internalPort: 8022})
	if again.result != 0 || again.ext != m.ext || again.lifetime != 600 {
		t.Errorf("refresh: %+v, want %s for 600 s", again, m.ext)
	}

	// UDP: a MAP of the subscriber's UDP port; a datagram to the
	// external port reaches it and its answer comes back from there.
	uc, err := net.ListenPacket("udp", "127.161.1.5:8053")
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := uc.ReadFrom(buf)
			if err != nil {
				return
			}
			uc.WriteTo(append([]byte("inside got "), buf[:n]...), from)
		}
	}()
	um := pcpAsk(t, "127.161.1.5:0", server, pcpReq{version: 2, opcode: 1, lifetime: 300, client: sub, nonce: nonce, proto: 17, internalPort: 8053})
	if um.result != 0 {
		t.Fatalf("UDP MAP: result %d", um.result)
	}
	pc, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.161.2.10")}, net.UDPAddrFromAddrPort(um.ext))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	lsnEventually(t, "a datagram through the UDP mapping", func() string {
		pc.Write([]byte("ping"))
		pc.SetReadDeadline(time.Now().Add(time.Second))
		buf := make([]byte, 512)
		n, err := pc.Read(buf)
		if err != nil {
			return err.Error()
		}
		if string(buf[:n]) != "inside got ping" {
			return "answer " + string(buf[:n])
		}
		return ""
	})
	out, _ := run(t, s, "show ltm lsn-pool cg")
	if showField(out, "PCP", "MAP Mappings") != "2" {
		t.Errorf("show: want 2 MAP mappings:\n%s", out)
	}

	// map-limit-per-client 2: a third mapping is over the quota.
	q := pcpAsk(t, "127.161.1.5:0", server, pcpReq{version: 2, opcode: 1, lifetime: 300, client: sub, nonce: nonce, proto: 6, internalPort: 9000})
	if q.result != 10 {
		t.Errorf("third mapping: result %d, want 10 (USER_EX_QUOTA)", q.result)
	}
	// Another nonce may not touch the mapping.
	other := pcpAsk(t, "127.161.1.5:0", server, pcpReq{version: 2, opcode: 1, lifetime: 0, client: sub, nonce: [12]byte{9}, proto: 6, internalPort: 8022})
	if other.result != 2 {
		t.Errorf("delete with another nonce: result %d, want 2 (NOT_AUTHORIZED)", other.result)
	}
	// Lifetime 0 deletes: the external port stops answering.
	del := pcpAsk(t, "127.161.1.5:0", server, pcpReq{version: 2, opcode: 1, lifetime: 0, client: sub, nonce: nonce, proto: 6, internalPort: 8022})
	if del.result != 0 || del.lifetime != 0 {
		t.Errorf("delete: %+v", del)
	}
	lsnEventually(t, "the deleted mapping closed", func() string {
		c, err := net.DialTimeout("tcp", m.ext.String(), 2*time.Second)
		if err != nil {
			return ""
		}
		c.Close()
		return m.ext.String() + " still answers"
	})
	out, _ = run(t, s, "show ltm lsn-pool cg")
	if showField(out, "PCP", "MAP Mappings") != "1" {
		t.Errorf("show after delete: want 1 MAP mapping:\n%s", out)
	}
}

// TestLSNPoolPCPResults: each malformed or refused request is answered
// with its RFC 6887 result code.
func TestLSNPoolPCPResults(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	runAll(t, s,
		"create net vlan internal",
		"create net self pcp_self address 127.161.0.2/16 vlan internal allow-service { udp:5351 }",
		"create ltm lsn-pool one members add { 127.161.11.0/32 } translation-port-range 41000:41000 pcp { profile pcp selfip pcp_self }",
	)
	server := "127.161.0.2:5351"
	sub := netip.MustParseAddr("127.161.1.7")
	src := "127.161.1.7:0"
	mapReq := func(f func(*pcpReq)) pcpReq {
		r := pcpReq{version: 2, opcode: 1, lifetime: 300, client: sub, nonce: [12]byte{7}, proto: 6, internalPort: 7000}
		f(&r)
		return r
	}
	thirdParty := append([]byte{1, 0, 0, 16}, make([]byte, 16)...)
	copy(thirdParty[4:], netip.MustParseAddr("::ffff:127.161.1.8").AsSlice())
	for _, tc := range []struct {
		name   string
		req    pcpReq
		result uint8
	}{
		{"announce", pcpReq{version: 2, opcode: 0, client: sub}, 0},
		{"version 1", mapReq(func(r *pcpReq) { r.version = 1 }), 1},
		{"third party not allowed", mapReq(func(r *pcpReq) { r.options = thirdParty }), 2},
		{"too short for MAP", pcpReq{raw: append([]byte{2, 1, 0, 0, 0, 0, 1, 44}, make([]byte, 24)...)}, 3},
		{"not a multiple of 4", pcpReq{raw: make([]byte, 62)}, 1},
		{"internal port 0 with a lifetime", mapReq(func(r *pcpReq) { r.internalPort = 0 }), 3},
		{"opcode 9", pcpReq{version: 2, opcode: 9, client: sub}, 4},
		{"unknown mandatory option", mapReq(func(r *pcpReq) { r.options = []byte{99, 0, 0, 0} }), 5},
		{"protocol 132", mapReq(func(r *pcpReq) { r.proto = 132 }), 9},
		{"client address mismatch", mapReq(func(r *pcpReq) { r.client = netip.MustParseAddr("127.161.1.99") }), 12},
		{"prefer failure", mapReq(func(r *pcpReq) {
			r.internalPort = 7002
			r.extAddr = netip.MustParseAddr("127.161.99.1")
			r.extPort = 5000
			r.options = []byte{2, 0, 0, 0}
		}), 11},
		{"map", mapReq(func(r *pcpReq) {}), 0},
		{"no port left", mapReq(func(r *pcpReq) { r.internalPort = 7001; r.nonce = [12]byte{8} }), 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := pcpAsk(t, src, server, tc.req)
			if a.result != tc.result {
				t.Errorf("result %d, want %d", a.result, tc.result)
			}
		})
	}
}

// TestLSNPoolHairpin: with hairpin-mode enabled, a subscriber's
// connection to another subscriber's mapped translation address and
// port goes to that subscriber inside, from the first one's translation
// address; the pool counts it hairpinned, not inbound.
func TestLSNPoolHairpin(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	runAll(t, s,
		"create net vlan internal",
		"create net self pcp_self address 127.161.0.3/16 vlan internal allow-service { udp:5351 }",
		"create ltm lsn-pool hp members add { 127.161.12.0/30 } hairpin-mode enabled pcp { profile pcp selfip pcp_self }",
	)
	fromMember(t, "127.161.3.5:8023", fromInside, false)
	m := pcpAsk(t, "127.161.3.5:0", "127.161.0.3:5351", pcpReq{version: 2, opcode: 1, lifetime: 300,
		client: netip.MustParseAddr("127.161.3.5"), nonce: [12]byte{5}, proto: 6, internalPort: 8023})
	if m.result != 0 {
		t.Fatalf("MAP: result %d", m.result)
	}
	runAll(t, s,
		"create ltm pool mapped members add { "+m.ext.String()+" }",
		"create ltm virtual hv destination 127.161.0.50:9100 pool mapped source-address-translation { type lsn pool hp } profiles replace-all-with { tcp { } }",
	)
	var line string
	lsnEventually(t, "the other subscriber through the hairpin", func() string {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.161.3.6")}, Timeout: 5 * time.Second}
		c, err := d.Dial("tcp", "127.161.0.50:9100")
		if err != nil {
			return err.Error()
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		line, err = bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return err.Error()
		}
		return ""
	})
	from, err := netip.ParseAddrPort(strings.TrimSpace(strings.TrimPrefix(line, "inside ")))
	if err != nil {
		t.Fatalf("subscriber said %q", line)
	}
	inPrefix(t, from, "127.161.12.0/30", 1025, 65535)
	out, _ := run(t, s, "show ltm lsn-pool hp")
	if showField(out, "Inbound Connections", "Hairpinned") != "1" || showField(out, "Inbound Connections", "Total") != "0" {
		t.Errorf("want one hairpinned connection and no inbound one:\n%s", out)
	}
}

// TestLSNPoolUDPInbound: with inbound-connections automatic, a UDP
// translation takes datagrams from any peer to its subscriber, and the
// subscriber's answer goes back from the translation.
func TestLSNPoolUDPInbound(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	lsnUDPPeer(t, "127.161.0.60:9053")
	runAll(t, s,
		"create ltm pool p members add { 127.161.0.60:9053 }",
		"create ltm lsn-pool u members add { 127.161.13.0/31 } inbound-connections automatic",
		"create ltm virtual v destination 127.161.0.61:9053 ip-protocol udp pool p source-address-translation { type lsn pool u } profiles replace-all-with { udp { } }",
	)
	sub, err := net.ListenPacket("udp", "127.161.4.5:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	vip := net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.161.0.61:9053"))
	var seen netip.AddrPort
	buf := make([]byte, 512)
	lsnEventually(t, "an answer through the udp virtual", func() string {
		sub.WriteTo([]byte("hello"), vip)
		sub.SetReadDeadline(time.Now().Add(time.Second))
		n, _, err := sub.ReadFrom(buf)
		if err != nil {
			return err.Error()
		}
		if seen, err = netip.ParseAddrPort(string(buf[:n])); err != nil {
			return err.Error()
		}
		return ""
	})
	inPrefix(t, seen, "127.161.13.0/31", 1025, 65535)
	peer, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.161.5.9")}, net.UDPAddrFromAddrPort(seen))
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	peer.Write([]byte("from outside"))
	sub.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, from, err := sub.ReadFrom(buf)
	if err != nil || string(buf[:n]) != "from outside" {
		t.Fatalf("inbound datagram: %q %v", buf[:n], err)
	}
	sub.WriteTo([]byte("answer"), from)
	peer.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err = peer.Read(buf)
	if err != nil || string(buf[:n]) != "answer" {
		t.Fatalf("answer to the peer: %q %v", buf[:n], err)
	}
}

// TestLSNPoolZombieCut: a pba block past its block-lifetime with a
// connection left is a zombie; zombie-timeout seconds later its
// connections are cut.
func TestLSNPoolZombieCut(t *testing.T) {
	t.Parallel()
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	fromMember(t, "127.161.0.70:9000", fromHostPort, true)
	runAll(t, s,
		"create ltm pool p members add { 127.161.0.70:9000 }",
		"create ltm lsn-pool z mode pba members add { 127.161.14.0/31 } port-block-allocation { block-size 16 block-lifetime 1 zombie-timeout 1 }",
		"create ltm virtual v destination 127.161.0.71:9000 pool p source-address-translation { type lsn pool z } profiles replace-all-with { tcp { } }",
	)
	c := mustLSNDial(t, "127.161.6.5:0", "127.161.0.71:9000")
	c.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	start := time.Now()
	_, err := c.c.Read(make([]byte, 16))
	if err == nil {
		t.Fatal("the connection was not cut")
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("not cut after %v", time.Since(start))
	}
	lsnShowEventually(t, s, "the cut counted", "z", "Port Blocks", "Zombie Connections Cut", "1")
}

// TestLSNPoolPCPPeer: a PEER mapping holds a translation for the
// subscriber's internal address and port; its outbound connection from
// there goes out from the mapping's external address and port.
func TestLSNPoolPCPPeer(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	fromMember(t, "127.161.0.80:9000", fromHostPort, true)
	runAll(t, s,
		"create net vlan internal",
		"create net self pcp_self address 127.161.0.4/16 vlan internal allow-service { udp:5351 }",
		"create ltm pool p members add { 127.161.0.80:9000 }",
		"create ltm lsn-pool pp members add { 127.161.15.0/30 } persistence { mode none } pcp { profile pcp selfip pcp_self }",
		"create ltm virtual v destination 127.161.0.81:9000 pool p source-address-translation { type lsn pool pp } profiles replace-all-with { tcp { } }",
	)
	pr := pcpAsk(t, "127.161.7.5:0", "127.161.0.4:5351", pcpReq{version: 2, opcode: 2, lifetime: 300,
		client: netip.MustParseAddr("127.161.7.5"), nonce: [12]byte{3}, proto: 6, internalPort: 43210,
		peerAddr: netip.MustParseAddr("127.161.0.80"), peerPort: 9000})
	if pr.result != 0 || pr.lifetime != 300 {
		t.Fatalf("PEER: %+v", pr)
	}
	inPrefix(t, pr.ext, "127.161.15.0/30", 1025, 65535)
	c := mustLSNDial(t, "127.161.7.5:43210", "127.161.0.81:9000")
	if c.seen != pr.ext {
		t.Errorf("the member saw %s, want the PEER mapping's %s", c.seen, pr.ext)
	}
	out, _ := run(t, s, "show ltm lsn-pool pp")
	if showField(out, "PCP", "PEER Mappings") != "1" {
		t.Errorf("show:\n%s", out)
	}
}

// TestLSNPoolHTTP: an http virtual with source-address-translation type
// lsn makes its member connections from the pool's translations, and
// gives them back when they close.
func TestLSNPoolHTTP(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	web := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.RemoteAddr)
	})}
	ln, err := net.Listen("tcp", "127.161.0.90:8080")
	if err != nil {
		t.Fatal(err)
	}
	go web.Serve(ln)
	defer web.Close()
	runAll(t, s,
		"create ltm pool web members add { 127.161.0.90:8080 }",
		"create ltm lsn-pool hp members add { 127.161.16.0/30 } translation-port-range 42000:42999",
		"create ltm virtual hv destination 127.161.0.91:80 pool web source-address-translation { type lsn pool hp } profiles replace-all-with { tcp { } http { } }",
	)
	cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.161.8.5")}}).DialContext}}
	var seen string
	lsnEventually(t, "an answer through the http virtual", func() string {
		resp, err := cl.Get("http://127.161.0.91/")
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		seen = string(b)
		return ""
	})
	ap, err := netip.ParseAddrPort(seen)
	if err != nil {
		t.Fatalf("the member saw %q", seen)
	}
	inPrefix(t, ap, "127.161.16.0/30", 42000, 42999)
	out, _ := run(t, s, "show ltm lsn-pool hp")
	if showField(out, "Translations", "Total") == "0" {
		t.Errorf("no translation counted:\n%s", out)
	}
	cl.CloseIdleConnections()
	web.Close()
	lsnShowEventually(t, s, "the translation given back", "hp", "Translations", "Active", "0")
}

// TestLSNPoolHTTPServerSSLFails: a member connection whose server-ssl
// handshake fails gives its translation back, as one that closes does.
func TestLSNPoolHTTPServerSSLFails(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	fromMember(t, "127.161.0.92:8443", fromHostPort, true) // speaks no TLS
	runAll(t, s,
		"create ltm pool plain members add { 127.161.0.92:8443 }",
		"create ltm lsn-pool hs members add { 127.161.17.0/30 } translation-port-range 43000:43999",
		"create ltm virtual hs destination 127.161.0.93:80 pool plain source-address-translation { type lsn pool hs } profiles replace-all-with { tcp { } http { } serverssl { context serverside } }",
	)
	cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.161.8.6")}}).DialContext}}
	lsnEventually(t, "a failed answer through the http virtual", func() string {
		resp, err := cl.Get("http://127.161.0.93/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return "the request went through a member speaking no TLS"
			}
		}
		out, _ := run(t, s, "show ltm lsn-pool hs")
		if showField(out, "Translations", "Total") == "0" {
			return "no translation made yet:\n" + out
		}
		return ""
	})
	cl.CloseIdleConnections()
	lsnShowEventually(t, s, "the translation given back", "hs", "Translations", "Active", "0")
}

// fromInside is a subscriber's service on its internal address and port:
// "inside" and where the connection came from.
func fromInside(from netip.AddrPort) string { return "inside " + from.String() }
