// Package mrfmqtt is MQTT over the message-routing framework: the
// Protocol a TCP virtual with an `ltm message-routing mqtt profile
// session` and `mqtt profile router` gives its router (dataplane/mrf).
// Packets are framed on their remaining length (dataplane/mqtt, the
// mqtt profile's codec). An MQTT connection is one session with one
// broker, so the protocol is mrf.Sticky: the client's CONNECT is routed
// (by the router's mqtt routes, matched on its client id and user name,
// a rule's MR::message route, else the virtual's pool) over a connection
// of the client's own, and every later packet of the client follows it.
// [M: F5's documents do not say what an mqtt route matches; openltm
// matches the CONNECT's client-id and username, glob patterns, since
// the broker is chosen once per session.] Each acknowledged packet
// (CONNECT, PUBLISH QoS 1 and 2, PUBREL, SUBSCRIBE, UNSUBSCRIBE,
// PINGREQ) is matched back to its client by the answer it waits for
// (CONNACK, PUBACK, PUBREC, PUBCOMP, SUBACK, UNSUBACK, PINGRESP) and its
// packet identifier; the broker's own PUBLISHes for the client's
// subscriptions, and their PUBREL, go back to the client, and the
// client's acknowledgements of them go to the broker as they are. A
// CONNECT no broker takes is answered CONNACK "server unavailable".
package mrfmqtt

import (
	"encoding/binary"
	"fmt"
	"net"
	"path"

	"github.com/openltm/openltm/dataplane/mqtt"
	"github.com/openltm/openltm/dataplane/mrf"
)

// Session is a virtual's mqtt session profile as its router applies it;
// it is the virtual's mrf.Protocol.
type Session struct {
	// Max bounds one packet's remaining length (0: the codec's bound).
	Max int
}

// The route fields of an mqtt route (mrf.RouteKeys), least specific
// first.
const (
	KeyUsername = iota
	KeyClientID
)

// Name is the protocol's name to MR::protocol.
func (s *Session) Name() string { return "mqtt" }

func (s *Session) String() string { return fmt.Sprintf("%d", s.Max) }

// Sticky keeps each client on the broker its CONNECT went to.
func (s *Session) Sticky() bool { return true }

// NewFramer frames on the fixed header's remaining length.
func (s *Session) NewFramer() mrf.Framer { return framer{max: s.Max} }

type framer struct{ max int }

func (f framer) Frame(buf []byte) (int, bool, error) {
	n, err := mqtt.Frame(buf, f.max)
	if err != nil {
		return 0, false, err
	}
	return n, n > 0, nil
}

// header reads a packet's type, flags and where its variable header
// starts; ok false when it is too short to be one.
func header(b []byte) (t mqtt.Type, flags uint8, at int, ok bool) {
	if len(b) < 2 {
		return 0, 0, 0, false
	}
	i := 1
	for i < len(b) && i < 5 && b[i]&0x80 != 0 {
		i++
	}
	if i >= len(b) || b[i]&0x80 != 0 {
		return 0, 0, 0, false
	}
	return mqtt.Type(b[0] >> 4), b[0] & 0x0f, i + 1, true
}

// packetID is the packet identifier of an acknowledgement, SUBSCRIBE or
// UNSUBSCRIBE (right after the fixed header), or of a PUBLISH of QoS 1
// or 2 (after its topic); -1 when it has none.
func packetID(b []byte) int {
	t, flags, at, ok := header(b)
	if !ok {
		return -1
	}
	if t == mqtt.PUBLISH {
		if (flags>>1)&3 == 0 || at+2 > len(b) {
			return -1
		}
		at += 2 + int(binary.BigEndian.Uint16(b[at:]))
	}
	if at+2 > len(b) {
		return -1
	}
	return int(binary.BigEndian.Uint16(b[at:]))
}

// key is the key of an answer of type t with packet id id.
func key(t mqtt.Type, id int) uint64 { return uint64(t)<<16 | uint64(uint16(max(id, 0))) }

