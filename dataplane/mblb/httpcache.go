package mblb

import (
	"bytes"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
)

// A web-acceleration profile on an HTTP virtual answers repeated GETs
// from memory (dataplane/httpcache decides what is cached, for how long,
// and keeps it). A request the cache may answer, after its HTTP_REQUEST
// rules, is answered from a fresh entry in its turn among the client's
// answers (localReply), and no member sees it; otherwise it goes on,
// marked, and the member's answer, whole, is stored as the member sent it
// before the HTTP_RESPONSE rules run. A hit runs no HTTP_RESPONSE and no
// compression [M]; it gets the http profile's edits of every answer
// (hitEdits). A virtual with a stream profile does not cache. The rules'
// CACHE_REQUEST, CACHE_RESPONSE and CACHE_UPDATE run around the hit and
// the store when the rules have them (httpcache_events.go).

// CacheChoice is what a rule's CACHE:: commands asked of one request.
type CacheChoice struct {
	// Disable: CACHE::disable, neither answered from the cache nor
	// stored.
	Disable bool
	// Expire: CACHE::expire, the answer stored for the request's URI is
	// dropped first.
	Expire bool
	// URI and UserKey: CACHE::uri's replacement of the URI the request
	// is cached by, and CACHE::userkey's further part of its key.
	URI, UserKey string
	// Priority is CACHE::priority's for the answer to be stored (0:
	// none).
	Priority int8
	// Events are the CACHE_ events the client's rules have: the engine
	// runs them through HTTPCacheEvents only then, so that rules without
	// them cost nothing more.
	Events CacheEvents
}

// cacheKey is the URI part of a request's cache key: its own URI, or
// CACHE::uri's, then CACHE::userkey's key after a NUL (which no URI
// holds).
func (ch *CacheChoice) cacheKey(uri []byte) []byte {
	if ch.URI == "" && ch.UserKey == "" {
		return uri
	}
	k := uri
	if ch.URI != "" {
		k = []byte(ch.URI)
	}
	if ch.UserKey != "" {
		k = append(append(append([]byte(nil), k...), 0), ch.UserKey...)
	}
	return k
}

// HTTPCacheHandler is implemented by an HTTPRuleHandler on a virtual
// with a web-acceleration profile.
type HTTPCacheHandler interface {
	// CacheChoice is what the rules asked of the request whose
	// HTTP_REQUEST ran last; reading it clears it.
	CacheChoice() CacheChoice
}

// cacheMiss is what a request the cache did not answer takes along for
// its answer: whether it may be stored, and by what key, priority and
// rules.
type cacheMiss struct {
	cacheable bool
	// key is the URI part of the cache key when a rule changed it
	// ("": the request's).
	key      string
	priority int8
	// update: CACHE_UPDATE runs before the answer is stored.
	update bool
}

// cacheHit answers the request whose head is head (h) from the cache;
// false when the cache does not answer it, with what its answer takes
// along. x is the request's HTTP_REQUEST event (nil without an HTTP
// rule); a request that leaves HTTP (HTTP::disable) is not cached, but
// its rules' choice is still taken. err is errClosed when a CACHE_ rule
// ended the client.
func (s *ClientConn) cacheHit(head []byte, h *httpx.Head, x *HTTPEvent, closing bool) (hit bool, miss cacheMiss, err error) {
	c := s.e.cfg.Request.HTTP.Cache
	var ch CacheChoice
	if hc, ok := s.hrule.(HTTPCacheHandler); ok {
		ch = hc.CacheChoice()
	}
	if (x != nil && x.disable) || ch.Disable || s.e.cfg.Request.HTTP.Stream != nil || h.IsConnect() || h.Upgrade || h.Chunked || h.ContentLength > 0 || !c.Cacheable(head) {
		// (A stream profile's filter runs on the way to each client, and
		// what the cache holds is the member's answer: such a virtual
		// does not cache [M].)
		return false, cacheMiss{}, nil
	}
	hh := httpx.Head{HeaderEnd: len(head)}
	host, uri := httpx.HeaderValue(head, &hh, "host"), requestURI(head)
	if ch.URI != "" || ch.UserKey != "" {
		uri = ch.cacheKey(uri)
		miss.key = string(uri) // the answer is stored by it too
	}
	miss.cacheable, miss.priority, miss.update = true, ch.Priority, ch.Events&CacheUpdateEvent != 0
	if ch.Expire {
		c.Expire(host, uri)
	}
	if ch.Events&(CacheRequestEvent|CacheResponseEvent) != 0 && x != nil {
		return s.cacheHitEvents(host, uri, h, x, ch.Events, closing, miss) // httpcache_events.go
	}
	out, ok := c.Lookup(s.cacheOut[:0], host, uri, h.IsHead(), time.Now())
	s.cacheOut = out[:0]
	if !ok {
		return false, miss, nil
	}
	s.msgsIn.Add(1)
	s.localReply(s.hitEdits(out), closing)
	s.httpDone = closing
	return true, cacheMiss{}, nil
}

