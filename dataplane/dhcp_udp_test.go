package dataplane

import (
	"bytes"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/dhcpv6/server6"
)

// dhcp4Member is a DHCPv4 server (insomniacslk/dhcp's server4) on a
// loopback address: it records each request and offers its own address
// back, echoing option 82 as RFC 3046 servers do, to the socket the
// request came from.
type dhcp4Member struct {
	addr string
	mu   sync.Mutex
	seen []*dhcpv4.DHCPv4
}

func startDHCP4Member(t *testing.T, addr string) *dhcp4Member {
	t.Helper()
	c, err := net.ListenPacket("udp4", addr)
	if err != nil {
		t.Fatalf("member %s: %v", addr, err)
	}
	m := &dhcp4Member{addr: addr}
	host := net.ParseIP(strings.Split(addr, ":")[0])
	srv, err := server4.NewServer("", nil, func(conn net.PacketConn, peer net.Addr, req *dhcpv4.DHCPv4) {
		m.mu.Lock()
		m.seen = append(m.seen, req)
		m.mu.Unlock()
		typ := dhcpv4.MessageTypeOffer
		if req.MessageType() == dhcpv4.MessageTypeRequest {
			typ = dhcpv4.MessageTypeAck
		}
		mods := []dhcpv4.Modifier{dhcpv4.WithMessageType(typ), dhcpv4.WithServerIP(host),
			dhcpv4.WithYourIP(net.IPv4(10, 9, 0, host.To4()[3])), dhcpv4.WithOption(dhcpv4.OptServerIdentifier(host))}
		if ra := req.Options.Get(dhcpv4.OptionRelayAgentInformation); ra != nil {
			mods = append(mods, dhcpv4.WithGeneric(dhcpv4.OptionRelayAgentInformation, ra))
		}
		resp, err := dhcpv4.NewReplyFromRequest(req, mods...)
		if err == nil {
			conn.WriteTo(resp.ToBytes(), peer)
		}
	}, server4.WithConn(c))
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Close() })
	return m
}

func (m *dhcp4Member) requests() []*dhcpv4.DHCPv4 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.seen)
}

// waitFor polls cond for a few seconds (a loaded machine may be slow).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("gave up waiting: %s", what)
}

// dhcpClient is a client socket on src: it sends messages to the virtual
// and reads the answers.
type dhcpClient struct {
	c  *net.UDPConn
	vs *net.UDPAddr
}

func newDHCPClient(t *testing.T, src, vs string) *dhcpClient {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(src), 0)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &dhcpClient{c: c, vs: net.UDPAddrFromAddrPort(ap(vs))}
}

func (d *dhcpClient) send(t *testing.T, b []byte) {
	t.Helper()
	if _, err := d.c.WriteToUDP(b, d.vs); err != nil {
		t.Fatal(err)
	}
}

// answers reads n answers (each within a few seconds).
func (d *dhcpClient) answers(t *testing.T, n int) [][]byte {
	t.Helper()
	var out [][]byte
	buf := make([]byte, 2048)
	for len(out) < n {
		d.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		k, _, err := d.c.ReadFromUDP(buf)
		if err != nil {
			t.Fatalf("answer %d of %d: %v", len(out)+1, n, err)
		}
		out = append(out, slices.Clone(buf[:k]))
	}
	return out
}

