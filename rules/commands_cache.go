package rules

import (
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// CacheState is what a rule's CACHE:: commands asked of the request in
// hand, on a virtual server with a web-acceleration profile. The host
// takes it (Take) after HTTP_REQUEST; it never carries over to the next
// request. Without the profile it is nil and the commands are errors, as
// BIG-IP refuses such a rule.
type CacheState struct {
	// Set is -1 after CACHE::disable (the request is neither answered
	// from the cache nor its answer stored), 1 after CACHE::enable (which
	// undoes a disable) and 0 when no rule said.
	Set int8
	// Expire is CACHE::expire: the answer stored for the request's URI
	// is dropped, so that a member answers it.
	Expire bool
	// URI is CACHE::uri's: the URI the cache keys the request by in
	// place of the request's own ("": the request's).
	URI string
	// UserKey is CACHE::userkey's: a further part of the request's
	// cache key, so that one URI is cached once per key.
	UserKey string
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

func registerCache(t *tcl.Commands) {
	t.Register("CACHE::disable", cmdCacheSet("CACHE::disable", func(st *CacheState) { st.Set = -1 }))
	t.Register("CACHE::enable", cmdCacheSet("CACHE::enable", func(st *CacheState) { st.Set = 1 }))
	t.Register("CACHE::expire", cmdCacheSet("CACHE::expire", func(st *CacheState) { st.Expire = true }))
	t.Register("CACHE::uri", cmdCacheURI)
	t.Register("CACHE::userkey", cmdCacheUserKey)
	for _, n := range t.Names() {
		if strings.HasPrefix(n, "CACHE::") {
			cmd := t.Lookup(n)
			cmd.Compile = needHook(n, func(r *Rule) *[]HTTPNeed { return &r.cacheNeeds }, cmd.Compile)
		}
	}
}

// cmdCacheSet is a CACHE:: command of no argument that sets what the
// request asks of the cache.
func cmdCacheSet(name string, set func(*CacheState)) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(name)
		}
		s, _, err := sess(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		if s.cache == nil {
			return tcl.Empty, tcl.Errorf("%s: the virtual server has no web-acceleration profile", name)
		}
		set(s.cache)
		return tcl.Empty, nil
	}
}

// cacheStateOf is the connection's cache state, or the command's error
// where there is none, and its HTTP view.
func cacheStateOf(in *tcl.Interp, name string) (*CacheState, HTTPConn, error) {
	s, c, err := sess(in, name)
	if err != nil {
		return nil, nil, err
	}
	if s.cache == nil {
		return nil, nil, tcl.Errorf("%s: the virtual server has no web-acceleration profile", name)
	}
	if s.event != HTTPRequest {
		return nil, nil, tcl.Errorf("%s: not valid in %s (valid in HTTP_REQUEST)", name, s.event)
	}
	hc, _ := c.(HTTPConn)
	return s.cache, hc, nil
}

// cmdCacheURI is `CACHE::uri ?URI?`: the URI the cache keys the request
// by, or its replacement (to cache variants of a URI as one, say with
// the query left out).
func cmdCacheURI(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("CACHE::uri ?uri?")
	}
	st, hc, err := cacheStateOf(in, "CACHE::uri")
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
	st, _, err := cacheStateOf(in, "CACHE::userkey")
	if err != nil {
		return tcl.Empty, err
	}
	st.UserKey = args[1].String()
	return tcl.Empty, nil
}