// Classify: acknowledgements answer the packet their id names
// (CONNACK and PINGRESP the connection's only CONNECT and ping); PUBLISH
// QoS 0 and DISCONNECT want nothing back; the rest are requests.
func (s *Session) Classify(data []byte) mrf.Class {
	t, flags, _, ok := header(data)
	if !ok {
		return mrf.Class{Bad: true}
	}
	switch t {
	case mqtt.CONNACK, mqtt.PINGRESP:
		return mrf.Class{Answer: true, Final: true, Key: key(t, 0)}
	case mqtt.PUBACK, mqtt.PUBREC, mqtt.PUBCOMP, mqtt.SUBACK, mqtt.UNSUBACK:
		id := packetID(data)
		if id < 0 {
			return mrf.Class{Bad: true}
		}
		return mrf.Class{Answer: true, Final: true, Key: key(t, id)}
	case mqtt.PUBLISH:
		if (flags>>1)&3 == 0 {
			return mrf.Class{OneWay: true}
		}
	case mqtt.DISCONNECT, mqtt.AUTH:
		return mrf.Class{OneWay: true}
	case 0:
		return mrf.Class{Bad: true}
	}
	return mrf.Class{}
}

// Local handles nothing itself: pings and the session's packets are the
// broker's to answer.
func (s *Session) Local(dst, data []byte, fromPeer bool) ([]byte, bool, bool) {
	return nil, false, false
}

// RouteKeys are a CONNECT's user name and client id (none for other
// packets: they follow their session's connection).
func (s *Session) RouteKeys(m *mrf.Message) mrf.RouteKeys {
	var k mrf.RouteKeys
	t, _, _, ok := header(m.Data)
	if !ok || t != mqtt.CONNECT {
		return k
	}
	p, err := mqtt.Decode(m.Data, 0)
	if err != nil {
		return k
	}
	k[KeyClientID] = p.ClientID
	k[KeyUsername] = p.Username
	return k
}

// MatchKey matches a route's value as a glob pattern (`*`, `?`, `[...]`).
func (s *Session) MatchKey(i int, route, msg string) bool {
	if route == msg {
		return true
	}
	ok, err := path.Match(route, msg)
	return err == nil && ok
}

// Outbound sends the packet as it is; its key is that of the answer it
// waits for.
func (s *Session) Outbound(bufs *[2][]byte, m *mrf.Message, seq uint64) ([]byte, uint64) {
	t, flags, _, ok := header(m.Data)
	if !ok {
		return nil, 0
	}
	switch t {
	case mqtt.CONNECT:
		return nil, key(mqtt.CONNACK, 0)
	case mqtt.PINGREQ:
		return nil, key(mqtt.PINGRESP, 0)
	case mqtt.PUBLISH:
		if (flags>>1)&3 == 2 {
			return nil, key(mqtt.PUBREC, packetID(m.Data))
		}
		return nil, key(mqtt.PUBACK, packetID(m.Data))
	case mqtt.PUBREL:
		return nil, key(mqtt.PUBCOMP, packetID(m.Data))
	case mqtt.SUBSCRIBE:
		return nil, key(mqtt.SUBACK, packetID(m.Data))
	case mqtt.UNSUBSCRIBE:
		return nil, key(mqtt.UNSUBACK, packetID(m.Data))
	}
	return nil, 0
}

// Inbound leaves answers as the broker sent them.
func (s *Session) Inbound(a *mrf.Message, req *mrf.Message) {}

// Open has no handshake: the client's CONNECT is the session's.
func (s *Session) Open(c net.Conn, rd *mrf.Reader) error { return nil }

// Failed answers a CONNECT no broker takes with CONNACK "server
// unavailable" (3 in 3.1 and 3.1.1, 0x88 in 5.0); other packets are
// dropped.
func (s *Session) Failed(m *mrf.Message) []byte {
	t, _, _, ok := header(m.Data)
	if !ok || t != mqtt.CONNECT {
		return nil
	}
	p, err := mqtt.Decode(m.Data, 0)
	if err == nil && p.ProtocolVersion == mqtt.V5 {
		return []byte{byte(mqtt.CONNACK) << 4, 3, 0, 0x88, 0}
	}
	return []byte{byte(mqtt.CONNACK) << 4, 2, 0, 3}
}