func discover(t *testing.T, mac string, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	t.Helper()
	hw, _ := net.ParseMAC(mac)
	d, err := dhcpv4.NewDiscovery(hw, mods...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// dhcpVirtual is a UDP virtual with profile prof over the members.
func dhcpVirtual(t *testing.T, vs string, prof DHCPProfile, rule string, members ...string) *ruleLog {
	t.Helper()
	p, _ := newPlane(t)
	cfg := udpBasic(vs, members...)
	cfg.Virtuals["/Common/vs"].DHCP = &prof
	var lg *ruleLog
	if rule != "" {
		cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, rule)
	}
	mustApply(t, p, cfg)
	return lg
}

// TestDHCPv4RelayAll: a DISCOVER reaches every member with giaddr the
// virtual's address, hops counted and option 82 added; each member's
// OFFER reaches the client, without option 82 when the profile removes
// it and with it when not.
func TestDHCPv4RelayAll(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		vs, m1, m2    string
		remove        bool
		clientGiaddr  net.IP
		wantGiaddr    string
		wantHops      uint8
		clientAgentID []byte
	}{
		{"add and remove", "127.118.1.1:6767", "127.118.1.2:6767", "127.118.1.3:6767", true, nil, "127.118.1.1", 1, nil},
		{"add, keep in answers", "127.118.1.11:6767", "127.118.1.12:6767", "127.118.1.13:6767", false, nil, "127.118.1.11", 1, nil},
		{"downstream relay", "127.118.1.21:6767", "127.118.1.22:6767", "127.118.1.23:6767", true, net.IPv4(10, 1, 2, 3), "10.1.2.3", 2, []byte{1, 3, 'o', 'l', 'd'}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m1, m2 := startDHCP4Member(t, c.m1), startDHCP4Member(t, c.m2)
			dhcpVirtual(t, c.vs, DHCPProfile{MaxHops: 4, AgentInfo: []byte("\x01\x05port7"), StripAgentInfo: c.remove}, "", c.m1, c.m2)
			cl := newDHCPClient(t, "127.118.1.100", c.vs)
			mods := []dhcpv4.Modifier{}
			if c.clientGiaddr != nil {
				mods = append(mods, dhcpv4.WithGatewayIP(c.clientGiaddr), withHops(1),
					dhcpv4.WithGeneric(dhcpv4.OptionRelayAgentInformation, c.clientAgentID))
			}
			d := discover(t, "02:00:00:00:01:aa", mods...)
			cl.send(t, d.ToBytes())
			got := map[string]bool{}
			for _, b := range cl.answers(t, 2) {
				o, err := dhcpv4.FromBytes(b)
				if err != nil {
					t.Fatalf("answer: %v", err)
				}
				if o.TransactionID != d.TransactionID || o.MessageType() != dhcpv4.MessageTypeOffer {
					t.Errorf("answer %v", o.Summary())
				}
				has82 := o.Options.Has(dhcpv4.OptionRelayAgentInformation)
				if has82 == c.remove {
					t.Errorf("option 82 in the answer: %v (remove %v)", has82, c.remove)
				}
				got[o.ServerIdentifier().String()] = true
			}
			if !got["127.118.1."+c.m1[len("127.118.1."):strings.Index(c.m1, ":")]] || len(got) != 2 {
				t.Errorf("offers from %v, want both members", got)
			}
			for _, m := range []*dhcp4Member{m1, m2} {
				waitFor(t, m.addr+" got the DISCOVER", func() bool { return len(m.requests()) == 1 })
				r := m.requests()[0]
				if r.GatewayIPAddr.String() != c.wantGiaddr || r.HopCount != c.wantHops {
					t.Errorf("%s: giaddr %v hops %d, want %s %d", m.addr, r.GatewayIPAddr, r.HopCount, c.wantGiaddr, c.wantHops)
				}
				want := []byte("\x01\x05port7")
				if c.clientAgentID != nil {
					want = c.clientAgentID // a relay does not add its own to another's
				}
				if ra := r.Options.Get(dhcpv4.OptionRelayAgentInformation); !bytes.Equal(ra, want) {
					t.Errorf("%s: option 82 %q, want %q", m.addr, ra, want)
				}
			}
		})
	}
}

// TestDHCPv4MaxHops: a request that already passed through max-hops
// relays is dropped; the next one, with fewer, is relayed (the flow
// keeps their order, so the member's one request is the second).
func TestDHCPv4MaxHops(t *testing.T) {
	t.Parallel()
	m := startDHCP4Member(t, "127.118.2.2:6767")
	dhcpVirtual(t, "127.118.2.1:6767", DHCPProfile{MaxHops: 2}, "", "127.118.2.2:6767")
	cl := newDHCPClient(t, "127.118.2.100", "127.118.2.1:6767")
	far := discover(t, "02:00:00:00:02:aa", withHops(2), dhcpv4.WithGatewayIP(net.IPv4(10, 0, 0, 1)))
	near := discover(t, "02:00:00:00:02:bb", withHops(1), dhcpv4.WithGatewayIP(net.IPv4(10, 0, 0, 1)))
	cl.send(t, far.ToBytes())
	cl.send(t, near.ToBytes())
	a := cl.answers(t, 1)
	if o, _ := dhcpv4.FromBytes(a[0]); o == nil || o.TransactionID != near.TransactionID {
		t.Fatalf("answer %x, want the second request's", a[0])
	}
	if rs := m.requests(); len(rs) != 1 || rs[0].TransactionID != near.TransactionID || rs[0].HopCount != 2 {
		t.Errorf("member saw %d requests, want only the second with hops 2", len(rs))
	}
	// Not DHCP at all: dropped, and the flow goes on.
	cl.send(t, []byte("hello"))
	cl.send(t, near.ToBytes())
	cl.answers(t, 1)
	if n := len(m.requests()); n != 2 {
		t.Errorf("member saw %d requests, want 2", n)
	}
}

