package mblbvs

import (
	"net/netip"
	"slices"
	"sync"
	"time"
)

// A pool's min-conn on a virtual whose clients reach many ports (every
// port, a port list) or addresses keeps connections open ahead of need
// to a member that follows the client (at port any, translate-port or
// translate-address disabled) on each destination clients asked for
// lately, as they come: warmAsked remembers the last maxWarmDests
// destinations, each for warmAskedFor after its last client [M: the
// bounds are ours; BIG-IP documents no per-port min-conn], and
// warmMembers lists such a member once per destination.
//
// On a virtual that is a network or on every port with automap (its own
// source-address-translation), a client that reached another address
// than the virtual's leaves from that address (viaLocal), and only a
// connection that left from it may serve it. So a destination is also
// noted with via, and warmMembers lists every member once more per
// address clients reached lately (mblb.Member.Via: opened ahead from
// that address, filed under it), within the same bound of maxWarmDests
// destinations [M: BIG-IP's automap leaves from a self IP, whatever
// address the client reached; openltm without self IPs leaves from the
// reached one, so min-conn keeps its connections per such address].
// Connections opened ahead from the virtual's own address are kept too:
// its own clients, and those not translated by automap, use them.

// maxWarmDests bounds the destinations warmed per virtual [M].
const maxWarmDests = 16

// warmAskedFor is how long a destination is warmed after its last
// client [M].
const warmAskedFor = 5 * time.Minute

// warmAsked is the destinations clients asked for lately, the latest
// first.
type warmAsked struct {
	mu   sync.Mutex
	list []askedDest
}

// askedDest is a destination asked for lately: to, and via when a
// client of it left from the address it reached (viaLocal with the
// virtual's automap).
type askedDest struct {
	to  netip.AddrPort
	via bool
	at  time.Time
}

// note records a client's destination, and whether automap leaves from
// the address it reached (via; kept once seen, until the destination is
// forgotten).
func (w *warmAsked) note(to netip.AddrPort, via bool, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, d := range w.list {
		if d.to == to {
			copy(w.list[1:i+1], w.list[:i])
			w.list[0] = askedDest{to, via || d.via, now}
			return
		}
	}
	if len(w.list) < maxWarmDests {
		w.list = append(w.list, askedDest{})
	}
	copy(w.list[1:], w.list[:len(w.list)-1])
	w.list[0] = askedDest{to, via, now}
}

// dests is the destinations asked for within warmAskedFor of now, the
// latest first; older ones are forgotten.
func (w *warmAsked) dests(now time.Time) []askedDest {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, d := range w.list {
		if now.Sub(d.at) < warmAskedFor {
			w.list[n] = d
			n++
		}
	}
	w.list = w.list[:n]
	return append([]askedDest(nil), w.list...)
}

// viaAddrs is the distinct addresses of the destinations in ds that
// automap leaves from (via), the latest first.
func viaAddrs(ds []askedDest) []netip.Addr {
	var out []netip.Addr
	for _, d := range ds {
		if d.via && !slices.Contains(out, d.to.Addr()) {
			out = append(out, d.to.Addr())
		}
	}
	return out
}
