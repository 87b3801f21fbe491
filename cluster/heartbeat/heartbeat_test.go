package heartbeat

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"
)

func TestParseUnicast(t *testing.T) {
	ap := netip.MustParseAddrPort
	for _, tc := range []struct {
		in   string
		want []netip.AddrPort
		err  bool
	}{
		{in: "", want: nil},
		{in: "none", want: nil},
		{in: "{ { ip 10.1.1.1 } }", want: []netip.AddrPort{ap("10.1.1.1:1026")}},
		{in: "{ { ip 10.1.1.1 port 1027 } { ip 10.2.2.1 } }", want: []netip.AddrPort{ap("10.1.1.1:1027"), ap("10.2.2.1:1026")}},
		{in: "{\n    {\n        effective-ip 10.1.1.1\n        effective-port 1026\n        ip 10.1.1.1\n    }\n}", want: []netip.AddrPort{ap("10.1.1.1:1026")}},
		{in: "{ { ip fd00::1 port 2000 } }", want: []netip.AddrPort{ap("[fd00::1]:2000")}},
		{in: "{ { ip 10.1.1.1%0 } }", want: []netip.AddrPort{ap("10.1.1.1:1026")}},
		{in: "{ { port 1026 } }", err: true},
		{in: "{ { ip nowhere } }", err: true},
		{in: "{ { ip 10.1.1.1 port 70000 } }", err: true},
		{in: "{ { ip 10.1.1.1 colour red } }", err: true},
		{in: "{ { ip 10.1.1.1 }", err: true},
		{in: "{ ip 10.1.1.1 }", err: true},
	} {
		got, err := ParseUnicast(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("ParseUnicast(%q) error %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("ParseUnicast(%q) = %v, want %v", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("ParseUnicast(%q) = %v, want %v", tc.in, got, tc.want)
			}
		}
	}
}

func listen(t *testing.T, group, ip string) *Node {
	t.Helper()
	n, err := Listen(group, []netip.AddrPort{netip.MustParseAddrPort(ip + ":0")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n
}

// waitHeard polls until n has heard device, for at most 5 s.
func waitHeard(t *testing.T, n *Node, device string, ok func(Heard) bool) Heard {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if h, found := n.Heard(time.Minute)[device]; found && ok(h) {
			return h
		}
	}
	t.Fatalf("never heard %s", device)
	return Heard{}
}

func TestBeatsBetweenTwoDevices(t *testing.T) {
	a := listen(t, "dg1", "127.0.0.1")
	b := listen(t, "dg1", "127.0.0.2")
	a.SetPeers(map[string]Peer{"b": {Addrs: b.Addrs()}})
	b.SetPeers(map[string]Peer{"a": {Addrs: a.Addrs()}})

	a.Send(Beat{Device: "a", Generation: 7, Active: []string{"traffic-group-1"}, Etcd: true, EtcdAge: 12})
	h := waitHeard(t, b, "a", func(Heard) bool { return true })
	if h.Generation != 7 || len(h.Active) != 1 || h.Active[0] != "traffic-group-1" || !h.Etcd || h.EtcdAge != 12 || h.Group != "dg1" {
		t.Fatalf("b heard %+v", h.Beat)
	}
	if h.From.Addr() != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("from %v", h.From)
	}
	a.Send(Beat{Device: "a", Generation: 8})
	waitHeard(t, b, "a", func(h Heard) bool { return h.Generation == 8 })
	if got := b.Heard(0); len(got) != 0 {
		t.Fatalf("Heard(0) returned %v: nothing is that fresh", got)
	}
}

func TestBeatsRefused(t *testing.T) {
	n := listen(t, "dg1", "127.0.0.1")
	peer := netip.MustParseAddrPort("127.0.0.2:1026")
	n.SetPeers(map[string]Peer{"b": {Addrs: []netip.AddrPort{peer}}})
	now := time.Now()
	for _, tc := range []struct {
		name string
		b    Beat
		from string
		want bool
	}{
		{"another group", Beat{Device: "b", Group: "dg2", Seq: 1, Boot: 1}, "127.0.0.2:1026", false},
		{"unknown device", Beat{Device: "c", Group: "dg1", Seq: 1, Boot: 1}, "127.0.0.2:1026", false},
		{"not from the peer's address", Beat{Device: "b", Group: "dg1", Seq: 1, Boot: 1}, "127.0.0.3:1026", false},
		{"good", Beat{Device: "b", Group: "dg1", Seq: 5, Boot: 1}, "127.0.0.2:40000", true},
		{"delayed behind a newer one", Beat{Device: "b", Group: "dg1", Seq: 4, Boot: 1}, "127.0.0.2:1026", false},
		{"same again", Beat{Device: "b", Group: "dg1", Seq: 5, Boot: 1}, "127.0.0.2:1026", false},
		{"restarted", Beat{Device: "b", Group: "dg1", Seq: 1, Boot: 2}, "127.0.0.2:1026", true},
		{"from before the restart", Beat{Device: "b", Group: "dg1", Seq: 9, Boot: 1}, "127.0.0.2:1026", false},
	} {
		if got := n.accept(tc.b, netip.MustParseAddrPort(tc.from), now); got != tc.want {
			t.Errorf("%s: accepted %v, want %v", tc.name, got, tc.want)
		}
	}
	n.SetPeers(nil)
	if got := n.Heard(time.Hour); len(got) != 0 {
		t.Fatalf("a device no longer a peer is still heard: %v", got)
	}
}