// TestDHCPv4Rules: CLIENT_DATA reads chaddr, type and an option and
// writes them into another option the member sees; it drops REQUESTs;
// SERVER_DATA reads the offer's yiaddr and sets an option the client
// sees. DHCP::version is 4.
func TestDHCPv4Rules(t *testing.T) {
	t.Parallel()
	m := startDHCP4Member(t, "127.118.3.2:6767")
	rule := `when CLIENT_DATA {
		if { [DHCPv4::type] == 3 } {
			DHCPv4::drop
			return
		}
		DHCPv4::option 12 "[DHCPv4::chaddr]/[DHCPv4::type]/[DHCPv4::option 60]/v[DHCP::version]/op[DHCPv4::opcode]/h[DHCPv4::hops]"
		DHCPv4::option delete 61
	}
	when SERVER_DATA {
		DHCPv4::option 15 "for-[DHCPv4::yiaddr]-via-[DHCPv4::giaddr]"
	}`
	lg := dhcpVirtual(t, "127.118.3.1:6767", DHCPProfile{MaxHops: 4}, rule, "127.118.3.2:6767")
	defer lg.showOnFailure(t)
	cl := newDHCPClient(t, "127.118.3.100", "127.118.3.1:6767")
	d := discover(t, "02:00:00:00:03:cc", dhcpv4.WithOption(dhcpv4.OptClassIdentifier("lab-cpe")),
		dhcpv4.WithOption(dhcpv4.OptClientIdentifier([]byte("cid"))))
	req := discover(t, "02:00:00:00:03:cc", dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest))
	cl.send(t, req.ToBytes()) // dropped by the rule
	cl.send(t, d.ToBytes())
	a := cl.answers(t, 1)
	o, err := dhcpv4.FromBytes(a[0])
	if err != nil || o.TransactionID != d.TransactionID {
		t.Fatalf("answer %v %v", o, err)
	}
	if got := o.DomainName(); got != "for-10.9.0.2-via-127.118.3.1" {
		t.Errorf("SERVER_DATA's option 15: %q", got)
	}
	rs := m.requests()
	if len(rs) != 1 {
		t.Fatalf("member saw %d requests, want the DISCOVER only", len(rs))
	}
	if got := rs[0].HostName(); got != "02:00:00:00:03:cc/1/lab-cpe/v4/op1/h0" {
		t.Errorf("CLIENT_DATA's option 12: %q", got)
	}
	if rs[0].Options.Has(dhcpv4.OptionClientIdentifier) {
		t.Errorf("option 61 was not deleted")
	}
}

// dhcp6Member is a DHCPv6 server (server6) taking Relay-Forward messages:
// it records them and answers a Relay-Reply carrying an Advertise whose
// server id names it.
type dhcp6Member struct {
	addr string
	mu   sync.Mutex
	seen []*dhcpv6.RelayMessage
}

func startDHCP6Member(t *testing.T, addr string) *dhcp6Member {
	t.Helper()
	c, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatalf("member %s: %v", addr, err)
	}
	m := &dhcp6Member{addr: addr}
	srv, err := server6.NewServer("", nil, func(conn net.PacketConn, peer net.Addr, msg dhcpv6.DHCPv6) {
		rm, ok := msg.(*dhcpv6.RelayMessage)
		if !ok {
			return // only relayed messages
		}
		m.mu.Lock()
		m.seen = append(m.seen, rm)
		m.mu.Unlock()
		inner, err := rm.GetInnerMessage()
		if err != nil {
			return
		}
		adv, err := dhcpv6.NewAdvertiseFromSolicit(inner, dhcpv6.WithServerID(&dhcpv6.DUIDEN{EnterpriseNumber: 1, EnterpriseIdentifier: []byte(addr)}))
		if err != nil {
			return
		}
		rr, err := dhcpv6.NewRelayReplFromRelayForw(rm, adv)
		if err == nil {
			conn.WriteTo(rr.ToBytes(), peer)
		}
	}, server6.WithConn(c))
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Close() })
	return m
}

