package mrf

import (
	"errors"
	"net/netip"
	"time"
)

// A transport-config's snatpool (SNATPool, SNATAddrs) gives its peer
// connections their source address as a virtual's snatpool does, on an
// Env that is a SNATHolder: in turn, each connection counted against
// the ltm snat-translation of its address (show ltm snat-translation's
// Total Connections) and, when that sets a connection-limit or an idle
// timeout, holding it until the connection ends (outgoing.close gives
// it back with the connection's done). An address at its limit is passed
// over for the next; when every one of the member's family is, the
// connection is not made (ErrSNATFull) and the message fails as for a
// member that cannot be reached. The address's tcp-idle-timeout
// (udp-idle-timeout for a UDP peer) replaces the peer connection's idle
// time. On an Env that is no SNATHolder the address is given as
// before, uncounted.
//
// A source a rule chose (MR::message snat), a transport-config's
// automap (the virtual's address) and a connection back to a client
// (connectback.go, from the virtual's address) are held the same way
// on an Env that is a SNATAddrHolder, where the address's ltm
// snat-translation sets a connection-limit or an idle timeout (an
// address without one is given uncounted, as a rule's snat is on the
// other virtuals): the address at its limit fails the connection
// (ErrSNATAddrFull, counted refused); there is no next address.

// SNATHolder is an Env that counts and holds a transport-config
// snatpool's addresses.
type SNATHolder interface {
	// HoldSNAT counts a peer connection given a, an address of the
	// snatpool pool: hold is what the connection gives back when it
	// ends (nil: nothing held); ok false when a holds its
	// connection-limit (nothing counted then).
	HoldSNAT(pool string, a netip.Addr) (hold SourceHold, ok bool)
	// RefusedSNAT counts a connection refused because every address of
	// pool of its family, a among them, held its connection-limit.
	RefusedSNAT(pool string, a netip.Addr)
}

// SNATAddrHolder is an Env that counts and holds an address given
// without a snatpool (a rule's MR::message snat, a transport-config's
// automap, a connection back) against its ltm snat-translation.
type SNATAddrHolder interface {
	// HoldSNATAddr counts and holds a for a peer connection when its
	// ltm snat-translation sets a connection-limit or an idle timeout
	// (hold nil: a has none, nothing counted); ok false when a holds
	// its connection-limit (counted refused, nothing held).
	HoldSNATAddr(a netip.Addr) (hold SourceHold, ok bool)
}

// ErrSNATAddrFull fails a peer connection whose source address (a
// rule's MR::message snat, automap, a connection back) is at its ltm
// snat-translation connection-limit.
var ErrSNATAddrFull = errors.New("the peer connection's source address is at its snat-translation connection-limit")

// holdAddr holds src, the source of a peer connection that no snatpool
// gave, through the router's SNATAddrHolder (nil: none, nothing held):
// ErrSNATAddrFull when src is at its limit. An invalid src (the host
// chooses) holds nothing.
func (r *Router) holdAddr(src netip.Addr) (SourceHold, error) {
	if r.addrHold == nil || !src.IsValid() {
		return nil, nil
	}
	hold, ok := r.addrHold.HoldSNATAddr(src)
	if !ok {
		return nil, ErrSNATAddrFull
	}
	return hold, nil
}

// SourceHold is a translation address a peer connection holds: given
// back once with Release when the connection ends; its idle timeouts
// (false: not set) replace the connection's idle time.
type SourceHold interface {
	Release()
	TCPIdle() (time.Duration, bool)
	UDPIdle() (time.Duration, bool)
}

// ErrSNATFull fails a peer connection whose transport-config's snatpool
// has every address of the member's family at its ltm snat-translation
// connection-limit.
var ErrSNATFull = errors.New("every snatpool address of the transport-config is at its snat-translation connection-limit")

// holds reports whether a peer connection to dst with message m takes
// its source from t's snatpool through an Env that holds: no rule's
// source (MR::message snat, automap) comes first (local: the virtual's
// address).
func (t *Transport) holds(m *Message, local, dst netip.Addr, env Env) (SNATHolder, bool) {
	if t == nil || t.SNAT != SNATPool || t.SNATPool == "" {
		return nil, false
	}
	if m.SNATAutomap && local.IsValid() && local.Is4() == dst.Is4() || m.SNAT.IsValid() && m.SNAT.Is4() == dst.Is4() {
		return nil, false
	}
	h, ok := env.(SNATHolder)
	return h, ok
}

// sourceHeld is t.source for the snatpool through h: the next address
// of dst's family in turn, passing over those h finds full; invalid (the
// host chooses) when the pool has none of that family, ErrSNATFull when
// each one is full (each counted as refused). One call per peer
// connection; it does not allocate.
func (t *Transport) sourceHeld(h SNATHolder, dst netip.Addr) (netip.Addr, SourceHold, error) {
	n := len(t.SNATAddrs)
	start := int(t.next.Add(1))
	full := false
	for i := range n {
		a := t.SNATAddrs[(start+i)%n]
		if !a.IsValid() || a.Is4() != dst.Is4() {
			continue
		}
		if hold, ok := h.HoldSNAT(t.SNATPool, a); ok {
			return a, hold, nil
		}
		full = true
	}
	if !full {
		return netip.Addr{}, nil, nil
	}
	for _, a := range t.SNATAddrs {
		if a.IsValid() && a.Is4() == dst.Is4() {
			h.RefusedSNAT(t.SNATPool, a)
		}
	}
	return netip.Addr{}, nil, ErrSNATFull
}

// withHold is done followed by hold's Release (done alone for a nil
// hold): one closure per held peer connection.
func withHold(done func(), hold SourceHold) func() {
	if hold == nil {
		return done
	}
	return func() {
		if done != nil {
			done()
		}
		hold.Release()
	}
}

// heldIdle is idle replaced by hold's idle timeout for the transport
// (udp or TCP), when it sets one.
func heldIdle(idle time.Duration, hold SourceHold, udp bool) time.Duration {
	if hold == nil {
		return idle
	}
	d, ok := hold.TCPIdle()
	if udp {
		d, ok = hold.UDPIdle()
	}
	if ok {
		return d
	}
	return idle
}
