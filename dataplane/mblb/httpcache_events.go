package mblb

import (
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
)

// The web-acceleration profile's rule events. CACHE_REQUEST runs when
// the cache holds a fresh answer for a request, after HTTP_REQUEST: a
// CACHE::disable there sends the request to a member and its answer is
// not stored, a CACHE::expire drops the entry and the member's answer is
// stored anew [M]. CACHE_RESPONSE runs over that answer just before it
// leaves: its HTTP::header edits apply to it, HTTP::respond replaces it,
// reject and drop end the client, and CACHE::expire drops the entry once
// this answer is on its way [M]. CACHE_UPDATE runs over a member's answer
// the cache is about to store, before HTTP_RESPONSE: CACHE::disable keeps
// it from being stored [M]. The lookup that finds the entry counts as a
// hit even when CACHE_REQUEST then sends the request to a member [M].

// CacheEvents is a set of the CACHE_ events.
type CacheEvents uint8

// The CACHE_ events a client's rules may have.
const (
	CacheRequestEvent CacheEvents = 1 << iota
	CacheResponseEvent
	CacheUpdateEvent
)

// CacheHit is the cached answer a request is about to get, as CACHE::age,
// hits, headers and payload read it.
type CacheHit struct {
	// Age is its age in seconds; Hits the times its entry answered,
	// this one included.
	Age  int64
	Hits uint64
	// Head is its head, status line and fields each ending in CRLF,
	// without the blank line; Body its body (none for a HEAD).
	Head, Body []byte
}

// HTTPCacheEvents is implemented by an HTTPRuleHandler whose rules have
// CACHE_ events (CacheChoice.Events says which); the engine calls it
// only for those. Each returns what the rules' CACHE:: commands asked
// (Disable, Expire), and records on x, as the HTTP events do, the rules'
// other decisions.
type HTTPCacheEvents interface {
	// OnCacheRequest runs CACHE_REQUEST; x is the request's
	// HTTP_REQUEST event, still in hand.
	OnCacheRequest(x *HTTPEvent, hit *CacheHit) (CacheChoice, error)
	// OnCacheResponse runs CACHE_RESPONSE; x is the cached answer as a
	// response event.
	OnCacheResponse(x *HTTPEvent, hit *CacheHit) (CacheChoice, error)
	// OnCacheUpdate runs CACHE_UPDATE; x is the member's answer as a
	// response event. It is called from the server connection's reader.
	OnCacheUpdate(x *HTTPEvent) (CacheChoice, error)
}

// cacheEventScratch is a client's storage for its CACHE_ events, reused
// from request to request: the cache key copied out of a head the rules
// may rewrite, the answer's event, and its edited copy.
type cacheEventScratch struct {
	key  []byte
	x    HTTPEvent
	edit []byte
}

// cacheHitEvents is cacheHit's lookup for a client whose rules have
// CACHE_REQUEST or CACHE_RESPONSE (events), for the request x whose
// cache key is host and uri.
func (s *ClientConn) cacheHitEvents(host, uri []byte, h *httpx.Head, x *HTTPEvent, events CacheEvents, closing bool, miss cacheMiss) (bool, cacheMiss, error) {
	c := s.e.cfg.Request.HTTP.Cache
	ce, ok := s.hrule.(HTTPCacheEvents)
	if !ok {
		events = 0
	}
	if s.cev == nil {
		s.cev = &cacheEventScratch{}
	}
	sc := s.cev
	// The rules may rewrite the request head host and uri point into.
	sc.key = append(append(sc.key[:0], host...), uri...)
	host, uri = sc.key[:len(host)], sc.key[len(host):]
	out, hit, found := c.LookupHit(s.cacheOut[:0], host, uri, h.IsHead(), time.Now())
	s.cacheOut = out[:0]
	if !found {
		return false, miss, nil
	}
	ch := &CacheHit{Age: hit.Age, Hits: hit.Hits, Head: out[:hit.HeadLen-2], Body: out[hit.HeadLen:]}
	if events&CacheRequestEvent != 0 {
		got, err := ce.OnCacheRequest(x, ch)
		if err := s.cacheRuleEnd(x, err); err != nil {
			return false, miss, err
		}
		switch {
		case got.Disable:
			return false, cacheMiss{}, nil
		case got.Expire:
			c.Expire(host, uri)
			return false, miss, nil
		}
		closing = closing || x.closeAfter
	}
	if events&CacheResponseEvent != 0 {
		rx := &sc.x
		hd, err := httpx.ParseResponse(out)
		if err != nil {
			return false, miss, nil // (the cache stores only heads it parsed)
		}
		rx.reset(out, &hd, true, netip.AddrPort{})
		got, err := ce.OnCacheResponse(rx, ch)
		if err := s.cacheRuleEnd(rx, err); err != nil {
			return false, miss, err
		}
		if got.Expire {
			c.Expire(host, uri)
		}
		if rx.responded {
			s.ruleReply(rx, closing)
			return true, cacheMiss{}, nil
		}
		if rx.edited != nil {
			sc.edit = append(append(sc.edit[:0], rx.edited...), out[hit.HeadLen:]...)
			out = sc.edit
		}
		closing = closing || rx.closeAfter
	}
	s.msgsIn.Add(1)
	s.localReply(s.hitEdits(out), closing)
	s.httpDone = closing
	return true, cacheMiss{}, nil
}

// cacheRuleEnd ends the client after a CACHE_ event that failed (reset),
// rejected (reset) or dropped (close), and says so with errClosed.
func (s *ClientConn) cacheRuleEnd(x *HTTPEvent, err error) error {
	switch {
	case err != nil || x.reject:
		s.rstRule(err)
		s.Close(true)
		return errClosed
	case x.drop:
		s.Close(false)
		return errClosed
	}
	return nil
}

// cacheUpdate runs CACHE_UPDATE over the member's answer b (h) to req
// when the client's rules have it: store false when a rule kept the
// answer from the cache (CACHE::disable), ended true when it ended the
// client (which is then closed). Without the event: store.
func (sc *serverConn) cacheUpdate(req *msg, b []byte, h *httpx.Head) (store, ended bool) {
	if !req.hx.cacheUpdate {
		return true, false
	}
	ce, ok := req.sess.hrule.(HTTPCacheEvents)
	if !ok {
		return true, false
	}
	x := &sc.hx
	x.reset(b, h, true, sc.leg.Remote)
	x.request, x.requestNum = req.b, req.seq+1
	got, err := ce.OnCacheUpdate(x)
	switch {
	case err != nil || x.reject:
		req.sess.rstRule(err)
		req.sess.Close(true)
		return false, true
	case x.drop:
		req.sess.Close(false)
		return false, true
	}
	return !got.Disable, false
}