func (m *dhcp6Member) requests() []*dhcpv6.RelayMessage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.seen)
}

// TestDHCPv6Relay: a SOLICIT reaches every member in a Relay-Forward whose
// link-address is the virtual's and peer-address the client's, with the
// Remote-ID option; each member's Relay-Reply is unwrapped and its
// Advertise reaches the client. A rule reads the message type and
// transaction id, and in SERVER_DATA the Relay-Reply's peer_address.
func TestDHCPv6Relay(t *testing.T) {
	t.Parallel()
	m1, m2 := startDHCP6Member(t, "127.118.4.2:6547"), startDHCP6Member(t, "127.118.4.3:6547")
	rule := `when CLIENT_DATA {
		DHCPv6::option 65000 "mt[DHCPv6::msg_type]-tid[DHCPv6::transaction_id]-v[DHCP::version]"
	}
	when SERVER_DATA {
		log local0. "reply [DHCPv6::msg_type] to [DHCPv6::peer_address] hop [DHCPv6::hop_count]"
	}`
	lg := dhcpVirtual(t, "127.118.4.1:6547", DHCPProfile{V6: true, V6Options: []DHCPv6Option{{Code: 37, Data: []byte("\x00\x00\x0d\xe9r1")}}}, rule, "127.118.4.2:6547", "127.118.4.3:6547")
	defer lg.showOnFailure(t)
	cl := newDHCPClient(t, "127.118.4.100", "127.118.4.1:6547")
	hw, _ := net.ParseMAC("02:00:00:00:04:dd")
	sol, err := dhcpv6.NewSolicit(hw)
	if err != nil {
		t.Fatal(err)
	}
	cl.send(t, sol.ToBytes())
	servers := map[string]bool{}
	for _, b := range cl.answers(t, 2) {
		msg, err := dhcpv6.MessageFromBytes(b)
		if err != nil {
			t.Fatalf("answer: %v", err)
		}
		if msg.Type() != dhcpv6.MessageTypeAdvertise || msg.TransactionID != sol.TransactionID {
			t.Errorf("answer %s", msg.Summary())
		}
		if id, ok := msg.Options.ServerID().(*dhcpv6.DUIDEN); ok {
			servers[string(id.EnterpriseIdentifier)] = true
		}
	}
	if !servers[m1.addr] || !servers[m2.addr] {
		t.Errorf("advertises from %v, want both members", servers)
	}
	for _, m := range []*dhcp6Member{m1, m2} {
		waitFor(t, m.addr+" got the Relay-Forward", func() bool { return len(m.requests()) == 1 })
		rm := m.requests()[0]
		if rm.LinkAddr.String() != "127.118.4.1" || len(rm.LinkAddr) != 16 || rm.PeerAddr.String() != "127.118.4.100" || rm.HopCount != 0 {
			t.Errorf("%s: link %v peer %v hop %d", m.addr, rm.LinkAddr, rm.PeerAddr, rm.HopCount)
		}
		if rid := rm.Options.GetOne(dhcpv6.OptionRemoteID); rid == nil || !bytes.Equal(rid.ToBytes(), []byte("\x00\x00\x0d\xe9r1")) {
			t.Errorf("%s: remote-id %v", m.addr, rid)
		}
		inner, err := rm.GetInnerMessage()
		if err != nil {
			t.Fatal(err)
		}
		want := "mt1-tid" + strconv.Itoa(int(sol.TransactionID[0])<<16|int(sol.TransactionID[1])<<8|int(sol.TransactionID[2])) + "-v6"
		if o := inner.Options.GetOne(65000); o == nil || string(o.ToBytes()) != want {
			t.Errorf("%s: rule's option 65000 %v, want %q", m.addr, o, want)
		}
	}
	waitFor(t, "SERVER_DATA's log", func() bool {
		lg.mu.Lock()
		defer lg.mu.Unlock()
		n := 0
		for _, l := range lg.lines {
			if strings.Contains(l, "reply 13 to 127.118.4.100 hop 0") {
				n++
			}
		}
		return n == 2
	})
}

// withHops sets a message's hops, as a relay before the virtual would.
func withHops(n uint8) dhcpv4.Modifier { return func(d *dhcpv4.DHCPv4) { d.HopCount = n } }