// A datagram that is not a beat is ignored and the node goes on.
func TestGarbageIgnored(t *testing.T) {
	a := listen(t, "dg1", "127.0.0.1")
	b := listen(t, "dg1", "127.0.0.2")
	b.SetPeers(map[string]Peer{"a": {Addrs: a.Addrs()}})
	c, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.0.0.1")}, net.UDPAddrFromAddrPort(b.Addrs()[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("not json"))
	a.SetPeers(map[string]Peer{"b": {Addrs: b.Addrs()}})
	a.Send(Beat{Device: "a", Generation: 3})
	waitHeard(t, b, "a", func(h Heard) bool { return h.Generation == 3 })
}

// The unicast addresses change: the node listens on the new ones, keeps
// those still listed, and a bad address changes nothing.
func TestSetAddrs(t *testing.T) {
	n, err := Listen("dg1", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	if len(n.Addrs()) != 0 {
		t.Fatalf("listening on %v", n.Addrs())
	}
	if err := n.SetAddrs([]netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")}); err != nil {
		t.Fatal(err)
	}
	first := n.Addrs()[0]
	second := netip.MustParseAddrPort("127.0.0.2:" + fmt.Sprint(first.Port()))
	if err := n.SetAddrs([]netip.AddrPort{first, second}); err != nil {
		t.Fatal(err)
	}
	if got := n.Addrs(); len(got) != 2 || got[0] != first || got[1] != second {
		t.Fatalf("listening on %v", got)
	}
	if err := n.SetAddrs([]netip.AddrPort{first, netip.MustParseAddrPort("192.0.2.1:1026")}); err == nil {
		t.Fatal("listening on an address the machine does not have succeeded")
	}
	if got := n.Addrs(); len(got) != 2 {
		t.Fatalf("a failed change changed the addresses: %v", got)
	}
	peer := listen(t, "dg1", "127.0.0.3")
	peer.SetPeers(map[string]Peer{"a": {Addrs: []netip.AddrPort{second}}})
	n.SetPeers(map[string]Peer{"p": {Addrs: peer.Addrs()}})
	if err := n.SetAddrs([]netip.AddrPort{second}); err != nil {
		t.Fatal(err)
	}
	n.Send(Beat{Device: "a", Generation: 9})
	waitHeard(t, peer, "a", func(h Heard) bool { return h.Generation == 9 })
}

// With a peer's key known, only beats it signed are taken: not unsigned
// ones, not one signed by another key, not one changed on the way.
func TestSignedBeats(t *testing.T) {
	keyA, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	a := listen(t, "dg1", "127.0.0.1")
	b := listen(t, "dg1", "127.0.0.2")
	a.SetKey(keyA)
	a.SetPeers(map[string]Peer{"b": {Addrs: b.Addrs()}})
	b.SetPeers(map[string]Peer{"a": {Addrs: a.Addrs(), Key: &keyA.PublicKey}})
	a.Send(Beat{Device: "a", Generation: 4, Active: []string{"traffic-group-1"}})
	h := waitHeard(t, b, "a", func(h Heard) bool { return h.Generation == 4 })
	if len(h.Sig) == 0 {
		t.Fatal("the beat was not signed")
	}

	from := a.Addrs()[0]
	sign := func(bt Beat, k *ecdsa.PrivateKey) Beat {
		p, err := payload(bt)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(p)
		if bt.Sig, err = ecdsa.SignASN1(rand.Reader, k, sum[:]); err != nil {
			t.Fatal(err)
		}
		return bt
	}
	next := h.Seq + 1
	good := sign(Beat{Device: "a", Group: "dg1", Seq: next, Boot: h.Boot, Generation: 5}, keyA)
	changed := good
	changed.Generation = 6
	for _, tc := range []struct {
		name string
		b    Beat
		want bool
	}{
		{"unsigned", Beat{Device: "a", Group: "dg1", Seq: next, Boot: h.Boot}, false},
		{"signed by another key", sign(Beat{Device: "a", Group: "dg1", Seq: next, Boot: h.Boot}, other), false},
		{"changed after signing", changed, false},
		{"signed", good, true},
	} {
		if got := b.accept(tc.b, from, time.Now()); got != tc.want {
			t.Errorf("%s: accepted %v, want %v", tc.name, got, tc.want)
		}
	}
}

// BenchmarkSignedBeat is one beat's cost on each side: the sender's
// signature and the receiver's checks (signature included).
func BenchmarkSignedBeat(b *testing.B) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	n, err := Listen("dg1", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	from := netip.MustParseAddrPort("127.0.0.2:1026")
	n.SetPeers(map[string]Peer{"a": {Addrs: []netip.AddrPort{from}, Key: &key.PublicKey}})
	beat := Beat{Device: "a", Group: "dg1", Boot: 1, Generation: 42, Active: []string{"traffic-group-1"}, Etcd: true, EtcdAge: 120}
	b.Run("sign", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			p, _ := payload(beat)
			sum := sha256.Sum256(p)
			if _, err := ecdsa.SignASN1(rand.Reader, key, sum[:]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("accept", func(b *testing.B) {
		p, _ := payload(beat)
		sum := sha256.Sum256(p)
		sig, _ := ecdsa.SignASN1(rand.Reader, key, sum[:])
		for i := 0; i < b.N; i++ {
			bt := beat
			bt.Seq, bt.Sig = uint64(i+1), sig
			// The signature covers Seq: re-sign outside the timer
			// would dominate; checking a mismatched one costs the same.
			n.accept(bt, from, time.Now())
		}
	})
}
