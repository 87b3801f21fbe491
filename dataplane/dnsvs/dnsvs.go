// Package dnsvs answers the DNS queries of LTM virtual servers with a dns
// profile, the way BIG-IP DNS does on such a virtual: the GSLB's wide IPs
// (enable-gtm), its static zones (enable-dns-express), the profile's DNS
// cache (enable-cache), else the profile's unhandled-query-action, whose
// allow forwards the query to a member of the virtual's pool and relays
// the answer. The GSLB (dataplane/gslb) answers through the Answerer the
// daemon hands the Engine, so a gtm listener and a dns-profile virtual
// answer a wide IP with the same code. README.md, "LTM virtuals with a
// dns profile", says what is [M].
package dnsvs

import (
	"github.com/openltm/openltm/dataplane/flows"

	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/rules"
)

// Answerer is the GSLB seen from a dns profile: it answers r when gtm
// lets a wide IP answer it or express lets a static zone; handled is
// false when neither holds the name, so that the profile's next step
// decides. send is false when the query is to be dropped.
type Answerer interface {
	// origin is what answered (gslb.OriginGTM, gslb.OriginDNSX).
	AnswerVirtual(r *dns.Msg, src netip.Addr, udp, gtm, express, dnssec bool) (m *dns.Msg, send, handled bool, origin string)
	// VirtualRequest runs the virtual's iRules' DNS_REQUEST with the
	// GSLB's DNS:: commands (gslb.Server.VirtualRequest); log is the
	// profile's logging, DNS::log's (nil: none); clone takes the rules'
	// clone command (clone.go; nil: skipped).
	VirtualRequest(prog *rules.Program, r *dns.Msg, src netip.Addr, local netip.AddrPort, udp bool, log func(id uint16, msg string), clone rules.Cloner) (vr *gslb.VirtualRules, m *dns.Msg, send, done bool)
}

// ForwardTimeout is how long a query forwarded to a member waits for its
// answer; a member that does not answer in time gets the query's client
// no answer, as a lost datagram would [M].
var ForwardTimeout = 3 * time.Second

// DefaultMaxConcurrent bounds the queries of one virtual waiting for a
// member without a cache's max-concurrent-queries (BIG-IP's default for
// it [M]).
const DefaultMaxConcurrent = 1024

// Engine is the dataplane's DNS side: the GSLB it asks and the caches,
// which live across commits by name.
type Engine struct {
	log *slog.Logger
	ans atomic.Pointer[answerer]
	x   atomic.Pointer[express]   // DNS Express's NOTIFYs (express.go)
	out atomic.Pointer[logSender] // the logging profiles' publishers (dnslog.go)
	// pools is the plane's pool index, which a rule's clone names its
	// pool in (clone.go); nil until SetPools.
	pools atomic.Pointer[func() state.Pools]

	mu     sync.Mutex
	caches map[string]*Cache
	stats  map[string]*ProfileStats // by profile name (stats.go)
	// lcaches and lstats are the gtm listeners' caches and counters
	// that no virtual's profile has (listener.go).
	lcaches map[string]*Cache
	lstats  map[string]*ProfileStats

	// Table, when set (before the first query), lists the UDP queries
	// waiting for a member (service.go), so that show sys connection
	// shows them and delete sys connection drops them.
	Table *flows.Table
}

type answerer struct{ a Answerer }

// New makes an engine that answers with nothing but its caches and pools
// until SetAnswerer.
func New(log *slog.Logger) *Engine {
	return &Engine{log: log, caches: map[string]*Cache{}, stats: map[string]*ProfileStats{}}
}

// SetAnswerer lets the GSLB answer the wide IPs and static zones of every
// dns profile; nil takes it away (those steps then pass).
func (e *Engine) SetAnswerer(a Answerer) {
	if a == nil {
		e.ans.Store(nil)
		return
	}
	e.ans.Store(&answerer{a})
}

// Prepare gives each profile of a commit its Service; a cache whose name
// and settings stay keeps what it holds, the others start empty. Caches
// no profile names any more are dropped.
func (e *Engine) Prepare(profiles []*config.DNSProfile) map[*config.DNSProfile]*Service {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[*config.DNSProfile]*Service, len(profiles))
	keep := map[string]*Cache{}
	stats := map[string]*ProfileStats{}
	for _, p := range profiles {
		st := stats[p.Name]
		if st == nil {
			if st = e.stats[p.Name]; st == nil {
				if st = e.lstats[p.Name]; st == nil {
					st = new(ProfileStats)
				}
			}
			stats[p.Name] = st
		}
		s := &Service{e: e, p: p, max: DefaultMaxConcurrent, st: st, log: newLogger(e, p.Log), logMsg: ruleLog(e, p.Log)}
		if c := p.Cache; c != nil {
			cache := keep[c.Name]
			if cache == nil {
				if old := e.caches[c.Name]; old != nil && old.same(c) {
					cache = old
				} else if old := e.lcaches[c.Name]; old != nil && old.same(c) {
					cache = old // a listener's until now
				} else {
					cache = newCache(c)
				}
				keep[c.Name] = cache
			}
			s.cache = cache
			if c.MaxConcurrent > 0 {
				s.max = int64(c.MaxConcurrent)
			}
		}
		out[p] = s
	}
	e.caches, e.stats = keep, stats
	return out
}

// Cache is the cache of that name a profile uses, nil when none does.
func (e *Engine) Cache(name string) *Cache {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c := e.caches[name]; c != nil {
		return c
	}
	return e.lcaches[name]
}
