package rules

import (
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// CacheState is what a rule's CACHE:: commands asked of the request in
// hand, and what they read of the cached answer, on a virtual server with
// a web-acceleration profile. The host takes it (Take) after HTTP_REQUEST
// and after each CACHE_ event; it never carries over to the next request.
// Without the profile it is nil and the commands are errors, as BIG-IP
// refuses such a rule.
type CacheState struct {
	// Set is -1 after CACHE::disable (the request is neither answered
	// from the cache nor its answer stored), 1 after CACHE::enable (which
	// undoes a disable) and 0 when no rule said.
	Set int8
	// DropStored is CACHE::disable in HTTP_RESPONSE: the member's answer,
	// which the cache took as it arrived, is dropped from it again [M].
	// The host clears it once it acted on it.
	DropStored bool
	// Expire is CACHE::expire: the answer stored for the request's URI
	// is dropped, so that a member answers it.
	Expire bool
	// URI is CACHE::uri's: the URI the cache keys the request by in
	// place of the request's own ("": the request's).
	URI string
	// UserKey is CACHE::userkey's: a further part of the request's
	// cache key, so that one URI is cached once per key.
	UserKey string
	// UserAgent and AcceptEncoding are CACHE::useragent's and
	// CACHE::accept_encoding's parts of the cache key, when their Set
	// flag says a rule asked for them: one URI is then cached once per
	// browser or per accepted coding.
	UserAgent, AcceptEncoding       string
	UserAgentSet, AcceptEncodingSet bool
	// Priority is CACHE::priority's 1 to 10 (0: none given).
	Priority int8
	// Entry is the cached answer at hand while CACHE_REQUEST and
	// CACHE_RESPONSE run, for CACHE::age, hits, headers and payload; the
	// host sets it before the event.
	Entry *CacheEntry
}

// CacheEntry is what the CACHE:: commands read of the cached answer a
// request is about to get.
type CacheEntry struct {
	// Age is the answer's age in seconds, as its Age field gives it.
	Age int64
	// Hits counts the times the entry answered, this one included.
	Hits uint64
	// Head is the answer's head, status line and fields each ending in
	// CRLF, without the blank line; Payload its body (empty for the
	// answer to a HEAD).
	Head, Payload []byte
}

// Take returns the choice and clears it for the next request.
func (st *CacheState) Take() CacheState {
	c := *st
	*st = CacheState{}
	return c
}

// SetCache gives the connection a cache state: the virtual server has a
// web-acceleration profile.
func (s *ConnState) SetCache() { s.cache = &CacheState{} }

// Cache is the connection's cache state; nil without a web-acceleration
// profile. The host reads it under the lock its events run under.
func (s *ConnState) Cache() *CacheState { return s.cache }

// The events each CACHE:: command is valid in [M: F5's pages give no
// list for most of them; these follow where F5's pages and examples use
// them: CACHE::age in CACHE_REQUEST, CACHE::headers and CACHE::payload in
// CACHE_RESPONSE, CACHE::disable and the key commands in HTTP_REQUEST,
// CACHE::expire in all three of HTTP_REQUEST, CACHE_REQUEST and
// CACHE_RESPONSE].
var (
	cacheKeyEvents     = []Event{HTTPRequest}
	cacheSetEvents     = []Event{HTTPRequest, CacheRequest, CacheUpdate}
	cacheDisableEvents = []Event{HTTPRequest, CacheRequest, CacheUpdate, HTTPResponse}
	cacheExpireEvents  = []Event{HTTPRequest, CacheRequest, CacheResponse}
	cacheEntryEvents   = []Event{CacheRequest, CacheResponse}
	cacheAnswerEvents  = []Event{CacheResponse}
)

func registerCache(t *tcl.Commands) {
	t.Register("CACHE::disable", cmdCacheDisable)
	t.Register("CACHE::enable", cmdCacheSet("CACHE::enable", cacheSetEvents, func(st *CacheState) { st.Set = 1 }))
	t.Register("CACHE::expire", cmdCacheSet("CACHE::expire", cacheExpireEvents, func(st *CacheState) { st.Expire = true }))
	t.Register("CACHE::uri", cmdCacheURI)
	t.Register("CACHE::userkey", cmdCacheUserKey)
	t.Register("CACHE::useragent", cmdCacheHeaderKey("CACHE::useragent", "user-agent",
		func(st *CacheState, v string) { st.UserAgent, st.UserAgentSet = v, true }))
	t.Register("CACHE::accept_encoding", cmdCacheHeaderKey("CACHE::accept_encoding", "accept-encoding",
		func(st *CacheState, v string) { st.AcceptEncoding, st.AcceptEncodingSet = v, true }))
	t.Register("CACHE::priority", cmdCachePriority)
	t.Register("CACHE::disabled", cmdCacheDisabled)
	registerCacheEntry(t) // commands_cache_entry.go
	for _, n := range t.Names() {
		if strings.HasPrefix(n, "CACHE::") {
			cmd := t.Lookup(n)
			cmd.Compile = needHook(n, func(r *Rule) *[]HTTPNeed { return &r.cacheNeeds }, cmd.Compile)
		}
	}
}

// cacheOf returns the connection's cache state in one of the events
// valid lists, or the command's error, with the connection's HTTP view
// (nil on a connection without one).
func cacheOf(in *tcl.Interp, name string, valid []Event) (*CacheState, HTTPConn, error) {
	s, c, err := sess(in, name)
	if err != nil {
		return nil, nil, err
	}
	if s.cache == nil {
		return nil, nil, tcl.Errorf("%s: the virtual server has no web-acceleration profile", name)
	}
	names := make([]string, 0, len(valid))
	for _, ev := range valid {
		if s.event == ev {
			hc, _ := c.(HTTPConn)
			return s.cache, hc, nil
		}
		names = append(names, ev.String())
	}
	return nil, nil, tcl.Errorf("%s: not valid in %s (valid in %s)", name, s.event, strings.Join(names, ", "))
}

// cmdCacheSet is a CACHE:: command of no argument that sets what the
// request asks of the cache.
func cmdCacheSet(name string, valid []Event, set func(*CacheState)) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(name)
		}
		st, _, err := cacheOf(in, name, valid)
		if err != nil {
			return tcl.Empty, err
		}
		set(st)
		return tcl.Empty, nil
	}
}

