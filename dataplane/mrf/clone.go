package mrf

import (
	"errors"
	"maps"
	"net/netip"
)

// errNoConn is a message that may only use a peer connection already
// open (MR::message existing_connections_only) when none is.
var errNoConn = errors.New("no existing connection")

// Clone is a copy of message m with clone id id, as MR::message clone
// makes it: its bytes, addresses, what the rules set on it (routes,
// stored variables, persistence key) and originator, routed on its own
// [M: F5 copies the message; which of its routing state a clone keeps is
// not documented, and a clone here starts its routing over, with none
// of the original's tries].
func (m *Message) Clone(id string) *Message {
	c := &Message{Data: append([]byte(nil), m.Data...), Src: m.Src, Dst: m.Dst, Request: m.Request, Answer: m.Answer, Bad: m.Bad,
		Status: StatusUnprocessed, MaxRetries: m.MaxRetries, RoutePeers: m.RoutePeers, RouteRatio: m.RouteRatio, RouteHost: m.RouteHost,
		RoutePool: m.RoutePool, Instance: m.Instance, Store: maps.Clone(m.Store), Persist: m.Persist, PersistTTL: m.PersistTTL,
		ReqSeq: m.ReqSeq, Made: true, CloneID: id, ExistingOnly: m.ExistingOnly,
		SNAT: m.SNAT, SNATAutomap: m.SNATAutomap, origin: m.origin}
	return c
}

// source is the address a peer connection m opens leaves from: the
// rule's MR::message snat, else the transport's (local is the virtual's
// address).
func (m *Message) source(t *Transport, local, dst netip.Addr) netip.Addr {
	switch {
	case m.SNATAutomap && local.IsValid() && local.Is4() == dst.Is4():
		return local
	case m.SNAT.IsValid() && m.SNAT.Is4() == dst.Is4():
		return m.SNAT
	}
	return t.source(local, dst)
}

// PickHost is MR::message pick_host's answer: a member of pool chosen
// by its balancing method, as a new peer connection's would be, without
// routing anything (false: none is available).
func (r *Router) PickHost(pool string) (netip.AddrPort, bool) {
	if r.env == nil {
		return netip.AddrPort{}, false
	}
	return r.env.Pick(pool, nil)
}
