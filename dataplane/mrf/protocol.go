package mrf

import (
	"net"
	"net/netip"
	"unsafe"
)

// Protocol is what a message protocol adds to the generic router, so that
// SIP (dataplane/mrfsip) and Diameter (dataplane/mrfdiam) route over the
// same routes, peers, transport-configs and peer connections as the
// generic protocol does: how a stream is cut into messages, which
// messages are requests and which answer one (matched by a key the
// request carries as it leaves, not by order), the route fields a
// message is matched on, what the protocol answers by itself (a
// capabilities exchange, a watchdog, a keep-alive), the edits a request
// gets on its way to a peer and an answer on its way back, and the
// answer a request that cannot be delivered gets. A Config without one
// is the generic protocol. Its methods run on every message: they
// append into the buffers they are given rather than allocate.
type Protocol interface {
	// Name is the protocol as MR::protocol names it ("sip",
	// "diameter"); String says its settings, so that a commit that
	// leaves them alone keeps the virtual's router.
	Name() string
	String() string
	// NewFramer cuts one connection's stream into messages.
	NewFramer() Framer
	// Classify says what a message read from a connection is.
	Classify(data []byte) Class
	// Local is a message the protocol handles by itself (from a peer
	// connection when fromPeer): handled true, with reply (appended to
	// dst; nil: none) to send back where it came from, and end when the
	// connection is to close after it.
	Local(dst, data []byte, fromPeer bool) (reply []byte, handled, end bool)
	// RouteKeys are the message's values of the protocol's route fields
	// (Route.Keys), and MatchKey says whether a route's value of field i
	// matches the message's.
	RouteKeys(m *Message) RouteKeys
	MatchKey(i int, route, msg string) bool
	// Outbound appends request m as it leaves on a peer connection, its
	// seq-th there (bufs are two buffers of the connection's, for edits
	// made in turn), and the key its answers will carry.
	Outbound(bufs *[2][]byte, m *Message, seq uint64) (out []byte, key uint64)
	// Inbound readies answer a (its own copy) to request req before it
	// goes back to req's originator.
	Inbound(a *Message, req *Message)
	// Open runs the protocol's handshake on a new peer connection (a
	// Diameter capabilities exchange), reading with rd; nil when it has
	// none.
	Open(c net.Conn, rd *Reader) error
	// Failed is the answer a request that could not be delivered gets
	// (nil: none; the request is dropped).
	Failed(m *Message) []byte
}

// HostProtocol is a protocol whose peers name themselves in their
// handshake and whose requests may name the host they are for (Diameter:
// the CEA's Origin-Host, the request's Destination-Host): such a request
// goes on the open shared connection of the peer of that name before the
// routes are looked at, as a Diameter agent delivers to a peer it knows.
type HostProtocol interface {
	Protocol
	// OpenHost is Open, and the identity the peer gave (in lower case).
	OpenHost(c net.Conn, rd *Reader) (host string, err error)
	// DestHost is the host a request names (a view of data; nil: none).
	DestHost(data []byte) []byte
}

// Class is what Protocol.Classify makes of a message.
type Class struct {
	// Answer: it answers the request whose key is Key; Final: the last
	// answer that request gets (a SIP provisional response is not).
	Answer, Final bool
	Key           uint64
	// OneWay: a request no answer comes to (a SIP ACK).
	OneWay bool
	// Bad: the message cannot be read; it is dropped.
	Bad bool
}

// RouteKeys are a protocol's route fields, most specific last: a route
// matching field i scores 1<<i (the generic protocol's are the source
// and destination addresses). A protocol may give views of the message's
// own bytes (BytesKey): the keys live only while its route is looked up.
type RouteKeys [4]string

// BytesKey is b as a route key without a copy, valid while b is not
// changed: the message's bytes stay as they are while its route is
// looked up, and the key is not kept.
func BytesKey(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// Framer finds the first message of a stream's bytes: n is its length
// once complete; incomplete, n is its length when known (0: not yet).
type Framer interface {
	Frame(buf []byte) (n int, complete bool, err error)
}

// Sticky is what a protocol whose client connection is one session with
// one server (MQTT: a CONNECT opens it, everything after belongs to it)
// adds to Protocol: the client's first routed message picks the peer
// connection, which is the client's own whatever the peer's
// connection-mode, and every later message of the client goes on it; the
// client's answers to the server's messages go to it as they are; and
// the server's own messages (an MQTT PUBLISH for a subscription) come
// back to the client rather than being routed.
type Sticky interface {
	Sticky() bool
}

// sticky says whether p keeps each client on one peer connection.
func sticky(p Protocol) bool {
	s, ok := p.(Sticky)
	return ok && s.Sticky()
}

// Link is the peer connection a request leaves on, as a protocol whose
// requests name their hop sees it.
type Link struct {
	// UDP: the connection is a UDP flow (each message one datagram).
	UDP bool
	// Local is the connection's own address: on UDP, where the peer
	// sends what it answers; on TCP, the side of the host it leaves
	// from (a SIP double Record-Route names it).
	Local netip.AddrPort
}

// LinkProtocol is a protocol whose requests say how they travel (a SIP
// Via names its transport and, over UDP, the address responses are to
// be sent to): Outbound with the connection the request leaves on.
type LinkProtocol interface {
	OutboundOn(l *Link, bufs *[2][]byte, m *Message, seq uint64) (out []byte, key uint64)
}