// hitEdits gives a stored answer the edits the http profile makes to
// every member's answer (response-headers-permitted, via-response, hsts),
// which the cache stores without: a hit then leaves as a miss does.
// out is the answer, head and body.
func (s *ClientConn) hitEdits(out []byte) []byte {
	opts := &s.e.cfg.Request.HTTP
	hsts := opts.HSTS
	if p := s.hsts.Load(); p != nil {
		hsts = *p // HTTP::hsts
	}
	if opts.ResponseFields == nil && hsts == nil && opts.ResponseVia == nil {
		return out
	}
	he := bytes.Index(out, []byte("\r\n\r\n"))
	if he < 0 {
		return out
	}
	head, body := out[:he+4], out[he+4:]
	if opts.ResponseFields != nil {
		s.hitHead = httpx.FilterFields(s.hitHead[:0], head, opts.ResponseFields)
		head = s.hitHead
	}
	extra := s.hitExtra[:0]
	hh := httpx.Head{HeaderEnd: len(head)}
	if hsts != nil && httpx.HeaderValue(head, &hh, "strict-transport-security") == nil {
		extra = append(extra, hsts...)
	}
	extra = append(extra, opts.ResponseVia...)
	s.hitExtra = extra
	s.hitOut = httpx.AppendResponseHead(s.hitOut[:0], nil, head, extra, body)
	return s.hitOut
}

// cacheStore offers the answer to the request req, its head and its
// whole body as the member framed it (chunked or not), to the cache.
func (sc *serverConn) cacheStore(req *msg, head, body []byte, chunked bool) {
	if chunked {
		var err error
		if sc.cachePlain, err = httpx.Dechunk(sc.cachePlain[:0], body); err != nil {
			return
		}
		body = sc.cachePlain
	}
	rh := req.b[:req.hx.hlen]
	hh := httpx.Head{HeaderEnd: len(rh)}
	uri := requestURI(rh)
	if req.hx.cacheKey != "" {
		uri = []byte(req.hx.cacheKey) // CACHE::uri, CACHE::userkey
	}
	sc.e.cfg.Request.HTTP.Cache.StorePriority(httpx.HeaderValue(rh, &hh, "host"), uri, head, body, req.hx.cachePrio, time.Now())
}

// cacheStream is a streamed answer being collected for the cache: its
// head, copied when it passed, and its body so far as the member framed
// it.
type cacheStream struct {
	head, body []byte
	chunked    bool
}

// add appends part of the body; past most bytes (the engine's largest
// message) the answer is not cached and add returns nil.
func (cs *cacheStream) add(part []byte, most int) *cacheStream {
	if len(cs.body)+len(part) > most {
		return nil
	}
	cs.body = append(cs.body, part...)
	return cs
}

// cacheStream offers a streamed answer, whose last part is last, to the
// cache once it has all passed.
func (sc *serverConn) cacheStream(req *msg, cs *cacheStream, last []byte) {
	if cs = cs.add(last, sc.e.cfg.MaxMessageSize); cs != nil {
		sc.cacheStore(req, cs.head, cs.body, cs.chunked)
	}
}

// dropCached keeps the response to req out of the cache after all
// (CACHE::disable in HTTP_RESPONSE): a streamed one is not collected, a
// whole one, stored as it arrived, is dropped again.
func (sc *serverConn) dropCached(req *msg) {
	c := sc.e.cfg.Request.HTTP.Cache
	if c == nil || !req.hx.cacheable {
		return
	}
	sc.strm.cache = nil
	rh := req.b[:req.hx.hlen]
	hh := httpx.Head{HeaderEnd: len(rh)}
	uri := requestURI(rh)
	if req.hx.cacheKey != "" {
		uri = []byte(req.hx.cacheKey)
	}
	c.Expire(httpx.HeaderValue(rh, &hh, "host"), uri)
}