// cmdCacheDisable is CACHE::disable: the request is neither answered
// from the cache nor its answer stored (HTTP_REQUEST, CACHE_REQUEST,
// CACHE_UPDATE), or, in HTTP_RESPONSE, as iRules written for BIG-IP use
// it, the answer is not kept [M].
func cmdCacheDisable(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("CACHE::disable")
	}
	st, _, err := cacheOf(in, "CACHE::disable", cacheDisableEvents)
	if err != nil {
		return tcl.Empty, err
	}
	if sessionOf(in).event == HTTPResponse {
		st.DropStored = true
	} else {
		st.Set = -1
	}
	return tcl.Empty, nil
}

// cmdCacheDisabled is `CACHE::disabled`: whether a CACHE::disable of the
// request is in force (1) or not (0), so that one rule can see what an
// earlier one decided.
func cmdCacheDisabled(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("CACHE::disabled")
	}
	st, _, err := cacheOf(in, "CACHE::disabled", cacheSetEvents)
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Bool(st.Set < 0), nil
}

// cmdCacheURI is `CACHE::uri ?URI?`: the URI the cache keys the request
// by, or its replacement (to cache variants of a URI as one, say with
// the query left out).
func cmdCacheURI(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("CACHE::uri ?uri?")
	}
	st, hc, err := cacheOf(in, "CACHE::uri", cacheKeyEvents)
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 2 {
		st.URI = args[1].String()
		return tcl.Empty, nil
	}
	if st.URI != "" {
		return tcl.Str(st.URI), nil
	}
	if hc != nil {
		if h := hc.HTTPRequest(); h != nil {
			return tcl.Str(string(h.URI())), nil
		}
	}
	return tcl.Empty, nil
}

// cmdCacheUserKey is `CACHE::userkey KEY`: KEY becomes part of the
// request's cache key (a language, a device class), so the cache keeps
// one answer per key for the URI.
func cmdCacheUserKey(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("CACHE::userkey key")
	}
	st, _, err := cacheOf(in, "CACHE::userkey", cacheKeyEvents)
	if err != nil {
		return tcl.Empty, err
	}
	st.UserKey = args[1].String()
	return tcl.Empty, nil
}

// cmdCacheHeaderKey is `CACHE::useragent ?VALUE?` and
// `CACHE::accept_encoding ?VALUE?`: the request's User-Agent or
// Accept-Encoding field becomes part of its cache key, so that browsers
// (or codings) that are served differently are cached apart. VALUE, when
// given, stands in for the field (to key a class of browsers as one)
// [M: F5 gives no syntax; a rule without the command keys no field, as
// the cache did before it]. The value keyed by is returned.
func cmdCacheHeaderKey(name, field string, set func(*CacheState, string)) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) > 2 {
			return tcl.Empty, tcl.WrongArgs(name + " ?value?")
		}
		st, hc, err := cacheOf(in, name, cacheKeyEvents)
		if err != nil {
			return tcl.Empty, err
		}
		v := ""
		if len(args) == 2 {
			v = args[1].String()
		} else if hc != nil {
			if h := hc.HTTPRequest(); h != nil {
				b, _ := h.Header(field)
				v = string(b)
			}
		}
		set(st, v)
		return tcl.Str(v), nil
	}
}

// cmdCachePriority is `CACHE::priority 1..10`: how much the request's
// answer is worth keeping; a stored answer of a higher priority is
// evicted after those of a lower one (dataplane/httpcache).
func cmdCachePriority(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("CACHE::priority priority")
	}
	n, err := args[1].Int64()
	if err != nil || n < 1 || n > 10 {
		return tcl.Empty, tcl.Errorf("CACHE::priority: expected a priority from 1 to 10 but got %q", args[1].String())
	}
	st, _, err := cacheOf(in, "CACHE::priority", cacheKeyEvents)
	if err != nil {
		return tcl.Empty, err
	}
	st.Priority = int8(n)
	return tcl.Empty, nil
}
