package dnsvs

import (
	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/rpz"
)

// A gtm listener's dns profile past DNS Express and the wide IPs (which
// the GSLB answers itself): the same Service as a virtual's, with no
// pool: BIG-IP's local BIND (the static zones, use-local-bind) stands
// in for it. unhandled-query-action allow asks the profile's cache's
// own answers (local zones, forward zones, and resolution when the cache
// has root-hints or use-local-bind is no, as a virtual's resolver
// resolves when it has root-hints or no pool) and then passes the query
// to BIND.

// listenerSteps is a Service seen from a gtm listener (gslb.ProfileSteps).
type listenerSteps struct{ s *Service }

// Answer implements gslb.ProfileSteps.
func (x listenerSteps) Answer(r *dns.Msg, at gslb.StepQuery, udp bool) (m *dns.Msg, send, pass bool) {
	s := x.s
	s.st.Queries.Add(1)
	rd := r.RecursionDesired && s.p.NoProcessRD
	m, st, _, hit := s.unhandled(r, rd, gslb.Services{}, at.Client.Addr(), udp)
	switch st {
	case stepAnswer:
		return m, true, false
	case stepDrop:
		return nil, false, false
	}
	if s.cache == nil || rd {
		return nil, false, true
	}
	wire, err := r.Pack()
	if err != nil {
		return nil, false, true
	}
	if s.inflight.Add(1) > s.max { // max-concurrent-queries, as on a virtual
		s.inflight.Add(-1)
		return reply(r, dns.RcodeServerFailure), true, false
	}
	var w *waitingQuery
	if udp && at.Local.IsValid() && s.cache.waits(r, !s.p.NoLocalBIND) {
		// A UDP query waiting for a name server is a row of the
		// connection table, as a virtual's waiting for a member
		// (service.go), with no idle timeout of its own: the
		// exchange's or the resolution's bounds it [M].
		if w = s.e.waitingAt(at.Listener, 0, at.Client, at.Local); w != nil {
			defer s.e.Table.Remove(&w.Flow)
		}
	}
	m, ok := cacheOwn(s.cache, r, wire, !s.p.NoLocalBIND, udp, w) // BIND is the listener's pool
	s.inflight.Add(-1)
	if w.deleted() { // delete sys connection: no answer, counted
		s.st.Deleted.Add(1)
		return nil, false, false
	}
	if !ok {
		return nil, false, true
	}
	if m == nil { // a deny zone, or no forward name server answered
		s.st.NoAnswer.Add(1)
		return nil, false, false
	}
	s.st.PoolAnswers.Add(1)
	s.cache.Put(r, m)
	if hit == nil { // the response-IP, NSDNAME and NSIP triggers, as on a virtual
		if m2, h := s.responsePolicy(s.cache, gslb.Services{}, r, m, udp); h != nil && h.Policy != rpz.PolicyPassthru {
			return m2, m2 != nil, false
		}
	}
	return m, true, false
}

// PrepareListeners gives each gtm listener's dns profile of a commit
// the steps the GSLB runs past DNS Express and the wide IPs; nil for a
// profile that leaves them to the static zones (no cache, allow). A
// cache a virtual's profile uses with the same settings is shared; a
// listener's own cache keeps what it holds while its settings stay.
func (e *Engine) PrepareListeners(profiles []*config.DNSProfile) []gslb.ProfileSteps {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]gslb.ProfileSteps, len(profiles))
	keep := map[string]*Cache{}
	stats := map[string]*ProfileStats{}
	for i, p := range profiles {
		if p == nil || (p.Cache == nil && (p.Unhandled == "" || p.Unhandled == "allow")) {
			continue
		}
		st := e.stats[p.Name]
		if st == nil {
			if st = stats[p.Name]; st == nil {
				if st = e.lstats[p.Name]; st == nil {
					st = new(ProfileStats)
				}
				stats[p.Name] = st
			}
		}
		s := &Service{e: e, p: p, max: DefaultMaxConcurrent, st: st}
		if c := p.Cache; c != nil {
			cache := keep[c.Name]
			if cache == nil {
				for _, old := range []*Cache{e.caches[c.Name], e.lcaches[c.Name]} {
					if old != nil && old.same(c) {
						cache = old
						break
					}
				}
				if cache == nil {
					cache = newCache(c)
				}
				keep[c.Name] = cache
			}
			s.cache = cache
			if c.MaxConcurrent > 0 {
				s.max = int64(c.MaxConcurrent)
			}
		}
		out[i] = listenerSteps{s}
	}
	e.lcaches, e.lstats = keep, stats
	return out
}
