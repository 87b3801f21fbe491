package diameter

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/diammsg"
)

// Options is a virtual's diameter profile as the L4 engine applies it.
// An empty string leaves the AVP as the sender wrote it.
type Options struct {
	// Profile is the profile's full name, for logs.
	Profile string
	// OriginHostToClient and OriginRealmToClient replace Origin-Host and
	// Origin-Realm in what goes to the client; ...ToServer in what goes
	// to the members.
	OriginHostToClient, OriginRealmToClient string
	OriginHostToServer, OriginRealmToServer string
	// DestinationRealm replaces (or adds) Destination-Realm in the
	// client's requests toward a member.
	DestinationRealm string
	// OverwriteDestHost: a request's Destination-Host becomes the
	// Origin-Host the member gave in its CEA.
	OverwriteDestHost bool
	// HostIPRewrite: Host-IP-Address in a CER toward a member becomes the
	// server side's address, in a CEA toward the client the virtual's.
	HostIPRewrite bool
	// ConnectionPrime: every available member is connected (and sent the
	// client's CER) once the client's CER is in, not as messages first
	// go to it.
	ConnectionPrime bool
	// PersistAVP is the AVP whose value keeps messages on one member
	// (0: none); ParentAVP the Grouped AVP it is found in (0: top level).
	PersistAVP, ParentAVP uint32
	// PersistTimeout is how long a persistence record lives unused.
	PersistTimeout time.Duration
	// Max bounds a message's length; 0: diammsg.DefaultMax.
	Max int
	// RetransmitTimeout is how long a client's request waits for its
	// member's answer before it is sent to another member (0: only a
	// member's connection ending sends it again); MaxRetransmit how many
	// times it is sent again (0: never, the client's request is answered
	// DIAMETER_UNABLE_TO_DELIVER when its member fails). ResetOnTimeout:
	// the client's connection is reset once a request could not be
	// delivered, after that answer.
	RetransmitTimeout time.Duration
	MaxRetransmit     int
	ResetOnTimeout    bool
	// WatchdogTimeout: a member connection idle that long is sent a
	// Device-Watchdog-Request (0: never); after MaxWatchdogFailure of
	// them unanswered the connection is reset and its requests sent
	// again elsewhere.
	WatchdogTimeout    time.Duration
	MaxWatchdogFailure int
	// HandshakeTimeout bounds a member's capabilities exchange: a member
	// whose CEA has not come that long after its CER is reset (0: no
	// bound).
	HandshakeTimeout time.Duration
}

// Rewrites says whether o changes messages at all, so that a profile
// with none only frames and routes them.
func (o *Options) Rewrites() bool {
	return o.OriginHostToClient != "" || o.OriginRealmToClient != "" || o.OriginHostToServer != "" ||
		o.OriginRealmToServer != "" || o.DestinationRealm != "" || o.OverwriteDestHost || o.HostIPRewrite
}

// PersistKey is the persistence value of m: the first persist-avp (inside
// the first parent-avp when one is named); nil without one.
func (o *Options) PersistKey(m diammsg.Msg) []byte {
	if o.PersistAVP == 0 {
		return nil
	}
	if o.ParentAVP == 0 {
		return m.Get(o.PersistAVP)
	}
	p := m.Get(o.ParentAVP)
	if p == nil {
		return nil
	}
	inner, ok := diammsg.Grouped(p)
	if !ok {
		return nil
	}
	for _, a := range inner {
		if a.Code == o.PersistAVP && a.Vendor == 0 {
			return a.Data
		}
	}
	return nil
}

// Counts are a virtual's Diameter messages, for show ltm profile
// diameter.
type Counts struct {
	// Requests and Answers count the messages read from clients and
	// members alike; Malformed the streams reset for a message that
	// could not be framed or parsed; Dropped the messages that went
	// nowhere (a rule's DIAMETER::drop, an answer nobody asked for);
	// Watchdogs the DWRs openltm answered itself; Persisted the
	// messages sent by a persistence record.
	Requests, Answers, Malformed, Dropped, Watchdogs, Persisted atomic.Uint64
	// Retransmitted counts the client's requests sent again to another
	// member; Undelivered those answered DIAMETER_UNABLE_TO_DELIVER
	// when every attempt failed.
	Retransmitted, Undelivered atomic.Uint64
	// WatchdogFailures counts the member connections reset for
	// unanswered DWRs.
	WatchdogFailures atomic.Uint64
	// HandshakeTimeouts counts the member connections reset for a CEA
	// that did not come within handshake-timeout; Busy the client's
	// requests answered DIAMETER_TOO_BUSY (a rule's retransmission
	// action busy); Responded the messages rules sent with
	// DIAMETER::respond.
	HandshakeTimeouts, Busy, Responded atomic.Uint64
}

// Reset zeroes the counts (reset-stats ltm profile diameter).
func (c *Counts) Reset() {
	for _, n := range []*atomic.Uint64{&c.Requests, &c.Answers, &c.Malformed, &c.Dropped, &c.Watchdogs, &c.Persisted, &c.Retransmitted, &c.Undelivered, &c.WatchdogFailures,
		&c.HandshakeTimeouts, &c.Busy, &c.Responded} {
		n.Store(0)
	}
}

// maxRecords bounds a persistence table; past it, the oldest records
// give way.
const maxRecords = 1 << 16

// Table keeps persistence values on members for one virtual: shared by
// its connections, so that a Session-Id's messages reach one member
// whichever client connection carries them.
type Table struct {
	mu sync.Mutex
	m  map[string]record
	// hosts are the members' Origin-Hosts from their CEAs, by address,
	// for overwrite-destination-host before a new connection's CEA is in.
	hosts sync.Map
}

// SetHost records the Origin-Host member gave in a CEA.
func (t *Table) SetHost(member netip.AddrPort, host []byte) {
	if old, ok := t.hosts.Load(member); !ok || string(old.([]byte)) != string(host) {
		t.hosts.Store(member, append([]byte(nil), host...))
	}
}

// Host is the Origin-Host member last gave in a CEA; nil when none is
// known.
func (t *Table) Host(member netip.AddrPort) []byte {
	if h, ok := t.hosts.Load(member); ok {
		return h.([]byte)
	}
	return nil
}

type record struct {
	member netip.AddrPort
	until  time.Time
}

// Lookup is the member key persists to; false when there is none (or
// it expired).
func (t *Table) Lookup(key []byte, now time.Time) (netip.AddrPort, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.m[string(key)]
	if !ok || now.After(r.until) {
		return netip.AddrPort{}, false
	}
	return r.member, true
}

// Save records key on member for ttl.
func (t *Table) Save(key []byte, member netip.AddrPort, ttl time.Duration, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = make(map[string]record)
	}
	if r, ok := t.m[string(key)]; ok && r.member == member {
		t.m[string(key)] = record{member, now.Add(ttl)}
		return
	}
	if len(t.m) >= maxRecords {
		for k, r := range t.m {
			if now.After(r.until) || len(t.m) >= maxRecords {
				delete(t.m, k)
			}
			if len(t.m) < maxRecords*3/4 {
				break
			}
		}
	}
	t.m[string(key)] = record{member, now.Add(ttl)}
}

// Forget drops key's record (DIAMETER::persist reset): the next
// message of that key is balanced anew.
func (t *Table) Forget(key []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, string(key))
}

// Len is how many records the table holds.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}
