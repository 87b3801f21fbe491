package rules

import (
	"strings"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/rules/tcl"
)

// The CACHE:: commands that read the cached answer a request is about to
// get: in CACHE_REQUEST and CACHE_RESPONSE, which run only when the cache
// holds a fresh answer for the request.

func registerCacheEntry(t *tcl.Commands) {
	t.Register("CACHE::age", cmdCacheEntry("CACHE::age", cacheEntryEvents, func(e *CacheEntry) tcl.Value { return tcl.Int(e.Age) }))
	t.Register("CACHE::hits", cmdCacheEntry("CACHE::hits", cacheEntryEvents, func(e *CacheEntry) tcl.Value { return tcl.Int(int64(e.Hits)) }))
	// CACHE::fresh: a stale entry is dropped when it is found, and no
	// CACHE_ event runs for it, so the answer at hand is always fresh
	// [M].
	t.Register("CACHE::fresh", cmdCacheEntry("CACHE::fresh", cacheEntryEvents, func(*CacheEntry) tcl.Value { return tcl.Bool(true) }))
	t.Register("CACHE::headers", cmdCacheEntry("CACHE::headers", cacheAnswerEvents, func(e *CacheEntry) tcl.Value { return tcl.Str(string(e.Head)) }))
	t.Register("CACHE::payload", cmdCachePayload)
	t.Register("CACHE::header", cmdCacheHeader)
}

// cmdCacheHeader is `CACHE::header NAME`: the value of the cached
// answer's first field called NAME (any case), "" when it has none
// [M: F5 documents the command, not what a missing field gives].
func cmdCacheHeader(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("CACHE::header name")
	}
	e, err := cacheEntryOf(in, "CACHE::header", cacheAnswerEvents)
	if err != nil {
		return tcl.Empty, err
	}
	h := httpx.Head{HeaderEnd: len(e.Head)}
	return tcl.Str(string(httpx.HeaderValue(e.Head, &h, strings.ToLower(args[1].String())))), nil
}

// cacheEntryOf is the cached answer at hand, or the command's error.
func cacheEntryOf(in *tcl.Interp, name string, valid []Event) (*CacheEntry, error) {
	st, _, err := cacheOf(in, name, valid)
	if err != nil {
		return nil, err
	}
	if st.Entry == nil {
		return nil, tcl.Errorf("%s: there is no cached answer at hand", name)
	}
	return st.Entry, nil
}

// cmdCacheEntry is a CACHE:: command of no argument that reads the
// cached answer.
func cmdCacheEntry(name string, valid []Event, get func(*CacheEntry) tcl.Value) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(name)
		}
		e, err := cacheEntryOf(in, name, valid)
		if err != nil {
			return tcl.Empty, err
		}
		return get(e), nil
	}
}

// cmdCachePayload is `CACHE::payload ?length?`: the cached answer's body,
// or its length in bytes [M: F5 gives the command, not its arguments;
// "length" follows HTTP::payload's].
func cmdCachePayload(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 || (len(args) == 2 && args[1].String() != "length") {
		return tcl.Empty, tcl.WrongArgs("CACHE::payload ?length?")
	}
	e, err := cacheEntryOf(in, "CACHE::payload", cacheAnswerEvents)
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 2 {
		return tcl.Int(int64(len(e.Payload))), nil
	}
	return tcl.Str(string(e.Payload)), nil
}
