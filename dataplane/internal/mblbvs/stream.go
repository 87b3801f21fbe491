package mblbvs

import (
	"github.com/openltm/openltm/dataplane/httpcompress"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/streamfilter"
	"github.com/openltm/openltm/rules"
)

// BodyFilter implements mblb.HTTPStreamHandler: the stream filter as the
// client's rules left it (the profile's expression until a rule's
// STREAM::expression, on until STREAM::disable; one switch for both
// directions, as rules/commands_stream.go says), with STREAM_MATCHED run
// for each match when the rules handle it.
func (h *httpRules) BodyFilter() *streamfilter.Filter {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	prog := irules.Program(r.rules) // (an httpRules has a program)
	st := r.RuleSession(prog).Stream()
	if st == nil {
		return nil
	}
	var onMatch func(match, repl []byte) []byte
	if prog.Handles(rules.StreamMatched) {
		// The replacement is copied out of the rules' state while the
		// lock is held: the other direction's filter may run the event
		// next, on another thread.
		var buf []byte
		onMatch = func(match, repl []byte) []byte {
			buf = h.streamMatched(buf[:0], match, repl)
			return buf
		}
	}
	return st.Filter(onMatch)
}

// streamMatched runs STREAM_MATCHED over one match of a body's filter
// and appends what takes the match's place to dst. A rule that fails,
// rejects or drops ends the client; the stream is then discarded with
// it.
func (h *httpRules) streamMatched(dst, match, repl []byte) []byte {
	r := h.mblbRules
	r.mu.Lock()
	if r.sess == nil {
		r.mu.Unlock()
		return append(dst, repl...)
	}
	r.verdict = irules.GoOn
	r.httpEv = rules.StreamMatched
	dst, err := r.sess.RunStreamMatched(dst, match, repl)
	r.httpEv = rules.RuleInit
	v := r.verdict
	r.mu.Unlock()
	if err != nil || v != irules.GoOn {
		// (Not at once: the server connection's reader is in the
		// middle of the response.)
		go r.f.sess.Close(err != nil || v == irules.Reject)
	}
	return dst
}

// CompressChoice implements mblb.HTTPCompressHandler: what the rules'
// COMPRESS:: commands asked of the message whose events ran last, taken
// so that it does not carry over to the next one.
func (h *httpRules) CompressChoice() mblb.CompressChoice {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess == nil {
		return mblb.CompressChoice{}
	}
	st := r.sess.Compress()
	if st == nil {
		return mblb.CompressChoice{}
	}
	c := st.Take()
	prefer, _ := httpcompress.ParseCoding(c.Prefer)
	return mblb.CompressChoice{Set: c.Set, Prefer: prefer, Level: c.Level}
}

// CacheChoice implements mblb.HTTPCacheHandler: what the rules' CACHE::
// commands asked of the request whose HTTP_REQUEST ran last, taken so
// that it does not carry over to the next one.
func (h *httpRules) CacheChoice() mblb.CacheChoice {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess == nil || r.sess.Cache() == nil {
		// (No event has run yet: the rules may still have CACHE_ ones.)
		return mblb.CacheChoice{Events: h.cacheEvents}
	}
	c := r.sess.Cache().Take()
	key := c.UserKey
	if c.UserAgentSet || c.AcceptEncodingSet {
		// The fields join CACHE::userkey's key, each after a NUL and a
		// letter of its own, so that no two choices share a key.
		k := []byte(key)
		if c.UserAgentSet {
			k = append(append(append(k, 0), 'U'), c.UserAgent...)
		}
		if c.AcceptEncodingSet {
			k = append(append(append(k, 0), 'E'), c.AcceptEncoding...)
		}
		key = string(k)
	}
	return mblb.CacheChoice{Disable: c.Set < 0, Expire: c.Expire, URI: c.URI, UserKey: key,
		Priority: c.Priority, Events: h.cacheEvents}
}
