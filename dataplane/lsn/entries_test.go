package lsn

import (
	"bufio"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

func entryPool(t *testing.T, inbound config.LSNInbound) (*Pool, *clock) {
	return newTestPool(t, config.LSNPool{Mode: config.LSNNAPT, Persist: config.LSNPersistNone, Inbound: inbound,
		PortLow: 31000, PortHigh: 31009, PersistTimeout: 30 * time.Second,
		Members: []netip.Prefix{netip.MustParsePrefix("127.198.61.0/31")}})
}

func TestAddEntryEndpoints(t *testing.T) {
	for _, tc := range []struct {
		name    string
		first   EntrySpec // held first, by another subscriber
		spec    EntrySpec
		want    string // the endpoint, "" any of the pool's
		wantErr error
	}{
		{"pool's choice", EntrySpec{}, EntrySpec{Kind: EntryReserve, Client: ap("10.0.0.1:5000"), Life: time.Minute}, "", nil},
		{"asked and free", EntrySpec{}, EntrySpec{Kind: EntryReserve, Client: ap("10.0.0.1:5000"), At: ap("127.198.61.1:31005"), Life: time.Minute}, "127.198.61.1:31005", nil},
		{"not a member", EntrySpec{}, EntrySpec{Kind: EntryReserve, Client: ap("10.0.0.1:5000"), At: ap("127.198.62.1:31005"), Life: time.Minute}, "", ErrNotMember},
		{"another's, strict", EntrySpec{Kind: EntryReserve, Client: ap("10.0.0.9:1"), At: ap("127.198.61.1:31005"), Life: time.Minute},
			EntrySpec{Kind: EntryReserve, Client: ap("10.0.0.1:5000"), At: ap("127.198.61.1:31005"), Life: time.Minute}, "", ErrEndpointTaken},
		{"another's, loose", EntrySpec{Kind: EntryReserve, Client: ap("10.0.0.9:1"), At: ap("127.198.61.1:31005"), Life: time.Minute},
			EntrySpec{Kind: EntryReserve, Client: ap("10.0.0.1:5000"), At: ap("127.198.61.1:31005"), Life: time.Minute, Loose: true}, "", nil},
		{"another's inbound entry, override", EntrySpec{Kind: EntryInbound, Client: ap("10.0.0.9:1"), At: ap("127.198.61.1:31005"), Life: time.Minute},
			EntrySpec{Kind: EntryInbound, Client: ap("10.0.0.1:5000"), At: ap("127.198.61.1:31005"), Life: time.Minute, Override: true}, "127.198.61.1:31005", nil},
		{"the same subscriber's", EntrySpec{Kind: EntryReserve, Client: ap("10.0.0.1:5000"), At: ap("127.198.61.1:31005"), Life: time.Minute},
			EntrySpec{Kind: EntryInbound, Client: ap("10.0.0.1:5000"), At: ap("127.198.61.1:31005"), Life: time.Minute}, "127.198.61.1:31005", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := entryPool(t, config.LSNInboundDisabled)
			if tc.first.Client.IsValid() {
				if _, err := p.AddEntry(tc.first); err != nil {
					t.Fatal(err)
				}
			}
			got, err := p.AddEntry(tc.spec)
			if err != tc.wantErr {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if tc.want != "" && got != ap(tc.want) || !netip.MustParsePrefix("127.198.61.0/31").Contains(got.Addr()) ||
				tc.first.Client.IsValid() && tc.first.Client != tc.spec.Client && !tc.spec.Override && got == tc.first.At {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
			if e, ok := p.Entry(got, false); !ok || e.Client != tc.spec.Client || e.Kind != tc.spec.Kind {
				t.Fatalf("entry %+v %v", e, ok)
			}
		})
	}
}

// A reservation keeps its endpoint for the subscriber's address and
// port: its next connection takes it, another subscriber cannot, and it
// is free again after its lifetime.
func TestReservation(t *testing.T) {
	p, ck := entryPool(t, config.LSNInboundDisabled)
	sub := ap("10.0.0.1:5000")
	tr, err := p.Translate(sub, dst, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	at, err := p.AddEntry(EntrySpec{Kind: EntryReserve, Client: sub, At: tr.Addr, Life: 20 * time.Second})
	if err != nil || at != tr.Addr {
		t.Fatalf("reserving the flow's own: %s %v", at, err)
	}
	tr.Release()
	if _, err := p.AddEntry(EntrySpec{Kind: EntryInbound, Client: ap("10.0.0.2:1"), At: at, Life: time.Minute}); err != ErrEndpointTaken {
		t.Fatalf("another subscriber: %v", err)
	}
	again, err := p.Translate(sub, ap("192.0.2.11:80"), false, nil)
	if err != nil || again.Addr != at {
		t.Fatalf("the next connection: %v %v, want %s", again, err, at)
	}
	again.Release()
	if !p.SetEntryLife(at, false, 5*time.Second) {
		t.Fatal("no entry to update")
	}
	ck.add(6 * time.Second)
	p.Sweep()
	if _, ok := p.Entry(at, false); ok {
		t.Fatal("the reservation outlived its lifetime")
	}
	if n := p.Stats.PortsInUse.Load(); n != 0 {
		t.Fatalf("ports in use %d after the end", n)
	}
}

func TestPersistEntry(t *testing.T) {
	for _, tc := range []struct {
		name, client, to, want string
	}{
		{"address", "10.0.0.1", "127.198.61.1", "127.198.61.1:0"},
		{"address-port", "10.0.0.1:5000", "127.198.61.1:31003", "127.198.61.1:31003"},
		{"address-port, any port", "10.0.0.1:5000", "127.198.61.0", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ck := entryPool(t, config.LSNInboundDisabled)
			client, to := parseAP(tc.client), parseAP(tc.to)
			got, err := p.PersistEntry(client, to, 10*time.Second, false)
			if err != nil || tc.want != "" && got != ap(tc.want) || got.Addr() != to.Addr() {
				t.Fatalf("create: %s %v", got, err)
			}
			if r, ok := p.Persistence(client); !ok || r != got {
				t.Fatalf("get: %s %v", r, ok)
			}
			conn := client
			if client.Port() == 0 {
				conn = netip.AddrPortFrom(client.Addr(), 7000)
			}
			// The pool's persistence is none: the rule's record is followed
			// all the same.
			tr, err := p.Translate(conn, dst, false, nil)
			if err != nil || tr.Addr.Addr() != to.Addr() || client.Port() != 0 && tr.Addr != got {
				t.Fatalf("a connection: %v %v", tr, err)
			}
			tr.Release()
			if !p.DeletePersistence(client) {
				t.Fatal("delete found none")
			}
			if _, ok := p.Persistence(client); ok {
				t.Fatal("still there after delete")
			}
			ck.add(time.Minute)
			p.Sweep()
			if n := p.Stats.PortsInUse.Load(); n != 0 {
				t.Fatalf("ports in use %d", n)
			}
		})
	}
}

func parseAP(s string) netip.AddrPort {
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.AddrPortFrom(a, 0)
	}
	return ap(s)
}

// An inbound entry relays connections to its subscriber over real
// sockets; a listener's allow and -single-connection filter its peers;
// delete closes it.
func TestInboundEntryRelays(t *testing.T) {
	p, _ := entryPool(t, config.LSNInboundDisabled)
	sub, err := net.Listen("tcp", "127.198.60.1:0")
	if err != nil {
		t.Skip("loopback 127.198.60.1:", err)
	}
	defer sub.Close()
	go func() {
		for {
			c, err := sub.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("sub\n"))
			c.Close()
		}
	}()
	subAP := sub.Addr().(*net.TCPAddr).AddrPort()
	hear := func(at netip.AddrPort, from string) string {
		d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", at.String())
		if err != nil {
			return "refused"
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		l, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return "closed"
		}
		return l
	}
	at, err := p.AddEntry(EntrySpec{Kind: EntryInbound, Client: subAP, At: ap("127.198.61.1:31002"), Life: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := p.Inbound(at, false); !ok || c != subAP {
		t.Fatalf("inbound get: %s %v", c, ok)
	}
	if got := hear(at, "127.198.60.9"); got != "sub\n" {
		t.Fatalf("through the inbound entry: %q", got)
	}
	if !p.DeleteInbound(at, false) {
		t.Fatal("delete")
	}
	if got := hear(at, "127.198.60.9"); got != "refused" {
		t.Fatalf("after delete: %q", got)
	}
	// A listener taking one connection from one peer.
	at, err = p.AddEntry(EntrySpec{Kind: EntryListen, Client: subAP, Life: time.Minute, Single: true, Allow: ap("127.198.60.7:0")})
	if err != nil {
		t.Fatal(err)
	}
	if got := hear(at, "127.198.60.9"); got != "closed" && got != "refused" {
		t.Fatalf("a peer not allowed: %q", got)
	}
	if got := hear(at, "127.198.60.7"); got != "sub\n" {
		t.Fatalf("the allowed peer: %q", got)
	}
	if got := hear(at, "127.198.60.7"); got != "refused" {
		t.Fatalf("a second connection to a single-connection listener: %q", got)
	}
}

// A UDP inbound entry relays an outside peer's datagrams to the
// subscriber and its answers back from the translation endpoint.
func TestInboundEntryUDP(t *testing.T) {
	p, _ := entryPool(t, config.LSNInboundDisabled)
	sub, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.198.60.2")})
	if err != nil {
		t.Skip("loopback 127.198.60.2:", err)
	}
	defer sub.Close()
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := sub.ReadFromUDP(buf)
			if err != nil {
				return
			}
			sub.WriteToUDP(append([]byte("sub:"), buf[:n]...), from)
		}
	}()
	at, err := p.AddEntry(EntrySpec{Kind: EntryInbound, Client: sub.LocalAddr().(*net.UDPAddr).AddrPort(), UDP: true, Life: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	peer, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.198.60.9")})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	buf := make([]byte, 512)
	for i := 0; ; i++ { // the first datagram may race the socket's start: a few tries, bounded
		peer.WriteToUDPAddrPort([]byte("hi"), at)
		peer.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, from, err := peer.ReadFromUDPAddrPort(buf)
		if err == nil {
			if string(buf[:n]) != "sub:hi" || from != at {
				t.Fatalf("answer %q from %s, want sub:hi from %s", buf[:n], from, at)
			}
			break
		}
		if i == 4 {
			t.Fatalf("no answer through %s: %v", at, err)
		}
	}
}
