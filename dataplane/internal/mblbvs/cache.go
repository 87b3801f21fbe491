package mblbvs

import (
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// The web-acceleration profile's events (mblb's httpcache_events.go says
// when the engine raises them). CACHE_REQUEST runs over the request, so
// that HTTP:: commands there read it; CACHE_RESPONSE and CACHE_UPDATE
// over the answer (the cached one, the member's), as HTTP_RESPONSE does.
// Each runs under the rules' lock with the cached answer at hand for
// CACHE::age, hits, headers and payload, and hands back what the CACHE::
// commands asked.

// cacheEventsOf is the set of CACHE_ events prog has.
func cacheEventsOf(prog *rules.Program) mblb.CacheEvents {
	var ev mblb.CacheEvents
	for _, e := range [...]struct {
		ev  rules.Event
		bit mblb.CacheEvents
	}{
		{rules.CacheRequest, mblb.CacheRequestEvent},
		{rules.CacheResponse, mblb.CacheResponseEvent},
		{rules.CacheUpdate, mblb.CacheUpdateEvent},
	} {
		if prog.Handles(e.ev) {
			ev |= e.bit
		}
	}
	return ev
}

// OnCacheRequest implements mblb.HTTPCacheEvents: CACHE_REQUEST over
// the request x, still the rules' current one.
func (h *httpRules) OnCacheRequest(x *mblb.HTTPEvent, hit *mblb.CacheHit) (mblb.CacheChoice, error) {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	return h.cacheEvent(x, rules.CacheRequest, &h.Request, hit)
}

// OnCacheResponse implements mblb.HTTPCacheEvents: CACHE_RESPONSE over
// the cached answer x, which becomes the rules' response.
func (h *httpRules) OnCacheResponse(x *mblb.HTTPEvent, hit *mblb.CacheHit) (mblb.CacheChoice, error) {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	h.StartResponse(x.Message(), x.Head())
	return h.cacheEvent(x, rules.CacheResponse, &h.Response, hit)
}

// OnCacheUpdate implements mblb.HTTPCacheEvents: CACHE_UPDATE over the
// member's answer x, before HTTP_RESPONSE. Its head edits are not kept:
// HTTP_RESPONSE starts again from the answer as it came [M].
func (h *httpRules) OnCacheUpdate(x *mblb.HTTPEvent) (mblb.CacheChoice, error) {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	defer h.requestOf(x)()
	h.StartResponse(x.Message(), x.Head())
	return h.cacheEvent(x, rules.CacheUpdate, &h.Response, nil)
}

// cacheEvent runs ev with hit (nil: none) at hand and takes what the
// CACHE:: commands asked. Under r.mu.
func (h *httpRules) cacheEvent(x *mblb.HTTPEvent, ev rules.Event, head *rules.HTTPHead, hit *mblb.CacheHit) (mblb.CacheChoice, error) {
	r := h.mblbRules
	prog := irules.Program(r.rules)
	if prog == nil {
		return mblb.CacheChoice{}, nil
	}
	st := r.RuleSession(prog).Cache()
	if st == nil {
		return mblb.CacheChoice{}, nil
	}
	*st = rules.CacheState{}
	if hit != nil {
		h.cacheEntry = rules.CacheEntry{Age: hit.Age, Hits: hit.Hits, Head: hit.Head, Payload: hit.Body}
		st.Entry = &h.cacheEntry
	}
	err := h.event(x, ev, head)
	c := st.Take()
	h.cacheEntry = rules.CacheEntry{}
	return mblb.CacheChoice{Disable: c.Set < 0, Expire: c.Expire}, err
}

// cacheState is the rules' CACHE:: state: nil before the client's first
// event, or on a virtual without a web-acceleration profile.
func (r *mblbRules) cacheState() *rules.CacheState {
	if r.sess == nil {
		return nil
	}
	return r.sess.Cache()
}
