package dnsvs

import (
	"encoding/binary"
	"net/netip"
	"slices"
	"sync"

	"github.com/openltm/openltm/dataplane/clone"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/rules"
)

// Clone pools and a rule's clone command on a dns virtual
// (dataplane/clone): an intrusion detection system or a shadow DNS
// server gets a copy of each query the virtual receives, and what it
// answers is thrown away; the client's answer never waits for it.
//
// Over UDP each query is copied as one datagram, from a socket of its
// own, to a member each clone pool chooses for it (one query is one
// clone "connection" of the member and pool, as each request of an http
// virtual is). Over TCP the connection gets one clone connection per
// clone pool for its life, and each query goes to it with its length
// prefix, as the client's bytes do on a standard virtual. clientside
// pools get the query as the client sent it, serverside pools as the
// virtual's DNS_REQUEST left it (the question a rule rewrote) [M: the
// pool's member, when one is asked, gets it so too, with the profile's
// client subnet when edns0-client-subnet-insert is on; the copy is
// taken before the profile decides, so a query the cache or a wide IP
// answers is copied as well].
//
// A rule's `clone pool P` in DNS_REQUEST copies that query (over TCP
// that query and the connection's later ones, as a clone on an http
// virtual's HTTP_REQUEST does: BIG-IP's clone is a setting of the
// connection [M]). In DNS_RESPONSE over TCP the connection's later
// queries are copied; a UDP query has gone by then, and the clone is
// skipped, counted as dropped (the commit warned). CLIENT_ACCEPTED does
// not run on a dns virtual's queries (README.md, "Not acted on").

// queryClone is the copies of one UDP query, or of one TCP connection's
// queries: the virtual's clone pools' and the rule's. nil (a nil test
// per query) on virtuals with neither clone pools nor a rule that
// clones.
type queryClone struct {
	s    *Service
	vs   *state.Virtual
	snap *state.VirtualSnap
	g    *clone.Datagrams // UDP: this query's clone sockets
	f    *clone.Flow      // TCP: the connection's clone connections
	tcp  bool
	// cloned are the rule's clones already on f (TCP): a clone run again
	// on a later query of the connection opens no second copy.
	cloned []ruleCloneKey
	frame  []byte // TCP: a serverside copy's frame, reused
	// mu orders a TCP connection's copies and rule clones: a DoH
	// client's HTTP/2 queries are answered at once (DoHCopies);
	// uncontended on a DNS over TCP connection.
	mu sync.Mutex
}

// ruleCloneKey is one clone command's target.
type ruleCloneKey struct {
	pool   string
	member netip.AddrPort
	server bool
}

// clones is whether snap's virtual copies its queries: clone pools, or
// a rule with a clone command.
func clones(snap *state.VirtualSnap) bool {
	return snap.Clone != nil || snap.Cfg.Rules != nil && irules.Program(snap.Cfg.Rules).Clones()
}

// newUDPClone is a query's copies, its clone pools' sockets opened; nil
// when the virtual copies nothing.
func (s *Service) newUDPClone(vs *state.Virtual, snap *state.VirtualSnap) *queryClone {
	if !clones(snap) {
		return nil
	}
	return &queryClone{s: s, vs: vs, snap: snap, g: snap.Clone.StartDatagrams()}
}

// newTCPClone is a TCP connection's copies, its clone pools'
// connections started; nil when the virtual copies nothing.
func (s *Service) newTCPClone(vs *state.Virtual, snap *state.VirtualSnap) *queryClone {
	if !clones(snap) {
		return nil
	}
	return &queryClone{s: s, vs: vs, snap: snap, f: snap.Clone.Start(), tcp: true}
}

// cloner is q as the rules take it: a nil interface for a nil q.
func (q *queryClone) cloner() rules.Cloner {
	if q == nil {
		return nil
	}
	return q
}

var _ rules.Cloner = (*queryClone)(nil)

// Clone implements rules.Cloner (through the GSLB's rule connection,
// gslb.VirtualRequest): in DNS_REQUEST the query gets one more copy, to
// a member of pool chosen by its load balancing, or to the member named
// whatever its monitor says (state.RuleClone, as on every kind of
// virtual); over TCP in DNS_RESPONSE the connection's later queries do;
// elsewhere it is skipped and counted as dropped.
func (q *queryClone) Clone(pool string, member netip.AddrPort, side rules.Side, ev rules.Event) error {
	// DNS_REQUEST runs before the query's copies go; a TCP connection's
	// DNS_RESPONSE on its goroutine, before the next query is read.
	if q.s == nil || ev != rules.DNSRequest && (!q.tcp || ev != rules.DNSResponse) {
		// (q.s nil: a doh-proxy's copies without a dns profile, on
		// which no rule runs; ProxyCopies.)
		q.vs.Clone.Dropped.Add(1)
		return rules.ErrCloneEvent
	}
	k := ruleCloneKey{pool: pool, member: member, server: side == rules.ServerSide}
	if q.tcp {
		q.mu.Lock()
		defer q.mu.Unlock()
	}
	if q.tcp && slices.Contains(q.cloned, k) {
		return nil // the connection is cloned there already
	}
	ps := q.s.e.pools.Load()
	if ps == nil {
		q.vs.Clone.Dropped.Add(1) // a plane always sets it; an engine alone cannot resolve pools
		return rules.ErrCloneEvent
	}
	set, d, ok, err := state.RuleClone((*ps)(), q.vs, q.snap, q.snap.Cfg.Name, pool, member)
	if !ok {
		return err
	}
	if q.tcp {
		q.cloned = append(q.cloned, k)
		q.f = set.Add(q.f, d, k.server)
		return nil
	}
	q.g = set.AddDatagrams(q.g, d, k.server)
	return nil
}

// datagram sends a UDP query's copies: received as the client sent it,
// sent as the rule left it; the sockets close at once (the clone
// members' answers are never read).
func (q *queryClone) datagram(received, sent []byte) {
	if q == nil || q.g == nil {
		return
	}
	q.g.Client(received)
	q.g.Server(sent)
	q.g.Close()
	q.g = nil
}

// stream copies one query of a TCP connection, with its length prefix:
// received as the client sent it, sent as the rule left it.
func (q *queryClone) stream(received, sent []byte) {
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.f == nil {
		return
	}
	q.f.Client(q.framed(received))
	q.f.Server(q.framed(sent))
}

// framed is m with its two-byte length before it, in q's scratch frame
// (the clone connections copy what they are given).
func (q *queryClone) framed(m []byte) []byte {
	q.frame = binary.BigEndian.AppendUint16(q.frame[:0], uint16(len(m)))
	return append(q.frame, m...)
}

// close ends a TCP connection's clone connections once they wrote what
// they hold.
func (q *queryClone) close() {
	if q != nil {
		q.mu.Lock()
		q.f.Close()
		q.mu.Unlock()
	}
}

// SetPools gives the engine the plane's pool index, which a rule's clone
// command names its pool in; the plane sets it once, before traffic.
func (e *Engine) SetPools(f func() state.Pools) { e.pools.Store(&f) }
