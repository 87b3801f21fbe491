package mrf

import (
	"errors"
	"net"
	"net/netip"
)

// A transport-config's rules run on the peer connections it makes (F5:
// each connection runs the iRules of the transport that made it, a
// virtual's or a transport-config's): a message leaving on such a
// connection runs its egress events there (MR_EGRESS and the protocol's
// send event), a message arriving on it its ingress events (the
// protocol's event and MR_INGRESS), before the router takes it on; the
// connection's opening and closing run the connection events the Env
// chooses. The package runs no rule itself: the Env that dials the
// connections makes their hooks (RuleEnv), and a connection whose
// transport-config has no rules pays one nil check per message.

// RuleEnv is an Env that runs a transport-config's rules (Transport.Rules)
// on the peer connections it makes.
type RuleEnv interface {
	// PeerHooks are the hooks of one new peer connection made by a
	// transport-config whose Rules are rules (nil: none of them runs an
	// event there).
	PeerHooks(rules any, c PeerConn) PeerHooks
}

// PeerConn is what a peer connection's rules know of it.
type PeerConn struct {
	Router *Router
	// Transport is the transport-config's full name.
	Transport string
	// Local is the connection's own address, Remote the peer member's.
	Local, Remote netip.AddrPort
	UDP           bool
	// Send writes framed bytes to the peer outside the router's
	// bookkeeping (an MQTT rule's MQTT::respond to the broker, its
	// MQTT::insert before a packet): called from Ingress or Egress.
	Send func([]byte) error
}

// PeerHooks run a transport-config's rules on one peer connection:
// Ingress over each message the peer sends (an answer, or a message of
// its own before it is routed), Egress over each message about to be
// written to it (a request routed there, or the answer to the peer's own
// request), Failed over the peer's own messages that could not be
// delivered. Each false closes the connection.
type PeerHooks interface {
	Hooks
	// Opened runs as the connection is made; false: it is closed at
	// once and the messages waiting for it fail.
	Opened() bool
	// Closed runs once as the connection ends; the hooks are not used
	// after it.
	Closed()
}

// errRuleClosed is a peer connection its rules closed (reject, a Tcl
// error) as it opened.
var errRuleClosed = errors.New("closed by the transport-config's rules")

// peerHooks are the hooks of a new peer connection made by transport tc
// to remote from local, nil when its transport-config has no rules or
// the Env runs none.
func (o *outgoing) peerHooks(tc *Transport, local, remote netip.AddrPort, udp bool) PeerHooks {
	if tc == nil || tc.Rules == nil {
		return nil
	}
	re, ok := o.r.env.(RuleEnv)
	if !ok {
		return nil
	}
	return re.PeerHooks(tc.Rules, PeerConn{Router: o.r, Transport: tc.Name, Local: local, Remote: remote, UDP: udp, Send: o.writeBack})
}

// egress runs the connection's egress events over m about to be written
// to the peer: false when the rules closed the connection; m.Drop when
// they dropped the message.
func (o *outgoing) egress(m *Message) bool {
	m.Drop, m.Return, m.Retry = false, false, false
	return o.hooks.Egress(m)
}

// ingress runs the connection's ingress events over a, just read from
// the peer: false when the rules closed the connection; a.Drop when they
// dropped it [M: MR::return and MR::retry there are not acted on; the
// answer goes back to its request's originator].
func (o *outgoing) ingress(a *Message) bool {
	return o.hooks.Ingress(a)
}

// addrPortOf is a connection's address as an AddrPort (zero: not an IP
// address).
func addrPortOf(a net.Addr) netip.AddrPort {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.AddrPort()
	case *net.UDPAddr:
		return a.AddrPort()
	}
	return netip.AddrPort{}
}
