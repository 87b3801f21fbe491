package dhcp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
)

// v4Msg builds a DHCPv4 message: op, hops, giaddr and options (code,
// data pairs), ended with End.
func v4Msg(op, hops uint8, giaddr string, opts ...[]byte) []byte {
	b := make([]byte, V4MinLen)
	b[0], b[1], b[2], b[3] = op, 1, 6, hops
	binary.BigEndian.PutUint32(b[4:], 0xdeadbeef)
	if giaddr != "" {
		a := netip.MustParseAddr(giaddr).As4()
		copy(b[24:], a[:])
	}
	copy(b[28:], []byte{2, 0, 0, 0, 0, 0xaa})
	copy(b[v4CookieOffset:], magicCookie[:])
	for _, o := range opts {
		b = append(b, o...)
	}
	return append(b, OptEnd)
}

func TestCheckV4(t *testing.T) {
	good := v4Msg(OpRequest, 0, "", []byte{OptMessageType, 1, 1})
	for _, c := range []struct {
		name string
		b    []byte
		want error
	}{
		{"good", good, nil},
		{"no end", good[:len(good)-1], nil},
		{"short", good[:V4MinLen-1], ErrShort},
		{"cookie", append(append([]byte{}, good[:V4HeaderLen]...), 1, 2, 3, 4, OptEnd), ErrCookie},
		{"op", v4Msg(3, 0, ""), ErrOp},
		{"option past the end", append(v4Msg(OpRequest, 0, "")[:V4MinLen], 12, 9, 'x'), ErrOptions},
	} {
		if err := CheckV4(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

func TestV4Fields(t *testing.T) {
	b := v4Msg(OpRequest, 2, "10.0.0.1", []byte{OptMessageType, 1, 3}, []byte{60, 3, 'c', 'p', 'e'})
	if Op(b) != 1 || Htype(b) != 1 || Hlen(b) != 6 || Hops(b) != 2 || Xid(b) != 0xdeadbeef || Giaddr(b).String() != "10.0.0.1" ||
		Ciaddr(b).String() != "0.0.0.0" || FormatMAC(Chaddr(b)) != "02:00:00:00:00:aa" || MessageType(b) != 3 {
		t.Errorf("fields of %x", b)
	}
	if v, ok := V4Option(b, 60); !ok || string(v) != "cpe" {
		t.Errorf("option 60: %q %v", v, ok)
	}
	if _, ok := V4Option(b, 61); ok {
		t.Errorf("option 61 found")
	}
}

func TestV4SetDelete(t *testing.T) {
	b := v4Msg(OpRequest, 0, "", []byte{OptMessageType, 1, 1}, []byte{12, 1, 'a'}, []byte{12, 1, 'b'})
	b = append(b, 0, 0, 0) // padding after End
	out, err := V4SetOption(b, 12, []byte("host"))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := V4Option(out, 12); string(v) != "host" || CheckV4(out) != nil || MessageType(out) != 1 {
		t.Errorf("set: %x", out)
	}
	if !bytes.HasSuffix(out, []byte{12, 4, 'h', 'o', 's', 't', OptEnd, 0, 0, 0}) {
		t.Errorf("set: the option is not last before End: %x", out[V4MinLen:])
	}
	del := V4DeleteOption(out, 12)
	if _, ok := V4Option(del, 12); ok || MessageType(del) != 1 {
		t.Errorf("delete: %x", del)
	}
	if same := V4DeleteOption(del, 77); &same[0] != &del[0] {
		t.Errorf("deleting an absent option copied the message")
	}
	if _, err := V4SetOption(b, OptEnd, nil); err == nil {
		t.Errorf("set End taken")
	}
	if _, err := V4SetOption(b, 12, make([]byte, 256)); err == nil {
		t.Errorf("256 bytes taken")
	}
}

func TestRelayV4(t *testing.T) {
	agent := RelayAgentInfo([]Suboption{{SubCircuitID, []byte("port7")}})
	vs := netip.MustParseAddr("127.118.0.10")
	for _, c := range []struct {
		name       string
		in         []byte
		r          V4Relay
		wantErr    error
		wantHops   uint8
		wantGiaddr string
		want82     []byte
	}{
		{"first relay", v4Msg(OpRequest, 0, ""), V4Relay{Giaddr: vs, MaxHops: 4, AgentInfo: agent}, nil, 1, "127.118.0.10", agent},
		{"after a relay", v4Msg(OpRequest, 1, "10.0.0.1", []byte{OptRelayAgent, 3, 1, 1, 'x'}), V4Relay{Giaddr: vs, MaxHops: 4, AgentInfo: agent}, nil, 2, "10.0.0.1", []byte{1, 1, 'x'}},
		{"no option 82", v4Msg(OpRequest, 0, ""), V4Relay{Giaddr: vs, MaxHops: 4}, nil, 1, "127.118.0.10", nil},
		{"max hops", v4Msg(OpRequest, 4, "10.0.0.1"), V4Relay{Giaddr: vs, MaxHops: 4}, ErrHops, 0, "", nil},
		{"max hops 0", v4Msg(OpRequest, 0, ""), V4Relay{Giaddr: vs}, ErrHops, 0, "", nil},
		{"a reply", v4Msg(OpReply, 0, ""), V4Relay{Giaddr: vs, MaxHops: 4}, ErrNotRequest, 0, "", nil},
	} {
		orig := append([]byte(nil), c.in...)
		out, err := RelayV4(c.in, c.r)
		if !errors.Is(err, c.wantErr) {
			t.Errorf("%s: %v, want %v", c.name, err, c.wantErr)
			continue
		}
		if !bytes.Equal(orig, c.in) {
			t.Errorf("%s: the client's message was modified", c.name)
		}
		if err != nil {
			continue
		}
		v, ok := V4Option(out, OptRelayAgent)
		if Hops(out) != c.wantHops || Giaddr(out).String() != c.wantGiaddr || ok != (c.want82 != nil) || !bytes.Equal(v, c.want82) || CheckV4(out) != nil {
			t.Errorf("%s: hops %d giaddr %v 82 %x", c.name, Hops(out), Giaddr(out), v)
		}
	}
}

// v6Solicit is a SOLICIT with transaction id 0x0a0b0c and a client id.
func v6Solicit() []byte {
	return []byte{MsgSolicit, 0x0a, 0x0b, 0x0c, 0, 1, 0, 2, 0xca, 0xfe}
}

func TestV6(t *testing.T) {
	sol := v6Solicit()
	if CheckV6(sol) != nil || MsgTypeV6(sol) != 1 || TransactionID(sol) != 0x0a0b0c || HopCount(sol) != 0 || LinkAddress(sol).IsValid() {
		t.Errorf("solicit fields")
	}
	if v, ok := V6Option(sol, 1); !ok || !bytes.Equal(v, []byte{0xca, 0xfe}) {
		t.Errorf("client id %x", v)
	}
	link, peer := netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("127.118.0.100")
	fw, err := RelayForward(sol, link, peer, V6Opt{OptRemoteID, []byte{0, 0, 0, 9, 'r'}})
	if err != nil {
		t.Fatal(err)
	}
	if CheckV6(fw) != nil || MsgTypeV6(fw) != MsgRelayForw || HopCount(fw) != 0 || LinkAddress(fw) != link || PeerAddress(fw).Unmap() != peer {
		t.Errorf("relay-forward %x", fw)
	}
	if in, _ := V6Option(fw, OptRelayMsg); !bytes.Equal(in, sol) {
		t.Errorf("relay message %x", in)
	}
	if rid, _ := V6Option(fw, OptRemoteID); !bytes.Equal(rid, []byte{0, 0, 0, 9, 'r'}) {
		t.Errorf("remote id %x", rid)
	}
	// Another relay's message: one more hop, up to the limit.
	fw2, err := RelayForward(fw, link, peer)
	if err != nil || HopCount(fw2) != 1 {
		t.Errorf("second relay: %v hop %d", err, HopCount(fw2))
	}
	fw[1] = HopCountLimit
	if _, err := RelayForward(fw, link, peer); !errors.Is(err, ErrHops) {
		t.Errorf("at the limit: %v", err)
	}
	// A Relay-Reply gives the message inside.
	adv := []byte{MsgAdvertise, 0x0a, 0x0b, 0x0c}
	rr := append([]byte{MsgRelayRepl, 0}, make([]byte, 32)...)
	rr = appendV6Option(rr, OptInterfaceID, []byte("eth0"))
	rr = appendV6Option(rr, OptRelayMsg, adv)
	m, _, err := RelayReplyMessage(rr)
	if err != nil || !bytes.Equal(m, adv) {
		t.Errorf("relay-reply: %x %v", m, err)
	}
	if _, _, err := RelayReplyMessage(fw2); err == nil {
		t.Errorf("a Relay-Forward unwrapped as a reply")
	}
	if _, err := RelayForward(adv, link, peer); !errors.Is(err, ErrNotRequest) {
		t.Errorf("an Advertise relayed: %v", err)
	}
	set, _ := V6SetOption(sol, 65000, []byte("x"))
	if v, ok := V6Option(set, 65000); !ok || string(v) != "x" || CheckV6(set) != nil {
		t.Errorf("set %x", set)
	}
	if del := V6DeleteOption(set, 1); CheckV6(del) != nil || len(del) != 4+5 {
		t.Errorf("delete %x", del)
	}
	for _, bad := range [][]byte{{1, 2}, {MsgRelayForw, 0, 1}, {1, 0, 0, 0, 0, 1, 0, 9}, {0, 0, 0, 0}} {
		if CheckV6(bad) == nil {
			t.Errorf("%x checked", bad)
		}
	}
}

// FuzzV4 runs every reader and editor on what CheckV4 takes: none may
// panic, and edits keep the message valid.
func FuzzV4(f *testing.F) {
	f.Add(v4Msg(OpRequest, 0, "", []byte{OptMessageType, 1, 1}, []byte{OptRelayAgent, 3, 1, 1, 'x'}))
	f.Add(v4Msg(OpReply, 3, "10.0.0.1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if CheckV4(b) != nil {
			return
		}
		_ = FormatMAC(Chaddr(b))
		_, _, _, _ = MessageType(b), Giaddr(b), Xid(b), Secs(b)
		V4Option(b, OptRelayAgent)
		if out := V4DeleteOption(b, OptRelayAgent); CheckV4(out) != nil {
			t.Fatalf("delete broke %x", b)
		}
		if out, err := V4SetOption(b, 12, []byte("h")); err == nil && CheckV4(out) != nil {
			t.Fatalf("set broke %x", b)
		}
		if out, err := RelayV4(b, V4Relay{Giaddr: netip.MustParseAddr("10.1.1.1"), MaxHops: 16, AgentInfo: []byte{1, 1, 'p'}}); err == nil && CheckV4(out) != nil {
			t.Fatalf("relay broke %x", b)
		}
	})
}

// FuzzV6 runs every reader and editor on what CheckV6 takes.
func FuzzV6(f *testing.F) {
	f.Add(v6Solicit())
	fw, _ := RelayForward(v6Solicit(), netip.MustParseAddr("::1"), netip.MustParseAddr("::2"))
	f.Add(fw)
	rr := append([]byte{MsgRelayRepl, 0}, make([]byte, 32)...)
	f.Add(appendV6Option(rr, OptRelayMsg, []byte{MsgAdvertise, 1, 2, 3}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if CheckV6(b) != nil {
			return
		}
		_, _, _, _ = TransactionID(b), HopCount(b), LinkAddress(b), PeerAddress(b)
		V6Option(b, OptRelayMsg)
		if out := V6DeleteOption(b, 1); CheckV6(out) != nil {
			t.Fatalf("delete broke %x", b)
		}
		if out, err := V6SetOption(b, 65000, []byte("x")); err != nil || CheckV6(out) != nil {
			t.Fatalf("set broke %x: %v", b, err)
		}
		if out, err := RelayForward(b, netip.MustParseAddr("::1"), netip.Addr{}); err == nil && CheckV6(out) != nil {
			t.Fatalf("relay-forward broke %x", b)
		}
		if m, _, err := RelayReplyMessage(b); err == nil && len(m) == 0 {
			t.Fatalf("empty relay message from %x", b)
		}
	})
}
