package mrfmqtt

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/mqtt"
	"github.com/openltm/openltm/dataplane/mqtt/mqtttest"
	"github.com/openltm/openltm/dataplane/mrf"
)

func enc(p *mqtt.Packet, v uint8) []byte { return p.Encode(nil, v) }

// Every acknowledged packet's key is the key of the answer the broker
// sends it, and the rest are told apart.
func TestClassifyAndKeys(t *testing.T) {
	s := &Session{}
	sub := &mqtt.Packet{Type: mqtt.SUBSCRIBE, Flags: 2, PacketID: 7, Subscriptions: []mqtt.Subscription{{Topic: "a/#", Options: 1}}}
	for _, tc := range []struct {
		name   string
		req    *mqtt.Packet
		answer *mqtt.Packet
		oneWay bool
	}{
		{"connect", mqtttest.Connect("c1"), &mqtt.Packet{Type: mqtt.CONNACK}, false},
		{"publish qos1", &mqtt.Packet{Type: mqtt.PUBLISH, Topic: "a/b", QoS: 1, PacketID: 9, Payload: []byte("x")}, &mqtt.Packet{Type: mqtt.PUBACK, PacketID: 9}, false},
		{"publish qos2", &mqtt.Packet{Type: mqtt.PUBLISH, Topic: "a/b", QoS: 2, PacketID: 10, Payload: []byte("x")}, &mqtt.Packet{Type: mqtt.PUBREC, PacketID: 10}, false},
		{"pubrel", &mqtt.Packet{Type: mqtt.PUBREL, Flags: 2, PacketID: 10}, &mqtt.Packet{Type: mqtt.PUBCOMP, PacketID: 10}, false},
		{"subscribe", sub, &mqtt.Packet{Type: mqtt.SUBACK, PacketID: 7, ReturnCodes: []byte{1}}, false},
		{"unsubscribe", &mqtt.Packet{Type: mqtt.UNSUBSCRIBE, Flags: 2, PacketID: 8, Subscriptions: []mqtt.Subscription{{Topic: "a/#"}}}, &mqtt.Packet{Type: mqtt.UNSUBACK, PacketID: 8}, false},
		{"ping", &mqtt.Packet{Type: mqtt.PINGREQ}, &mqtt.Packet{Type: mqtt.PINGRESP}, false},
		{"publish qos0", &mqtt.Packet{Type: mqtt.PUBLISH, Topic: "a/b", Payload: []byte("x")}, nil, true},
		{"disconnect", &mqtt.Packet{Type: mqtt.DISCONNECT}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := enc(tc.req, mqtt.V311)
			c := s.Classify(raw)
			if c.Answer || c.Bad || c.OneWay != tc.oneWay {
				t.Fatalf("request classified %+v", c)
			}
			out, k := s.Outbound(nil, &mrf.Message{Data: raw}, 1)
			if out != nil {
				t.Fatalf("request rewritten: %x", out)
			}
			if tc.answer == nil {
				return
			}
			a := s.Classify(enc(tc.answer, mqtt.V311))
			if !a.Answer || !a.Final || a.Key != k {
				t.Fatalf("answer %+v, want key %x", a, k)
			}
		})
	}
	if c := s.Classify([]byte{0x30}); !c.Bad {
		t.Fatalf("a truncated header is %+v", c)
	}
}

func TestFailedAndRouteKeys(t *testing.T) {
	s := &Session{}
	c311 := enc(mqtttest.Connect("dev-1"), mqtt.V311)
	if got := s.Failed(&mrf.Message{Data: c311}); string(got) != "\x20\x02\x00\x03" {
		t.Fatalf("3.1.1 CONNACK %x", got)
	}
	c5 := mqtttest.Connect("dev-2")
	c5.ProtocolVersion, c5.HasUsername, c5.Username = mqtt.V5, true, "alice"
	raw5 := enc(c5, mqtt.V5)
	if got := s.Failed(&mrf.Message{Data: raw5}); string(got) != "\x20\x03\x00\x88\x00" {
		t.Fatalf("5.0 CONNACK %x", got)
	}
	if got := s.Failed(&mrf.Message{Data: enc(&mqtt.Packet{Type: mqtt.PINGREQ}, mqtt.V311)}); got != nil {
		t.Fatalf("a ping failed with %x", got)
	}
	k := s.RouteKeys(&mrf.Message{Data: raw5})
	if k[KeyClientID] != "dev-2" || k[KeyUsername] != "alice" {
		t.Fatalf("keys %q", k)
	}
	for _, tc := range []struct {
		route, msg string
		want       bool
	}{{"dev-*", "dev-2", true}, {"dev-?", "dev-22", false}, {"x", "x", true}, {"[", "[", true}, {"[", "a", false}} {
		if got := s.MatchKey(KeyClientID, tc.route, tc.msg); got != tc.want {
			t.Errorf("MatchKey(%q, %q) = %t", tc.route, tc.msg, got)
		}
	}
	f := s.NewFramer()
	if n, ok, err := f.Frame(c311[:3]); n != 0 || ok || err != nil {
		t.Fatalf("partial: %d %t %v", n, ok, err)
	}
	if n, ok, err := f.Frame(append(c311, 0xc0, 0)); n != len(c311) || !ok || err != nil {
		t.Fatalf("whole: %d %t %v", n, ok, err)
	}
	if _, _, err := (&Session{Max: 4}).NewFramer().Frame(c311); err == nil {
		t.Fatal("a packet past max-message-size framed")
	}
}

type env struct{ pools map[string]netip.AddrPort }

