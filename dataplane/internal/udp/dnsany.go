package udp

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/internal/state"
)

// A UDP virtual with a dns profile on every port (`destination ADDR:any
// ip-protocol udp` and a dns profile) answers its queries in the dns
// engine, not in flows; its answers must still leave from the address
// and port the client sent to (dig and a stub resolver take answers
// from there only). The listener keeps one answering socket per address
// and port asked (replySocket: SO_REUSEADDR, a filter that takes
// nothing in), made at the first query there and shared by its sibling
// sockets' readers, closed when unused for dnsReplyIdle (the engine's
// sweep) or with the listener; at most maxDNSReply at once per
// listener [M], past which a query to a new port is dropped and counted
// with the udp profile's dropped datagrams.

// maxDNSReply bounds the answering sockets of one dns listener on every
// port [M].
const maxDNSReply = 1024

// dnsReplyIdle is how long an answering socket stays unused before the
// sweep closes it [M: longer than a member's answer takes; an answer
// later than that is lost, as one from a member gone].
const dnsReplyIdle = 120e9 // nanoseconds: two minutes

// dnsReplyBusy is how recently a socket must have been used to be kept
// when the set is full [M: a member's answer to it may be on its way].
const dnsReplyBusy = 5e9 // nanoseconds

// errDNSReplyFull: the listener holds maxDNSReply answering sockets, all
// used within dnsReplyBusy.
var errDNSReplyFull = errors.New("too many ports answered at once")

// replyConns is a dns listener's answering sockets, by the address and
// port each answers from.
type replyConns struct {
	mu sync.Mutex
	m  map[netip.AddrPort]*replyConn
}

type replyConn struct {
	c    *net.UDPConn
	last atomic.Int64 // the engine's coarse clock at its last query
}

// dnsReply is the socket that answers a query sent to to, made at the
// first one; the primary listener's set serves its siblings too.
func (l *Listener) dnsReply(to netip.AddrPort, snap *state.VirtualSnap) (*net.UDPConn, error) {
	h := l
	if l.primary != nil {
		h = l.primary
	}
	now := l.e.now.Load()
	rs := &h.dnsOut
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r := rs.m[to]; r != nil {
		r.last.Store(now)
		return r.c, nil
	}
	if len(rs.m) >= maxDNSReply && rs.sweepLocked(now, true) == 0 {
		return nil, errDNSReplyFull
	}
	c, _, err := replySocket(to, snap)
	if err != nil {
		return nil, err
	}
	if rs.m == nil {
		rs.m = map[netip.AddrPort]*replyConn{}
	}
	r := &replyConn{c: c}
	r.last.Store(now)
	rs.m[to] = r
	return c, nil
}

// sweep closes the sockets unused for dnsReplyIdle at now; all, every
// one (the listener closed).
func (rs *replyConns) sweep(now int64, all bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if all {
		for k, r := range rs.m {
			r.c.Close()
			delete(rs.m, k)
		}
		return
	}
	rs.sweepLocked(now, false)
}

// sweepLocked closes the idle sockets and says how many; oldest, when
// none is idle, closes the longest unused one if unused for
// dnsReplyBusy (the set is full) [M].
func (rs *replyConns) sweepLocked(now int64, oldest bool) int {
	n := 0
	var old netip.AddrPort
	var oldAt int64
	for k, r := range rs.m {
		at := r.last.Load()
		if now-at >= dnsReplyIdle {
			r.c.Close()
			delete(rs.m, k)
			n++
			continue
		}
		if !old.IsValid() || at < oldAt {
			old, oldAt = k, at
		}
	}
	if n == 0 && oldest && old.IsValid() && now-oldAt >= dnsReplyBusy {
		rs.m[old].c.Close()
		delete(rs.m, old)
		n++
	}
	return n
}

// count is how many answering sockets the set holds.
func (rs *replyConns) count() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.m)
}