func (e env) Pick(pool string, avoid []netip.AddrPort) (netip.AddrPort, bool) {
	a, ok := e.pools[pool]
	for _, x := range avoid {
		if x == a {
			return netip.AddrPort{}, false
		}
	}
	return a, ok
}

func (e env) Dial(_ string, addr netip.AddrPort, _ netip.Addr, _ *sockopt.Side) (net.Conn, func(), error) {
	c, err := net.DialTimeout("tcp", addr.String(), 5*time.Second)
	return c, nil, err
}

// client is a session whose client is the test.
type client struct {
	s   *mrf.Session
	got chan []byte
}

func newClient(r *mrf.Router) *client {
	c := &client{got: make(chan []byte, 64)}
	c.s = r.NewSession(func(b []byte) error { c.got <- append([]byte(nil), b...); return nil }, nil)
	return c
}

func (c *client) send(p *mqtt.Packet) {
	raw := enc(p, mqtt.V311)
	if handled, _ := c.s.Local(raw); handled {
		return
	}
	c.s.Handle(c.s.Message(raw))
}

func (c *client) expect(t *testing.T, want mqtt.Type) *mqtt.Packet {
	t.Helper()
	select {
	case b := <-c.got:
		p, err := mqtt.Decode(b, mqtt.V311)
		if err != nil {
			t.Fatalf("undecodable %x: %v", b, err)
		}
		if p.Type != want {
			t.Fatalf("got %s, want %s", p.Type, want)
		}
		return p
	case <-time.After(20 * time.Second):
		t.Fatalf("no %s", want)
	}
	return nil
}

func broker(t *testing.T, addr, name string) netip.AddrPort {
	t.Helper()
	b, err := mqtttest.StartBroker(addr, name)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	t.Cleanup(b.Close)
	return netip.MustParseAddrPort(b.Addr())
}

// Two clients of one router: the subscriber gets the publisher's
// message from the broker; each acknowledgement reaches its own client;
// the route by client id sends "b-" clients to the other broker.
func TestRouter(t *testing.T) {
	a := broker(t, "127.146.2.11:0", "broker-a")
	b := broker(t, "127.146.2.12:0", "broker-b")
	cfg := &mrf.Config{Proto: &Session{}, Peers: map[string]*mrf.Peer{}, DefaultPool: "pa",
		Routes: []*mrf.Route{{Name: "r_b", Keys: mrf.RouteKeys{KeyClientID: "b-*"}, Peers: []*mrf.Peer{{Name: "peer_b", Pool: "pb", Conns: 1}}}}}
	r := mrf.NewRouter(cfg, env{map[string]netip.AddrPort{"pa": a, "pb": b}}, nil)
	t.Cleanup(r.Close)

	sub, pub := newClient(r), newClient(r)
	defer sub.s.Close()
	defer pub.s.Close()
	sub.send(mqtttest.Connect("a-sub"))
	sub.expect(t, mqtt.CONNACK)
	sub.send(&mqtt.Packet{Type: mqtt.SUBSCRIBE, Flags: 2, PacketID: 3, Subscriptions: []mqtt.Subscription{{Topic: "room/#", Options: 1}}})
	if ack := sub.expect(t, mqtt.SUBACK); ack.PacketID != 3 {
		t.Fatalf("SUBACK for %d", ack.PacketID)
	}
	pub.send(mqtttest.Connect("a-pub"))
	pub.expect(t, mqtt.CONNACK)
	pub.send(&mqtt.Packet{Type: mqtt.PUBLISH, Topic: "room/1", QoS: 1, PacketID: 3, Payload: []byte("on")})
	if ack := pub.expect(t, mqtt.PUBACK); ack.PacketID != 3 {
		t.Fatalf("PUBACK for %d", ack.PacketID)
	}
	if p := sub.expect(t, mqtt.PUBLISH); p.Topic != "room/1" || string(p.Payload) != "on" {
		t.Fatalf("delivered %q %q", p.Topic, p.Payload)
	}
	pub.send(&mqtt.Packet{Type: mqtt.PINGREQ})
	pub.expect(t, mqtt.PINGRESP)

	other := newClient(r)
	defer other.s.Close()
	other.send(mqtttest.Connect("b-1"))
	other.expect(t, mqtt.CONNACK)
	other.send(&mqtt.Packet{Type: mqtt.SUBSCRIBE, Flags: 2, PacketID: 1, Subscriptions: []mqtt.Subscription{{Topic: "$member"}}})
	other.expect(t, mqtt.SUBACK)
	if p := other.expect(t, mqtt.PUBLISH); string(p.Payload) != "broker-b" {
		t.Fatalf("b-1 reached %q", p.Payload)
	}
}

// A CONNECT no broker takes is answered "server unavailable".
func TestNoBroker(t *testing.T) {
	ln, err := net.Listen("tcp", "127.146.2.13:0")
	if err != nil {
		t.Skipf("cannot listen: %v", err)
	}
	dead := netip.MustParseAddrPort(ln.Addr().String())
	ln.Close()
	cfg := &mrf.Config{Proto: &Session{}, Peers: map[string]*mrf.Peer{}, DefaultPool: "p"}
	r := mrf.NewRouter(cfg, env{map[string]netip.AddrPort{"p": dead}}, nil)
	t.Cleanup(r.Close)
	c := newClient(r)
	defer c.s.Close()
	c.send(mqtttest.Connect("x"))
	if ack := c.expect(t, mqtt.CONNACK); ack.ReturnCode != 3 {
		t.Fatalf("return code %d", ack.ReturnCode)
	}
}
